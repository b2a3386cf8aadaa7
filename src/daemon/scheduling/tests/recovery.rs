//! A daemon's start ([`Core::recover`]) over what an earlier one stored: here, with no job
//! directory at all, as after a daemon that stopped right after it gave jobs resources.

use super::*;

#[test]
fn a_job_given_resources_whose_supervisor_never_started_waits_again_and_holds_nothing() {
    let mut first = core();
    let (id, effects) = submit_and_schedule(&mut first, ALICE, &desc(|d| d.tres_per_node = Some("gres/gpu:2".into())));
    assert_eq!(effects.launch.len(), 1);
    assert_eq!(state(&first, id), JobState::Running);
    let mut again = first.restarted();
    assert_eq!(state(&again, id), JobState::Running, "the store has it running");
    let effects = again.recover();
    assert!(effects.reschedule);
    assert_eq!(state(&again, id), JobState::Pending);
    assert!(again.jobs[&id].gpus.is_empty());
    assert_eq!(again.used().gpus, 0);
    assert_eq!(again.jobs[&id].restarts, 0, "it never ran: no run is recorded");
    // The next pass gives it the GPUs again.
    let _ = again.schedule();
    assert_eq!(state(&again, id), JobState::Running);
}

#[test]
fn pending_and_held_jobs_come_back_as_they_were_and_ids_are_not_reused() {
    let mut first = core();
    let held = submit(&mut first, ALICE, &desc(|d| d.hold = Some(true))).unwrap();
    let pending = submit(&mut first, BOB, &desc(|d| d.tres_per_node = Some("gres/gpu:3".into()))).unwrap_or(0);
    assert_eq!(pending, 0, "three GPUs are refused at submit");
    let mut again = first.restarted();
    let _ = again.recover();
    assert_eq!(state(&again, held), JobState::Pending);
    assert_eq!(&*again.jobs[&held].reason, "JobHeldUser");
    assert_eq!(submit(&mut again, ALICE, &desc(|_| {})), Ok(held + 1));
}

#[test]
fn a_pending_interactive_job_is_cancelled_its_client_having_left_with_the_old_daemon() {
    let mut first = core();
    let reserved = first.reserve(&desc(|d| d.minimum_cpus = Some(1)), None, ALICE, true).unwrap();
    let staged = first.stage(reserved);
    let id = staged.jobs[0].id;
    let _ = first.admit(staged.jobs);
    assert_eq!(state(&first, id), JobState::Pending, "not scheduled before the restart");
    let mut again = first.restarted();
    let _ = again.recover();
    assert_eq!(state(&again, id), JobState::Cancelled);
}
