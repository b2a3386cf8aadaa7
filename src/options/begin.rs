//! `--begin` times: `now+60`, `now+1hour`, `HH:MM[:SS][AM|PM]`, `MM/DD[/YY]`, `MMDDYY`,
//! `YYYY-MM-DD[THH:MM[:SS]]`, `midnight`, `noon`, `fika`, `teatime`, `today`, `tomorrow`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_while, take_while_m_n};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, map, map_res, opt, value};
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// What a `--begin` value says, before it is placed in local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `now[+count[unit]]`: seconds from now.
    After(u64),
    /// A time of day (`HH:MM[:SS]`, `noon`…): today, or tomorrow if it has passed.
    TimeOfDay(u32, u32, u32),
    /// `today` / `tomorrow`: midnight at the start of today plus this many days.
    Day(u32),
    /// A date (year if given, month 1-12, day) and a time of day.
    Date(Option<i32>, u32, u32, (u32, u32, u32)),
}

fn fixed(n: usize) -> impl FnMut(&str) -> IResult<&str, u32> {
    move |i| map_res(take_while_m_n(n, n, |c: char| c.is_ascii_digit()), str::parse::<u32>).parse(i)
}

fn num(i: &str) -> IResult<&str, u64> {
    map_res(digit1, str::parse::<u64>).parse(i)
}

/// `now[+count[unit]]`; the unit words of Slurm, singular or plural, case-insensitive.
fn now_spec(i: &str) -> IResult<&str, Spec> {
    let unit = alt((
        value(
            1u64,
            alt((
                tag_no_case("seconds"),
                tag_no_case("second"),
                tag_no_case("secs"),
                tag_no_case("sec"),
                tag_no_case("s"),
            )),
        ),
        value(
            60,
            alt((
                tag_no_case("minutes"),
                tag_no_case("minute"),
                tag_no_case("mins"),
                tag_no_case("min"),
                tag_no_case("m"),
            )),
        ),
        value(
            3600,
            alt((tag_no_case("hours"), tag_no_case("hour"), tag_no_case("hrs"), tag_no_case("hr"), tag_no_case("h"))),
        ),
        value(86400, alt((tag_no_case("days"), tag_no_case("day"), tag_no_case("d")))),
        value(604800, alt((tag_no_case("weeks"), tag_no_case("week"), tag_no_case("w")))),
    ));
    map_res(
        preceded(tag_no_case("now"), opt(preceded((char('+'), take_while(|c| c == ' ')), (num, opt(unit))))),
        |delta| match delta {
            None => Ok(Spec::After(0)),
            Some((n, unit)) => n.checked_mul(unit.unwrap_or(1)).map(Spec::After).ok_or(()),
        },
    )
    .parse(i)
}

fn keyword(i: &str) -> IResult<&str, Spec> {
    alt((
        value(Spec::TimeOfDay(0, 0, 0), tag_no_case("midnight")),
        value(Spec::TimeOfDay(12, 0, 0), tag_no_case("noon")),
        value(Spec::TimeOfDay(15, 0, 0), tag_no_case("fika")),
        value(Spec::TimeOfDay(16, 0, 0), tag_no_case("teatime")),
        value(Spec::Day(0), tag_no_case("today")),
        value(Spec::Day(1), tag_no_case("tomorrow")),
    ))
    .parse(i)
}

/// `HH:MM[:SS]` (one or two digits for the hour).
fn clock(i: &str) -> IResult<&str, (u32, u32, u32)> {
    map(
        (
            map_res(take_while_m_n(1, 2, |c: char| c.is_ascii_digit()), str::parse::<u32>),
            preceded(char(':'), fixed(2)),
            opt(preceded(char(':'), fixed(2))),
        ),
        |(h, m, s)| (h, m, s.unwrap_or(0)),
    )
    .parse(i)
}

/// `HH:MM[:SS][ ][AM|PM]`.
fn time_of_day(i: &str) -> IResult<&str, Spec> {
    map_res(
        (clock, opt(preceded(take_while(|c| c == ' '), alt((tag_no_case("am"), tag_no_case("pm")))))),
        |((h, m, s), half)| {
            let h = match half.map(|x: &str| x.to_ascii_lowercase()) {
                None => h,
                Some(_) if !(1..=12).contains(&h) => return Err(()),
                Some(x) if x == "am" => h % 12,
                Some(_) => h % 12 + 12,
            };
            Ok(Spec::TimeOfDay(h, m, s))
        },
    )
    .parse(i)
}

/// `YYYY-MM-DD[THH:MM[:SS]]`.
fn iso(i: &str) -> IResult<&str, Spec> {
    map((fixed(4), char('-'), fixed(2), char('-'), fixed(2), opt(preceded(char('T'), clock))), |(y, _, mo, _, d, t)| {
        Spec::Date(Some(y as i32), mo, d, t.unwrap_or((0, 0, 0)))
    })
    .parse(i)
}

