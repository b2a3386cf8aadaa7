//! Wall-clock times: now, the monotonic instant of a UNIX time, local midnight, and local
//! times as Slurm prints them.

/// Seconds since the UNIX epoch, by the wall clock (0 before it).
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The monotonic instant at which the wall clock reads UNIX second `unix` (now, if it has
/// passed). Computed from the exact time, so that the supervisors of a job and of its steps
/// reach the same time limit at the same moment.
pub fn instant_at(unix: u64) -> std::time::Instant {
    let target = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix);
    let left = target.duration_since(std::time::SystemTime::now()).unwrap_or_default();
    std::time::Instant::now() + left
}

/// The local broken-down time of UNIX time `t`; `None` where the C library cannot give one
/// (a year out of its range).
pub fn checked_local_tm(t: i64) -> Option<libc::tm> {
    // The C library's own time type (64 bits on every target built here), named through
    // the call rather than as `libc::time_t`, which the libc crate marks deprecated on musl.
    let t = t as _;
    // SAFETY: an all-zero tm is a valid value of the plain C struct; localtime_r reads only
    // `t` and writes only into `tm`.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        (!libc::localtime_r(&t, &mut tm).is_null()).then_some(tm)
    }
}

/// The local broken-down time of UNIX time `t` (all fields zero where the C library cannot
/// give one).
pub fn local_tm(t: i64) -> libc::tm {
    // SAFETY: an all-zero tm is a valid value of the plain C struct.
    checked_local_tm(t).unwrap_or_else(|| unsafe { std::mem::zeroed() })
}

/// 00:00:00 of the local day of UNIX time `now`.
pub fn local_midnight(now: u64) -> u64 {
    let mut tm = local_tm(now as i64);
    // SAFETY: mktime reads and normalises the tm it is given.
    let t = unsafe {
        tm.tm_hour = 0;
        tm.tm_min = 0;
        tm.tm_sec = 0;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm)
    };
    if t < 0 {
        now
    } else {
        t as u64
    }
}

/// The local weekday of UNIX time `t` (0 = Sunday).
pub fn local_weekday(t: u64) -> u32 {
    local_tm(t as i64).tm_wday as u32
}

/// Formats a UNIX time as local `YYYY-MM-DDTHH:MM:SS`, as Slurm prints times.
pub fn format_local_time(ts: u64) -> String {
    let tm = local_tm(ts as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_the_c_library_cannot_break_down_has_no_local_time() {
        // Past the C library's years (an int of years from 1900).
        assert!(checked_local_tm(i64::MAX).is_none());
        assert_eq!(local_tm(i64::MAX).tm_year, 0, "all fields zero");
    }

    #[test]
    fn a_local_time_is_the_c_librarys_own() {
        // 2026-11-28 12:00 UTC is that day, or the one next to it, in every time zone.
        let tm = local_tm(1_795_867_200);
        assert_eq!((tm.tm_year, tm.tm_mon), (126, 10));
        assert!((27..=29).contains(&tm.tm_mday), "{}", tm.tm_mday);
        assert_eq!(local_weekday(1_795_867_200), tm.tm_wday as u32);
    }
}
