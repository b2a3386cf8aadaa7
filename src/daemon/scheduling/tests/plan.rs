//! Scheduling passes ([`Core::schedule`]): which jobs are given resources, in what order,
//! and what the others wait for.

use super::*;

#[test]
fn jobs_start_while_the_node_has_room_and_the_rest_wait_for_resources() {
    let mut core = core();
    let (first, effects) =
        submit_and_schedule(&mut core, ALICE, &desc(|d| d.tres_per_node = Some("gres/gpu:2".into())));
    assert_eq!(effects.launch.len(), 1);
    assert_eq!(state(&core, first), JobState::Running);
    assert_eq!(core.jobs[&first].gpus.len(), 2);
    let (second, effects) = submit_and_schedule(&mut core, BOB, &desc(|d| d.tres_per_node = Some("gres/gpu:1".into())));
    assert!(effects.launch.is_empty());
    assert_eq!(state(&core, second), JobState::Pending);
    assert_eq!(&*core.jobs[&second].reason, "Resources");
    // A job that needs no GPU runs beside them.
    let (third, _) = submit_and_schedule(&mut core, BOB, &desc(|d| d.minimum_cpus = Some(1)));
    assert_eq!(state(&core, third), JobState::Running);
}

#[test]
fn the_cpus_of_the_node_are_given_once() {
    let mut core = core();
    let (a, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.minimum_cpus = Some(3)));
    let (b, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.minimum_cpus = Some(2)));
    assert_eq!(state(&core, a), JobState::Running);
    assert_eq!(state(&core, b), JobState::Pending);
    assert_eq!(core.used().cpus, 3);
    assert_eq!(core.free_cpu_ids().len(), 1);
}

#[test]
fn a_held_job_is_not_started_and_says_why() {
    let mut core = core();
    let (id, effects) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.hold = Some(true)));
    assert!(effects.launch.is_empty());
    assert_eq!(state(&core, id), JobState::Pending);
    assert_eq!(&*core.jobs[&id].reason, "JobHeldUser");
}

#[test]
fn a_job_waits_for_the_job_it_depends_on() {
    let mut core = core();
    let (first, _) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.hold = Some(true)));
    let (second, effects) =
        submit_and_schedule(&mut core, ALICE, &desc(|d| d.dependency = Some(format!("afterok:{first}"))));
    assert!(effects.launch.is_empty());
    assert_eq!(&*core.jobs[&second].reason, "Dependency");
}

#[test]
fn a_job_that_asks_to_begin_later_waits_and_the_pass_says_when_to_look_again() {
    let mut core = core();
    let later = crate::sys::now() + 3600;
    let (id, effects) = submit_and_schedule(&mut core, ALICE, &desc(|d| d.begin_time = Some(NoVal::of(later))));
    assert_eq!(state(&core, id), JobState::Pending);
    assert_eq!(&*core.jobs[&id].reason, "BeginTime");
    assert_eq!(effects.wake_at, Some(later));
}

#[test]
fn a_short_job_is_backfilled_beside_a_large_one_that_waits_when_it_ends_in_time() {
    let mut core = core();
    // Two CPUs held for an hour; a job of four waits for them.
    let (_, _) = submit_and_schedule(
        &mut core,
        ALICE,
        &desc(|d| {
            d.minimum_cpus = Some(2);
            d.time_limit = minutes(60);
        }),
    );
    let (big, _) = submit_and_schedule(
        &mut core,
        ALICE,
        &desc(|d| {
            d.minimum_cpus = Some(4);
            d.time_limit = minutes(60);
        }),
    );
    assert_eq!(state(&core, big), JobState::Pending);
    // One that fits in what is left, and ends before the large one could start, runs now;
    // one that fits too but would delay the large one waits.
    let (short, _) = submit_and_schedule(
        &mut core,
        BOB,
        &desc(|d| {
            d.minimum_cpus = Some(1);
            d.time_limit = minutes(30);
        }),
    );
    assert_eq!(state(&core, short), JobState::Running);
    let (long, _) = submit_and_schedule(
        &mut core,
        BOB,
        &desc(|d| {
            d.minimum_cpus = Some(1);
            d.time_limit = minutes(120);
        }),
    );
    assert_eq!(core.free_cpu_ids().len(), 1, "it would fit");
    assert_eq!(state(&core, long), JobState::Pending);
}
