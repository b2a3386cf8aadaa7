//! Advance reservations in the scheduler: who may make them, what they refuse, how the
//! pass keeps other jobs off what they hold and starts the jobs in them.

use super::*;
use crate::api::reservations::{ReservationDesc, Tres};
use crate::api::types::errno;

/// Users that exist on every machine, with the same names: the reservations name them.
const DAEMON: Caller = Caller { uid: 1, gid: 1 };
const BIN: Caller = Caller { uid: 2, gid: 2 };

/// A reservation for user `daemon` of `gpus` GPUs (none: the whole node) from `start` for
/// `minutes`, with `flags`.
fn request(name: &str, start: u64, minutes: u32, gpus: Option<i64>, flags: &[&str]) -> ReservationDesc {
    ReservationDesc {
        name: Some(name.into()),
        start_time: Some(NoVal::of(start)),
        duration: Some(NoVal::of(minutes)),
        users: Some(vec!["daemon".into()]),
        flags: Some(flags.iter().map(|f| f.to_string()).collect()),
        // One CPU with the GPUs: GPUs alone take every CPU of the node, as in Slurm.
        tres: gpus.map(|n| {
            vec![
                Tres { kind: "cpu".into(), count: 1, ..Default::default() },
                Tres { kind: "gres".into(), name: "gpu".into(), count: n },
            ]
        }),
        ..Default::default()
    }
}

fn gpu_job(gpus: u32, limit_minutes: u32, reservation: Option<&str>) -> JobDescMsg {
    desc(|d| {
        d.tres_per_node = Some(format!("gres/gpu:{gpus}"));
        d.time_limit = minutes(limit_minutes);
        d.reservation = reservation.map(str::to_string);
    })
}

#[test]
fn only_root_and_operators_make_change_or_remove_reservations() {
    let mut core = core();
    let now = crate::sys::now();
    let refused = core.create_reservation(&request("demo", now + 60, 10, Some(1), &[]), ALICE, false).unwrap_err();
    assert_eq!(refused.number, errno::USER_ID_MISSING);
    core.create_reservation(&request("demo", now + 60, 10, Some(1), &[]), ROOT, false).expect("root may");
    assert_eq!(
        core.update_reservation("demo", &ReservationDesc::default(), ALICE).unwrap_err().number,
        errno::USER_ID_MISSING
    );
    assert_eq!(core.delete_reservation("demo", ALICE).unwrap_err().number, errno::USER_ID_MISSING);
    let mut ops = core_with("operators = [\"daemon\"]");
    ops.create_reservation(&request("demo", now + 60, 10, Some(1), &[]), DAEMON, false).expect("an operator may");
}

