//! The commands through a profile against a real Slurm 26.05 (slurmrestd, slurmctld,
//! slurmdbd), compared with what the cluster's own commands print for the same jobs: the
//! remote suite (`tests/integration/remote_suite/`, which `tests/integration/remote_ours.rs`
//! runs against our own daemon), and what only a real cluster can show (a multi-node script).
//!
//! The cluster is `scripts/real-slurm/up.sh`'s; `scripts/real-slurm/ci.sh cargo test --test
//! real_slurm` brings it up, runs these tests with `REAL_SLURM_*` set and takes it down. Run
//! without it, each test says loudly that it did not run (and fails when `REAL_SLURM_REQUIRED`
//! is set, as CI sets it where the cluster can be built).

// The remote suite of the integration binary (`tests/integration/`), included by its path.
#[macro_use]
#[path = "integration/remote_suite/mod.rs"]
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

#[test]
fn a_cluster_serving_other_data_parsers_is_spoken_to_in_the_nearest_that_agrees() {
    let Some(real) = Real::from_env("a_cluster_serving_other_data_parsers") else { return };
    // up.sh runs one more slurmrestd per data_parser version, each serving only that one.
    let urls: Vec<(String, String)> = ["42", "43", "44", "45"]
        .iter()
        .map(|v| (format!("v{v}"), std::env::var(format!("REAL_SLURM_URL_V{v}")).expect("REAL_SLURM_URL_V4x")))
        .collect();
    let file = real.profiles.path().join("versions.toml");
    let listed: String = urls
        .iter()
        .map(|(name, url)| {
            format!("[profiles.{name}]\nurl = \"{url}\"\nuser = \"{}\"\ntoken_env = \"REAL_SLURM_TOKEN\"\n", real.user)
        })
        .collect();
    std::fs::write(&file, listed).unwrap();
    let cache = real.profiles.path().join("versions-cache");
    let ours = |profile: &str, name: &str, args: &[&str]| {
        Command::new(real.bin.join(name))
            .args(args)
            .env("SLURMLET_PROFILES", &file)
            .env("SLURMLET_PROFILE", profile)
            .env("XDG_CACHE_HOME", &cache)
            .current_dir(real.profiles.path())
            .output()
            .expect("run our command")
    };
    let id = remote_suite::sbatch(&real, &["--hold", "-J", "versions", "--wrap", "true"]).to_string();
    let args = ["-h", "-j", id.as_str(), "-o", "%i %j %u %T %r"];
    let theirs = text(&real.theirs("squeue", &args).stdout);
    assert_eq!(theirs, format!("{id} versions {} PENDING JobHeldUser\n", real.user));

    // v0.0.44 only adds to v0.0.43, and v0.0.42 has its shapes: either is used, -v says so.
    for v in ["v0.0.42", "v0.0.44"] {
        let profile = format!("v{}", &v[5..]);
        let o = ours(&profile, "squeue", &[&["-v"], &args[..]].concat());
        assert_eq!(text(&o.stdout), theirs, "{v}: {}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            format!("squeue: {profile}: the cluster speaks data_parser {v}, not v0.0.43; using {v}\n")
        );
        // Remembered for the profile: the next command does not read /openapi/v3 again.
        let cached = std::fs::read_to_string(cache.join(format!("slurmlet/data_parser/{profile}.json"))).unwrap();
        assert!(cached.contains(&format!("\"offered\":[\"{v}\"]")), "{cached}");
        let o = ours(&profile, "scontrol", &["show", "job", &id]);
        assert!(text(&o.stdout).contains("JobName=versions"), "{v}: {}", text(&o.stderr));
        let o = ours(&profile, "sacct", &["-v", "-X", "-j", &id, "-o", "JobID"]);
        assert!(o.status.success(), "{v}: {}", text(&o.stderr));
        assert!(text(&o.stderr).starts_with(&format!("sacct: {profile}: the cluster speaks data_parser {v}")));
    }

    // v0.0.45 changes shapes slurmlet reads: one line naming both sides.
    let o = ours("v45", "squeue", &args);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "squeue: error: profile 'v45': the cluster's slurmrestd offers data_parser v0.0.45; slurmlet speaks \
         v0.0.43 (and can use v0.0.44 or v0.0.42 instead), so none of them will do\n"
    );

    // A cluster upgraded since its versions were remembered: the path the old version names
    // is not served (404), so its document is read again and the new version used.
    let v43 = &urls[1].1;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let stale = format!("{{\"url\":\"{v43}\",\"offered\":[\"v0.0.44\"],\"checked\":{now}}}");
    std::fs::write(cache.join("slurmlet/data_parser/v43.json"), stale).unwrap();
    let o = ours("v43", "squeue", &args);
    assert_eq!((text(&o.stdout), text(&o.stderr)), (theirs.clone(), String::new()));
    let cached = std::fs::read_to_string(cache.join("slurmlet/data_parser/v43.json")).unwrap();
    assert!(cached.contains("\"offered\":[\"v0.0.43\"]"), "{cached}");
    assert!(ours("v43", "scancel", &[&id]).status.success());
}
