//! A submit's checks under the lock ([`Core::reserve`]): what is refused with Slurm's
//! error, and what a refusal leaves (nothing: no id used, nothing counted).

use super::*;

#[test]
fn accepted_jobs_are_numbered_in_order_and_an_array_takes_one_id_per_task() {
    let mut core = core();
    assert_eq!(submit(&mut core, ALICE, &desc(|_| {})), Ok(1));
    assert_eq!(submit(&mut core, ALICE, &desc(|d| d.array = Some("0-3".into()))), Ok(2));
    assert_eq!(submit(&mut core, BOB, &desc(|_| {})), Ok(6));
    assert_eq!(core.jobs.len(), 6);
    assert_eq!(core.jobs[&6].uid, BOB.uid);
}

#[test]
fn a_partition_that_does_not_exist_is_refused_and_uses_no_id() {
    let mut core = core();
    let refused = submit(&mut core, ALICE, &desc(|d| d.partition = Some("nowhere".into()))).unwrap_err();
    assert_eq!(refused.number, crate::api::types::errno::INVALID_PARTITION_NAME);
    assert!(refused.description.contains("nowhere"), "{refused:?}");
    assert_eq!(submit(&mut core, ALICE, &desc(|_| {})), Ok(1), "the refused submit took no id");
}

#[test]
fn more_gpus_than_the_node_has_are_refused_at_submit_rather_than_left_pending() {
    let mut core = core();
    let refused = submit(&mut core, ALICE, &desc(|d| d.tres_per_node = Some("gres/gpu:3".into()))).unwrap_err();
    assert_eq!(refused.error, "Requested node configuration is not available");
    assert!(core.jobs.is_empty());
}

#[test]
fn a_gres_the_node_does_not_have_is_named_in_the_refusal() {
    let mut core = core();
    let refused = submit(&mut core, ALICE, &desc(|d| d.tres_per_node = Some("gres/fpga:1".into()))).unwrap_err();
    assert_eq!(refused.error, "Invalid generic resource (gres) specification");
    assert!(refused.description.contains("'fpga'"), "{refused:?}");
}

#[test]
fn a_users_submitted_job_limit_counts_the_jobs_it_holds_and_not_other_users() {
    let mut core = core_with("[limits]\nmax_submitted_jobs_per_user = 2");
    submit(&mut core, ALICE, &desc(|_| {})).unwrap();
    submit(&mut core, ALICE, &desc(|_| {})).unwrap();
    let refused = submit(&mut core, ALICE, &desc(|_| {})).unwrap_err();
    assert_eq!(refused.number, crate::api::types::errno::ACCOUNTING_POLICY);
    assert!(submit(&mut core, BOB, &desc(|_| {})).is_ok(), "another user's count is their own");
    // An array counts each of its tasks.
    let mut core = core_with("[limits]\nmax_submitted_jobs_per_user = 2");
    assert!(submit(&mut core, ALICE, &desc(|d| d.array = Some("1-3".into()))).is_err());
}

#[test]
fn a_reserved_job_given_back_frees_its_id_and_its_count() {
    let mut core = core_with("[limits]\nmax_submitted_jobs_per_user = 1");
    let reserved = core.reserve(&desc(|_| {}), None, ALICE, false).unwrap();
    assert!(core.reserve(&desc(|_| {}), None, ALICE, false).is_err(), "the reserved job counts already");
    core.give_back(reserved);
    assert_eq!(submit(&mut core, ALICE, &desc(|_| {})), Ok(1));
}

#[test]
fn a_dependency_on_a_job_that_never_existed_is_refused() {
    let mut core = core();
    let refused = submit(&mut core, ALICE, &desc(|d| d.dependency = Some("afterok:99".into()))).unwrap_err();
    assert_eq!(refused.error, "Job dependency problem");
}
