//! Time specifications: `--time`, `--time-min` and the durations squeue prints.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::tag_no_case;
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map, map_res, opt, value};
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// A time limit in minutes; `None` is INFINITE/UNLIMITED.
pub type LimitMinutes = Option<u32>;

/// The largest limit we hand out, in minutes (one below `NO_VAL`'s 32-bit range end).
pub const MAX_MINUTES: u64 = u32::MAX as u64 - 1;

/// A decimal number without sign.
pub(crate) fn number(i: &str) -> IResult<&str, u64> {
    map_res(digit1, str::parse::<u64>).parse(i)
}

/// `:N`
fn colon_number(i: &str) -> IResult<&str, u64> {
    preceded(char(':'), number).parse(i)
}

/// The parsed shape of a time specification, in seconds; `None` is infinite.
fn time_spec(i: &str) -> IResult<&str, Option<u64>> {
    let infinite = value(None, alt((tag_no_case("infinite"), tag_no_case("unlimited"), tag_no_case("-1"))));
    // days-hours[:minutes[:seconds]]
    let with_days = map((number, char('-'), number, opt(colon_number), opt(colon_number)), |(d, _, h, m, s)| {
        Some(
            d.saturating_mul(86400)
                .saturating_add(h.saturating_mul(3600))
                .saturating_add(m.unwrap_or(0).saturating_mul(60).saturating_add(s.unwrap_or(0))),
        )
    });
    // minutes | minutes:seconds | hours:minutes:seconds
    let plain = map((number, opt(colon_number), opt(colon_number)), |(a, b, c)| {
        Some(match (b, c) {
            (None, _) => a.saturating_mul(60),
            (Some(b), None) => a.saturating_mul(60).saturating_add(b),
            (Some(b), Some(c)) => a.saturating_mul(3600).saturating_add(b.saturating_mul(60)).saturating_add(c),
        })
    });
    alt((infinite, with_days, plain)).parse(i)
}

/// Parses a time specification into seconds (`None`: INFINITE/UNLIMITED), without the
/// zero-means-unlimited rule of `--time`.
pub fn parse_time_secs(text: &str, option: &'static str) -> Result<Option<u64>, OptionError> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix('-') {
        if rest != "1" && !rest.is_empty() && all_consuming(time_spec).parse(rest).is_ok() {
            return Err(OptionError::Invalid {
                option,
                value: text.to_string(),
                why: "a time cannot be negative (use INFINITE or UNLIMITED for no limit)".into(),
            });
        }
    }
    match all_consuming(time_spec).parse(t) {
        Ok((_, secs)) => Ok(secs),
        Err(_) => Err(OptionError::InvalidSpec { option, value: text.to_string() }),
    }
}

/// Parses a Slurm time limit: `minutes`, `minutes:seconds`, `hours:minutes:seconds`,
/// `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`, or
/// `INFINITE`/`UNLIMITED`/`-1` (case-insensitive). Seconds round up to the next minute, as
/// Slurm does; a limit of zero means no limit (sbatch(1): "A time limit of zero requests that
/// no time limit be imposed").
///
/// Unlike Slurm, which takes `--time=-5` as a huge limit, a negative value is refused with
/// [`OptionError::Invalid`].
pub fn parse_time_limit(text: &str) -> Result<LimitMinutes, OptionError> {
    match parse_time_secs(text, "time")? {
        None | Some(0) => Ok(None),
        Some(secs) => Ok(Some(secs.div_ceil(60).min(MAX_MINUTES) as u32)),
    }
}

/// Formats an elapsed time in seconds the way squeue's TIME column does:
/// `M:SS`, `H:MM:SS`, `D-HH:MM:SS`.
pub fn format_elapsed(seconds: u64) -> String {
    let mut out = String::with_capacity(8);
    push_elapsed(&mut out, seconds);
    out
}

/// Appends `seconds` to `out` as [`format_elapsed`] writes it; a long listing writes one per
/// job.
pub fn push_elapsed(out: &mut String, seconds: u64) {
    let (d, h, m, s) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    if d > 0 {
        push_decimal(out, d);
        out.push('-');
        push_two_digits(out, h);
        out.push(':');
        push_two_digits(out, m);
    } else if h > 0 {
        push_decimal(out, h);
        out.push(':');
        push_two_digits(out, m);
    } else {
        push_decimal(out, m);
    }
    out.push(':');
    push_two_digits(out, s);
}

/// Appends `n` (below 100) to `out` as two digits.
fn push_two_digits(out: &mut String, n: u64) {
    out.push(char::from(b'0' + (n / 10 % 10) as u8));
    out.push(char::from(b'0' + (n % 10) as u8));
}

/// Appends `n` to `out` in decimal, without the formatting machinery a `write!` goes
/// through: a long listing writes several numbers per job.
pub fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// Formats a limit in minutes as squeue's TIME_LIMIT column (`UNLIMITED` when none).
pub fn format_limit(limit: LimitMinutes) -> String {
    match limit {
        None => "UNLIMITED".to_string(),
        Some(m) => format_elapsed(m as u64 * 60),
    }
}

/// Formats a limit as scontrol and sinfo -l do: `HH:MM:SS` / `D-HH:MM:SS`, `UNLIMITED`.
pub fn format_limit_long(limit: LimitMinutes) -> String {
    match limit {
        None => "UNLIMITED".to_string(),
        Some(m) => format_hms(m as u64 * 60),
    }
}

