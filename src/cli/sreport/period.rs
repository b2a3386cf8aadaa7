//! The report period, as Slurm's `slurmdb_report_set_start_end_time` sets it: whole hours
//! in local time, the start cut down to its hour, the end pushed up to the next hour, at
//! least one hour long. With no `end=`, the end is today's first hour pushed up the same way
//! (today 01:00 unless the command runs on the exact minute); with no `start=`, yesterday
//! 00:00. A given end later than now is now.

/// The local broken-down time of `t`.
fn local(t: u64) -> libc::tm {
    crate::sys::local_tm(t as i64)
}

/// `tm` as UNIX time (mktime normalises out-of-range fields, as Slurm relies on).
fn make(mut tm: libc::tm) -> u64 {
    tm.tm_isdst = -1;
    // SAFETY: mktime reads and normalises the tm it is given.
    let t = unsafe { libc::mktime(&mut tm) };
    t.max(0) as u64
}

/// The period `[start, end)` for the `start=` and `end=` given (`None`: not given), at `now`.
pub fn period(start: Option<u64>, end: Option<u64>, now: u64) -> (u64, u64) {
    let mut end_tm = match end {
        Some(e) => local(e.min(now)),
        None => {
            let mut tm = local(now);
            tm.tm_hour = 0;
            tm
        }
    };
    if end_tm.tm_sec != 0 {
        end_tm.tm_min += 1;
    }
    if end_tm.tm_min != 0 {
        end_tm.tm_hour += 1;
    }
    end_tm.tm_sec = 0;
    end_tm.tm_min = 0;
    let end = make(end_tm);
    let mut start_tm = match start {
        Some(s) => local(s),
        None => {
            let mut tm = local(now);
            tm.tm_hour = 0;
            tm.tm_mday -= 1;
            tm
        }
    };
    start_tm.tm_sec = 0;
    start_tm.tm_min = 0;
    let start = make(start_tm);
    (start, end.max(start + 3600))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::sacct::time::local_time;

    #[test]
    fn a_period_is_cut_to_whole_hours_as_slurm_cuts_it() {
        let now = local_time(2026, 11, 28, 11, 21, 34);
        let (s, e) = period(Some(local_time(2026, 11, 26, 3, 20, 0)), Some(local_time(2026, 11, 26, 5, 50, 0)), now);
        assert_eq!((s, e), (local_time(2026, 11, 26, 3, 0, 0), local_time(2026, 11, 26, 6, 0, 0)));
        let (s, e) = period(Some(local_time(2026, 11, 26, 3, 0, 0)), Some(local_time(2026, 11, 26, 3, 0, 0)), now);
        assert_eq!(e - s, 3600);
    }

    #[test]
    fn the_default_period_is_yesterday_until_todays_first_hour() {
        let now = local_time(2026, 11, 28, 11, 21, 34);
        let (s, e) = period(None, None, now);
        assert_eq!((s, e), (local_time(2026, 11, 27, 0, 0, 0), local_time(2026, 11, 28, 1, 0, 0)));
        let on_the_hour = local_time(2026, 11, 28, 11, 0, 0);
        assert_eq!(period(None, None, on_the_hour).1, local_time(2026, 11, 28, 0, 0, 0));
    }

    #[test]
    fn an_end_after_now_is_now() {
        let now = local_time(2026, 11, 28, 11, 21, 34);
        let (_, e) = period(Some(local_time(2026, 11, 28, 0, 0, 0)), Some(local_time(2026, 12, 1, 0, 0, 0)), now);
        assert_eq!(e, local_time(2026, 11, 28, 12, 0, 0));
    }
}
