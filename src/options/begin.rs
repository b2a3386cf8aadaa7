//! `--begin` times: `now+60`, `now + 1 hour`, `HH:MM[:SS] [AM|PM]`, `MMDD[YY]`,
//! `MM/DD[/YY]`, `MM.DD[.YY]`, `MM/DD[/YY]-HH:MM[:SS]`, `YYYY-MM-DD[THH:MM[:SS]]`, `midnight`,
//! `noon`, `elevenses`, `fika`, `teatime`, `today`, `tomorrow`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_while_m_n};
use nom::character::complete::{char, digit1, one_of, space0, space1};
use nom::combinator::{all_consuming, map, map_res, opt, value};
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// A time of day: hour, minute, second.
type Clock = (u32, u32, u32);

/// What a `--begin` value says, before it is placed in local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// `now[+count[unit]]`: seconds from now.
    After(u64),
    /// A time of day (`HH:MM[:SS]`, `noon`…): today, or tomorrow if it has passed.
    TimeOfDay(Clock),
    /// `today` / `tomorrow` (this many days after today), at 00:00 or the given time.
    Day(u32, Option<Clock>),
    /// A date (year if given, month 1-12, day), at 00:00 or the given time.
    Date(Option<i32>, u32, u32, Option<Clock>),
}

fn fixed(n: usize) -> impl FnMut(&str) -> IResult<&str, u32> {
    move |i| map_res(take_while_m_n(n, n, |c: char| c.is_ascii_digit()), str::parse::<u32>).parse(i)
}

/// One or two digits.
fn small(i: &str) -> IResult<&str, u32> {
    map_res(take_while_m_n(1, 2, |c: char| c.is_ascii_digit()), str::parse::<u32>).parse(i)
}

fn num(i: &str) -> IResult<&str, u64> {
    map_res(digit1, str::parse::<u64>).parse(i)
}

/// `now[ + count[ unit]]`; the unit words of Slurm, singular or plural, or abbreviated, in any
/// case; blanks are allowed around `+` and before the unit, as in Slurm.
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
        preceded(tag_no_case("now"), opt(preceded((space0, char('+'), space0), (num, opt(preceded(space0, unit)))))),
        |delta| match delta {
            None => Ok(Spec::After(0)),
            Some((n, unit)) => n.checked_mul(unit.unwrap_or(1)).map(Spec::After).ok_or(()),
        },
    )
    .parse(i)
}

/// `midnight`, `noon`, `elevenses`, `fika`, `teatime`.
fn named_time(i: &str) -> IResult<&str, Clock> {
    alt((
        value((0, 0, 0), tag_no_case("midnight")),
        value((12, 0, 0), tag_no_case("noon")),
        value((11, 0, 0), tag_no_case("elevenses")),
        value((15, 0, 0), tag_no_case("fika")),
        value((16, 0, 0), tag_no_case("teatime")),
    ))
    .parse(i)
}

/// `today` (0) or `tomorrow` (1).
fn named_day(i: &str) -> IResult<&str, u32> {
    alt((value(0, tag_no_case("today")), value(1, tag_no_case("tomorrow")))).parse(i)
}

/// `HH:MM[:SS]` (one or two digits for the hour).
fn clock(i: &str) -> IResult<&str, Clock> {
    map((small, preceded(char(':'), fixed(2)), opt(preceded(char(':'), fixed(2)))), |(h, m, s)| (h, m, s.unwrap_or(0)))
        .parse(i)
}

/// `HH:MM[:SS][ ][AM|PM]`.
fn time_of_day(i: &str) -> IResult<&str, Clock> {
    map_res((clock, opt(preceded(space0, alt((tag_no_case("am"), tag_no_case("pm")))))), |((h, m, s), half)| {
        let h = match half.map(|x: &str| x.to_ascii_lowercase()) {
            None => h,
            Some(_) if !(1..=12).contains(&h) => return Err(()),
            Some(x) if x == "am" => h % 12,
            Some(_) => h % 12 + 12,
        };
        Ok((h, m, s))
    })
    .parse(i)
}