#[test]
fn a_request_is_refused_with_slurms_error_for_what_is_wrong() {
    let mut core = core();
    let now = crate::sys::now();
    let mut empty = request("x", now + 60, 10, Some(1), &[]);
    empty.users = None;
    assert_eq!(core.create_reservation(&empty, ROOT, false).unwrap_err().number, errno::RESERVATION_EMPTY);
    let mut no_start = request("x", now, 10, Some(1), &[]);
    no_start.start_time = None;
    assert_eq!(core.create_reservation(&no_start, ROOT, false).unwrap_err().number, errno::INVALID_TIME_VALUE);
    let past = request("x", now - 3600, 10, Some(1), &[]);
    assert_eq!(core.create_reservation(&past, ROOT, false).unwrap_err().number, errno::INVALID_TIME_VALUE);
    let mut nobody = request("x", now + 60, 10, Some(1), &[]);
    nobody.users = Some(vec!["no-such-user-here".into()]);
    assert_eq!(core.create_reservation(&nobody, ROOT, false).unwrap_err().error, "Unspecified error");
    // More GPUs than the node has are busy, as Slurm says.
    let too_many = request("x", now + 60, 10, Some(3), &[]);
    assert_eq!(core.create_reservation(&too_many, ROOT, false).unwrap_err().number, errno::NODES_BUSY);
    let zero = request("x", now + 60, 10, Some(0), &[]);
    assert_eq!(core.create_reservation(&zero, ROOT, false).unwrap_err().number, errno::INVALID_TRES);
    let flex = request("x", now + 60, 10, Some(1), &["FLEX"]);
    let refused = core.create_reservation(&flex, ROOT, false).unwrap_err();
    assert!(refused.description.contains("FLEX"), "{refused:?}");
    core.create_reservation(&request("x", now + 60, 10, Some(1), &[]), ROOT, false).expect("made");
    let dup = request("x", now + 60, 10, Some(1), &[]);
    assert_eq!(core.create_reservation(&dup, ROOT, false).unwrap_err().number, errno::RESERVATION_NAME_DUP);
    // Both GPUs over that time: GPU 0 is reserved by x, so they are busy (Slurm's word for
    // CPUs or GPUs another reservation holds); the whole node named is an overlap.
    let over = request("y", now + 300, 10, Some(2), &[]);
    assert_eq!(core.create_reservation(&over, ROOT, false).unwrap_err().number, errno::NODES_BUSY);
    let mut node = request("y", now + 300, 10, None, &[]);
    node.node_list = Some(vec![core.config.node_name.clone()]);
    assert_eq!(core.create_reservation(&node, ROOT, false).unwrap_err().number, errno::RESERVATION_OVERLAP);
    node.node_list = Some(vec!["no-such-node".into()]);
    assert_eq!(core.create_reservation(&node, ROOT, false).unwrap_err().number, errno::INVALID_NODE_NAME);
    // A maintenance reservation may overlap.
    core.create_reservation(&request("y", now + 300, 10, None, &["MAINT"]), ROOT, false).expect("MAINT overlaps");
    assert_eq!(core.delete_reservation("nosuch", ROOT).unwrap_err().number, errno::RESERVATION_INVALID);
}

#[test]
fn an_unnamed_reservation_is_named_after_its_first_user_and_a_number() {
    let mut core = core();
    let now = crate::sys::now();
    let mut unnamed = request("", now + 60, 10, Some(1), &[]);
    unnamed.name = None;
    let (made, _) = core.create_reservation(&unnamed, ROOT, false).expect("made");
    assert_eq!(made.name, "daemon_1");
    let (made, _) = core.create_reservation(&unnamed, ROOT, false).expect("made");
    assert_eq!(made.name, "daemon_2");
    assert_eq!(made.gpus, vec![1], "the lowest GPU free of other reservations");
}

#[test]
fn running_jobs_keep_their_gpus_from_a_reservation_unless_it_ignores_jobs() {
    let mut core = core();
    let now = crate::sys::now();
    let (running, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.tres_per_node = Some("gres/gpu:2".into())));
    assert_eq!(state(&core, running), JobState::Running);
    let busy = core.create_reservation(&request("r", now + 60, 10, Some(1), &[]), ROOT, false).unwrap_err();
    assert_eq!(busy.number, errno::NODES_BUSY);
    core.create_reservation(&request("r", now + 60, 10, Some(1), &["IGNORE_JOBS"]), ROOT, false).expect("made");
}

#[test]
fn jobs_outside_never_hold_reserved_gpus_across_the_window_and_short_ones_run_before_it() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("demo", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    // Two GPUs for an hour would run into the window: it waits, kept off by the reservation.
    let (long, _) = submit_and_schedule(&mut core, ALICE, &gpu_job(2, 60, None));
    assert_eq!(state(&core, long), JobState::Pending);
    assert_eq!(&*core.jobs[&long].reason, "Resources");
    // It is expected once the window closes.
    assert_eq!(core.jobs[&long].expected_start, now + 600 + 1800);
    // One GPU for half an hour: GPU 1 is not reserved, and it is free again before the
    // long job is expected to start.
    let (other_gpu, _) = submit_and_schedule(&mut core, BOB, &gpu_job(1, 30, None));
    assert_eq!(state(&core, other_gpu), JobState::Running);
    assert_eq!(core.jobs[&other_gpu].gpus[0].index, 1);
    // One GPU for five minutes ends before the window: it backfills on GPU 0.
    let (short, _) = submit_and_schedule(&mut core, BOB, &gpu_job(1, 5, None));
    assert_eq!(state(&core, short), JobState::Running, "{}", core.jobs[&short].reason);
    assert_eq!(core.jobs[&short].gpus[0].index, 0);
}

