//! Job array index specifications: `--array=0-15:4%2`, `1,3,5`, `0-7%4`, `1-3,10`, and the
//! compressed form squeue prints for a pending array (`12_[1-3,5]`).

use super::OptionError;
use nom::branch::alt;
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map, map_res, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

/// Slurm's default `MaxArraySize`: indices 0 to 1000.
pub const DEFAULT_MAX_ARRAY_SIZE: u32 = 1001;

/// The largest `MaxArraySize` Slurm allows; a larger `max_array_size` is refused where the
/// configuration is read.
pub const MAX_ARRAY_SIZE_LIMIT: u32 = 4_000_001;

/// A parsed `--array` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArraySpec {
    /// The task indices, sorted and without duplicates (never empty for a parsed value).
    pub indices: Vec<u32>,
    /// `%P`: at most this many tasks of the array run at once.
    pub max_running: Option<u32>,
}

impl ArraySpec {
    /// The spec in squeue's form, `1-3,5%2` (see [`format_array`]).
    pub fn to_slurm_string(&self) -> String {
        match self.max_running {
            Some(p) => format!("{}%{p}", format_array(&self.indices)),
            None => format_array(&self.indices),
        }
    }
}

/// One comma-separated item as written: `N`, `N-M` or `N-M:S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// A single index.
    One(u64),
    /// `first-last[:step]`.
    Range(u64, u64, Option<u64>),
}

fn number(i: &str) -> IResult<&str, u64> {
    map_res(digit1, str::parse::<u64>).parse(i)
}

fn item(i: &str) -> IResult<&str, Item> {
    map((number, opt((preceded(char('-'), number), opt(preceded(char(':'), number))))), |(a, rest)| match rest {
        None => Item::One(a),
        Some((b, step)) => Item::Range(a, b, step),
    })
    .parse(i)
}

fn list(i: &str) -> IResult<&str, Vec<Item>> {
    separated_list1(char(','), item).parse(i)
}

fn limit(i: &str) -> IResult<&str, u64> {
    preceded(char('%'), number).parse(i)
}

/// The items and the `%P` limits as written: inside the brackets and after them.
type RawSpec = (Vec<Item>, Option<u64>, Option<u64>);

/// `list[%P]`, `[list][%P]` or `[list%P]`, as written; two limits are refused later.
fn spec(i: &str) -> IResult<&str, RawSpec> {
    alt((
        map((delimited(char('['), (list, opt(limit)), char(']')), opt(limit)), |((l, inner), outer)| (l, inner, outer)),
        map((list, opt(limit)), |(l, p)| (l, p, None)),
    ))
    .parse(i)
}

/// Parses Slurm's `--array` spec: a comma-separated list of `N`, `N-M` and `N-M:S` (every
/// `S`-th index from `N` to `M`), with an optional `%P` at the end that lets at most `P` tasks
/// run at once. Valid indices are `0` to `max_array_size - 1` (Slurm's `MaxArraySize`, 1001
/// by default, so 0–1000); a step must also be below `max_array_size`. The list may be
/// written in brackets, as squeue prints it (`[1-3,5]%2`).
///
/// Whatever Slurm refuses is [`OptionError::InvalidArray`] (`Invalid job array
/// specification`), with the reason in `why`: an empty list, text that is not the grammar
/// above, a reversed range (`5-1`), a step of 0, an index beyond the maximum, `%0`.
/// Slurm itself ignores `%0` and reads `%P` anywhere in the text (`1%2,3`); here the limit
/// must be at least 1 and come last.
pub fn parse_array(text: &str, max_array_size: u32) -> Result<ArraySpec, OptionError> {
    let fail = |why: String| OptionError::InvalidArray { value: text.to_string(), why };
    let t = text.trim();
    if t.is_empty() {
        return Err(fail("no array indices given".into()));
    }
    let max = max_array_size.min(MAX_ARRAY_SIZE_LIMIT);
    if max == 0 {
        return Err(fail("job arrays are disabled (MaxArraySize=0)".into()));
    }
    let (_, (items, inner, outer)) = all_consuming(spec).parse(t).map_err(|_| {
        fail(format!("'{t}' is not a list of N, N-M or N-M:S separated by commas, with an optional %limit at the end"))
    })?;
    let max_running = match (inner, outer) {
        (Some(_), Some(_)) => return Err(fail("more than one %limit".into())),
        (Some(p), None) | (None, Some(p)) => match u32::try_from(p) {
            Ok(0) => return Err(fail("the %limit of tasks running at once must be at least 1".into())),
            Ok(p) => Some(p),
            Err(_) => return Err(fail(format!("the %limit {p} is too large"))),
        },
        (None, None) => None,
    };
    let last = u64::from(max) - 1;
    let beyond = |n: u64| fail(format!("index {n} is beyond the largest allowed, {last} (MaxArraySize={max})"));
    let mut set = vec![false; max as usize];
    for item in items {
        let (first, end, step) = match item {
            Item::One(n) => (n, n, 1),
            Item::Range(a, b, step) => {
                if b < a {
                    return Err(fail(format!("the range {a}-{b} runs backwards")));
                }
                let step = step.unwrap_or(1);
                if step == 0 {
                    return Err(fail(format!("the step of {a}-{b}:0 must be at least 1")));
                }
                if step >= u64::from(max) {
                    return Err(fail(format!("the step {step} must be below MaxArraySize ({max})")));
                }
                (a, b, step)
            }
        };
        if end > last {
            return Err(beyond(end));
        }
        // end <= last < max <= MAX_ARRAY_SIZE_LIMIT, so these fit in usize.
        for i in (first as usize..=end as usize).step_by(step as usize) {
            set[i] = true;
        }
    }
    let indices = set.iter().enumerate().filter(|(_, on)| **on).map(|(i, _)| i as u32).collect();
    Ok(ArraySpec { indices, max_running })
}

