//! The reservations as slurmrestd lists them (`v0.0.43_reservation_info`), for `scontrol
//! show reservation`, `sinfo -T` and the board.

use crate::api::noval::NoVal;
use crate::api::reservations::{ReservationDesc, ReservationInfo, Tres};
use crate::config::Config;
use crate::daemon::model::reservation::Reservation;

/// One reservation as slurmrestd lists it.
pub fn info(r: &Reservation, config: &Config) -> ReservationInfo {
    ReservationInfo {
        name: r.name.clone(),
        start_time: NoVal::of(r.start),
        end_time: NoVal::of(r.end),
        users: r.users.entries().join(","),
        accounts: r.accounts.entries().join(","),
        flags: r.flag_names().into_iter().map(str::to_string).collect(),
        node_list: config.node_name.clone(),
        node_count: 1,
        core_count: r.cpus,
        core_specializations: if r.core_ids.is_empty() {
            Vec::new()
        } else {
            vec![crate::api::reservations::CoreSpec {
                node: config.node_name.clone(),
                core: crate::id_set::ranges(&r.core_ids),
            }]
        },
        partition: r.partition.clone(),
        tres: r.tres(),
        comment: r.comment.clone(),
        gpu_indices: r.gpus.clone(),
        ..Default::default()
    }
}

/// What a create or update made, as slurmrestd's reply describes it.
pub fn desc(r: &Reservation, config: &Config) -> ReservationDesc {
    let mut tres = vec![Tres { kind: "cpu".into(), count: r.cpus as i64, ..Default::default() }];
    if !r.gpus.is_empty() {
        tres.push(Tres { kind: "gres".into(), name: "gpu".into(), count: r.gpus.len() as i64 });
    }
    ReservationDesc {
        name: Some(r.name.clone()),
        start_time: Some(NoVal::of(r.start)),
        end_time: Some(NoVal::of(r.end)),
        duration: Some(NoVal::of((r.duration() / 60) as u32)),
        users: Some(r.users.entries()).filter(|u| !u.is_empty()),
        accounts: Some(r.accounts.entries()).filter(|a| !a.is_empty()),
        flags: Some(r.flag_names().into_iter().map(str::to_string).collect()),
        tres: Some(tres),
        core_count: Some(NoVal::of(r.cpus)),
        node_list: Some(vec![config.node_name.clone()]),
        node_count: Some(NoVal::of(1)),
        partition: Some(r.partition.clone()).filter(|p| !p.is_empty()),
        comment: Some(r.comment.clone()).filter(|c| !c.is_empty()),
        gpu_indices: Some(r.gpus.clone()),
        ..Default::default()
    }
}
