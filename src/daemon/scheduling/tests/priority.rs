//! Multifactor priority and fair-share in the scheduler: the queue ordered by priority, a
//! user who has used the node going behind those who have not, usage charged at a job's end
//! and kept across a restart.

use super::*;
use crate::stepd::{EndCause, EndStatus};

const GPU: fn(&mut JobDescMsg) = |d| d.tres_per_node = Some("gres/gpu:1".into());

/// Sets the start of running job `id` `secs` back, as if it had run that long.
fn ran_for(core: &mut Core, id: u32, secs: u64) {
    let job = core.jobs.get_mut(&id).expect("a running job");
    job.start_time = job.start_time.saturating_sub(secs);
}

fn ends(core: &mut Core, id: u32) {
    let now = crate::sys::now();
    core.finish(id, Some(EndStatus { wait_status: 0, cause: EndCause::Exited, end_time: now, usage: None }));
}

/// The pending jobs in the order the scheduler takes them.
fn queue(core: &Core) -> Vec<u32> {
    core.index.queue.iter().map(|(_, id)| *id).collect()
}

#[test]
fn a_user_who_has_used_the_node_waits_behind_one_who_has_not() {
    let mut core = core_with("priority_weight_fairshare = 10000");
    let alice: Vec<u32> = (0..4).map(|_| submit(&mut core, ALICE, &desc(GPU)).unwrap()).collect();
    core.schedule();
    assert_eq!([state(&core, alice[0]), state(&core, alice[1])], [JobState::Running, JobState::Running]);
    ran_for(&mut core, alice[0], 600);
    ran_for(&mut core, alice[1], 600);
    let (bob, _) = submit_and_schedule(&mut core, BOB, &desc(GPU));
    // Three user associations: root's under the root account (no usage, rank 3), then in
    // the default account bob (no usage, rank 2) and alice (rank 1).
    assert_eq!(core.jobs[&bob].priority, 6_666);
    assert_eq!(core.jobs[&alice[2]].priority, 3_333);
    assert_eq!(queue(&core), [bob, alice[2], alice[3]], "bob's job first, though submitted last");
    assert_eq!(&*core.jobs[&alice[2]].reason, "Priority");
    ends(&mut core, alice[0]);
    core.schedule();
    assert_eq!(state(&core, bob), JobState::Running);
    assert_eq!(state(&core, alice[2]), JobState::Pending);
}

#[test]
fn with_every_weight_zero_the_queue_keeps_its_first_come_order() {
    let mut core = core();
    let alice: Vec<u32> = (0..3).map(|_| submit(&mut core, ALICE, &desc(GPU)).unwrap()).collect();
    core.schedule();
    ran_for(&mut core, alice[0], 600);
    let (bob, _) = submit_and_schedule(
        &mut core,
        BOB,
        &desc(|d| {
            GPU(d);
            d.nice = Some(-100);
        }),
    );
    assert_eq!(queue(&core), [alice[2], bob]);
    assert!(core.jobs.values().all(|j| j.priority == 1));
}

#[test]
fn the_nice_value_and_a_priority_set_by_hand_count() {
    let mut core = core_with("priority_weight_age = 1000");
    let plain = submit(&mut core, ALICE, &desc(|_| ())).unwrap();
    let nice = submit(&mut core, ALICE, &desc(|d| d.nice = Some(500))).unwrap();
    // Both have waited no time: 1 each, less the nice value (never under 1).
    assert_eq!([core.jobs[&plain].priority, core.jobs[&nice].priority], [1, 1]);
    let job = core.jobs.get_mut(&nice).unwrap();
    job.submit_time -= 7 * 86_400;
    core.priorities_due_now();
    core.schedule();
    assert_eq!(core.jobs[&nice].priority, 500, "a full age factor (1000) less the nice value (500)");
}

#[test]
fn usage_the_store_lost_is_rebuilt_from_the_jobs_it_holds() {
    let mut core = core_with("tres_billing_weights = \"GRES/gpu=10\"");
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(GPU));
    ran_for(&mut core, id, 3600);
    ends(&mut core, id);
    core.flush();
    let db = rusqlite::Connection::open(core.store_path()).unwrap();
    db.execute_batch("DELETE FROM usage; DELETE FROM meta WHERE key = 'usage_reset_at';").unwrap();
    let again = core.restarted();
    let used = again.usage_now(crate::sys::now())[&("default".to_string(), ALICE.uid)];
    assert!((used - 36_000.0).abs() / 36_000.0 < 0.01, "rebuilt: {used}");
}

#[test]
fn usage_is_charged_at_the_end_and_kept_across_a_restart() {
    let mut core = core_with("tres_billing_weights = \"GRES/gpu=10\"");
    let (id, _) = submit_and_schedule(&mut core, ALICE, &desc(GPU));
    ran_for(&mut core, id, 3600);
    ends(&mut core, id);
    let key = ("default".to_string(), ALICE.uid);
    let used = core.usage_now(crate::sys::now())[&key];
    // An hour of one GPU at 10 a GPU-second, barely decayed over a week's half-life.
    assert!((used - 36_000.0).abs() / 36_000.0 < 0.01, "{used}");
    let again = core.restarted();
    let kept = again.usage_now(crate::sys::now())[&key];
    assert!((kept - used).abs() / used < 0.001, "{kept} after a restart, {used} before");
    let shares = again.fair_shares(crate::sys::now());
    // Root's association, with no usage, ranks above the default account, which has it all.
    assert_eq!(shares.factor("default", ALICE.uid), 0.5);
    assert_eq!(shares.factor("root", 0), 1.0);
}
