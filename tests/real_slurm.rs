//! The commands through a profile against a real Slurm 26.05 (slurmrestd, slurmctld,
//! slurmdbd), compared with what the cluster's own commands print for the same jobs: the
//! remote suite (`tests/remote_suite/`, which `tests/remote_ours.rs` runs against our own
//! daemon), and what only a real cluster can show (a multi-node script).
//!
//! The cluster is `scripts/real-slurm/up.sh`'s; `scripts/real-slurm/ci.sh cargo test --test
//! real_slurm` brings it up, runs these tests with `REAL_SLURM_*` set and takes it down. Run
//! without it, each test says loudly that it did not run (and fails when `REAL_SLURM_REQUIRED`
//! is set, as CI sets it where the cluster can be built).

mod common;
#[macro_use]
mod remote_suite;

use remote_suite::{text, Endpoint};
use std::path::PathBuf;
use std::process::{Command, Output};

/// The real cluster `up.sh` described.
struct Real {
    user: String,
    workdir: String,
    sl: PathBuf,
    profiles: tempfile::TempDir,
    bin: PathBuf,
}

impl Real {
    /// The cluster from the environment; `None` (after the notice) when there is none.
    fn from_env(test: &str) -> Option<Real> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let (Some(url), Some(user), Some(_token), Some(workdir), Some(sl)) = (
            var("REAL_SLURM_URL"),
            var("REAL_SLURM_USER"),
            var("REAL_SLURM_TOKEN"),
            var("REAL_SLURM_WORKDIR"),
            var("REAL_SLURM_SL"),
        ) else {
            assert!(
                var("REAL_SLURM_REQUIRED").is_none(),
                "{test}: REAL_SLURM_REQUIRED is set but no real cluster is described (REAL_SLURM_URL …)"
            );
            eprintln!("\n*** {test}: NOT RUN: no real Slurm cluster (run it through scripts/real-slurm/ci.sh) ***\n");
            return None;
        };
        let profiles = tempfile::tempdir().unwrap();
        std::fs::write(
            profiles.path().join("profiles.toml"),
            format!("[profiles.real]\nurl = \"{url}\"\nuser = \"{user}\"\ntoken_env = \"REAL_SLURM_TOKEN\"\n"),
        )
        .unwrap();
        let bin = profiles.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for c in ["sbatch", "squeue", "scancel", "sinfo", "scontrol", "sacct", "srun", "salloc", "slurmlet"] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_slurmlet"), bin.join(c)).unwrap();
        }
        Some(Real { user, workdir, sl: PathBuf::from(sl), profiles, bin })
    }
}

impl Endpoint for Real {
    fn ours(&self, name: &str, args: &[&str]) -> Output {
        Command::new(self.bin.join(name))
            .args(args)
            .env("SLURMLET_PROFILES", self.profiles.path().join("profiles.toml"))
            .env("SLURMLET_PROFILE", "real")
            .env("XDG_CACHE_HOME", self.profiles.path().join("cache"))
            .current_dir(self.profiles.path())
            .output()
            .expect("run our command")
    }

    fn theirs(&self, name: &str, args: &[&str]) -> Output {
        Command::new(&self.sl)
            .arg(name)
            .args(args)
            .env("SL_USER", &self.user)
            .output()
            .expect("run the cluster's command")
    }

    fn workdir(&self) -> String {
        self.workdir.clone()
    }
}

remote_suite!(Real::from_env);

#[test]
fn the_seed_multi_node_script_reaches_the_cluster_and_is_handled_there() {
    let Some(real) = Real::from_env("the_seed_multi_node_script_reaches_the_cluster") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seed-scripts/001-pytorch_ddp_multi.sh");
    // Its partition (cas_v100_4) is the original cluster's; -p on the command line wins over
    // the directive, as in Slurm. Two nodes are more than this cluster has: it pends there.
    let id = remote_suite::sbatch(&real, &["-p", "gpu", script]);
    let o = real.theirs("squeue", &["-h", "-j", &id.to_string(), "-o", "%i %j %D %T"]);
    assert_eq!(text(&o.stdout), format!("{id} PytorchDDP 2 PENDING\n"));
    let o = real.ours("squeue", &["-h", "-j", &id.to_string(), "-o", "%i %j %D %T"]);
    assert_eq!(text(&o.stdout), format!("{id} PytorchDDP 2 PENDING\n"));
    assert!(real.ours("scancel", &[&id.to_string()]).status.success());
    let o = real.theirs("squeue", &["-h", "-t", "all", "-j", &id.to_string(), "-o", "%T"]);
    assert_eq!(text(&o.stdout), "CANCELLED\n");

    let o = real.ours("slurmlet", &["profiles"]);
    assert!(text(&o.stdout).contains("UP: cluster ci26, Slurm 26.05"), "{}", text(&o.stdout));
}