/// A time part: a clock time or a named one.
fn time_part(i: &str) -> IResult<&str, Clock> {
    alt((named_time, time_of_day)).parse(i)
}

/// `YYYY-MM-DD`.
fn iso(i: &str) -> IResult<&str, (Option<i32>, u32, u32)> {
    map((fixed(4), char('-'), fixed(2), char('-'), fixed(2)), |(y, _, mo, _, d)| (Some(y as i32), mo, d)).parse(i)
}

/// `MM/DD[/YY]` or `MM.DD[.YY]` (one or two digits for month and day; a four-digit year is
/// taken too); the same separator throughout.
fn separated(i: &str) -> IResult<&str, (Option<i32>, u32, u32)> {
    let (i, mo) = small(i)?;
    let (i, sep) = one_of("/.")(i)?;
    let (i, d) = small(i)?;
    let (i, y) = opt(preceded(char(sep), alt((fixed(4), fixed(2))))).parse(i)?;
    Ok((i, (y.map(|y| if y < 100 { 2000 + y as i32 } else { y as i32 }), mo, d)))
}

/// `MMDD[YY]`.
fn compact(i: &str) -> IResult<&str, (Option<i32>, u32, u32)> {
    map((fixed(2), fixed(2), opt(fixed(2))), |(mo, d, y)| (y.map(|y| 2000 + y as i32), mo, d)).parse(i)
}

/// Between a day and a time: `T`, `-` or blanks.
fn day_time_sep(i: &str) -> IResult<&str, ()> {
    value((), alt((value((), char('T')), value((), char('-')), value((), space1)))).parse(i)
}

/// A date or `today`/`tomorrow`, optionally followed by a time: `2030-01-20T12:34`,
/// `01/20-12:34`, `tomorrow noon`.
fn dated(i: &str) -> IResult<&str, Spec> {
    let date = alt((iso, separated, compact));
    alt((
        map((date, opt(preceded(day_time_sep, time_part))), |((y, mo, d), t)| Spec::Date(y, mo, d, t)),
        map((named_day, opt(preceded(day_time_sep, time_part))), |(n, t)| Spec::Day(n, t)),
    ))
    .parse(i)
}

/// A time, optionally followed by `today`/`tomorrow` (`noon tomorrow`, `16:00 today`).
fn timed(i: &str) -> IResult<&str, Spec> {
    map((time_part, opt(preceded(space1, named_day))), |(t, day)| match day {
        Some(n) => Spec::Day(n, Some(t)),
        None => Spec::TimeOfDay(t),
    })
    .parse(i)
}

fn spec(i: &str) -> IResult<&str, Spec> {
    alt((now_spec, dated, timed)).parse(i)
}

fn local(t: u64) -> libc::tm {
    crate::sys::local_tm(t as i64)
}

/// Local date and time to UNIX seconds (DST decided by the C library); `None` if the fields
/// do not name a real moment (Feb 30) or it is before the epoch.
fn make(year: i32, month: u32, day: u32, (h, m, s): Clock) -> Option<u64> {
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
/// * `now`, `now+N[unit]` (blanks allowed: `now + 1 hour`): unit `seconds` (default),
///   `minutes`, `hours`, `days`, `weeks` (singular, plural or abbreviated, any case);
/// * `HH:MM[:SS]` with optional `AM`/`PM`, `midnight` (00:00), `noon` (12:00), `elevenses`
///   (11:00), `fika` (15:00), `teatime` (16:00): today, or tomorrow if that moment has
///   passed;
/// * `today`, `tomorrow`: 00:00 of that day (`today` is therefore already due), or the time
///   given with it (`tomorrow noon`, `tomorrow-16:00`, `16:00 tomorrow`);
/// * `MMDD[YY]`, `MM/DD[/YY]`, `MM.DD[.YY]`, `YYYY-MM-DD`: that date at 00:00, or at the
///   time that follows after `T`, `-` or blanks (`2030-01-20T12:34:00`, `01/20-12:34`);
///   without a year, this year unless that moment has already passed, else next year.
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
        Spec::TimeOfDay(time) => match make(year, month, day, time) {
            Some(t) if t > now => Some(t),
            Some(_) => plus_days(year, month, day, 1, time),
            None => None,
        },
        Spec::Day(n, time) => plus_days(year, month, day, n, time.unwrap_or((0, 0, 0))),
        Spec::Date(Some(y), mo, d, time) => make(y, mo, d, time.unwrap_or((0, 0, 0))),
        Spec::Date(None, mo, d, time) => {
            let time = time.unwrap_or((0, 0, 0));
            match make(year, mo, d, time) {
                Some(t) if t > now => Some(t),
                _ => make(year + 1, mo, d, time),
            }
        }
    };
    at.ok_or_else(bad)
}

