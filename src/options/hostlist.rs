//! Slurm hostlists: `node[01-03,7],gpu1`, `rack[1-2]-node[01-02]`.
//!
//! Read as Slurm's hostlist code reads them, and refused with the lines it logs: each
//! malformed range is `_parse_single_range: Invalid range: `3-1'` or
//! `_parse_single_range: Too many hosts in range `0-99999'`, which a command prints as
//! `<command>: error: …` before its own message ([`HostlistError::log`]).

use thiserror::Error;

/// The most host names one expression may expand to. Slurm has no such bound on the whole
/// list (only on each range, [`MAX_RANGE`]); this one keeps a hostlist from taking all memory.
pub const MAX_HOSTS: usize = 1 << 20;

/// The most hosts one range may name (Slurm's `MAX_RANGE`, 64K).
pub const MAX_RANGE: u64 = 65_536;

/// The most names the bracket groups before the last one may make (Slurm's `MAX_PREFIX_CNT`).
const MAX_PREFIX_COUNT: u64 = 64 * 1024;

/// What is wrong with a hostlist, and what Slurm's hostlist code logs about it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("Invalid hostlist: {text}")]
pub struct HostlistError {
    /// The expression.
    pub text: String,
    /// The lines Slurm's hostlist code logs (as `error()`), in order; none for a bracket
    /// left open or a bracket group before the last one that names too many hosts.
    pub log: Vec<String>,
    /// Whether it was refused for naming more than [`MAX_HOSTS`] hosts (slurmlet's bound).
    pub too_many: bool,
}

/// One numeric range inside brackets: `lo[-hi]`, printed `width` digits wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

impl Range {
    fn len(&self) -> u64 {
        self.hi - self.lo + 1
    }
}

/// Why an expansion stopped: a range that is no range (logged), a malformed group (not
/// logged), or too many hosts.
enum Stop {
    Bad,
    TooMany,
}

/// An expansion under way: the hosts so far and the lines logged.
struct Expander {
    hosts: Vec<String>,
    log: Vec<String>,
}

/// `strtoul` in base 10 at the start of `text`: the value (`None` without digits; saturated
/// when too large; negated modulo 2^64 after a `-`) and the rest.
fn strtoul(text: &str) -> (Option<u64>, &str) {
    let trimmed = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, unsigned) = match trimmed.strip_prefix('-') {
        Some(u) => (true, u),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    let digits = unsigned.len() - unsigned.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return (None, text);
    }
    let value: u64 = unsigned[..digits].parse().unwrap_or(u64::MAX);
    (Some(if negative { value.wrapping_neg() } else { value }), &unsigned[digits..])
}

impl Expander {
    /// One range of a bracket group (`3`, `01-10`), as Slurm's `_parse_single_range` reads it.
    fn single_range(&mut self, text: &str) -> Option<Range> {
        let invalid = |log: &mut Vec<String>| {
            log.push(format!("_parse_single_range: Invalid range: `{text}'"));
            None
        };
        if text.contains('x') {
            return invalid(&mut self.log);
        }
        let (lo_text, hi_text) = match text.split_once('-') {
            Some((lo, hi)) => (lo, Some(hi)),
            None => (text, None),
        };
        if hi_text.is_some_and(|h| h.starts_with('-')) {
            return invalid(&mut self.log);
        }
        let (Some(lo), after_lo) = strtoul(lo_text) else { return invalid(&mut self.log) };
        let (hi, rest) = match hi_text.filter(|h| !h.is_empty()) {
            Some(h) => match strtoul(h) {
                (Some(hi), rest) => (hi, rest),
                (None, _) => return invalid(&mut self.log),
            },
            // `1-` is 1, as in Slurm; what follows the number must then be nothing.
            None => (lo, after_lo),
        };
        // As in Slurm, only what follows the last number read is checked (`1a-2` is 1-2).
        if !rest.is_empty() || lo > hi {
            return invalid(&mut self.log);
        }
        if hi - lo >= MAX_RANGE {
            self.log.push(format!("_parse_single_range: Too many hosts in range `{text}'"));
            return None;
        }
        Some(Range { lo, hi, width: lo_text.len() })
    }

