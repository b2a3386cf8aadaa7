//! `scontrol requeue` ([`Core::requeue`]): which jobs go back to the queue, and when.

use super::*;
use crate::api::types::errno;

#[test]
fn a_pending_job_cannot_be_requeued() {
    let mut core = core();
    let id = submit(&mut core, ALICE, &desc(|d| d.hold = Some(true))).unwrap();
    assert_eq!(core.requeue(id, ALICE).unwrap_err().code, errno::JOB_PENDING);
}

#[test]
fn another_users_job_is_refused() {
    let mut core = core();
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(|_| {}));
    assert_eq!(core.requeue(id, BOB).unwrap_err().code, errno::ACCESS_DENIED);
    assert_eq!(state(&core, id), JobState::Running);
}

#[test]
fn a_job_that_asked_not_to_be_requeued_is_refused() {
    let mut core = core();
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.requeue = Some(false)));
    assert!(core.requeue(id, ALICE).is_err());
    assert_eq!(state(&core, id), JobState::Running);
}

#[test]
fn a_running_job_goes_back_to_the_queue_once_it_has_ended() {
    let mut core = core();
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(|_| {}));
    core.requeue(id, ALICE).unwrap();
    assert_ne!(state(&core, id), JobState::Pending, "not before its processes have ended");
    core.finish(id, None);
    assert_eq!(state(&core, id), JobState::Pending);
    assert_eq!(core.jobs[&id].restarts, 1);
}
