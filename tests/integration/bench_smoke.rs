//! The benchmark harness runs end to end in its smoke mode and reports every figure. Timings
//! are not checked: they mean nothing at these sizes, nor in a debug build.

use std::process::Command;

/// The start of each figure's row(s) in the table.
const ROWS: &[&str] = &[
    "1 sbatch --parsable --wrap true, 0 queued",
    "1 sbatch --parsable --wrap true, 50 queued",
    "2 sequential sbatch --hold processes",
    "2 REST submits",
    "3 dispatch",
    "4 trivial jobs",
    "5 squeue, 20 jobs",
    "5 squeue --json, 20 jobs",
    "5 squeue, 100 jobs",
    "5 squeue --json, 100 jobs",
    "6 daemon RSS",
    "6 restart",
    "7 scheduler pass",
    "8a srun true",
    "8b srun cat 4 MiB",
];

#[test]
fn smoke_run_reports_every_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("bench.json");
    let out = Command::new(env!("CARGO_BIN_EXE_slurmlet-bench"))
        .args(["--smoke", "--no-real", "--slurmlet", env!("CARGO_BIN_EXE_slurmlet"), "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run slurmlet-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "slurmlet-bench --smoke failed ({})\n{stdout}\n{stderr}", out.status);
    for row in ROWS {
        assert!(stdout.lines().any(|l| l.starts_with(row)), "no row starting {row:?} in:\n{stdout}");
    }
    assert!(stdout.contains("real Slurm: not asked for"), "{stdout}");

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON parses");
    assert_eq!(doc["rows"].as_array().map(Vec::len), Some(17), "{doc:#}");
    assert_eq!(doc["failures"].as_array().map(Vec::len), Some(0), "{doc:#}");
    for figure in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        assert!(!doc["raw"][figure].is_null(), "no raw numbers for figure {figure}");
    }
    // Every cluster directory is gone.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("bench.json")], "left behind: {left:?}");
}

#[test]
fn unknown_figures_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_slurmlet-bench"))
        .args(["--only", "9", "--slurmlet", env!("CARGO_BIN_EXE_slurmlet")])
        .output()
        .expect("run slurmlet-bench");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no figure 9"));
}

#[test]
fn the_load_harness_runs_its_clients_without_a_failed_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("load.json");
    let out = Command::new(env!("CARGO_BIN_EXE_slurmlet-bench"))
        .args(["load", "--clients", "4", "--seconds", "1", "--prefill", "50", "--min-job-age", "3"])
        .args(["--slurmlet", env!("CARGO_BIN_EXE_slurmlet"), "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run slurmlet-bench load");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for row in ["| submit", "| squeue", "| list", "| one job", "| cancel", "| all"] {
        assert!(stdout.lines().any(|l| l.starts_with(row)), "no row {row:?} in:\n{stdout}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).expect("JSON parses");
    let kinds = doc["kinds"].as_array().expect("kinds");
    assert_eq!(kinds.len(), 5);
    assert!(kinds.iter().all(|k| k["errors"] == 0), "{doc:#}");
    assert!(kinds[0]["count"].as_u64().unwrap() > 0, "no submit was made: {doc:#}");
    assert!(doc["vm_hwm_mib"].as_f64().unwrap() > 0.0);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("load.json")], "left behind: {left:?}");
}