    /// The comma-separated ranges inside one pair of brackets.
    fn range_list(&mut self, text: &str) -> Result<Vec<Range>, Stop> {
        text.split(',').map(|r| self.single_range(r).ok_or(Stop::Bad)).collect()
    }

    fn push(&mut self, prefix: &str, suffix: &str, ranges: &[Range]) -> Result<(), Stop> {
        let count: u64 = ranges.iter().map(Range::len).sum();
        if count.saturating_add(self.hosts.len() as u64) > MAX_HOSTS as u64 {
            return Err(Stop::TooMany);
        }
        for r in ranges {
            for n in r.lo..=r.hi {
                self.hosts.push(format!("{prefix}{n:0w$}{suffix}", w = r.width));
            }
        }
        Ok(())
    }

    /// The hosts of `prefix` + each of `ranges` + `suffix`, where `prefix` may hold bracket
    /// groups of its own: its last one varies slowest of those left, and so on leftwards.
    /// As in Slurm, a bad range in a group that is not the last two (`a[3-1]b[1-2]c[1-2]`)
    /// is logged and its names left out, without refusing the list.
    fn push_ranges(&mut self, prefix: &str, suffix: &str, ranges: &[Range]) -> Result<(), Stop> {
        let group = prefix.rfind('[').and_then(|open| prefix[open..].rfind(']').map(|close| (open, open + close)));
        let Some((open, close)) = group else { return self.push(prefix, suffix, ranges) };
        let (before, inner, after) = (&prefix[..open], &prefix[open + 1..close], &prefix[close + 1..]);
        let nested = before.contains('[');
        let outer = self.range_list(inner)?;
        if outer.iter().map(Range::len).sum::<u64>() > MAX_PREFIX_COUNT {
            return Err(Stop::Bad);
        }
        for r in &outer {
            for n in r.lo..=r.hi {
                let expanded = format!("{before}{n:0w$}{after}", w = r.width);
                if nested {
                    match self.push_ranges(&expanded, suffix, ranges) {
                        Err(Stop::TooMany) => return Err(Stop::TooMany),
                        Err(Stop::Bad) | Ok(()) => {}
                    }
                } else {
                    self.push(&expanded, suffix, ranges)?;
                }
            }
        }
        Ok(())
    }

    /// One item of the list (`n[1-3]x`, `login`).
    fn item(&mut self, token: &str) -> Result<(), Stop> {
        let Some(open) = token.rfind('[') else {
            self.hosts.push(token.to_string());
            return if self.hosts.len() > MAX_HOSTS { Err(Stop::TooMany) } else { Ok(()) };
        };
        let (prefix, rest) = (&token[..open], &token[open + 1..]);
        let Some(close) = rest.find(']') else { return Err(Stop::Bad) };
        let after = &rest[close + 1..];
        let suffix = if after.starts_with(',') { "" } else { after };
        let ranges = self.range_list(&rest[..close])?;
        self.push_ranges(prefix, suffix, &ranges)
    }
}

fn is_sep(c: char) -> bool {
    matches!(c, ',' | ' ' | '\t' | '\n')
}

