//! Every batch script from the cluster tutorials, read as sbatch reads it: the job description
//! each one must give is written down here in full, field by field.

use serde_json::{json, Value as Json};
use slurmlet::options::directive;
use slurmlet::options::sources::compose;
use slurmlet::options::{OptionError, Tool};

fn read(name: &str) -> String {
    let path = format!("{}/tests/fixtures/seed-scripts/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The job description sbatch builds from the script alone (no command line, no environment).
fn job_desc(name: &str) -> Result<Json, OptionError> {
    let script = read(name);
    let dirs = directive::extract(&script, "#SBATCH", name)?;
    let composed = compose(Tool::Sbatch, &dirs, Some(&script), name, &[], &[]).map_err(|e| match e {
        slurmlet::options::sources::SourceError::Option(o) => o,
        other => panic!("{name}: {other:?}"),
    })?;
    assert!(composed.warnings.is_empty(), "{name}: {:?}", composed.warnings);
    Ok(serde_json::to_value(composed.options.to_job_desc()?).unwrap())
}

fn limit(minutes: u64) -> Json {
    json!({ "set": true, "infinite": false, "number": minutes })
}

#[test]
fn every_seed_script_gives_the_job_a_slurm_user_expects() {
    let expectations: &[(&str, Json)] = &[
        (
            "000-bash_batch.sh",
            json!({ "name": "batch_example", "standard_output": "batch_example.%j.out", "partition": "gpu-titanxp",
                    "time_limit": limit(264 * 60), "tres_per_node": "gres/gpu:1", "tasks": 1, "tasks_per_node": 1,
                    "cpus_per_task": 1 }),
        ),
        (
            "000-check_gpu_count.slurm.sh",
            json!({ "name": "check_gpu_count", "partition": "gpu-2080ti", "minimum_nodes": 1, "tasks": 4,
                    "time_limit": limit(120), "tres_per_node": "gres/gpu:4",
                    "standard_output": "check_gpu_count.%j.out" }),
        ),
        (
            "001-horovod_tf.sh",
            json!({ "name": "test_job", "partition": "cas_v100_4", "minimum_nodes": 2, "tasks": 4,
                    "standard_output": "%x.o%j", "standard_error": "%x.e%j", "time_limit": limit(30),
                    "tres_per_node": "gres/gpu:2", "comment": "tensorflow" }),
        ),
        (
            "001-nccl_stream.sh",
            json!({ "name": "STREAM", "time_limit": limit(600), "minimum_nodes": 2, "tasks_per_node": 1,
                    "cpus_per_task": 1, "tres_per_node": "gres/gpu:4", "standard_output": "%N_%j.out",
                    "standard_error": "%N_%j.err", "partition": "amd_a100_4" }),
        ),
        (
            "001-pytorch_ddp_multi.sh",
            json!({ "name": "PytorchDDP", "partition": "cas_v100_4", "minimum_nodes": 2, "tasks_per_node": 1,
                    "tres_per_node": "gres/gpu:1", "comment": "pytorch", "time_limit": limit(600),
                    "standard_output": "%x.o%j", "standard_error": "%x.e%j" }),
        ),
        (
            "001-pytorch_ddp_single.sh",
            json!({ "name": "PytorchDDP", "partition": "cas_v100_4", "minimum_nodes": 1, "tasks_per_node": 1,
                    "tres_per_node": "gres/gpu:2", "comment": "pytorch", "time_limit": limit(60),
                    "standard_output": "%x.o%j", "standard_error": "%x.e%j" }),
        ),
        (
            // `### …` lines are comments and do not end the header; the later #SBATCH lines apply.
            "001-ray_cluster.sh",
            json!({ "name": "ray_test", "partition": "cas_v100_4", "time_limit": limit(10), "minimum_nodes": 2,
                    "tasks_per_node": 4, "comment": "etc", "tres_per_node": "gres/gpu:2" }),
        ),
        (
            "001-submitit_submission.sh",
            json!({ "comment": "python", "name": "submitit", "minimum_nodes": 1, "tasks_per_node": 1,
                    "open_mode": ["APPEND"], "partition": "cas_v100_2", "wckey": "submitit",
                    // ${USER} is not expanded: directives are not shell.
                    "standard_error": "/scratch/${USER}/2022/02-submitit/test/log_test/%j_0_log.err",
                    "standard_output": "/scratch/${USER}/2022/02-submitit/test/log_test/%j_0_log.out",
                    "kill_warning_signal": "USR1",
                    "kill_warning_delay": { "set": true, "infinite": false, "number": 90 } }),
        ),
        (
            // `###SBATCH --gres=gpu:4` is a comment: this job asks for no GPU.
            "001-tf_multi_run.sh",
            json!({ "name": "tf_multi_test", "partition": "4gpu", "minimum_nodes": 2, "tasks": 4,
                    "standard_output": "./out/%x.o%j", "standard_error": "./out/%x.e%j", "time_limit": limit(60),
                    "comment": "etc" }),
        ),
        (
            "003-train.sbatch",
            json!({ "name": "keras-bert-normal", "standard_output": "logs/%x-%j.log",
                    "standard_error": "logs/%x-%j.err", "minimum_nodes": 1, "tres_per_job": "gres/gpu:tesla:1" }),
        ),
        (
            // Trailing Chinese comments after the values are comments.
            "004-torch-test.sh",
            json!({ "name": "torch-test", "minimum_nodes": 1, "tasks": 1, "cpus_per_task": 1,
                    "tres_per_node": "gres/gpu:8", "time_limit": limit(5) }),
        ),
    ];
    for (name, expected) in expectations {
        let got = job_desc(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&got, expected, "{name}");
    }
    let listed: Vec<&str> = expectations.iter().map(|(n, _)| *n).collect();
    for entry in std::fs::read_dir(format!("{}/tests/fixtures/seed-scripts", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name != "README.md" && name != "001-tf_dist_run.sh" {
            assert!(listed.contains(&name.as_str()), "{name} has no written expectation");
        }
    }
}

#[test]
fn the_en_dash_directive_is_named_with_its_line_and_character() {
    let err = job_desc("001-tf_dist_run.sh").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, OptionError::Directive { line: 10, .. }), "{err:?}");
    assert!(text.starts_with("001-tf_dist_run.sh:10: "), "{text}");
    assert!(text.contains("U+2013"), "{text}");
    assert!(text.contains("--comment"), "{text}");
}