/// `MM/DD[/YY]` (a four-digit year is taken too).
fn slashed(i: &str) -> IResult<&str, Spec> {
    map((fixed(2), char('/'), fixed(2), opt(preceded(char('/'), alt((fixed(4), fixed(2)))))), |(mo, _, d, y)| {
        Spec::Date(y.map(|y| if y < 100 { 2000 + y as i32 } else { y as i32 }), mo, d, (0, 0, 0))
    })
    .parse(i)
}

/// `MMDDYY`.
fn compact(i: &str) -> IResult<&str, Spec> {
    map((fixed(2), fixed(2), fixed(2)), |(mo, d, y)| Spec::Date(Some(2000 + y as i32), mo, d, (0, 0, 0))).parse(i)
}

fn spec(i: &str) -> IResult<&str, Spec> {
    alt((now_spec, keyword, iso, slashed, compact, time_of_day)).parse(i)
}

fn local(t: u64) -> libc::tm {
    // SAFETY: an all-zero tm is a valid value; localtime_r fills it from a valid time_t.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let t = t as libc::time_t;
        libc::localtime_r(&t, &mut tm);
        tm
    }
}

/// Local date and time to UNIX seconds (DST decided by the C library); `None` if the fields
/// do not name a real moment (Feb 30) or it is before the epoch.
fn make(year: i32, month: u32, day: u32, (h, m, s): (u32, u32, u32)) -> Option<u64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 59 {
        return None;
    }
    // SAFETY: an all-zero tm is valid; mktime reads and normalises it.
    let (t, tm) = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = year - 1900;
        tm.tm_mon = month as i32 - 1;
        tm.tm_mday = day as i32;
        tm.tm_hour = h as i32;
        tm.tm_min = m as i32;
        tm.tm_sec = s as i32;
        tm.tm_isdst = -1;
        (libc::mktime(&mut tm), tm)
    };
    if t < 0 || tm.tm_mday != day as i32 || tm.tm_mon != month as i32 - 1 {
        return None;
    }
    Some(t as u64)
}

/// Parses a `--begin` value into a UNIX timestamp, relative to `now` (UNIX seconds), with
/// Slurm's meanings in local time:
///
/// * `now`, `now+N[unit]`: unit `seconds` (default), `minutes`, `hours`, `days`, `weeks`
///   (singular, plural or abbreviated, any case);
/// * `HH:MM[:SS]` with optional `AM`/`PM`, `midnight` (00:00), `noon` (12:00), `fika`
///   (15:00), `teatime` (16:00): today, or tomorrow if that moment has passed;
/// * `today`, `tomorrow`: 00:00 of that day (`today` is therefore already due);
/// * `MM/DD[/YY]`, `MMDDYY`, `YYYY-MM-DD[THH:MM[:SS]]`: that date at 00:00 (or the given
///   time); a `MM/DD` without a year that is already behind today means next year.
///
/// Anything else, or a date that does not exist (`02/30`, `13/01`, `25:00`), is
/// `Invalid --begin specification`.
pub fn parse_begin(text: &str, now: u64) -> Result<u64, OptionError> {
    let bad = || OptionError::InvalidSpec { option: "begin", value: text.to_string() };
    let (_, spec) = all_consuming(spec).parse(text.trim()).map_err(|_| bad())?;
    let tm = local(now);
    let (year, month, day) = (tm.tm_year + 1900, tm.tm_mon as u32 + 1, tm.tm_mday as u32);
    let at = match spec {
        Spec::After(secs) => now.checked_add(secs),
        Spec::TimeOfDay(h, m, s) => match make(year, month, day, (h, m, s)) {
            Some(t) if t > now => Some(t),
            Some(_) => plus_days(year, month, day, 1, (h, m, s)),
            None => None,
        },
        Spec::Day(n) => plus_days(year, month, day, n, (0, 0, 0)),
        Spec::Date(Some(y), mo, d, time) => make(y, mo, d, time),
        Spec::Date(None, mo, d, time) => make(if (mo, d) < (month, day) { year + 1 } else { year }, mo, d, time),
    };
    at.ok_or_else(bad)
}

