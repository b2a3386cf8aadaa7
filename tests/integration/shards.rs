//! GPUs shared by small jobs: Slurm's shards (`shards_per_gpu`, `--gres=shard:N`). A GPU is
//! given whole or in shards, never both; shard jobs see their GPU; the views print shards as
//! Slurm does.

use crate::common;
use common::T;
use common::*;
use std::time::Duration;

/// A job script that records its GPU environment in `NAME.env` and runs until `stop` exists.
fn held_job(name: &str) -> String {
    format!(
        "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_SHARDS_ON_NODE=$SLURM_SHARDS_ON_NODE SLURM_JOB_GPUS=$SLURM_JOB_GPUS > {name}.env; while [ ! -e stop ]; do sleep 0.05; done"
    )
}

#[test]
fn eight_shard_jobs_share_one_gpu_and_a_whole_gpu_job_waits_for_all_of_them() {
    let c = Cluster::start("1", "cpus = 16\nshards_per_gpu = 8");
    let shard_jobs: Vec<u32> = (0..8)
        .map(|i| c.sbatch(&["--gres=shard:1", "-t", "10", "-o", "/dev/null", "--wrap", &held_job(&format!("s{i}"))]))
        .collect();
    for (i, id) in shard_jobs.iter().enumerate() {
        c.wait_state(*id, &["RUNNING"], T);
        let env = c.wait_file(&format!("s{i}.env"), T);
        assert_eq!(env.trim(), "CUDA_VISIBLE_DEVICES=0 SLURM_SHARDS_ON_NODE=1 SLURM_JOB_GPUS=0", "job {id}");
    }
    // A ninth waits for a shard; a whole GPU waits for the GPU to have no shard job.
    let ninth = c.sbatch(&["--gres=shard:1", "-t", "10", "-o", "/dev/null", "--wrap", &held_job("s8")]);
    let whole = c.sbatch(&["--gres=gpu:1", "-t", "10", "-o", "/dev/null", "--wrap", &held_job("w")]);
    // (Longer than the others: it could not end before the whole-GPU job's reservation.)
    let later = c.sbatch(&["--gres=shard:1", "-t", "20", "-o", "/dev/null", "--wrap", &held_job("s9")]);
    wait_for("pending reasons", T, || {
        let reasons: Vec<String> = [ninth, whole, later].iter().map(|&id| c.job(id).state_reason).collect();
        until(reasons == ["Resources", "Resources", "Resources"], || format!("{reasons:?}"))
    });
    // One shard job ends: the ninth takes its shard; the whole GPU still waits, and so does
    // the shard job behind it.
    c.run("scancel", &[&shard_jobs[0].to_string()]);
    c.wait_state(ninth, &["RUNNING"], T);
    assert_eq!(c.state(whole), "PENDING");
    assert_eq!(c.state(later), "PENDING");
    // All shard jobs end: the whole-GPU job holds the GPU, and the later shard job waits.
    for id in shard_jobs[1..].iter().chain([&ninth]) {
        c.run("scancel", &[&id.to_string()]);
    }
    c.wait_state(whole, &["RUNNING"], T);
    let env = c.wait_file("w.env", T);
    assert_eq!(env.trim(), "CUDA_VISIBLE_DEVICES=0 SLURM_SHARDS_ON_NODE= SLURM_JOB_GPUS=0");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.state(later), "PENDING");
    assert_eq!(c.job(later).state_reason, "Resources");
    c.run("scancel", &[&whole.to_string()]);
    c.wait_state(later, &["RUNNING"], T);
}

