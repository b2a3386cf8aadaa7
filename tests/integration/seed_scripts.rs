//! The batch scripts from the cluster tutorials: single-node ones submit with every directive
//! understood, multi-node ones are refused with a clear error.

use crate::common;
use common::*;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/seed-scripts/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn single_node_seed_scripts_submit_and_multi_node_ones_are_refused() {
    let c = Cluster::start("{ type = \"tesla\", ids = [0, 1, 2, 3, 4, 5, 6, 7] }", "");
    // Partitions named in the scripts do not exist here: -p on the command line overrides them.
    // submitit's script writes to /scratch/${USER}/… (literal ${USER}); send its output here.
    let single: &[(&str, &[&str])] = &[
        ("000-bash_batch.sh", &[]),
        ("000-check_gpu_count.slurm.sh", &[]),
        ("001-submitit_submission.sh", &["-o", "submitit-%j.out", "-e", "submitit-%j.err"]),
        ("001-pytorch_ddp_single.sh", &[]),
        ("003-train.sbatch", &[]),
        ("004-torch-test.sh", &[]),
    ];
    for (name, extra) in single {
        let path = fixture(name);
        let args: Vec<&str> = [&["--hold", "-p", "gpu"], *extra, &[path.as_str()]].concat();
        let out = c.run("sbatch", &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        let id: u32 =
            String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("Submitted batch job ").parse().unwrap();
        let j = c.job(id);
        assert_eq!(j.state_reason, "JobHeldUser", "{name}");
        match *name {
            "000-bash_batch.sh" => {
                assert_eq!(j.name, "batch_example");
                assert_eq!(j.time_limit.number, 264 * 60);
                assert_eq!(j.tres_per_node, "gres/gpu:1");
                assert_eq!(j.standard_output, "batch_example.%j.out");
            }
            "000-check_gpu_count.slurm.sh" => {
                assert_eq!(j.tasks.number, 4);
                assert_eq!(j.tres_per_node, "gres/gpu:4");
                assert_eq!(j.time_limit.number, 120);
            }
            "001-submitit_submission.sh" => {
                assert_eq!(j.comment, "python");
                assert_eq!(j.name, "submitit");
                assert_eq!(j.wckey, "submitit");
            }
            "001-pytorch_ddp_single.sh" => {
                assert_eq!(j.tres_per_node, "gres/gpu:2");
                assert_eq!(j.time_limit.number, 60);
                assert_eq!(j.comment, "pytorch");
            }
            "003-train.sbatch" => {
                assert_eq!(j.name, "keras-bert-normal");
                assert_eq!(j.tres_per_job, "gres/gpu:tesla:1");
            }
            "004-torch-test.sh" => assert_eq!(j.tres_per_node, "gres/gpu:8"),
            _ => {}
        }
    }
    for name in [
        "001-horovod_tf.sh",
        "001-ray_cluster.sh",
        "001-nccl_stream.sh",
        "001-tf_multi_run.sh",
        "001-pytorch_ddp_multi.sh",
    ] {
        let out = c.run("sbatch", &["--hold", "-p", "gpu", &fixture(name)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("Requested node configuration is not available"), "{name}: {err}");
        assert!(err.contains("one node"), "{name}: {err}");
    }
    // The en dash in `#SBATCH –comment etc` is an error naming the line.
    let out = c.run("sbatch", &["--hold", "-p", "gpu", &fixture("001-tf_dist_run.sh")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(":10:"), "{err}");
}
