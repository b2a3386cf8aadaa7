//! QOS among real users of a system daemon: a per-user GPU limit holds a user's extra jobs
//! with Slurm's reason while others' run, and a scavenger's job is preempted the moment a
//! job of a QOS that may preempt it needs its GPU: its `--signal` warning first, then it is
//! requeued, reads PREEMPTED in sacct, and runs again later. Needs root.

use crate::common::system::{is_root, Shared, User};
use std::time::{Duration, Instant};

const CONFIG: &str = "gpus = 4\npreempt_type = \"preempt/qos\"\npreempt_mode = \"REQUEUE\"\nrequeue_delay = 1\n\
    [qos.high]\npriority = 100\npreempt = [\"scavenger\"]\n\
    [qos.scavenger]\nusage_factor = 0.0\ngrace_time = 1\n\
    [qos.capped]\nmax_tres_per_user = \"gres/gpu=2\"\n";

fn squeue(shared: &Shared, user: &User, id: u32, format: &str) -> String {
    let out = shared.run_as(user, "squeue", &["-h", "-j", &id.to_string(), "-o", format]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_qos_gpu_limit_keeps_a_user_at_two_gpus_with_slurms_reason() {
    if !is_root("qos_preemption::a_qos_gpu_limit_keeps_a_user_at_two_gpus_with_slurms_reason") {
        return;
    }
    let shared = Shared::start(CONFIG);
    let (a, b) = (shared.user("qla"), shared.user("qlb"));
    let job = ["--qos=capped", "--gres=gpu:1", "--wrap", "sleep 60"];
    let ids: Vec<u32> = (0..3).map(|_| shared.sbatch_as(&a, &job)).collect();
    shared.wait_state(ids[1], "RUNNING");
    crate::common::wait_for("the third job's reason", crate::common::T, || {
        let r = squeue(&shared, &a, ids[2], "%T %r");
        crate::common::until(r == "PENDING QOSMaxGRESPerUser", || r.clone())
    });
    // Another user in the same QOS is not held back by the first one's limit.
    let other = shared.sbatch_as(&b, &job);
    shared.wait_state(other, "RUNNING");
    // A job that alone asks for more than the limit could never run: refused at once.
    let out = shared.run_as(&a, "sbatch", &["--qos=capped", "--gres=gpu:3", "--wrap", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("Job violates accounting/QOS policy") && err.contains("QOSMaxGRESPerUser"), "{err}");
    // A QOS that does not exist is refused with Slurm's text.
    let out = shared.run_as(&a, "sbatch", &["--qos=gold", "--wrap", "true"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Invalid qos specification"));
    let _ = shared.run_as(&a, "scancel", &["-u", &a.name]);
    let _ = shared.run_as(&b, "scancel", &["-u", &b.name]);
}

#[test]
fn a_scavengers_job_is_warned_requeued_within_a_second_and_runs_again_later() {
    if !is_root("qos_preemption::a_scavengers_job_is_warned_requeued_within_a_second_and_runs_again_later") {
        return;
    }
    let shared = Shared::start(CONFIG);
    let (s, h) = (shared.user("qps"), shared.user("qph"));
    let log = s.home.join("runs.log");
    let script = format!(
        "#!/bin/bash\necho \"start ${{SLURM_RESTART_COUNT:-0}}\" >> {log}\n\
         trap 'echo usr1 >> {log}' USR1\ntrap 'echo term >> {log}; exit 0' TERM\n\
         if [ -n \"$SLURM_RESTART_COUNT\" ]; then exit 0; fi\n\
         while true; do sleep 1 & wait $!; done\n",
        log = log.display()
    );
    let path = s.home.join("scavenge.sh");
    std::fs::write(&path, script).unwrap();
    std::os::unix::fs::chown(&path, Some(s.uid), Some(s.gid)).unwrap();
    let scav: Vec<u32> = (0..4)
        .map(|_| {
            shared.sbatch_as(
                &s,
                &["--qos=scavenger", "--gres=gpu:1", "--signal=B:USR1@60", "--requeue", path.to_str().unwrap()],
            )
        })
        .collect();
    for id in &scav {
        shared.wait_state(*id, "RUNNING");
    }
    // Let the scripts set their traps.
    crate::common::wait_for("four starts", crate::common::T, || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        crate::common::until(text.matches("start 0").count() == 4, || text.clone())
    });
    let asked = Instant::now();
    let high = shared.sbatch_as(&h, &["--qos=high", "--gres=gpu:1", "--wrap", "sleep 3"]);
    // The youngest scavenger job is preempted at once: within a second it has its warning,
    // and once its grace time (a second: a shell runs the traps of signals that arrive
    // together in no order it promises) is over it is no longer running.
    let victim = *scav.last().unwrap();
    crate::common::wait_for("the scavenger's warning", Duration::from_secs(5), || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        crate::common::until(text.contains("usr1"), || text.clone())
    });
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(1), "warned after {took:?}");
    crate::common::wait_for("the scavenger's preemption", Duration::from_secs(5), || {
        let st = shared.state(victim);
        crate::common::until(st != "RUNNING", || st.clone())
    });
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(3), "preempted after {took:?}");
    assert!(scav[..3].iter().all(|id| shared.state(*id) == "RUNNING"), "only one is preempted");
    shared.wait_state(high, "RUNNING");
    let text = std::fs::read_to_string(&log).unwrap();
    let (usr1, term) = (text.find("usr1"), text.find("term"));
    assert!(usr1.is_some() && term.is_some() && usr1 < term, "the warning comes first:\n{text}");
    // Requeued: it runs again once the high job is done (its restart count 1), and sacct shows
    // the preempted run.
    shared.wait_state_within(victim, "COMPLETED", Duration::from_secs(60));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("start 1"), "{text}");
    let out = shared.run_as(&s, "sacct", &["-j", &victim.to_string(), "-D", "-X", "-n", "-P", "-o", "State"]);
    let states = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(states.lines().collect::<Vec<_>>(), ["PREEMPTED", "COMPLETED"], "{states}");
    let _ = shared.run_as(&s, "scancel", &["-u", &s.name]);
}