#[test]
fn a_maintenance_reservation_says_so_to_the_jobs_it_keeps_waiting() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("maint", now + 600, 30, None, &["MAINT"]), ROOT, false).expect("made");
    let (long, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.time_limit = minutes(60)));
    assert_eq!(&*core.jobs[&long].reason, "ReqNodeNotAvail, Reserved for maintenance");
    let (short, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.time_limit = minutes(5)));
    assert_eq!(state(&core, short), JobState::Running, "{}", core.jobs[&short].reason);
}

#[test]
fn a_job_in_a_reservation_waits_for_its_start_and_then_runs_on_its_gpus_until_its_end() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("later", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    let (waits, effects) = submit_and_schedule(&mut core, DAEMON, &gpu_job(1, 60, Some("later")));
    assert_eq!(&*core.jobs[&waits].reason, "Reservation");
    assert_eq!(core.jobs[&waits].expected_start, now + 600);
    assert!(effects.wake_at.is_some_and(|t| t <= now + 600), "the pass looks again when the window opens");
    // One that is open now: the job starts at once, on its GPU, and ends with it.
    let (made, _) = core.create_reservation(&request("now", now, 10, Some(1), &[]), ROOT, false).expect("made");
    let (runs, _) = submit_and_schedule(&mut core, DAEMON, &gpu_job(1, 60, Some("now")));
    assert_eq!(state(&core, runs), JobState::Running);
    assert_eq!(core.jobs[&runs].gpus.iter().map(|g| g.index).collect::<Vec<_>>(), made.gpus);
    assert_eq!(core.jobs[&runs].limit_end(now), Some(made.end), "its window ends it");
    // Two GPUs do not fit a reservation of one.
    let too_big = submit(&mut core, DAEMON, &gpu_job(2, 5, Some("now"))).unwrap_err();
    assert_eq!(too_big.number, errno::REQUESTED_NODE_CONFIG_UNAVAILABLE);
    // The reservation in use is not deleted.
    assert_eq!(core.delete_reservation("now", ROOT).unwrap_err().number, errno::RESERVATION_BUSY);
}

#[test]
fn a_job_that_names_a_reservation_it_may_not_use_is_refused_with_slurms_text() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("demo", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    let refused = submit(&mut core, BIN, &gpu_job(1, 5, Some("demo"))).unwrap_err();
    assert_eq!(
        (refused.number, refused.error.as_str()),
        (errno::RESERVATION_ACCESS, "Access denied to requested reservation")
    );
    let refused = submit(&mut core, DAEMON, &gpu_job(1, 5, Some("nosuch"))).unwrap_err();
    assert_eq!(
        (refused.number, refused.error.as_str()),
        (errno::RESERVATION_INVALID, "Requested reservation is invalid")
    );
}

#[test]
fn a_reservation_with_jobs_is_not_deleted_and_one_that_ends_holds_those_left_waiting() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("demo", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    let (waits, _) = submit_and_schedule(&mut core, DAEMON, &gpu_job(1, 5, Some("demo")));
    assert_eq!(core.delete_reservation("demo", ROOT).unwrap_err().number, errno::RESERVATION_BUSY);
    // Its window closes with the job still waiting (its GPU was busy, say).
    core.advance_reservations(now + 600 + 1800, &mut Effects::default());
    assert!(core.reservation("demo").is_none(), "an ended reservation goes");
    let job = &core.jobs[&waits];
    assert_eq!(
        (job.state(), job.held, &*job.reason, &*job.reservation),
        (JobState::Pending, true, "Reservation demo was deleted", "")
    );
    // A repeating one moves on to its next window instead.
    core.create_reservation(&request("daily", now + 600, 30, Some(1), &["DAILY"]), ROOT, false).expect("made");
    core.advance_reservations(now + 600 + 1800, &mut Effects::default());
    let daily = core.reservation("daily").expect("still there");
    assert_eq!((daily.start, daily.end), (now + 600 + 86_400, now + 600 + 1800 + 86_400));
}