/// Splits a hostlist into its items at commas and blanks, except inside a bracket pair that
/// closes (`n[1,2],m` is `n[1,2]` and `m`; `n[1 2]` is one item), as Slurm's `_next_tok`.
fn items(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(is_sep);
        if rest.is_empty() {
            return out;
        }
        let mut end = rest.find(is_sep).unwrap_or(rest.len());
        let mut from = 0;
        while let Some(open) = rest[from..].find('[').map(|o| o + from).filter(|&o| o < end) {
            let Some(close) = rest[from..].find(']').map(|c| c + from).filter(|&c| c > open) else { break };
            if close < end {
                from = close + 1;
            } else {
                end = rest[close..].find(is_sep).map_or(rest.len(), |e| e + close);
            }
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
}

/// Expands a hostlist expression into host names, in Slurm's order: items left to right,
/// and within an item with several bracket groups (`rack[1-2]-node[01-02]`) the leftmost
/// group varies slowest. Numbers keep the width of the range's lower bound (`n[01-10]`:
/// `n01`…`n10`; `n[1-10]`: `n1`…`n10`). Items are separated by commas or white space.
/// Duplicates are kept, as `scontrol show hostnames` keeps them. Text outside brackets is
/// taken as it is (`n]1`, as Slurm takes it).
///
/// Also returns the lines Slurm's hostlist code logs reading it, which a list it accepts
/// may have too (see `Expander::push_ranges`); on an error they are its
/// [`HostlistError::log`] as well.
pub fn expand_logged(text: &str) -> (Result<Vec<String>, HostlistError>, Vec<String>) {
    let mut x = Expander { hosts: Vec::new(), log: Vec::new() };
    let mut stop = None;
    for token in items(text) {
        if let Err(s) = x.item(token) {
            stop = Some(s);
            break;
        }
    }
    let log = x.log;
    let result = match stop {
        None => Ok(x.hosts),
        Some(s) => {
            Err(HostlistError { text: text.to_string(), log: log.clone(), too_many: matches!(s, Stop::TooMany) })
        }
    };
    (result, log)
}

/// [`expand_logged`] without the lines of a list that is accepted.
pub fn expand(text: &str) -> Result<Vec<String>, HostlistError> {
    expand_logged(text).0
}

/// A run of host names `prefix` + `lo..=hi` (or a name without a numeric suffix).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    prefix: String,
    num: Option<(u64, u64, usize)>,
}

/// Splits a host name into its prefix and numeric suffix (`n01` → `n`, 1, width 2).
fn split_host(host: &str) -> (&str, Option<(u64, usize)>) {
    let digits = host.len() - host.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 18 {
        return (host, None);
    }
    let (prefix, num) = host.split_at(host.len() - digits);
    (prefix, num.parse().ok().map(|n| (n, digits)))
}

/// Whether `n` printed `width` wide has leading zeros.
fn padded(n: u64, width: usize) -> bool {
    n.to_string().len() < width
}

fn runs<'a>(hosts: impl IntoIterator<Item = &'a str>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for host in hosts {
        let (prefix, num) = split_host(host);
        if let (Some(last), Some((n, w))) = (runs.last_mut(), num) {
            if let Some((lo, hi, lw)) = last.num.as_mut() {
                let same_width = *lw == w || (!padded(*lo, *lw) && !padded(n, w));
                if last.prefix == prefix && same_width && hi.checked_add(1) == Some(n) {
                    *hi = n;
                    *lw = (*lw).min(w);
                    continue;
                }
            }
        }
        runs.push(Run { prefix: prefix.to_string(), num: num.map(|(n, w)| (n, n, w)) });
    }
    runs
}

fn render(runs: &[Run]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let Some(_) = runs[i].num else {
            out.push(runs[i].prefix.clone());
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < runs.len() && runs[j].num.is_some() && runs[j].prefix == runs[i].prefix {
            j += 1;
        }
        let parts: Vec<String> = runs[i..j]
            .iter()
            .filter_map(|r| r.num)
            .map(|(lo, hi, w)| if lo == hi { format!("{lo:0w$}") } else { format!("{lo:0w$}-{hi:0w$}") })
            .collect();
        let single = j == i + 1 && matches!(runs[i].num, Some((lo, hi, _)) if lo == hi);
        if single {
            out.push(format!("{}{}", runs[i].prefix, parts[0]));
        } else {
            out.push(format!("{}[{}]", runs[i].prefix, parts.join(",")));
        }
        i = j;
    }
    out.join(",")
}