#[test]
fn shard_requests_that_can_never_be_met_are_refused_at_submit() {
    let c = Cluster::start("2", "shards_per_gpu = 4");
    let refused = |args: &[&str]| {
        let out = c.run("sbatch", &[args, &["--wrap", "true"]].concat());
        assert!(!out.status.success(), "{args:?} was accepted");
        stderr(&out)
    };
    let err = refused(&["--gres=shard:5"]);
    assert!(err.contains("asks for 5 shards") && err.contains("each GPU of node node1 has 4"), "{err}");
    let err = refused(&["--gres=gpu:1,shard:1"]);
    assert!(err.contains("whole GPUs or shards of one, not both"), "{err}");
    let plain = Cluster::start("2", "");
    let out = plain.run("sbatch", &["--gres=shard:1", "--wrap", "true"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no 'shard' resource (it has gpu:2; shards_per_gpu"), "{}", stderr(&out));
}

#[test]
fn steps_of_a_shard_job_share_its_gpu_and_may_not_take_it_whole() {
    let c = Cluster::start("2", "shards_per_gpu = 4");
    let script = "srun --gres=shard:1 sh -c 'echo step sees $CUDA_VISIBLE_DEVICES $SLURM_SHARDS_ON_NODE'; \
                  srun --gres=gpu:1 true; echo whole step exit $?";
    let id = c.sbatch(&["--gres=shard:2", "-o", "out", "--wrap", script]);
    c.wait_state(id, &["COMPLETED", "FAILED"], T);
    let out = c.wait_file("out", T);
    assert!(out.contains("step sees 0 2\n"), "{out}");
    assert!(out.contains("Invalid generic resource (gres) specification"), "{out}");
    assert!(out.contains("whole step exit 1"), "{out}");
}

#[test]
fn a_restarted_daemon_holds_the_shards_of_the_jobs_it_re_adopts() {
    let mut c = Cluster::start("1", "shards_per_gpu = 8");
    let held: Vec<u32> = (0..2)
        .map(|i| c.sbatch(&["--gres=shard:4", "-o", "/dev/null", "--wrap", &held_job(&format!("h{i}"))]))
        .collect();
    for (i, id) in held.iter().enumerate() {
        c.wait_state(*id, &["RUNNING"], T);
        // Its supervisor has taken it up (a daemon killed before then gives it out again).
        c.wait_file(&format!("h{i}.env"), T);
    }
    c.kill_daemon();
    c.start_daemon();
    for id in &held {
        assert_eq!(c.state(*id), "RUNNING");
    }
    // Every shard is still held: neither a shard nor the whole GPU is handed out again.
    let shard = c.sbatch(&["--gres=shard:1", "-o", "/dev/null", "--wrap", "true"]);
    let whole = c.sbatch(&["--gres=gpu:1", "-o", "/dev/null", "--wrap", "true"]);
    wait_for("both to wait for resources", T, || {
        let reasons = [c.job(shard).state_reason, c.job(whole).state_reason];
        until(reasons == ["Resources", "Resources"], || format!("{reasons:?}"))
    });
    std::fs::write(c.path("stop"), "").unwrap();
    c.wait_state(shard, &["COMPLETED"], T);
    c.wait_state(whole, &["COMPLETED"], T);
}

/// A job script that runs until `NAME.stop` exists.
fn job_until(name: &str) -> String {
    format!("while [ ! -e {name}.stop ]; do sleep 0.05; done")
}

/// The words of `text` that start with `key=`, without it.
fn values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let key = format!("{key}=");
    text.split_whitespace().filter_map(|w| w.strip_prefix(key.as_str())).collect()
}

/// The lines of `text` that start (after their indent) with `prefix`.
fn lines_from<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().map(str::trim_start).filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn node_job_and_accounting_views_count_shards_as_slurm_does() {
    let c = Cluster::start("4", "cpus = 16\nshards_per_gpu = 8\ndef_mem_per_cpu = 1000");
    let config = stdout(&c.run("scontrol", &["show", "config"]));
    assert_eq!(lines_from(&config, "GresTypes"), ["GresTypes               = gpu,shard"], "{config}");
    let node = stdout(&c.run("scontrol", &["-d", "show", "node"]));
    assert_eq!(values(&node, "Gres"), ["gpu:4,shard:32"], "{node}");
    assert_eq!(values(&node, "GresUsed"), ["gpu:0(IDX:N/A),shard:0(0/8,0/8,0/8,0/8)"], "{node}");
    assert_eq!(values(&node, "CfgTRES"), ["cpu=16,mem=16000M,billing=16,gres/gpu=4,gres/shard=32"], "{node}");
    let sinfo = stdout(&c.run("sinfo", &["-h", "-o", "%G"]));
    assert_eq!(sinfo.trim(), "gpu:4,shard:32");

    // A whole GPU takes the first; 2 shards go to the next; 8 do not fit beside them and
    // take the third whole.
    let whole = c.sbatch(&["--gres=gpu:1", "-t", "10", "-o", "/dev/null", "--wrap", &job_until("whole")]);
    c.wait_state(whole, &["RUNNING"], T);
    let two = c.sbatch(&["--gres=shard:2", "-t", "10", "-o", "/dev/null", "--wrap", &job_until("two")]);
    c.wait_state(two, &["RUNNING"], T);
    let eight = c.sbatch(&["--gres=shard:8", "-t", "10", "-o", "/dev/null", "--wrap", &job_until("eight")]);
    c.wait_state(eight, &["RUNNING"], T);

    let node = stdout(&c.run("scontrol", &["-d", "show", "node"]));
    assert_eq!(values(&node, "GresUsed"), ["gpu:1(IDX:0),shard:10(-/8,2/8,8/8,0/8)"], "{node}");
    assert_eq!(values(&node, "AllocTRES"), ["cpu=3,mem=3000M,gres/gpu=1,gres/shard=10"], "{node}");
    let sinfo = stdout(&c.run("sinfo", &["-h", "-O", "GresUsed:60"]));
    assert_eq!(sinfo.trim(), "gpu:1(IDX:0),shard:10(-/8,2/8,8/8,0/8)");

    let job = stdout(&c.run("scontrol", &["-d", "show", "job", &two.to_string()]));
    assert_eq!(values(&job, "ReqTRES"), ["cpu=1,mem=1000M,node=1,billing=1,gres/shard=2"], "{job}");
    assert_eq!(values(&job, "AllocTRES"), ["cpu=1,mem=1000M,node=1,billing=1,gres/shard=2"], "{job}");
    assert_eq!(values(&job, "TresPerNode"), ["gres/shard:2"], "{job}");
    assert_eq!(lines_from(&job, "JOB_GRES="), ["JOB_GRES=shard:2"], "{job}");
    assert_eq!(values(&job, "GRES"), ["shard:2(0/8,2/8,0/8,0/8)"], "{job}");
    let job = stdout(&c.run("scontrol", &["-d", "show", "job", &whole.to_string()]));
    assert_eq!(values(&job, "GRES"), ["gpu:1(IDX:0)"], "{job}");
    assert_eq!(values(&job, "AllocTRES"), ["cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1"], "{job}");
    let info = c.job(eight);
    assert_eq!(info.gres_detail, ["shard:8(0/8,0/8,8/8,0/8)"]);
    assert_eq!(info.tres_alloc_str, "cpu=1,mem=1000M,node=1,billing=1,gres/shard=8");
    let squeue = stdout(&c.run("squeue", &["-h", "-o", "%b", "-j", &two.to_string()]));
    assert_eq!(squeue.trim(), "gres/shard:2");
    let squeue = stdout(&c.run("squeue", &["-h", "-O", "tres-per-node", "-j", &eight.to_string()]));
    assert_eq!(squeue.trim(), "gres/shard:8");

    // The shard job ends: its shards are free again, and accounting kept them.
    std::fs::write(c.path("two.stop"), "").unwrap();
    c.wait_state(two, &["COMPLETED"], T);
    let node = stdout(&c.run("scontrol", &["-d", "show", "node"]));
    assert_eq!(values(&node, "GresUsed"), ["gpu:1(IDX:0),shard:8(-/8,0/8,8/8,0/8)"], "{node}");
    let sacct = stdout(&c.run("sacct", &["-X", "-n", "-P", "-o", "AllocTRES,ReqTRES", "-j", &two.to_string()]));
    assert_eq!(
        sacct.trim(),
        "billing=1,cpu=1,gres/shard=2,mem=1000M,node=1|billing=1,cpu=1,gres/shard=2,mem=1000M,node=1"
    );
    let steps = stdout(&c.run("sacct", &["-n", "-P", "-o", "JobID,AllocTRES", "-j", &two.to_string()]));
    assert!(steps.contains(&format!("{two}.batch|cpu=1,gres/shard=2,mem=1000M,node=1")), "{steps}");
    for name in ["whole", "eight"] {
        std::fs::write(c.path(&format!("{name}.stop")), "").unwrap();
    }
    c.wait_state(eight, &["COMPLETED"], T);
    c.wait_state(whole, &["COMPLETED"], T);
    let node = stdout(&c.run("scontrol", &["-d", "show", "node"]));
    assert_eq!(values(&node, "GresUsed"), ["gpu:0(IDX:N/A),shard:0(0/8,0/8,0/8,0/8)"], "{node}");
}

#[test]
fn typed_gpus_type_their_shards() {
    let c = Cluster::start(r#"{ type = "a100", ids = [0, 1, 2, 3] }"#, "shards_per_gpu = 8");
    let sinfo = stdout(&c.run("sinfo", &["-h", "-o", "%G"]));
    assert_eq!(sinfo.trim(), "gpu:a100:4,shard:a100:32");
    let script = format!("srun -J inside sh -c 'echo $CUDA_VISIBLE_DEVICES > step.env'; {}", job_until("s"));
    let id = c.sbatch(&["--gres=shard:3", "-t", "10", "-o", "/dev/null", "--wrap", &script]);
    c.wait_state(id, &["RUNNING"], T);
    let node = stdout(&c.run("scontrol", &["-d", "show", "node"]));
    assert_eq!(values(&node, "Gres"), ["gpu:a100:4,shard:a100:32"], "{node}");
    assert_eq!(values(&node, "GresUsed"), ["gpu:a100:0(IDX:N/A),shard:a100:3(3/8,0/8,0/8,0/8)"], "{node}");
    // Its step sees the job's GPU and is counted as given the job's shards, not that GPU.
    assert_eq!(c.wait_file("step.env", T).trim(), "0");
    std::fs::write(c.path("s.stop"), "").unwrap();
    c.wait_state(id, &["COMPLETED"], T);
    let steps = stdout(&c.run("sacct", &["-n", "-P", "-o", "JobID,AllocTRES", "-j", &id.to_string()]));
    assert!(steps.contains(&format!("\n{id}.0|cpu=1,gres/shard=3,node=1\n")), "{steps}");
}