#[test]
fn a_job_bigger_than_its_reservation_is_refused_rather_than_left_pending_for_ever() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("one", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    let refused = submit(&mut core, DAEMON, &gpu_job(2, 5, Some("one"))).unwrap_err();
    assert_eq!(refused.number, errno::REQUESTED_NODE_CONFIG_UNAVAILABLE);
    assert!(refused.description.contains("holds 1 CPUs and 1 GPUs"), "{}", refused.description);
}

#[test]
fn root_may_use_any_reservation_and_outside_jobs_hear_slurms_reason_for_each_kind() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("gpus", now + 600, 30, Some(1), &[]), ROOT, false).expect("made");
    submit(&mut core, ROOT, &gpu_job(1, 5, Some("gpus"))).expect("root is let in");
    let mut named = request("node", now + 7200, 30, None, &[]);
    named.node_list = Some(vec![core.config.node_name.clone()]);
    core.create_reservation(&named, ROOT, false).expect("made");
    let (long, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.time_limit = minutes(24 * 60)));
    assert_eq!(&*core.jobs[&long].reason, "ReqNodeNotAvail, May be reserved for other job");
}

#[test]
fn reservations_survive_a_restart() {
    let mut core = core();
    let now = crate::sys::now();
    let (made, _) = core.create_reservation(&request("demo", now + 600, 30, Some(1), &["DAILY"]), ROOT, false).unwrap();
    let again = core.restarted();
    assert_eq!(again.reservation("demo"), Some(&made));
    assert_eq!(again.reservations().len(), 1);
}

#[test]
fn an_update_moves_the_window_and_adds_users() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("demo", now + 600, 30, Some(1), &[]), ROOT, false).unwrap();
    let change = ReservationDesc {
        duration: Some(NoVal::of(60)),
        users: Some(vec!["+bin".into()]),
        flags: Some(vec!["MAINT".into()]),
        ..Default::default()
    };
    let (changed, _) = core.update_reservation("demo", &change, ROOT).expect("updated");
    assert_eq!((changed.start, changed.end), (now + 600, now + 600 + 3600));
    assert_eq!(changed.users.names, ["daemon", "bin"]);
    assert_eq!(changed.flags_shown(), "MAINT");
    let take = ReservationDesc { users: Some(vec!["-daemon".into(), "-bin".into()]), ..Default::default() };
    assert_eq!(core.update_reservation("demo", &take, ROOT).unwrap_err().number, errno::RESERVATION_EMPTY);
}

#[test]
fn the_plan_of_a_reservation_sees_what_jobs_started_earlier_in_the_pass_hold() {
    let mut core = core();
    let now = crate::sys::now();
    core.create_reservation(&request("one", now, 30, Some(1), &[]), ROOT, false).expect("made");
    core.create_reservation(&request("two", now, 30, Some(1), &[]), ROOT, false).expect("made");
    let cpu_job = |reservation: &str| {
        desc(|d| {
            d.minimum_cpus = Some(1);
            d.time_limit = minutes(5);
            d.reservation = Some(reservation.into());
        })
    };
    // Four one-CPU jobs in the first take the node's four CPUs; the fifth, in the second,
    // is read after them in the same pass and must find none left.
    let first: Vec<u32> = (0..4).map(|_| submit(&mut core, DAEMON, &cpu_job("one")).unwrap()).collect();
    let last = submit(&mut core, DAEMON, &cpu_job("two")).unwrap();
    core.schedule();
    assert!(first.iter().all(|id| state(&core, *id) == JobState::Running));
    assert_eq!(state(&core, last), JobState::Pending);
    assert_eq!(core.used().cpus, 4, "no CPU is given twice");
}