/// Compresses host names into a hostlist expression the way `scontrol show hostlist` does:
/// order is kept, consecutive numbers with the same prefix and width become ranges, and
/// adjacent ranges with the same prefix share one bracket (`n01,n02,n03,n05,gpu12,gpu13` →
/// `n[01-03,05],gpu[12-13]`). Zero padding is kept.
pub fn compress(hosts: &[String]) -> String {
    render(&runs(hosts.iter().map(String::as_str)))
}

/// Like [`compress`], but sorted and without duplicates first, as
/// `scontrol show hostlistsorted` (`n03,n01,gpu13,n02,gpu12` → `gpu[12-13],n[01-03]`).
pub fn compress_sorted(hosts: &[String]) -> String {
    let mut sorted: Vec<&str> = hosts.iter().map(String::as_str).collect();
    sorted.sort_by_key(|h| {
        let (prefix, num) = split_host(h);
        (prefix, num)
    });
    sorted.dedup();
    render(&runs(sorted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(t: &str) -> Vec<String> {
        expand(t).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    fn hosts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn expand_transcript_cases() {
        assert_eq!(ex("gpu[12-13],n[01-03]"), hosts(&["gpu12", "gpu13", "n01", "n02", "n03"]));
        assert_eq!(ex("gpu12"), hosts(&["gpu12"]));
        assert_eq!(ex("a[1-2]-b[08-10]"), hosts(&["a1-b08", "a1-b09", "a1-b10", "a2-b08", "a2-b09", "a2-b10"]));
    }

    #[test]
    fn expand_forms() {
        assert_eq!(ex("n[1-3,5]"), hosts(&["n1", "n2", "n3", "n5"]));
        assert_eq!(ex("n[01-03,05]"), hosts(&["n01", "n02", "n03", "n05"]));
        assert_eq!(
            ex("rack[1-2]-node[01-02]"),
            hosts(&["rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"])
        );
        assert_eq!(ex("n[8-10]"), hosts(&["n8", "n9", "n10"]));
        assert_eq!(ex("n[08-10]"), hosts(&["n08", "n09", "n10"]));
        assert_eq!(ex("n[1-2]x"), hosts(&["n1x", "n2x"]));
        assert_eq!(ex("[1-2]"), hosts(&["1", "2"]));
        assert_eq!(ex("n[3]"), hosts(&["n3"]));
        assert_eq!(ex("a,b c\tn[1-2]"), hosts(&["a", "b", "c", "n1", "n2"]));
        assert_eq!(ex(" a,,b, "), hosts(&["a", "b"]));
        assert_eq!(ex("n1,n1"), hosts(&["n1", "n1"]));
        assert_eq!(ex("my-host.example.org"), hosts(&["my-host.example.org"]));
        assert!(ex("").is_empty());
    }

    /// What Slurm 26.05's `scontrol show hostnames` prints for each, checked on a real one.
    #[test]
    fn expand_errors_log_what_slurm_logs() {
        let invalid = |r: &str| vec![format!("_parse_single_range: Invalid range: `{r}'")];
        for (t, log) in [
            ("n[3-1]", invalid("3-1")),
            ("n[]", invalid("")),
            ("n[a-b]", invalid("a-b")),
            ("n[-3]", invalid("-3")),
            ("n[1,,2]", invalid("")),
            ("n[1 2]", invalid("1 2")),
            ("n[1x2]", invalid("1x2")),
            ("n[1--2]", invalid("1--2")),
            ("n[1-2 ]", invalid("1-2 ")),
            ("a[1-2]b[3-1]", invalid("3-1")),
            ("a[3-1]b[1-2]", invalid("3-1")),
            ("x[1-2],n[3-1]", invalid("3-1")),
            ("a[1-2]b[3-1]c[1-2]", invalid("3-1")),
            ("n[0-65536]", vec!["_parse_single_range: Too many hosts in range `0-65536'".to_string()]),
            ("a[0-70000]b[1]", vec!["_parse_single_range: Too many hosts in range `0-70000'".to_string()]),
            ("n[01-03", vec![]),
            ("n[1", vec![]),
        ] {
            let e = expand(t).unwrap_err();
            assert_eq!((e.to_string(), e.log, e.too_many), (format!("Invalid hostlist: {t}"), log, false), "{t}");
        }
        assert!(expand("a[0-2000]b[0-2000]").unwrap_err().too_many, "slurmlet's own bound");
    }

    #[test]
    fn accepted_as_slurm_accepts_them() {
        assert_eq!(ex("n01-03]"), hosts(&["n01-03]"]));
        assert_eq!(ex("]"), hosts(&["]"]));
        assert_eq!(ex("n[1-]"), hosts(&["n1"]));
        assert_eq!(ex("n[[1]]"), hosts(&["n[1]"]));
        assert_eq!(ex("n]1[2]"), hosts(&["n]12"]));
        assert_eq!(ex("n[ 1-2]"), hosts(&["n01", "n02"]));
        assert_eq!(ex("n[+1-2]"), hosts(&["n01", "n02"]));
        assert_eq!(ex("n[001-3]"), hosts(&["n001", "n002", "n003"]));
        assert_eq!(ex("n[1-2]x[3-4]y"), hosts(&["n1x3y", "n1x4y", "n2x3y", "n2x4y"]));
        assert_eq!(ex("a[1-2]-[3-4]"), hosts(&["a1-3", "a1-4", "a2-3", "a2-4"]));
        assert_eq!(ex("n[0-65535]").len(), 65_536);
        // Slurm logs the bad group before the last two, leaves its names out, and goes on.
        let (hosts_found, log) = expand_logged("a[3-1]b[1-2]c[1-2]");
        assert_eq!(hosts_found, Ok(vec![]));
        assert_eq!(log, vec!["_parse_single_range: Invalid range: `3-1'".to_string(); 2]);
    }

    #[test]
    fn compress_transcript_cases() {
        assert_eq!(compress(&hosts(&["n01", "n02", "n03", "gpu12", "gpu13"])), "n[01-03],gpu[12-13]");
        assert_eq!(compress_sorted(&hosts(&["n03", "n01", "gpu13", "n02", "gpu12"])), "gpu[12-13],n[01-03]");
    }

    #[test]
    fn compress_forms() {
        assert_eq!(compress(&hosts(&["n01", "n02", "n03", "n05"])), "n[01-03,05]");
        assert_eq!(compress(&hosts(&["n1", "n2", "n3", "n5"])), "n[1-3,5]");
        assert_eq!(compress(&hosts(&["gpu12"])), "gpu12");
        assert_eq!(compress(&hosts(&["n01", "gpu12"])), "n01,gpu12");
        assert_eq!(compress(&hosts(&["login", "n1", "n2"])), "login,n[1-2]");
        assert_eq!(compress(&hosts(&["n9", "n10", "n11"])), "n[9-11]");
        assert_eq!(compress(&hosts(&["n09", "n10"])), "n[09-10]");
        assert_eq!(compress(&hosts(&["n9", "n010"])), "n[9,010]");
        assert_eq!(compress(&hosts(&["n3", "n1", "n2"])), "n[3,1-2]");
        assert_eq!(compress(&hosts(&["a1-b08", "a1-b09", "a2-b08"])), "a1-b[08-09],a2-b08");
        assert_eq!(compress(&[]), "");
        assert_eq!(compress_sorted(&hosts(&["n2", "n1", "n2", "n10"])), "n[1-2,10]");
    }

    #[test]
    fn round_trip() {
        for t in ["n[01-03,05]", "gpu[12-13],n[01-03]", "n[1-3,5]", "n[9-11]", "login,n[1-2]", "node007"] {
            assert_eq!(compress(&ex(t)), t, "{t}");
        }
        let many = ex("rack[1-2]-node[01-02]");
        assert_eq!(ex(&compress(&many)), many);
    }
}
