//! sacct's times: `-S`/`-E` read as Slurm's `parse_time` reads them when looking into the
//! past, and times printed as Slurm prints them, in local time.
//!
//! Accepted: `HH:MM[:SS] [AM|PM]`, `MMDD[YY]`, `MM/DD[/YY]`, `MM.DD[.YY]`,
//! `MM/DD[/YY]-HH:MM[:SS]`, `YYYY-MM-DD[THH:MM[:SS]]`, `now[{+|-}count[unit]]` (units
//! `seconds` (default), `minutes`, `hours`, `days`, `weeks`, singular or plural), `today`,
//! `tomorrow`, `midnight`, `noon`, `elevenses`, `fika`, `teatime`, and `uts<seconds>`. A
//! time without a date is today; a date without a year is this year unless its month is still
//! to come, then last year.

use crate::api::acct::NO_VAL;

/// Slurm's `INFINITE`, as a time (printed `Unknown`).
const INFINITE: u64 = 0xffff_ffff;

/// The unit words of `now±count`, first match first, and their seconds.
const UNITS: &[(&str, i64)] = &[
    ("seconds", 1),
    ("second", 1),
    ("minutes", 60),
    ("minute", 60),
    ("hours", 3600),
    ("hour", 3600),
    ("days", 86400),
    ("day", 86400),
    ("weeks", 604800),
    ("week", 604800),
];

/// Local broken-down time of `t`.
fn local(t: i64) -> libc::tm {
    crate::sys::local_tm(t)
}

/// `mktime` of local fields, normalising out-of-range ones as the C library does.
fn make(year: i32, mon: i32, mday: i32, hour: i32, min: i32, sec: i32) -> Option<u64> {
    // SAFETY: an all-zero tm is valid; mktime reads and normalises it.
    let t = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = year;
        tm.tm_mon = mon;
        tm.tm_mday = mday;
        tm.tm_hour = hour;
        tm.tm_min = min;
        tm.tm_sec = sec;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm)
    };
    (t >= 0).then_some(t as u64)
}

/// UNIX time of a local date and time (`month` 1-12), for tests.
#[cfg(test)]
pub fn local_time(year: i32, month: i32, day: i32, hour: i32, minute: i32, second: i32) -> u64 {
    make(year - 1900, month - 1, day, hour, minute, second).expect("a valid local time")
}

/// A time as Slurm prints it: `YYYY-MM-DDTHH:MM:SS` in local time, `Unknown` for none,
/// `None` for [`NO_VAL`].
pub fn time_str(t: u64) -> String {
    match t {
        0 | INFINITE => "Unknown".into(),
        NO_VAL => "None".into(),
        t => crate::sys::format_local_time(t),
    }
}

/// The parser's state: the fields found so far (`-1`: not given), as in Slurm's.
struct Fields {
    hour: i32,
    minute: i32,
    second: i32,
    month: i32,
    mday: i32,
    year: i32,
}

/// Parses `text` as sacct's `-S`/`-E`, at `now`. `Ok(0)` when it names no time at all. The
/// error is the position Slurm reports (`Invalid time specification (pos=N): TEXT`).
pub fn parse_past_time(text: &str, now: u64) -> Result<u64, usize> {
    let b = text.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let starts =
        |i: usize, word: &str| b.len() >= i + word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes());
    if starts(0, "uts") {
        return match text[3..].parse::<i64>() {
            Ok(uts) if uts >= 1_000_000 => Ok(uts as u64),
            _ => Err(0),
        };
    }
    let today = local(now as i64);
    let mut f = Fields { hour: -1, minute: -1, second: 0, month: -1, mday: -1, year: -1 };
    let set_day = |f: &mut Fields, tm: &libc::tm| {
        f.month = tm.tm_mon;
        f.mday = tm.tm_mday;
        f.year = tm.tm_year;
    };
    let mut pos = 0usize;
    while pos < b.len() && at(pos) != b'\n' {
        let c = at(pos);
        if c == b' ' || c == b'\t' || c == b'-' || c == b'T' {
            pos += 1;
            continue;
        }
        let named = [("midnight", 0), ("noon", 12), ("elevenses", 11), ("fika", 15), ("teatime", 16)];
        if starts(pos, "today") {
            set_day(&mut f, &today);
            pos += 5;
            continue;
        }
        if starts(pos, "tomorrow") {
            set_day(&mut f, &local(now as i64 + 86400));
            pos += 8;
            continue;
        }
        if let Some((word, hour)) = named.iter().find(|(w, _)| starts(pos, w)) {
            (f.hour, f.minute, f.second) = (*hour, 0, 0);
            pos += word.len();
            continue;
        }
        if starts(pos, "now") {
            let mut i = pos + 3;
            let mut delta = 0i64;
            loop {
                match at(i) {
                    sign @ (b'+' | b'-') => {
                        let (d, end) = delta_after(b, i)?;
                        delta = if sign == b'-' { -d } else { d };
                        pos = end;
                        break;
                    }
                    b' ' | b'\t' => i += 1,
                    0 | b'\n' => {
                        pos = i;
                        break;
                    }
                    _ => return Err(i),
                }
            }
            let later = local(now as i64 + delta);
            set_day(&mut f, &later);
            (f.hour, f.minute, f.second) = (later.tm_hour, later.tm_min, later.tm_sec);
            continue;
        }
        if !c.is_ascii_digit() {
            return Err(pos);
        }
        pos = if at(pos + 1) == b':' || at(pos + 2) == b':' { clock(b, pos, &mut f)? } else { date(b, pos, &mut f)? };
    }
    if f.hour == -1 && f.month == -1 {
        return Ok(0);
    }
    if f.hour == -1 {
        (f.hour, f.minute) = (0, 0);
    } else if f.month == -1 {
        // A time without a date, looking into the past: today.
        set_day(&mut f, &today);
    }
    if f.year == -1 {
        f.year = if f.month > today.tm_mon { today.tm_year - 1 } else { today.tm_year };
    }
    make(f.year, f.month, f.mday, f.hour, f.minute, f.second).ok_or(pos)
}