/// Formats task indices the way squeue shows a pending array's tasks (`12_[1-3,5]`): runs of
/// consecutive indices as `N-M`, the rest comma-separated. As in Slurm, indices that are one
/// even step apart (more than five of them, spanning more than ten, with a step above one)
/// print as `N-M:S` (`0-100:10`). The input need not be sorted; duplicates are ignored; an
/// empty list gives an empty string. (squeue also cuts long lists to 64 characters, which is
/// left to the caller.)
pub fn format_array(indices: &[u32]) -> String {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v.dedup();
    let (first, last) = match (v.first(), v.last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => return String::new(),
    };
    if last - first > 10 && v.len() > 5 && v[1] != first + 1 {
        let step = v[1] - first;
        if v.windows(2).all(|w| w[1] - w[0] == step) {
            return format!("{first}-{last}:{step}");
        }
    }
    let mut out = String::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            end = v[i + 1];
            i += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if end == start {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::test_support::short_strings;

    fn spec(indices: &[u32], max_running: Option<u32>) -> ArraySpec {
        ArraySpec { indices: indices.to_vec(), max_running }
    }

    #[test]
    fn slurm_forms() {
        let cases: &[(&str, ArraySpec)] = &[
            ("0", spec(&[0], None)),
            ("7", spec(&[7], None)),
            ("1,3,5", spec(&[1, 3, 5], None)),
            ("0-3", spec(&[0, 1, 2, 3], None)),
            ("0-15:4", spec(&[0, 4, 8, 12], None)),
            ("0-15:4%2", spec(&[0, 4, 8, 12], Some(2))),
            ("0-7%4", spec(&[0, 1, 2, 3, 4, 5, 6, 7], Some(4))),
            ("1-3,10", spec(&[1, 2, 3, 10], None)),
            ("0,6,16-18", spec(&[0, 6, 16, 17, 18], None)),
            ("1-10:3", spec(&[1, 4, 7, 10], None)),
            ("1-11:3", spec(&[1, 4, 7, 10], None)),
            ("5-5", spec(&[5], None)),
            ("5-5:7", spec(&[5], None)),
            ("1000", spec(&[1000], None)),
            ("998-1000", spec(&[998, 999, 1000], None)),
            ("0-1000:500", spec(&[0, 500, 1000], None)),
            ("0-1000:1000", spec(&[0, 1000], None)),
            ("1%1", spec(&[1], Some(1))),
            ("1%4294967295", spec(&[1], Some(u32::MAX))),
            // sorted and deduplicated
            ("5,1,3,1", spec(&[1, 3, 5], None)),
            ("3-6,1-4", spec(&[1, 2, 3, 4, 5, 6], None)),
            ("0-8:2,0-8:4", spec(&[0, 2, 4, 6, 8], None)),
            // squeue's bracketed form, and surrounding blanks
            ("[1-3,5]", spec(&[1, 2, 3, 5], None)),
            ("[1-3,5]%2", spec(&[1, 2, 3, 5], Some(2))),
            ("[1-3,5%2]", spec(&[1, 2, 3, 5], Some(2))),
            (" 1-2 ", spec(&[1, 2], None)),
            ("007", spec(&[7], None)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_array(text, DEFAULT_MAX_ARRAY_SIZE).as_ref(), Ok(want), "{text:?}");
        }
    }

    #[test]
    fn max_array_size_bounds_indices_and_steps() {
        assert_eq!(parse_array("0-9", 10).unwrap().indices.len(), 10);
        assert!(parse_array("10", 10).is_err());
        assert!(parse_array("0-10", 10).is_err());
        assert!(parse_array("0-9:10", 10).is_err());
        assert_eq!(parse_array("0-9:9", 10).unwrap().indices, vec![0, 9]);
        assert_eq!(parse_array("0", 1).unwrap().indices, vec![0]);
        assert!(parse_array("1", 1).is_err());
        let e = parse_array("0", 0).unwrap_err();
        assert!(e.explanation().is_some_and(|w| w.contains("disabled")), "{e:?}");
        // a huge MaxArraySize is capped at Slurm's own limit
        assert_eq!(parse_array("4000000", u32::MAX).unwrap().indices, vec![4_000_000]);
        assert!(parse_array("4000001", u32::MAX).is_err());
        assert_eq!(
            parse_array("0-3999999:1000000", u32::MAX).unwrap().indices,
            vec![0, 1_000_000, 2_000_000, 3_000_000]
        );
    }

    #[test]
    fn bad_specs_are_invalid_array() {
        let cases: &[(&str, &str)] = &[
            ("", "no array"),
            ("   ", "no array"),
            ("5-1", "backwards"),
            ("10-9:1", "backwards"),
            ("0-15:0", "at least 1"),
            ("0-15:1001", "below MaxArraySize"),
            ("1001", "beyond"),
            ("0-1001", "beyond"),
            ("5,2000", "beyond"),
            ("99999999999999999999", "not a list"),
            ("1-99999999999999999999", "not a list"),
            ("%0", "not a list"),
            ("1%0", "at least 1"),
            ("0-7%0", "at least 1"),
            ("1%4294967296", "too large"),
            ("[1-3%2]%2", "more than one"),
            ("1%2%3", "not a list"),
            ("1%", "not a list"),
            ("1%x", "not a list"),
            ("1%-2", "not a list"),
            ("x", "not a list"),
            ("1,", "not a list"),
            (",1", "not a list"),
            ("1,,2", "not a list"),
            ("1-", "not a list"),
            ("-1", "not a list"),
            ("1--3", "not a list"),
            ("1-3:", "not a list"),
            ("1-3:2:2", "not a list"),
            ("5:2", "not a list"),
            ("1-3-5", "not a list"),
            ("+1", "not a list"),
            ("1.5", "not a list"),
            ("1, 2", "not a list"),
            ("1 -3", "not a list"),
            ("[1-3", "not a list"),
            ("1-3]", "not a list"),
            ("[]", "not a list"),
            ("1%2,3", "not a list"),
            ("0x10", "not a list"),
            ("１", "not a list"),
        ];
        for (text, why) in cases {
            match parse_array(text, DEFAULT_MAX_ARRAY_SIZE) {
                Err(e @ OptionError::InvalidArray { .. }) => {
                    assert_eq!(e.to_string(), "Invalid job array specification");
                    let OptionError::InvalidArray { value, why: got } = &e else { unreachable!() };
                    assert_eq!(value, text);
                    assert!(got.contains(why), "{text:?}: {got}");
                    assert_eq!(e.explanation(), Some(got.as_str()));
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn formatting() {
        let cases: &[(&[u32], &str)] = &[
            (&[], ""),
            (&[5], "5"),
            (&[1, 2], "1-2"),
            (&[1, 2, 3, 5], "1-3,5"),
            (&[1, 2, 3, 5, 7, 8, 9], "1-3,5,7-9"),
            (&[9, 8, 7, 5, 3, 2, 1, 1], "1-3,5,7-9"),
            (&[0, 4, 8, 12], "0,4,8,12"),
            (&[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100], "0-100:10"),
            (&[1, 3, 5, 7, 9, 11, 13], "1-13:2"),
            (&[1, 3, 5, 7, 9, 11], "1,3,5,7,9,11"), // spans only 10
            (&[1, 3, 5, 7, 9], "1,3,5,7,9"),
            (&[1, 3, 5, 7, 9, 12], "1,3,5,7,9,12"),
            (&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "0-11"),
            (&[0, u32::MAX], "0,4294967295"),
            (&[u32::MAX - 1, u32::MAX], "4294967294-4294967295"),
        ];
        for (indices, want) in cases {
            assert_eq!(format_array(indices), *want, "{indices:?}");
        }
        assert_eq!(spec(&[1, 2, 3, 5], Some(2)).to_slurm_string(), "1-3,5%2");
        assert_eq!(spec(&[4], None).to_slurm_string(), "4");
    }

    #[test]
    fn parse_format_round_trip() {
        for text in ["1-3,5", "0-100:10", "0,4,8,12", "7", "1-3,5,7-9%3", "0-1000"] {
            let s = parse_array(text, DEFAULT_MAX_ARRAY_SIZE).unwrap();
            assert_eq!(s.to_slurm_string(), text);
            assert_eq!(parse_array(&s.to_slurm_string(), DEFAULT_MAX_ARRAY_SIZE).unwrap(), s);
        }
    }

    #[test]
    fn no_input_panics() {
        for s in short_strings("09-:,%[] x", 5) {
            let _ = parse_array(&s, DEFAULT_MAX_ARRAY_SIZE);
            let _ = parse_array(&s, 1);
        }
    }
}
