//! `scontrol create reservation`, `scontrol update ReservationName=…`, `scontrol delete
//! reservation NAME` and `scontrol show reservation [NAME]`, printing what Slurm's scontrol
//! prints (`scontrol_create_res`, `scontrol_update_res`, `_delete_it`,
//! `slurm_sprint_reservation_info`).

use super::reservation_args::{self, Mode};
use crate::api::reservations::{ReservationInfo, ReservationModResponse};
use crate::api::types::ApiError;

const CMD: &str = "scontrol";

/// The error a reply carries, if any.
fn first_error(errors: &[ApiError]) -> Option<&ApiError> {
    errors.first()
}

/// This cluster's account of an error where it says more than Slurm's text, as Slurm's
/// scontrol prints the controller's own message (`scontrol: error: …`), then Slurm's line.
fn explain(prefix: &str, e: &ApiError) {
    if !e.description.is_empty() && e.description != e.error {
        crate::cli::error(CMD, &e.description);
    }
    eprintln!("{prefix}: {}", e.error);
}

/// `scontrol create reservation WORDS…`.
pub fn create(words: &[String]) -> i32 {
    let desc = match reservation_args::parse(words, Mode::Create, crate::sys::now()) {
        Ok(d) => d,
        Err(msg) => {
            crate::cli::error(CMD, &msg);
            return 1;
        }
    };
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.post_reservation(&desc, true) {
        Ok(ReservationModResponse { errors, reservations, .. }) => {
            if let Some(e) = first_error(&errors) {
                explain("Error creating the reservation", e);
                let busy =
                    [crate::api::types::errno::NODES_BUSY, crate::api::types::errno::REQUESTED_NODE_CONFIG_UNAVAILABLE];
                if busy.contains(&e.error_number) && desc.node_list.is_none() {
                    println!(
                        "Note, unless nodes are directly requested a reservation must exist in a single partition."
                    );
                    println!("If no partition is requested the default partition is assumed.");
                }
                return 1;
            }
            let name = reservations.first().and_then(|r| r.name.clone()).unwrap_or_default();
            println!("Reservation created: {name}");
            0
        }
        Err(e) => {
            crate::cli::error(CMD, &e.to_string());
            1
        }
    }
}

/// `scontrol update ReservationName=NAME WORDS…`.
pub fn update(words: &[String]) -> i32 {
    let (mut desc, change) = match reservation_args::parse_all(words, Mode::Update, crate::sys::now()) {
        Ok(p) => (p.desc, p.duration_change),
        Err(msg) => {
            crate::cli::error(CMD, &msg);
            return 1;
        }
    };
    if desc.name.as_deref().is_none_or(str::is_empty) {
        crate::cli::error(CMD, "Reservation must be given.  No reservation update.");
        return 1;
    }
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let (Some(minutes), Some(name)) = (change, desc.name.clone()) {
        // `Duration+=N`: the duration as it stands, plus N minutes.
        let current = match client.reservations(Some(&name)) {
            Ok(reply) => reply.reservations.into_iter().next(),
            Err(e) => {
                crate::cli::error(CMD, &e.to_string());
                return 1;
            }
        };
        let Some(r) = current else {
            eprintln!("slurm_update error: Requested reservation is invalid");
            return 1;
        };
        let minutes_now = (r.end_time.number.saturating_sub(r.start_time.number) / 60) as i64;
        let new = u32::try_from((minutes_now + minutes).max(0)).unwrap_or(u32::MAX);
        desc.duration = Some(crate::api::noval::NoVal::of(new));
    }
    match client.post_reservation(&desc, false) {
        Ok(reply) => match first_error(&reply.errors) {
            Some(e) => {
                explain("slurm_update error", e);
                1
            }
            None => {
                println!("Reservation updated.");
                0
            }
        },
        Err(e) => {
            crate::cli::error(CMD, &e.to_string());
            1
        }
    }
}

/// `scontrol delete ReservationName=NAME` or `scontrol delete reservation NAME`; `entity`
/// is the word that named it, as Slurm's error repeats it.
pub fn delete(entity: &str, name: &str) -> i32 {
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match client.delete_reservation(name) {
        Ok(reply) => match first_error(&reply.errors) {
            Some(e) => {
                explain(&format!("delete_reservation {entity}"), e);
                1
            }
            None => 0,
        },
        Err(e) => {
            crate::cli::error(CMD, &e.to_string());
            1
        }
    }
}

/// `scontrol show reservation [NAME]`.
pub fn show(name: Option<&str>, one_liner: bool, json: bool, quiet: bool) -> i32 {
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.reservations(None) {
        Ok(r) => r,
        Err(e) => {
            crate::cli::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = first_error(&reply.errors) {
        crate::cli::error(CMD, &e.error);
        return 1;
    }
    let shown: Vec<&ReservationInfo> = reply.reservations.iter().filter(|r| name.is_none_or(|n| r.name == n)).collect();
    if json {
        let mut out = reply.clone();
        out.reservations = shown.into_iter().cloned().collect();
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return 0;
    }
    if shown.is_empty() {
        if !quiet {
            match name {
                Some(n) => println!("Reservation {n} not found"),
                None => println!("No reservations in the system"),
            }
        }
        return if name.is_some() { 1 } else { 0 };
    }
    let now = crate::sys::now();
    let mut out = String::new();
    for r in shown {
        out.push_str(&sprint(r, one_liner, now));
    }
    print!("{out}");
    0
}

/// One reservation as `slurm_sprint_reservation_info` prints it.
pub fn sprint(r: &ReservationInfo, one_liner: bool, now: u64) -> String {
    use crate::sys::format_local_time;
    let end_line = if one_liner { " " } else { "\n   " };
    let or_null = |s: &str| if s.is_empty() { "(null)".to_string() } else { s.to_string() };
    let (start, end) = (r.start_time.number, r.end_time.number);
    let duration = if end >= start { crate::options::time::format_hms(end - start) } else { "N/A".to_string() };
    let mut out = format!(
        "ReservationName={} StartTime={} EndTime={} Duration={duration}{end_line}",
        r.name,
        format_local_time(start),
        format_local_time(end)
    );
    out.push_str(&format!(
        "Nodes={} NodeCnt={} CoreCnt={} Features={} PartitionName={} Flags={}{end_line}",
        or_null(&r.node_list),
        r.node_count,
        r.core_count,
        or_null(&r.features),
        or_null(&r.partition),
        r.flags.join(",")
    ));
    for spec in &r.core_specializations {
        out.push_str(&format!("  NodeName={} CoreIDs={}{end_line}", spec.node, spec.core));
    }
    out.push_str(&format!("TRES={}{end_line}", r.tres));
    out.push_str(&format!("AllowedPartitions=(null) QOS=(null){end_line}"));
    let state = if start <= now && end >= now { "ACTIVE" } else { "INACTIVE" };
    out.push_str(&format!(
        "Users={} Groups={} Accounts={} Licenses={} State={state} BurstBuffer={}{end_line}",
        or_null(&r.users),
        or_null(&r.groups),
        or_null(&r.accounts),
        or_null(&r.licenses),
        or_null(&r.burst_buffer)
    ));
    let delay = if r.max_start_delay > 0 {
        crate::options::time::format_hms(r.max_start_delay as u64)
    } else {
        "(null)".to_string()
    };
    out.push_str(&format!("MaxStartDelay={delay}"));
    if !r.comment.is_empty() {
        out.push_str(end_line);
        out.push_str(&format!("Comment={}", r.comment));
    }
    out.push_str(if one_liner { "\n" } else { "\n\n" });
    out
}