/// The count and unit after the sign at `sign` of `now±count[unit]`: seconds, and the index
/// just past what was read.
fn delta_after(b: &[u8], sign: usize) -> Result<(i64, usize), usize> {
    let mut i = sign + 1;
    let mut count = 0i64;
    let mut digits = 0;
    while i < b.len() && b[i] != b'\n' {
        if b[i] == b' ' || b[i] == b'\t' {
            i += 1;
            continue;
        }
        if let Some((word, secs)) =
            UNITS.iter().find(|(w, _)| b.len() >= i + w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w.as_bytes()))
        {
            i += word.len();
            count = count.saturating_mul(*secs);
            break;
        }
        if b[i].is_ascii_digit() {
            count = count.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
            digits += 1;
            i += 1;
            continue;
        }
        // Slurm reports the character before the one it could not read.
        return Err(i - 1);
    }
    if digits == 0 {
        return Err(sign);
    }
    Ok((count, i))
}

/// `HH:MM[:SS] [AM|PM]` at `start`; returns the index after it.
fn clock(b: &[u8], start: usize, f: &mut Fields) -> Result<usize, usize> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let digit = |i: usize| at(i).is_ascii_digit().then(|| (at(i) - b'0') as i32);
    let mut i = start;
    let mut hour = digit(i).ok_or(i)?;
    i += 1;
    if at(i) != b':' {
        hour = hour * 10 + digit(i).ok_or(i)?;
        i += 1;
    }
    if hour > 23 {
        return Err(i - 2);
    }
    if at(i) != b':' {
        return Err(i);
    }
    i += 1;
    let minute = digit(i).ok_or(i)? * 10 + digit(i + 1).ok_or(i + 1)?;
    i += 2;
    if minute > 59 {
        return Err(i - 2);
    }
    let mut second = 0;
    if at(i) == b':' {
        second = digit(i + 1).ok_or(i + 1)? * 10 + digit(i + 2).ok_or(i + 2)?;
        i += 3;
        if second > 59 {
            return Err(i - 2);
        }
    }
    while at(i) == b' ' || at(i) == b'\t' {
        i += 1;
    }
    let half = |word: &[u8]| b.len() >= i + 2 && b[i..i + 2].eq_ignore_ascii_case(word);
    if half(b"pm") {
        hour += 12;
        if hour > 23 {
            if hour != 24 {
                return Err(i);
            }
            hour = 12;
        }
        i += 2;
    } else if half(b"am") {
        if hour > 11 {
            if hour != 12 {
                return Err(i);
            }
            hour = 0;
        }
        i += 2;
    }
    (f.hour, f.minute, f.second) = (hour, minute, second);
    Ok(i)
}