/// `n` days after the given date, at the given local time (so DST days stay correct).
fn plus_days(year: i32, month: u32, day: u32, n: u32, time: Clock) -> Option<u64> {
    let base = make(year, month, day, (12, 0, 0))?;
    let next = local(base + n as u64 * 86400);
    make(next.tm_year + 1900, next.tm_mon as u32 + 1, next.tm_mday as u32, time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::test_support::short_strings;

    /// 2030-06-15 12:00:00 local time.
    fn noon_0615() -> u64 {
        make(2030, 6, 15, (12, 0, 0)).unwrap()
    }

    /// Year, month, day, hour, minute, second.
    type Fields = (i32, u32, u32, u32, u32, u32);

    fn fields(t: u64) -> Fields {
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
        let now = crate::sys::now();
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
        // without a year: this year, or next year when that moment has passed (sbatch(1):
        // "unless the combination of MM/DD and HH:MM:SS has already passed for that year")
        assert_eq!(fields(at("12/31", now)), (2030, 12, 31, 0, 0, 0));
        assert_eq!(fields(at("06/15", now)), (2031, 6, 15, 0, 0, 0));
        assert_eq!(fields(at("06/15-16:00", now)), (2030, 6, 15, 16, 0, 0));
        assert_eq!(fields(at("06/15-11:59", now)), (2031, 6, 15, 11, 59, 0));
        assert_eq!(fields(at("06/16", now)), (2030, 6, 16, 0, 0, 0));
        assert_eq!(fields(at("01/01", now)), (2031, 1, 1, 0, 0, 0));
        // leap day
        assert_eq!(fields(at("2032-02-29", now)), (2032, 2, 29, 0, 0, 0));
        // the present moment round-trips
        let t = crate::sys::now();
        let (y, mo, d, h, mi, _) = fields(t);
        let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}");
        assert_eq!(fields(at(&text, t)), (y, mo, d, h, mi, 0));
    }

    #[test]
    fn all_date_forms_of_the_man_page() {
        let now = noon_0615();
        let cases: &[(&str, Fields)] = &[
            // MMDD[YY]
            ("0701", (2030, 7, 1, 0, 0, 0)),
            ("070131", (2031, 7, 1, 0, 0, 0)),
            ("0601", (2031, 6, 1, 0, 0, 0)),
            // MM/DD[/YY], MM.DD[.YY], one or two digits
            ("07/01", (2030, 7, 1, 0, 0, 0)),
            ("7/1", (2030, 7, 1, 0, 0, 0)),
            ("7/1/31", (2031, 7, 1, 0, 0, 0)),
            ("07.01", (2030, 7, 1, 0, 0, 0)),
            ("07.01.31", (2031, 7, 1, 0, 0, 0)),
            ("7.1.2031", (2031, 7, 1, 0, 0, 0)),
            // MM/DD[/YY]-HH:MM[:SS], and the other joins Slurm reads
            ("07/01-10:30", (2030, 7, 1, 10, 30, 0)),
            ("07/01/31-10:30:15", (2031, 7, 1, 10, 30, 15)),
            ("07.01.31-10:30", (2031, 7, 1, 10, 30, 0)),
            ("070131-23:59:59", (2031, 7, 1, 23, 59, 59)),
            ("07/01 10:30", (2030, 7, 1, 10, 30, 0)),
            ("07/01-4:00pm", (2030, 7, 1, 16, 0, 0)),
            ("07/01-teatime", (2030, 7, 1, 16, 0, 0)),
            // YYYY-MM-DD[THH:MM[:SS]]
            ("2010-01-20T12:34:00", (2010, 1, 20, 12, 34, 0)),
            ("2030-07-01T10:30", (2030, 7, 1, 10, 30, 0)),
            ("2030-07-01 10:30", (2030, 7, 1, 10, 30, 0)),
            ("2030-07-01-10:30", (2030, 7, 1, 10, 30, 0)),
            ("2030-07-01Tnoon", (2030, 7, 1, 12, 0, 0)),
            // today / tomorrow with a time
            ("today 16:00", (2030, 6, 15, 16, 0, 0)),
            ("today 9:00", (2030, 6, 15, 9, 0, 0)),
            ("tomorrow noon", (2030, 6, 16, 12, 0, 0)),
            ("tomorrow-16:00", (2030, 6, 16, 16, 0, 0)),
            ("tomorrowT16:00:05", (2030, 6, 16, 16, 0, 5)),
            ("noon tomorrow", (2030, 6, 16, 12, 0, 0)),
            ("9:00am tomorrow", (2030, 6, 16, 9, 0, 0)),
            ("elevenses today", (2030, 6, 15, 11, 0, 0)),
            ("TOMORROW  Elevenses", (2030, 6, 16, 11, 0, 0)),
        ];
        for (text, want) in cases {
            assert_eq!(fields(at(text, now)), *want, "{text:?}");
        }
        // a leap day without a year waits for the next one that has it
        let feb = make(2031, 2, 1, (12, 0, 0)).unwrap();
        assert_eq!(fields(at("02/29", feb)), (2032, 2, 29, 0, 0, 0));
    }

    #[test]
    fn now_with_blanks() {
        let now = noon_0615();
        assert_eq!(at("now + 1 hour", now), now + 3600);
        assert_eq!(at("now +90", now), now + 90);
        assert_eq!(at("now+2 days", now), now + 2 * 86400);
        assert_eq!(at("now + 3 Weeks", now), now + 3 * 604800);
        assert_eq!(at("now+10 seconds", now), now + 10);
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
        assert_eq!(fields(at("elevenses", now)), (2030, 6, 16, 11, 0, 0));
        assert_eq!(fields(at("ELEVENSES", now)), (2030, 6, 16, 11, 0, 0));
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
        let now = crate::sys::now();
        for (text, h) in [("midnight", 0), ("noon", 12), ("elevenses", 11), ("fika", 15), ("teatime", 16), ("03:07", 3)]
        {
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
            "now +",
            "now 5",
            "now+5 x",
            "2030-06-15T",
            "2030-06-15T10",
            "07/01-",
            "07/01-25:00",
            "07/01.31",
            "7/1/3",
            "7//1",
            "/7/1",
            "123/1",
            "07/01 10:30 tomorrow",
            "today tomorrow",
            "tomorrow today",
            "noon noon",
            "16:00tomorrow",
            "tomorrow16:00",
            "1600",
            "0230",
            "elevenses+1",
            "teatime:00",
            "uts1900000000",
        ] {
            assert_eq!(
                parse_begin(t, now),
                Err(OptionError::InvalidSpec { option: "begin", value: t.into() }),
                "{t:?}"
            );
        }
        assert_eq!(parse_begin("soon", now).unwrap_err().to_string(), "Invalid --begin specification");
    }

    #[test]
    fn no_input_panics() {
        let now = noon_0615();
        for s in short_strings("0129:/.-T +apn", 4) {
            let _ = parse_begin(&s, now);
        }
        for t in [0, u64::MAX, i64::MAX as u64] {
            let _ = parse_begin("now+1", t);
            let _ = parse_begin("noon", t);
            let _ = parse_begin("tomorrow", t);
        }
    }
}