/// `n` days after the given date, at the given local time (so DST days stay correct).
fn plus_days(year: i32, month: u32, day: u32, n: u32, time: (u32, u32, u32)) -> Option<u64> {
    let base = make(year, month, day, (12, 0, 0))?;
    let next = local(base + n as u64 * 86400);
    make(next.tm_year + 1900, next.tm_mon as u32 + 1, next.tm_mday as u32, time)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2030-06-15 12:00:00 local time.
    fn noon_0615() -> u64 {
        make(2030, 6, 15, (12, 0, 0)).unwrap()
    }

    fn fields(t: u64) -> (i32, u32, u32, u32, u32, u32) {
        let tm = local(t);
        (
            tm.tm_year + 1900,
            tm.tm_mon as u32 + 1,
            tm.tm_mday as u32,
            tm.tm_hour as u32,
            tm.tm_min as u32,
            tm.tm_sec as u32,
        )
    }

    fn at(text: &str, now: u64) -> u64 {
        parse_begin(text, now).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn relative_to_now() {
        let now = crate::options::now();
        assert_eq!(at("now", now), now);
        assert_eq!(at("now+60", now), now + 60);
        assert_eq!(at("now+60seconds", now), now + 60);
        assert_eq!(at("now+5min", now), now + 300);
        assert_eq!(at("now+5minutes", now), now + 300);
        assert_eq!(at("now+1hour", now), now + 3600);
        assert_eq!(at("now+2hours", now), now + 7200);
        assert_eq!(at("NOW+1HOUR", now), now + 3600);
        assert_eq!(at("now+ 1hour", now), now + 3600);
        assert_eq!(at("now+2days", now), now + 2 * 86400);
        assert_eq!(at("now+1week", now), now + 604800);
        assert_eq!(at("now+3weeks", now), now + 3 * 604800);
        assert_eq!(at(" now+0 ", now), now);
    }

    #[test]
    fn dates() {
        let now = noon_0615();
        assert_eq!(fields(at("2030-06-15T10:30", now)), (2030, 6, 15, 10, 30, 0));
        assert_eq!(fields(at("2031-01-02T03:04:05", now)), (2031, 1, 2, 3, 4, 5));
        assert_eq!(fields(at("2030-07-01", now)), (2030, 7, 1, 0, 0, 0));
        assert_eq!(fields(at("07/01/31", now)), (2031, 7, 1, 0, 0, 0));
        assert_eq!(fields(at("07/01/2031", now)), (2031, 7, 1, 0, 0, 0));
        assert_eq!(fields(at("070131", now)), (2031, 7, 1, 0, 0, 0));
        // without a year: this year, or next year when already behind today
        assert_eq!(fields(at("12/31", now)), (2030, 12, 31, 0, 0, 0));
        assert_eq!(fields(at("06/15", now)), (2030, 6, 15, 0, 0, 0));
        assert_eq!(fields(at("01/01", now)), (2031, 1, 1, 0, 0, 0));
        // leap day
        assert_eq!(fields(at("2032-02-29", now)), (2032, 2, 29, 0, 0, 0));
        // the present moment round-trips
        let t = crate::options::now();
        let (y, mo, d, h, mi, _) = fields(t);
        let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}");
        assert_eq!(fields(at(&text, t)), (y, mo, d, h, mi, 0));
    }

    #[test]
    fn times_of_day() {
        let now = noon_0615();
        assert_eq!(fields(at("16:00", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("16:00:30", now)), (2030, 6, 15, 16, 0, 30));
        assert_eq!(fields(at("9:15", now)), (2030, 6, 16, 9, 15, 0));
        assert_eq!(fields(at("12:00", now)), (2030, 6, 16, 12, 0, 0)); // not after now
        assert_eq!(fields(at("midnight", now)), (2030, 6, 16, 0, 0, 0));
        assert_eq!(fields(at("noon", now)), (2030, 6, 16, 12, 0, 0));
        assert_eq!(fields(at("fika", now)), (2030, 6, 15, 15, 0, 0));
        assert_eq!(fields(at("teatime", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("TeaTime", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("4:00pm", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("4:00 PM", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("12:30am", now)), (2030, 6, 16, 0, 30, 0));
        assert_eq!(fields(at("12:30pm", now)), (2030, 6, 15, 12, 30, 0));
        assert_eq!(fields(at("today", now)), (2030, 6, 15, 0, 0, 0));
        assert_eq!(fields(at("tomorrow", now)), (2030, 6, 16, 0, 0, 0));
        // month and year ends
        let eoy = make(2030, 12, 31, (20, 0, 0)).unwrap();
        assert_eq!(fields(at("tomorrow", eoy)), (2031, 1, 1, 0, 0, 0));
        assert_eq!(fields(at("08:00", eoy)), (2031, 1, 1, 8, 0, 0));
    }

    #[test]
    fn times_of_day_from_the_real_now() {
        let now = crate::options::now();
        for (text, h) in [("midnight", 0), ("noon", 12), ("fika", 15), ("teatime", 16), ("03:07", 3)] {
            let t = at(text, now);
            assert!(t > now && t <= now + 25 * 3600, "{text}");
            assert_eq!((fields(t).3, fields(t).5), (h, 0), "{text}");
        }
        assert!(at("today", now) <= now);
        assert!(at("tomorrow", now) > now);
    }

    #[test]
    fn invalid() {
        let now = noon_0615();
        for t in [
            "",
            "yesterday",
            "now+",
            "now+5parsecs",
            "now-5",
            "now+x",
            "25:00",
            "12:60",
            "12:00:60",
            "1:5",
            "13:00pm",
            "0:00am",
            "13/01",
            "02/30",
            "02/30/31",
            "2030-13-01",
            "2030-02-30",
            "2030-06-15T24:00",
            "2030-6-15",
            "063130",
            "1234567890",
            "12345",
            "next week",
            "now+99999999999999999999",
        ] {
            assert_eq!(
                parse_begin(t, now),
                Err(OptionError::InvalidSpec { option: "begin", value: t.into() }),
                "{t:?}"
            );
        }
        assert_eq!(parse_begin("soon", now).unwrap_err().to_string(), "Invalid --begin specification");
    }
}
