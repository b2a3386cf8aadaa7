//! The commands through a profile against a real Slurm 26.05 (slurmrestd, slurmctld,
//! slurmdbd), compared with what the cluster's own commands print for the same jobs.
//!
//! The cluster is `scripts/real-slurm/up.sh`'s; `scripts/real-slurm/ci.sh cargo test --test
//! real_slurm` brings it up, runs these tests with `REAL_SLURM_*` set and takes it down. Run
//! without it, each test says loudly that it did not run (and fails when `REAL_SLURM_REQUIRED`
//! is set, as CI sets it where the cluster can be built).

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The real cluster `up.sh` described.
struct Real {
    url: String,
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
        for c in ["sbatch", "squeue", "scancel", "sinfo", "scontrol", "sacct", "srun", "slurmlet"] {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_slurmlet"), bin.join(c)).unwrap();
        }
        Some(Real { url, user, workdir, sl: PathBuf::from(sl), profiles, bin })
    }

    /// Our `name ARGS` through the profile.
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

    /// The cluster's own `name ARGS`.
    fn theirs(&self, name: &str, args: &[&str]) -> Output {
        Command::new(&self.sl).arg(name).args(args).output().expect("run the cluster's command")
    }

    /// `sbatch --parsable -D WORKDIR ARGS` through the profile: the job id.
    fn sbatch(&self, args: &[&str]) -> u32 {
        let o = self.ours("sbatch", &[&["--parsable", "-D", &self.workdir], args].concat());
        assert!(o.status.success(), "sbatch {args:?}: {}", text(&o.stderr));
        text(&o.stdout).trim().parse().unwrap_or_else(|_| panic!("sbatch {args:?} printed {}", text(&o.stdout)))
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn jobs_submitted_through_a_profile_read_the_same_in_our_squeue_and_the_clusters() {
    let Some(real) = Real::from_env("jobs_submitted_through_a_profile_read_the_same") else { return };
    let gpu = real.sbatch(&["--hold", "--gres=gpu:2", "-J", "gpu2", "--wrap", "true"]);
    let array = real.sbatch(&["--hold", "--array=0-3%2", "-J", "arr", "--wrap", "true"]);
    let dep = real.sbatch(&["--hold", "-J", "dep", "--dependency", &format!("afterok:{array}"), "--wrap", "true"]);
    let ids = format!("{gpu},{array},{dep}");
    // Sorted by id: how Slurm orders jobs that tie on its default keys is not what its REST
    // API's order gives.
    for args in [
        vec!["-h", "-S", "i", "-j", &ids, "-o", "%i %j %u %T %r %b %E %l"],
        vec!["-h", "-S", "i", "-r", "-j", &ids, "-o", "%i %j %T %r"],
        vec!["-S", "i", "-j", &ids],
    ] {
        let (ours, theirs) = (real.ours("squeue", &args), real.theirs("squeue", &args));
        assert!(ours.status.success(), "squeue {args:?}: {}", text(&ours.stderr));
        assert_eq!(text(&ours.stdout), text(&theirs.stdout), "squeue {args:?}");
    }
    let o = real.ours("squeue", &["-h", "-j", &format!("{array}_2"), "-o", "%i %T"]);
    assert_eq!(text(&o.stdout), format!("{array}_2 PENDING\n"));

    // Cancelled through the profile: the cluster's squeue sees it.
    for id in [gpu, dep] {
        let o = real.ours("scancel", &[&id.to_string()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let o = real.ours("scancel", &[&format!("{array}_[0-3]")]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = real.theirs("squeue", &["-h", "-t", "all", "-j", &gpu.to_string(), "-o", "%T"]);
    assert_eq!(text(&o.stdout), "CANCELLED\n");
    let _ = (&real.url, &real.user);
}

#[test]
fn the_seed_multi_node_script_reaches_the_cluster_and_what_rest_cannot_do_says_so() {
    let Some(real) = Real::from_env("the_seed_multi_node_script_reaches_the_cluster") else { return };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seed-scripts/001-pytorch_ddp_multi.sh");
    // Its partition (cas_v100_4) is the original cluster's; -p on the command line wins over
    // the directive, as in Slurm. Two nodes are more than this cluster has: it pends there.
    let id = real.sbatch(&["-p", "gpu", script]);
    let o = real.theirs("squeue", &["-h", "-j", &id.to_string(), "-o", "%i %j %D %T"]);
    assert_eq!(text(&o.stdout), format!("{id} PytorchDDP 2 PENDING\n"));
    let o = real.ours("squeue", &["-h", "-j", &id.to_string(), "-o", "%i %j %D %T"]);
    assert_eq!(text(&o.stdout), format!("{id} PytorchDDP 2 PENDING\n"));
    assert!(real.ours("scancel", &[&id.to_string()]).status.success());

    let o = real.ours("srun", &["hostname"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(text(&o.stderr).contains("use the cluster's own srun or salloc on its login node"), "{}", text(&o.stderr));
    let o = real.ours("slurmlet", &["profiles"]);
    assert!(text(&o.stdout).contains("UP: cluster ci26, Slurm 26.05"), "{}", text(&o.stdout));
}
