//! The advance reservations as the page shows them: on the card of each GPU one holds, and
//! as bands on the timeline of the GPUs. Read with the rest of the live state, so that they
//! reach the page through the same server-sent events: they change rarely, and the daemon's
//! change counter moves when one is made, changed or removed. Whether one is active now or
//! still to come is the page's to say, against its clock, since that changes with no change
//! on the daemon.

use super::state::{first_error, why, Missing};
use crate::api::client::Client;
use crate::api::reservations::ReservationInfo;
use serde::Serialize;

/// One reservation, with only what the page draws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reservation {
    /// Its name.
    pub name: String,
    /// When its window opens, Unix seconds.
    pub start: u64,
    /// When it closes, Unix seconds; `None`: never (slurmrestd's infinite end).
    pub end: Option<u64>,
    /// Who may use it, as Slurm lists them (`alice,bob`, `-carol` for one kept out).
    pub users: String,
    /// The accounts that may use it, likewise.
    pub accounts: String,
    /// Its flags, by Slurm's names.
    pub flags: Vec<String>,
    /// Whether it is for maintenance (`MAINT`): the page marks it.
    pub maint: bool,
    /// The GPUs it holds, by device index; every GPU for one of the whole node, none where
    /// the daemon does not say (a cluster's slurmrestd).
    pub gpus: Vec<u32>,
}

/// `info` as the page shows it; `None` when its window has closed by `now` or its times are
/// not known: there is nothing to draw of it.
pub fn shown(info: &ReservationInfo, now: u64) -> Option<Reservation> {
    let start = info.start_time.get()?;
    let end = if info.end_time.infinite { None } else { Some(info.end_time.get()?) };
    if end.is_some_and(|end| end <= now) {
        return None;
    }
    let mut gpus = info.gpu_indices.clone();
    gpus.sort_unstable();
    gpus.dedup();
    Some(Reservation {
        name: info.name.clone(),
        start,
        end,
        users: info.users.clone(),
        accounts: info.accounts.clone(),
        maint: info.flags.iter().any(|f| f == "MAINT"),
        flags: info.flags.clone(),
        gpus,
    })
}

/// The reservations not yet over, by start then name; `None`, with why in `missing`, when
/// they cannot be read.
pub fn read(client: &Client, missing: &mut Vec<Missing>) -> Option<Vec<Reservation>> {
    let reply = client.reservations(None).map_err(|e| why(&e)).and_then(|r| match first_error(&r.errors) {
        None => Ok(r),
        Some(e) => Err(e),
    });
    match reply {
        Ok(r) => {
            let now = crate::sys::now();
            let mut all: Vec<Reservation> = r.reservations.iter().filter_map(|info| shown(info, now)).collect();
            all.sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
            Some(all)
        }
        Err(e) => {
            missing.push(Missing { part: "reservations", why: e });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    fn info(name: &str, start: u64, end: u64, flags: &[&str], gpus: &[u32]) -> ReservationInfo {
        ReservationInfo {
            name: name.into(),
            start_time: NoVal::of(start),
            end_time: NoVal::of(end),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            gpu_indices: gpus.to_vec(),
            ..ReservationInfo::default()
        }
    }

    #[test]
    fn a_closed_window_is_not_shown() {
        assert_eq!(shown(&info("gone", 100, 200, &[], &[0]), 200), None);
        assert!(shown(&info("open", 100, 200, &[], &[0]), 199).is_some());
        assert!(shown(&info("later", 300, 400, &[], &[0]), 200).is_some());
    }

    #[test]
    fn a_window_of_unknown_times_is_not_shown_and_an_endless_one_is() {
        let mut unknown = info("x", 100, 200, &[], &[0]);
        unknown.end_time = NoVal::unset();
        assert_eq!(shown(&unknown, 150), None);
        let mut endless = info("y", 100, 200, &[], &[0]);
        endless.end_time = NoVal::infinite();
        assert_eq!(shown(&endless, 150).map(|r| r.end), Some(None));
    }

    #[test]
    fn maintenance_is_marked_and_gpus_are_in_order() {
        let r = shown(&info("fix", 100, 200, &["MAINT", "IGNORE_JOBS"], &[3, 1, 3]), 50).unwrap();
        assert!(r.maint);
        assert_eq!(r.gpus, [1, 3]);
        assert_eq!(r.flags, ["MAINT", "IGNORE_JOBS"]);
        assert!(!shown(&info("plain", 100, 200, &["OVERLAP"], &[0]), 50).unwrap().maint);
    }
}
