//! `scancel` ([`Core::cancel`]): who may cancel what, and what each state becomes.

use super::*;
use crate::api::types::SignalScope;

#[test]
fn a_pending_job_is_cancelled_at_once_by_its_owner() {
    let mut core = core();
    let id = submit(&mut core, ALICE, &desc(|d| d.hold = Some(true))).unwrap();
    core.cancel(id, None, SignalScope::default(), ALICE).unwrap();
    assert_eq!(state(&core, id), JobState::Cancelled);
}

#[test]
fn another_users_job_is_refused_and_root_may_cancel_it() {
    let mut core = core();
    let id = submit(&mut core, ALICE, &desc(|d| d.hold = Some(true))).unwrap();
    let refused = core.cancel(id, None, SignalScope::default(), BOB).unwrap_err();
    assert_eq!(refused.message, "Access/permission denied");
    assert_eq!(state(&core, id), JobState::Pending);
    core.cancel(id, None, SignalScope::default(), ROOT).unwrap();
    assert_eq!(state(&core, id), JobState::Cancelled);
}

#[test]
fn a_running_job_ends_through_completing_and_frees_its_resources_when_it_has_ended() {
    let mut core = core();
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.tres_per_node = Some("gres/gpu:2".into())));
    let (waiting, _) = submit_and_schedule(&mut core, BOB, &desc(|d| d.tres_per_node = Some("gres/gpu:1".into())));
    core.cancel(id, None, SignalScope::default(), ALICE).unwrap();
    assert_eq!(state(&core, id), JobState::Completing, "its processes are still to end");
    assert_eq!(state(&core, waiting), JobState::Pending);
    core.finish(id, None);
    assert!(state(&core, id).is_finished());
    let _ = core.schedule();
    assert_eq!(state(&core, waiting), JobState::Running, "the GPUs it held are given again");
}

#[test]
fn a_job_that_does_not_exist_is_refused_as_slurm_refuses_it() {
    let mut core = core();
    let refused = core.cancel(42, None, SignalScope::default(), ALICE).unwrap_err();
    assert_eq!(refused.message, "Invalid job id specified");
}