/// `YYYY-MM-DD`, or `MM[/.]DD[[/.]YY]` / `MMDD[YY]`, at `start`; returns the index after it.
fn date(b: &[u8], start: usize, f: &mut Fields) -> Result<usize, usize> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let digit = |i: usize| at(i).is_ascii_digit().then(|| (at(i) - b'0') as i32);
    let mut i = start;
    if b.len() >= start + 7 && at(start + 4) == b'-' && at(start + 7) == b'-' {
        let mut year = 0;
        for _ in 0..4 {
            year = year * 10 + digit(i).ok_or(i)?;
            i += 1;
        }
        i += 1;
        let (month, next) = one_or_two(b, i);
        if !(1..=12).contains(&month) {
            return Err(next.saturating_sub(2));
        }
        i = next + 1;
        digit(i).ok_or(i)?;
        let (day, next) = one_or_two(b, i);
        if !(1..=31).contains(&day) {
            return Err(next.saturating_sub(2));
        }
        (f.month, f.mday, f.year) = (month - 1, day, year - 1900);
        return Ok(next);
    }
    let (month, next) = one_or_two(b, i);
    if !(1..=12).contains(&month) {
        return Err(next.saturating_sub(2));
    }
    i = next;
    if at(i) == b'.' || at(i) == b'/' {
        i += 1;
    }
    digit(i).ok_or(i)?;
    let (day, next) = one_or_two(b, i);
    if !(1..=31).contains(&day) {
        return Err(next.saturating_sub(2));
    }
    i = next;
    if at(i) == b'.' || at(i) == b'/' {
        i += 1;
    }
    if let Some(y1) = digit(i) {
        let y2 = digit(i + 1).ok_or(i + 1)?;
        f.year = y1 * 10 + y2 + 100;
        i += 2;
    }
    (f.month, f.mday) = (month - 1, day);
    Ok(i)
}

/// One digit, or two when the second one is a digit, at `i` (the first is taken as it is,
/// as Slurm does); the value and the index after it.
fn one_or_two(b: &[u8], i: usize) -> (i32, usize) {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut v = at(i) as i32 - b'0' as i32;
    let mut next = i + 1;
    if at(next).is_ascii_digit() {
        v = v * 10 + (at(next) - b'0') as i32;
        next += 1;
    }
    (v, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, mo: i32, d: i32, h: i32, mi: i32, s: i32) -> u64 {
        make(y - 1900, mo - 1, d, h, mi, s).unwrap()
    }

    #[test]
    fn relative_and_named_times() {
        let now = at(2026, 11, 22, 1, 44, 33);
        assert_eq!(parse_past_time("now-1hour", now), Ok(now - 3600));
        assert_eq!(parse_past_time("now-1hours", now), Ok(now - 3600));
        assert_eq!(parse_past_time("now - 2 days", now), Ok(now - 2 * 86400));
        assert_eq!(parse_past_time("now+30", now), Ok(now + 30));
        assert_eq!(parse_past_time("now", now), Ok(now));
        assert_eq!(parse_past_time("midnight", now), Ok(at(2026, 11, 22, 0, 0, 0)));
        assert_eq!(parse_past_time("today", now), Ok(at(2026, 11, 22, 0, 0, 0)));
        assert_eq!(parse_past_time("noon", now), Ok(at(2026, 11, 22, 12, 0, 0)), "today, even if still to come");
        assert_eq!(parse_past_time("uts1795311871", now), Ok(1_795_311_871));
        assert_eq!(crate::sys::local_midnight(now), at(2026, 11, 22, 0, 0, 0));
    }

    #[test]
    fn dates_and_clock_times() {
        let now = at(2026, 11, 22, 1, 44, 33);
        assert_eq!(parse_past_time("2026-11-22T02:30:52", now), Ok(at(2026, 11, 22, 2, 30, 52)));
        assert_eq!(parse_past_time("2026-11-20", now), Ok(at(2026, 11, 20, 0, 0, 0)));
        assert_eq!(parse_past_time("11/20", now), Ok(at(2026, 11, 20, 0, 0, 0)));
        assert_eq!(parse_past_time("12/20", now), Ok(at(2025, 12, 20, 0, 0, 0)), "a month to come is last year's");
        assert_eq!(parse_past_time("112025", now), Ok(at(2025, 11, 20, 0, 0, 0)));
        assert_eq!(parse_past_time("11/20/25-13:05", now), Ok(at(2025, 11, 20, 13, 5, 0)));
        assert_eq!(parse_past_time("1:05 pm", now), Ok(at(2026, 11, 22, 13, 5, 0)));
        assert_eq!(parse_past_time("", now), Ok(0));
    }

    #[test]
    fn errors_carry_slurms_position() {
        let now = at(2026, 11, 22, 1, 44, 33);
        assert_eq!(parse_past_time("yesterday", now), Err(0));
        assert_eq!(parse_past_time("now-1fortnight", now), Err(4));
        assert_eq!(parse_past_time("now-", now), Err(3));
        assert_eq!(parse_past_time("25:00", now), Err(0));
        assert_eq!(parse_past_time("10:61", now), Err(3));
        assert!(parse_past_time("13/01", now).is_err());
    }

    #[test]
    fn printed_times() {
        assert_eq!(time_str(0), "Unknown");
        assert_eq!(time_str(NO_VAL), "None");
        assert_eq!(time_str(at(2026, 11, 22, 1, 43, 19)), "2026-11-22T01:43:19");
    }
}