/// `HH:MM:SS`, or `D-HH:MM:SS` past a day (scontrol's RunTime and TimeLimit, sacct's Elapsed).
pub fn format_hms(seconds: u64) -> String {
    let (d, h, m, s) = (seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mins(t: &str) -> LimitMinutes {
        parse_time_limit(t).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    #[test]
    fn all_slurm_formats() {
        assert_eq!(mins("5"), Some(5));
        assert_eq!(mins("90"), Some(90));
        assert_eq!(mins("5:30"), Some(6)); // minutes:seconds, rounded up
        assert_eq!(mins("5:00"), Some(5));
        assert_eq!(mins("1:00:00"), Some(60));
        assert_eq!(mins("00:01:00"), Some(1));
        assert_eq!(mins("264:00:00"), Some(264 * 60));
        assert_eq!(mins("10:00:0"), Some(600));
        assert_eq!(mins("2-0"), Some(2 * 1440));
        assert_eq!(mins("1-12"), Some(1440 + 720));
        assert_eq!(mins("1-12:30"), Some(1440 + 750));
        assert_eq!(mins("1-00:00:01"), Some(1441));
        assert_eq!(mins(" 30 "), Some(30));
    }

    #[test]
    fn seconds_round_up() {
        assert_eq!(mins("0:1"), Some(1));
        assert_eq!(mins("0:59"), Some(1));
        assert_eq!(mins("0:60"), Some(1));
        assert_eq!(mins("0:61"), Some(2));
        assert_eq!(mins("0:00:01"), Some(1));
    }

    #[test]
    fn infinite_forms() {
        for t in ["INFINITE", "infinite", "UNLIMITED", "Unlimited", "-1", "0", "0:00", "00:00:00", "0-0"] {
            assert_eq!(mins(t), None, "{t}");
        }
    }

    #[test]
    fn huge_values_saturate() {
        assert_eq!(mins("99999999999"), Some(MAX_MINUTES as u32));
        assert_eq!(mins("999999999-0"), Some(MAX_MINUTES as u32));
    }

    #[test]
    fn malformed_is_invalid_spec() {
        for t in [
            "abc",
            "1:2:3:4",
            "notatime",
            "",
            " ",
            "1-",
            "-",
            "1:",
            ":5",
            "1::2",
            "1-2-3",
            "1-2:3:4:5",
            "5m",
            "1h",
            "1.5",
            "+5",
            "1 2",
            "99999999999999999999999",
        ] {
            let e = parse_time_limit(t).unwrap_err();
            assert_eq!(e, OptionError::InvalidSpec { option: "time", value: t.into() }, "{t}");
            assert_eq!(e.to_string(), "Invalid --time specification");
        }
    }

    #[test]
    fn negative_is_refused_clearly() {
        for t in ["-5", "-0:30", "-1-00:00:00", "-2"] {
            match parse_time_limit(t) {
                Err(OptionError::Invalid { option: "time", value, why }) => {
                    assert_eq!(value, t);
                    assert!(why.contains("negative"), "{why}");
                }
                other => panic!("{t}: {other:?}"),
            }
        }
        assert!(parse_time_limit("-5").unwrap_err().to_string().contains("'-5'"));
        // -1 stays Slurm's INFINITE
        assert_eq!(mins("-1"), None);
    }

    #[test]
    fn seconds_api_keeps_zero() {
        assert_eq!(parse_time_secs("0", "time-min").unwrap(), Some(0));
        assert_eq!(parse_time_secs("1:02:03", "time-min").unwrap(), Some(3723));
        assert_eq!(parse_time_secs("1-0:0:1", "time-min").unwrap(), Some(86401));
        assert_eq!(parse_time_secs("x", "time-min").unwrap_err().to_string(), "Invalid --time-min specification");
    }

    #[test]
    fn formatting() {
        let mut out = String::from("x");
        for n in [0, 7, 1_234_567_890, u64::MAX] {
            push_decimal(&mut out, n);
            out.push(' ');
        }
        assert_eq!(out, format!("x0 7 1234567890 {} ", u64::MAX));
        assert_eq!(format_elapsed(0), "0:00");
        assert_eq!(format_elapsed(59), "0:59");
        assert_eq!(format_elapsed(300), "5:00");
        assert_eq!(format_elapsed(3600), "1:00:00");
        assert_eq!(format_elapsed(3661), "1:01:01");
        assert_eq!(format_elapsed(86400), "1-00:00:00");
        assert_eq!(format_elapsed(90061), "1-01:01:01");
        assert_eq!(format_limit(None), "UNLIMITED");
        assert_eq!(format_limit(Some(0)), "0:00");
        assert_eq!(format_limit(Some(5)), "5:00");
        assert_eq!(format_limit(Some(60)), "1:00:00");
        assert_eq!(format_limit(Some(1440)), "1-00:00:00");
        assert_eq!(format_limit_long(None), "UNLIMITED");
        assert_eq!(format_limit_long(Some(1)), "00:01:00");
        assert_eq!(format_limit_long(Some(60)), "01:00:00");
        assert_eq!(format_limit_long(Some(1440)), "1-00:00:00");
        assert_eq!(format_hms(0), "00:00:00");
        assert_eq!(format_hms(3723), "01:02:03");
        assert_eq!(format_hms(2 * 86400 + 5), "2-00:00:05");
    }

    #[test]
    fn parse_format_round_trip() {
        for m in [1u32, 5, 59, 60, 61, 1439, 1440, 1441, 10_000, 15_840] {
            assert_eq!(mins(&format_limit(Some(m))), Some(m));
            assert_eq!(mins(&format_limit_long(Some(m))), Some(m));
        }
    }
}
