//! QOS in the scheduler: the QOS a job runs in, its limits as pending reasons and submit
//! refusals, and preemption of a scavenger's jobs by a QOS that may preempt them.

use super::*;
use crate::stepd::{EndCause, EndStatus};

const QOS: &str = "preempt_type = \"preempt/qos\"\npreempt_mode = \"REQUEUE\"\n\
    [qos.high]\npriority = 100\npreempt = [\"scavenger\"]\n\
    [qos.scavenger]\nusage_factor = 0.0\n\
    [qos.capped]\nmax_tres_per_user = \"gres/gpu=1\"\n\
    [qos.strict]\nmax_tres_per_user = \"gres/gpu=1\"\nflags = [\"DenyOnLimit\"]\n";

fn gpu_job(qos: &str) -> JobDescMsg {
    let qos = qos.to_string();
    desc(move |d| {
        d.tres_per_node = Some("gres/gpu:1".into());
        d.qos = Some(qos);
    })
}

fn ended(core: &mut Core, id: u32) {
    let now = crate::sys::now();
    core.finish(id, Some(EndStatus { wait_status: 0, cause: EndCause::Cancelled, end_time: now, usage: None }));
}

#[test]
fn a_job_runs_in_the_qos_it_names_or_normal_and_an_unknown_one_is_refused() {
    let mut core = core_with(QOS);
    let plain = submit(&mut core, ALICE, &desc(|_| ())).unwrap();
    assert_eq!(&*core.jobs[&plain].qos, "normal");
    let high = submit(&mut core, ALICE, &gpu_job("high")).unwrap();
    assert_eq!(&*core.jobs[&high].qos, "high");
    let e = submit(&mut core, ALICE, &gpu_job("gold")).unwrap_err();
    assert_eq!(e.error, "Invalid qos specification");
    assert!(e.description.contains("no QOS is named 'gold'"), "{e:?}");
}

#[test]
fn a_user_at_their_qos_gpu_limit_waits_with_slurms_reason_and_deny_on_limit_refuses() {
    let mut core = core_with(QOS);
    let first = submit(&mut core, ALICE, &gpu_job("capped")).unwrap();
    let second = submit(&mut core, ALICE, &gpu_job("capped")).unwrap();
    let bobs = submit(&mut core, BOB, &gpu_job("capped")).unwrap();
    core.schedule();
    assert_eq!(state(&core, first), JobState::Running);
    assert_eq!(state(&core, second), JobState::Pending);
    assert_eq!(&*core.jobs[&second].reason, "QOSMaxGRESPerUser");
    assert_eq!(state(&core, bobs), JobState::Running, "the limit is per user");
    let two = submit(
        &mut core,
        ALICE,
        &desc(|d| {
            d.tres_per_node = Some("gres/gpu:2".into());
            d.qos = Some("capped".into());
        }),
    )
    .unwrap_err();
    assert!(two.description.starts_with("QOSMaxGRESPerUser: the job alone asks"), "{two:?}");
    // Under DenyOnLimit a job over the limit now is refused rather than left waiting.
    let mut core = core_with(QOS);
    submit_and_schedule(&mut core, ALICE, &gpu_job("strict"));
    let e = submit(&mut core, ALICE, &gpu_job("strict")).unwrap_err();
    assert_eq!(e.error, "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)");
}

#[test]
fn a_high_job_preempts_a_scavengers_and_the_scavenger_runs_again_later() {
    let mut core = core_with(QOS);
    let scavengers: Vec<u32> = (0..2).map(|_| submit(&mut core, BOB, &gpu_job("scavenger")).unwrap()).collect();
    core.schedule();
    assert!(scavengers.iter().all(|&id| state(&core, id) == JobState::Running));
    let (high, _) = submit_and_schedule(&mut core, ALICE, &gpu_job("high"));
    // Just one of them goes: the younger (the later started, here the higher id).
    let preempted: Vec<u32> = scavengers.iter().copied().filter(|id| core.jobs[id].preempted).collect();
    assert_eq!(preempted, [scavengers[1]]);
    assert_eq!(state(&core, scavengers[1]), JobState::Completing);
    assert_eq!(state(&core, high), JobState::Pending);
    // Once it has ended it is back in the queue, and the high job has its GPU.
    ended(&mut core, scavengers[1]);
    core.schedule();
    assert_eq!(state(&core, high), JobState::Running);
    let again = &core.jobs[&scavengers[1]];
    assert_eq!((again.state(), again.restarts, again.preempted), (JobState::Pending, 1, false));
    // Its owner's own requeue a moment later (submitit's, on the warning) is already done.
    assert!(core.requeue(scavengers[1], BOB).is_ok());
    assert_eq!(core.jobs[&scavengers[1]].restarts, 1);
    // A scavenger's usage costs nothing (usage_factor = 0).
    assert_eq!(core.usage_now(crate::sys::now()).get(&("default".to_string(), BOB.uid)).copied().unwrap_or(0.0), 0.0);
}

/// Bob's scavenger job holding both GPUs, started; its id.
fn scavenger_on_both_gpus(core: &mut Core) -> u32 {
    let both = desc(|d| {
        d.tres_per_node = Some("gres/gpu:2".into());
        d.qos = Some("scavenger".into());
    });
    let (id, _) = submit_and_schedule(core, BOB, &both);
    assert_eq!(state(core, id), JobState::Running);
    id
}

#[test]
fn a_preempted_job_keeps_its_grace_time_before_it_is_ended() {
    let mut core = core_with(&QOS.replace("[qos.scavenger]\n", "[qos.scavenger]\ngrace_time = 30\n"));
    let scavenger = scavenger_on_both_gpus(&mut core);
    let (_, effects) = submit_and_schedule(&mut core, ALICE, &gpu_job("high"));
    let job = &core.jobs[&scavenger];
    assert!(job.preempted);
    assert_eq!(job.state(), JobState::Running, "it runs on through its grace time");
    assert!(effects.wake_at.is_some_and(|at| at >= job.preempt_at), "a pass is asked for at its end");
    // Its own requeue now (submitit's, once it has saved its checkpoint) takes effect at its
    // end: it is not signalled, and runs on.
    assert!(core.requeue(scavenger, BOB).is_ok());
    assert_eq!((state(&core, scavenger), core.jobs[&scavenger].requeue_on_end), (JobState::Running, true));
    // Once the grace time is over, the next pass ends it.
    core.jobs.get_mut(&scavenger).unwrap().preempt_at = crate::sys::now() - 1;
    core.schedule();
    assert_eq!(state(&core, scavenger), JobState::Completing);
    // Asked again while it ends, the requeue is taken as done.
    assert!(core.requeue(scavenger, BOB).is_ok());
}

#[test]
fn in_cancel_mode_a_preempted_job_ends_preempted() {
    let mut core = core_with(&QOS.replace("REQUEUE", "CANCEL"));
    let scavenger = scavenger_on_both_gpus(&mut core);
    submit_and_schedule(&mut core, ALICE, &gpu_job("high"));
    assert!(core.jobs[&scavenger].preempted);
    ended(&mut core, scavenger);
    assert_eq!(state(&core, scavenger), JobState::Preempted);
}
