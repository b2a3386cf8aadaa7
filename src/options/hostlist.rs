//! Slurm hostlists: `node[01-03,7],gpu1`, `rack[1-2]-node[01-02]`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{take_while, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map, map_res, opt};
use nom::multi::{many1, separated_list0, separated_list1};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

/// The most host names one expression may expand to.
pub const MAX_HOSTS: usize = 1 << 20;

/// One numeric range inside brackets: `lo[-hi]`, printed `width` digits wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

/// A piece of one hostlist item: literal text or a bracketed range list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment<'a> {
    Text(&'a str),
    Ranges(Vec<Range>),
}

fn is_sep(c: char) -> bool {
    c == ',' || c.is_whitespace()
}

fn range(i: &str) -> IResult<&str, Range> {
    map_res((digit1, opt(preceded(char('-'), digit1))), |(lo, hi): (&str, Option<&str>)| {
        let l: u64 = lo.parse().map_err(|_| ())?;
        let h: u64 = match hi {
            Some(h) => h.parse().map_err(|_| ())?,
            None => l,
        };
        if h < l {
            return Err(());
        }
        Ok(Range { lo: l, hi: h, width: lo.len() })
    })
    .parse(i)
}

fn segment(i: &str) -> IResult<&str, Segment<'_>> {
    alt((
        map(delimited(char('['), separated_list1(char(','), range), char(']')), Segment::Ranges),
        map(take_while1(|c: char| c != '[' && c != ']' && !is_sep(c)), Segment::Text),
    ))
    .parse(i)
}

fn hostlist(i: &str) -> IResult<&str, Vec<Vec<Segment<'_>>>> {
    delimited(take_while(is_sep), separated_list0(take_while1(is_sep), many1(segment)), take_while(is_sep)).parse(i)
}

/// Expands a hostlist expression into host names, in Slurm's order: items left to right,
/// and within an item with several bracket groups (`rack[1-2]-node[01-02]`) the leftmost
/// group varies slowest. Numbers keep the width of the range's lower bound (`n[01-10]`:
/// `n01`…`n10`; `n[1-10]`: `n1`…`n10`). Items are separated by commas or white space.
/// Duplicates are kept, as `scontrol show hostnames` keeps them.
///
/// Unbalanced or empty brackets, a reversed range (`n[3-1]`) or a non-numeric range is
/// `Invalid --nodelist specification`. An expression naming more than [`MAX_HOSTS`] hosts is
/// refused with [`OptionError::Invalid`] before anything is allocated, however large its
/// ranges (`n[0-18446744073709551615]` too).
pub fn expand(text: &str) -> Result<Vec<String>, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "nodelist", value: text.to_string() };
    let (_, items) = all_consuming(hostlist).parse(text).map_err(|_| bad())?;
    let mut hosts = Vec::new();
    for item in items {
        let mut names = vec![String::new()];
        for seg in item {
            match seg {
                Segment::Text(t) => names.iter_mut().for_each(|n| n.push_str(t)),
                Segment::Ranges(ranges) => {
                    // Saturating: `n[0-18446744073709551615]` names 2^64 hosts, one more
                    // than a u64 holds; wrapping to 0 would slip past the cap below.
                    let per = ranges.iter().fold(0u64, |sum, r| sum.saturating_add((r.hi - r.lo).saturating_add(1)));
                    if per.saturating_mul(names.len() as u64).saturating_add(hosts.len() as u64) > MAX_HOSTS as u64 {
                        return Err(OptionError::Invalid {
                            option: "nodelist",
                            value: text.to_string(),
                            why: format!("it names more than {MAX_HOSTS} hosts"),
                        });
                    }
                    let mut next = Vec::with_capacity(names.len() * per as usize);
                    for n in &names {
                        for r in &ranges {
                            for v in r.lo..=r.hi {
                                next.push(format!("{n}{v:0w$}", w = r.width));
                            }
                        }
                    }
                    names = next;
                }
            }
        }
        hosts.extend(names);
    }
    Ok(hosts)
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

    #[test]
    fn expand_errors() {
        for t in ["n[01-03", "n01-03]", "n[]", "n[3-1]", "n[a-b]", "n[1-]", "n[-3]", "n[1,,2]", "n[[1]]", "n[1 2]", "]"]
        {
            assert_eq!(expand(t), Err(OptionError::InvalidSpec { option: "nodelist", value: t.into() }), "{t}");
        }
        assert!(matches!(expand("n[0-99999999]"), Err(OptionError::Invalid { .. })));
        assert!(matches!(expand("a[0-2000]b[0-2000]"), Err(OptionError::Invalid { .. })));
    }

    #[test]
    fn fuzz_regression_range_count_overflow() {
        // The host count of a range covering all of u64, or of ranges adding up past it,
        // overflowed (a panic with overflow checks, an unbounded expansion without them).
        for t in [
            "n[0-18446744073709551615]",
            "n[0-9223372036854775807,0-9223372036854775807]",
            "n[1-18446744073709551615,0-18446744073709551615]",
            "[0-18446744073709551615]x[0-1]",
        ] {
            assert!(matches!(expand(t), Err(OptionError::Invalid { option: "nodelist", .. })), "{t}");
        }
        assert_eq!(ex("n[18446744073709551615]"), hosts(&["n18446744073709551615"]));
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
