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

/// 00:00:00 of the local day of UNIX time `now`.
pub fn local_midnight(now: u64) -> u64 {
    // SAFETY: localtime_r fills a zeroed tm from a valid time_t; mktime reads and normalises it.
    let t = unsafe {
        let t = now as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
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
    // SAFETY: localtime_r fills a zeroed tm from a valid time_t.
    let tm = unsafe {
        let t = t as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    tm.tm_wday as u32
}

/// Formats a UNIX time as local `YYYY-MM-DDTHH:MM:SS`, as Slurm prints times.
pub fn format_local_time(ts: u64) -> String {
    // SAFETY: localtime_r fills a zeroed tm from a valid time_t.
    let tm = unsafe {
        let t = ts as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
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
