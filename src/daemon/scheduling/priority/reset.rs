//! When usage is forgotten (`priority_usage_reset_period`): the first boundary of the
//! period (local midnight, Monday, the first of a month, quarter or year) after the last
//! reset, as Slurm's are in the machine's time zone.

use crate::config::priority::UsageReset;

/// The first reset after `last` (UNIX seconds); `None` for `NONE` and `NOW` (the daemon
/// resets at its start for `NOW`, as Slurm does when it reads the setting).
pub fn next_after(period: UsageReset, last: u64) -> Option<u64> {
    // Asked at every scheduling pass: no look at the time zone where nothing is reset.
    if matches!(period, UsageReset::None | UsageReset::Now) {
        return None;
    }
    let mut tm = crate::sys::checked_local_tm(last as i64)?;
    tm.tm_sec = 0;
    tm.tm_min = 0;
    tm.tm_hour = 0;
    match period {
        UsageReset::None | UsageReset::Now => return None,
        UsageReset::Daily => tm.tm_mday += 1,
        UsageReset::Weekly => {
            tm.tm_mday += match (8 - tm.tm_wday) % 7 {
                0 => 7,
                days => days,
            }
        }
        UsageReset::Monthly => {
            tm.tm_mday = 1;
            tm.tm_mon += 1;
        }
        UsageReset::Quarterly => {
            tm.tm_mday = 1;
            tm.tm_mon = (tm.tm_mon / 3 + 1) * 3;
        }
        UsageReset::Yearly => {
            tm.tm_mday = 1;
            tm.tm_mon = 0;
            tm.tm_year += 1;
        }
    }
    tm.tm_isdst = -1;
    // SAFETY: `tm` is a valid struct that mktime normalises in place.
    let next = unsafe { libc::mktime(&mut tm) };
    (next > last as _).then_some(next as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_period_ends_after_the_last_reset_and_within_its_length() {
        let last = 1_795_000_000; // a Wednesday in November 2026
        for (period, longest) in [
            (UsageReset::Daily, 86_400 + 3600),
            (UsageReset::Weekly, 7 * 86_400 + 3600),
            (UsageReset::Monthly, 31 * 86_400 + 3600),
            (UsageReset::Quarterly, 92 * 86_400 + 3600),
            (UsageReset::Yearly, 366 * 86_400 + 3600),
        ] {
            let next = next_after(period, last).unwrap();
            assert!(next > last && next - last <= longest, "{period:?}: {next}");
            let again = next_after(period, next).unwrap();
            assert!(again > next, "{period:?} moves on from a boundary");
        }
        assert_eq!(next_after(UsageReset::None, last), None);
    }
}
