//! Memory sizes: `--mem`, `--mem-per-cpu` (`[0-9]+[K|M|G|T]`, default megabytes).

use super::OptionError;
use nom::character::complete::{digit1, one_of};
use nom::combinator::{all_consuming, opt};
use nom::{IResult, Parser};

/// `digits [KMGT] [B]`, suffixes case-insensitive.
fn size(i: &str) -> IResult<&str, (&str, Option<char>, Option<char>)> {
    (digit1, opt(one_of("kKmMgGtT")), opt(one_of("bB"))).parse(i)
}

/// Parses a memory size into megabytes (`500`, `500M`, `4G`, `1T`, `2048K`, `4GB`).
///
/// The grammar is Slurm's `str_to_mbytes`: a decimal number, then an optional unit `K`, `M`
/// (the default), `G` or `T`, case-insensitive; a `B` may follow the unit (`4GB`). Anything
/// else (`10Q`, `-5`, `1.5G`) is `Invalid --<option> specification`. `0` is allowed (for
/// `--mem` it means all the node's memory). Kilobytes round up to whole megabytes, so a
/// small `K` value never turns into `0` ("all memory"); Slurm rounds down here.
pub fn parse_mem_mb(text: &str, option: &'static str) -> Result<u64, OptionError> {
    let bad = || OptionError::InvalidSpec { option, value: text.to_string() };
    let (_, (digits, unit, b)) = all_consuming(size).parse(text.trim()).map_err(|_| bad())?;
    if unit.is_none() && b.is_some() {
        // "500B" would be bytes, which Slurm does not take.
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let mb = match unit.map(|c| c.to_ascii_uppercase()) {
        None | Some('M') => Some(n),
        Some('K') => Some(n.div_ceil(1024)),
        Some('G') => n.checked_mul(1024),
        Some('T') => n.checked_mul(1024 * 1024),
        Some(_) => None,
    };
    mb.ok_or_else(|| OptionError::Invalid { option, value: text.to_string(), why: "the size is too large".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mb(t: &str) -> u64 {
        parse_mem_mb(t, "mem").unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    #[test]
    fn units() {
        assert_eq!(mb("0"), 0);
        assert_eq!(mb("500"), 500);
        assert_eq!(mb("500M"), 500);
        assert_eq!(mb("500m"), 500);
        assert_eq!(mb("500MB"), 500);
        assert_eq!(mb("4G"), 4096);
        assert_eq!(mb("4g"), 4096);
        assert_eq!(mb("4GB"), 4096);
        assert_eq!(mb("4gb"), 4096);
        assert_eq!(mb("1T"), 1024 * 1024);
        assert_eq!(mb("1tb"), 1024 * 1024);
        assert_eq!(mb("2048K"), 2);
        assert_eq!(mb("2048kb"), 2);
        assert_eq!(mb("0G"), 0);
        assert_eq!(mb(" 16G "), 16384);
        assert_eq!(mb("999999999"), 999_999_999);
    }

    #[test]
    fn kilobytes_round_up() {
        assert_eq!(mb("1K"), 1);
        assert_eq!(mb("1025K"), 2);
        assert_eq!(mb("0K"), 0);
    }

    #[test]
    fn bad_specs_name_the_option() {
        for t in ["10Q", "", "G", "abc", "-5", "1.5G", "4 G", "4GG", "4GiB", "500B", "+4G", "4G4"] {
            let e = parse_mem_mb(t, "mem").unwrap_err();
            assert_eq!(e, OptionError::InvalidSpec { option: "mem", value: t.into() }, "{t}");
        }
        assert_eq!(parse_mem_mb("10Q", "mem").unwrap_err().to_string(), "Invalid --mem specification");
        assert_eq!(parse_mem_mb("10Q", "mem-per-cpu").unwrap_err().to_string(), "Invalid --mem-per-cpu specification");
    }

    #[test]
    fn overflow_is_invalid() {
        assert!(matches!(parse_mem_mb("99999999999999999999", "mem"), Err(OptionError::InvalidSpec { .. })));
        assert!(matches!(parse_mem_mb("18446744073709551615T", "mem"), Err(OptionError::Invalid { .. })));
    }
}
