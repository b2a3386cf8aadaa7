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

/// A box's accounts, users, QOS and limits, as a lab moving to a cluster would have them.
const SACCTMGR_BOX: &str = r#"
gpus = 0
preempt_type = "preempt/qos"
preempt_mode = "REQUEUE"
default_account = "smgr_default"
[limits]
max_running_jobs_per_user = 90
max_submitted_jobs_per_user = 900
max_gpus_per_user = 40
[qos.smgr_scav]
usage_factor = 0.5
max_wall = "1-0"
max_tres_per_user = "cpu=8,mem=64G,gres/gpu=2"
grp_tres = "gres/gpu=4"
max_jobs_per_user = 3
max_submit_jobs_per_user = 20
flags = ["DenyOnLimit"]
grace_time = 120
preempt_mode = "CANCEL"
[qos.smgr_high]
priority = 100
preempt = ["smgr_scav"]
description = "deadlines, it's urgent"
[accounts.smgr_lab]
fairshare = 3
description = "the whole lab"
organization = "lab"
users = { 4711 = 2 }
qos = ["normal", "smgr_scav", "smgr_high"]
[accounts.smgr_vision]
parent = "smgr_lab"
fairshare = 2
users = ["4711", "4712"]
default_qos = "smgr_scav"
[users.4711]
default_account = "smgr_vision"
[users.4712]
default_qos = "smgr_high"
"#;

/// Takes away what the sacctmgr test made, and gives root and `normal` back their settings
/// (also when the test fails, and before it runs after one that was cut short).
struct SacctmgrCleanup<'a>(&'a Real, String);

impl SacctmgrCleanup<'_> {
    fn run(&self) {
        let c = &self.1;
        for line in [
            format!("sacctmgr -i delete user smgr_ann,smgr_ben where cluster={c}"),
            // Without cluster=: the accounts themselves, not only their associations on it.
            "sacctmgr -i delete account smgr_vision".into(),
            "sacctmgr -i delete account smgr_lab,smgr_default".into(),
            "sacctmgr -i delete qos smgr_high,smgr_scav".into(),
            format!("sacctmgr -i modify account root where cluster={c} set qos=normal defaultqos=-1"),
            "sacctmgr -i modify qos normal set MaxJobsPerUser=-1 MaxSubmitJobsPerUser=-1 MaxTRESPerUser=gres/gpu=-1"
                .into(),
        ] {
            self.0.shell(&line);
        }
    }
}

impl Drop for SacctmgrCleanup<'_> {
    fn drop(&mut self) {
        self.run();
    }
}

impl Real {
    /// Runs one shell command line inside the cluster's chroot, as root.
    fn shell(&self, line: &str) -> Output {
        Command::new(&self.sl).args(["bash", "-c", line]).output().expect("run a command in the chroot")
    }

    /// The lines of `sacctmgr -n -P ARGS` that start with one of `prefixes`.
    fn sacctmgr_rows(&self, args: &str, prefixes: &[&str]) -> Vec<String> {
        let o = self.shell(&format!("sacctmgr -n -P {args}"));
        assert!(o.status.success(), "sacctmgr {args}: {}", text(&o.stderr));
        text(&o.stdout).lines().filter(|l| prefixes.iter().any(|p| l.starts_with(p))).map(str::to_string).collect()
    }
}

#[test]
fn the_sacctmgr_commands_give_the_cluster_the_box_accounts_users_and_qos() {
    let Some(real) = Real::from_env("the_sacctmgr_commands_give_the_cluster") else { return };
    let cluster = std::env::var("REAL_SLURM_CLUSTER").unwrap_or_else(|_| "ci26".into());
    let cleanup = SacctmgrCleanup(&real, cluster.clone());
    cleanup.run();
    for (uid, name) in [(4711, "smgr_ann"), (4712, "smgr_ben")] {
        real.shell(&format!("id -u {name} >/dev/null 2>&1 || useradd -M -u {uid} {name}"));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("box.toml"), SACCTMGR_BOX).unwrap();
    let config = slurmlet::config::Config::load(&dir.path().join("box.toml")).unwrap();
    let name = |uid: u32| match uid {
        4711 => Some("smgr_ann".to_string()),
        4712 => Some("smgr_ben".to_string()),
        _ => None,
    };
    let lines = slurmlet::cluster::plan::sacctmgr::commands(&config, &cluster, &name).unwrap();

    // The cluster exists already (slurmctld knows only its own): sacctmgr says so and fails.
    assert_eq!(lines[0], format!("sacctmgr -i add cluster {cluster}"));
    let o = real.shell(&lines[0]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(1), format!(" This cluster {cluster} already exists.  Not adding.\n"))
    );
    for line in &lines[1..] {
        let o = real.shell(line);
        assert!(o.status.success(), "{line}: {}{}", text(&o.stdout), text(&o.stderr));
    }

    let qos = "normal,smgr_high,smgr_scav";
    let assoc = real.sacctmgr_rows(
        &format!("show assoc cluster={cluster} format=account,user,parentname,fairshare,qos,defaultqos"),
        &["smgr_"],
    );
    assert_eq!(
        assoc,
        [
            format!("smgr_default||root|1|{qos}|normal"),
            format!("smgr_lab||root|3|{qos}|normal"),
            format!("smgr_lab|smgr_ann||2|{qos}|normal"),
            format!("smgr_vision||smgr_lab|2|{qos}|smgr_scav"),
            format!("smgr_vision|smgr_ann||1|{qos}|smgr_scav"),
            format!("smgr_vision|smgr_ben||1|{qos}|smgr_high"),
        ]
    );
    let root = real.sacctmgr_rows(
        &format!("show assoc cluster={cluster} account=root format=account,user,qos,defaultqos"),
        &["root"],
    );
    assert_eq!(root, [format!("root||{qos}|normal"), format!("root|root|{qos}|normal")]);
    let users = real.sacctmgr_rows("show user format=user,defaultaccount", &["smgr_"]);
    assert_eq!(users, ["smgr_ann|smgr_vision", "smgr_ben|smgr_vision"]);
    let accounts = real.sacctmgr_rows("show account format=account,descr,org", &["smgr_"]);
    assert_eq!(
        accounts,
        ["smgr_default|smgr_default|smgr_default", "smgr_lab|the whole lab|lab", "smgr_vision|smgr_vision|smgr_lab"]
    );
    let qos_rows = real.sacctmgr_rows(
        "show qos format=name,priority,gracetime,preempt,preemptmode,flags,usagefactor,grptres,maxtrespu,maxjobspu,\
         maxsubmitpu,maxwall,description",
        &["normal", "smgr_"],
    );
    assert_eq!(
        qos_rows,
        [
            "normal|0|00:00:00||cluster||1.000000||gres/gpu=40|90|900||Normal QOS default",
            "smgr_scav|0|00:02:00||cancel|DenyOnLimit|0.500000|gres/gpu=4|cpu=8,gres/gpu=2,mem=64G|3|20|1-00:00:00|\
             smgr_scav",
            // slurmdbd keeps a single quote as a backquote.
            "smgr_high|100|00:00:00|smgr_scav|cluster||1.000000||||||deadlines, it`s urgent",
        ]
    );
    drop(cleanup);
    assert!(real.sacctmgr_rows("show assoc format=account", &["smgr_"]).is_empty());
    assert!(real.sacctmgr_rows("show account format=account", &["smgr_"]).is_empty());
}
