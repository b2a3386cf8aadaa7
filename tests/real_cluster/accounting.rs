//! `cluster apply` of a plan with accounting: MariaDB and slurmdbd on the controller, the
//! box's account tree and limits in the database, and what they do on the cluster.

use super::{nodes_sh, text, Cluster};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The box's users of the test's account tree.
const PHYSICIST: &str = "slcl_phy";
const BIOLOGIST: &str = "slcl_bio";

/// A box with an account tree (physics with three shares, bio with one) and a limit of one
/// running job per user.
fn lab() -> String {
    format!(
        "cluster_name = \"e2e\"\n\
         [[partitions]]\nname = \"short\"\ndefault = true\nmax_time = \"1:00:00\"\n\
         [[partitions]]\nname = \"long\"\n\
         [limits]\nmax_running_jobs_per_user = 1\n\
         [accounts.physics]\nfairshare = 3\nusers = [\"{PHYSICIST}\", \"root\"]\n\
         [accounts.bio]\nusers = [\"{BIOLOGIST}\"]\n"
    )
}

/// A user of the box made for the test, and the same name and uid on the cluster's hosts
/// (their shared root), as a lab's directory service would give it; both removed when
/// dropped.
struct LabUser {
    name: &'static str,
    root: PathBuf,
}

impl LabUser {
    fn create(name: &'static str, root: &Path) -> LabUser {
        let user = LabUser { name, root: root.into() };
        user.remove();
        let out = Command::new("useradd").args(["-M", "-s", "/bin/sh", "-U", name]).output().unwrap();
        assert!(out.status.success(), "useradd {name}: {}", text(&out));
        let uid = text(&Command::new("id").args(["-u", name]).output().unwrap()).trim().to_string();
        let out = Command::new("chroot")
            .arg(root)
            .args(["useradd", "-M", "-s", "/bin/sh", "-U", "-u", &uid, name])
            .output()
            .unwrap();
        assert!(out.status.success(), "useradd -u {uid} {name} in the hosts' root {}: {}", root.display(), text(&out));
        user
    }

    fn remove(&self) {
        let _ = Command::new("userdel").arg(self.name).output();
        let _ = Command::new("chroot").arg(&self.root).args(["userdel", self.name]).output();
    }
}

impl Drop for LabUser {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The box's own daemon, on `lab()` with its state in a directory of its own; killed when
/// dropped.
struct BoxDaemon {
    dir: tempfile::TempDir,
    child: std::process::Child,
}

impl BoxDaemon {
    fn start() -> BoxDaemon {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("box.toml");
        let socket = dir.path().join("box.sock");
        let state = dir.path().join("state");
        std::fs::write(&config, format!("state_dir = {state:?}\nsocket = {socket:?}\n{}", lab())).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
            .args(["daemon", "run", "--config"])
            .arg(&config)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < until, "the box's daemon did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        BoxDaemon { dir, child }
    }

    /// This machine's command `args` against this daemon, with the profiles `apply` wrote
    /// in `profiles`: whether it succeeded, and what it printed.
    fn run(&self, profiles: &Path, args: &[&str]) -> (bool, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
            .env("SLURMLET_CONF", self.dir.path().join("box.toml"))
            .env("SLURMLET_SOCKET", self.dir.path().join("box.sock"))
            .env("SLURMLET_PROFILES", profiles)
            .env("XDG_CACHE_HOME", self.dir.path())
            .args(args)
            .output()
            .unwrap();
        (out.status.success(), text(&out))
    }
}

impl Drop for BoxDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The hosts' shared root (`nodes.sh env`'s `NODES_ROOT`).
fn hosts_root() -> PathBuf {
    let out = Command::new(nodes_sh()).arg("env").output().unwrap();
    let root =
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| l.strip_prefix("NODES_ROOT=").map(PathBuf::from));
    root.unwrap_or_else(|| panic!("no NODES_ROOT in nodes.sh env: {}", text(&out)))
}

/// Waits up to `secs` for `seen` to give `want`; the last seen.
fn wait_until(secs: u64, want: &str, seen: impl Fn() -> String) -> String {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        let now = seen();
        if now == want || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn apply_with_accounting_carries_the_boxs_shares_and_limits_and_slurmdbd_records_jobs() {
    let test =
        "real_cluster::accounting::apply_with_accounting_carries_the_boxs_shares_and_limits_and_slurmdbd_records_jobs";
    let Some(cluster) = Cluster::hosts(test) else { return };
    let root = hosts_root();
    let _users = [LabUser::create(PHYSICIST, &root), LabUser::create(BIOLOGIST, &root)];
    let plan = tempfile::tempdir().unwrap();
    let report = cluster.plan_of(&lab(), plan.path(), &[]);
    assert!(report.contains("accounting on (slurmdbd)"), "{report}");
    let (code, said) = cluster.apply(plan.path(), &[]);
    eprintln!("real_cluster: apply with accounting:\n{said}");
    assert_eq!(code, Some(0), "{said}");
    for line in [
        "ctl          MariaDB settings: written",
        "ctl          MariaDB: started",
        "ctl          slurmdbd's database: ready",
        "ctl          slurmdbd: started",
        "ctl          slurmctld: started",
        "ctl          JWT key: written",
        "ctl          slurmrestd: started",
        "ctl          check: srun -N2 -n2 hostname ran on n1 n2",
        "the cluster is up: ctl and n1 n2",
    ] {
        assert!(said.lines().any(|l| l == line), "no line {line:?} in:\n{said}");
    }
    let counts = |said: &str| {
        let line = said.lines().find_map(|l| l.strip_prefix("ctl          accounts.sh: accounts: "));
        let line = line.unwrap_or_else(|| panic!("no line of accounts.sh in:\n{said}"));
        let numbers: Vec<usize> = line.split(' ').filter_map(|w| w.parse().ok()).collect();
        assert!(line.ends_with(" already there") && numbers.len() == 2, "{line}");
        (numbers[0], numbers[1])
    };
    // Every `add` of accounts.sh adds, the first time.
    let script = std::fs::read_to_string(plan.path().join("accounts.sh")).unwrap();
    let adds = script.lines().filter(|l| l.starts_with("run sacctmgr -i add ")).count();
    assert!(adds >= 4, "{script}");
    let (set, kept) = counts(&said);
    assert!(set >= adds && kept == 0, "{said}");
    let t = Instant::now();
    // The box's tree, with its shares.
    let shares = cluster.run_as("root", &["sshare", "-n", "-P", "-a", "-o", "account,user,rawshares"]);
    let rows =
        ["physics||3".to_string(), format!("physics|{PHYSICIST}|1"), "bio||1".into(), format!("bio|{BIOLOGIST}|1")];
    for row in rows {
        assert!(shares.lines().any(|l| l.trim_start() == row), "no {row} in sshare:\n{shares}");
    }
    // The box's limit: one running job per user; the second waits with the box's reason.
    let submit = || {
        let line = ["sbatch", "--parsable", "--chdir=/tmp", "-o", "/dev/null", "--wrap", "sleep 60"];
        cluster.run_as(BIOLOGIST, &line).trim().to_string()
    };
    let first = submit();
    let state = |id: &str| cluster.run_as("root", &["squeue", "-h", "-j", id, "-o", "%T %r"]);
    let assocs = || cluster.run_as("root", &["sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,qos"]);
    let running = wait_until(30, "RUNNING None\n", || state(&first));
    assert_eq!(running, "RUNNING None\n", "job {first}; the associations:\n{}", assocs());
    let second = submit();
    let waits = wait_until(30, "PENDING QOSMaxJobsPerUserLimit\n", || state(&second));
    cluster.run_as("root", &["scancel", &first, &second]);
    assert_eq!(waits, "PENDING QOSMaxJobsPerUserLimit\n", "job {second}");
    // A user the box's tree does not list is added by hand, as the plan's notes say; then
    // slurmdbd records the job.
    let added = cluster.run_as("root", &["sacctmgr", "-i", "add", "user", "alice", "account=default"]);
    assert!(added.contains("Associations"), "{added}");
    let (id, output) = cluster.two_node_batch();
    assert_eq!(output, "n1\nn2\n");
    // The job's end reaches slurmdbd a moment after squeue forgets it.
    let want = format!("{id}|alice|n[1-2]|COMPLETED|0:0\n");
    let row = wait_until(30, &want, || {
        cluster.run(&["sacct", "-X", "-n", "-P", "-j", &id, "-o", "jobid,user,nodelist,state,exitcode"])
    });
    assert_eq!(row, want);
    // The profile apply wrote drives the cluster from this machine's own commands.
    let profiles = std::fs::read_to_string(cluster.profiles_file()).unwrap();
    assert!(profiles.contains("\n[profiles.e2e]\nurl = \"http://"), "{profiles}");
    assert!(said.contains("check: slurmrestd answers this machine at http://"), "{said}");
    let added = format!("this machine profile e2e: added to {}", cluster.profiles_file().display());
    assert!(said.contains(&added), "{said}");
    let line = ["sbatch", "--parsable", "-D", "/tmp", "-o", "/dev/null", "-N2", "--wrap", "srun hostname"];
    let (ok, submitted) = cluster.on_box("e2e", &line);
    let id = submitted.trim().to_string();
    assert!(ok && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()), "sbatch through the profile: {submitted}");
    let (_, queue) = cluster.on_box("e2e", &["squeue", "-h", "-o", "%i %u %D"]);
    assert!(queue.is_empty() || queue == format!("{id} root 2\n"), "squeue through the profile: {queue}");
    let want = format!("{id}|root|COMPLETED|2\n");
    let row = wait_until(60, &want, || {
        cluster.on_box("e2e", &["sacct", "-X", "-n", "-P", "-j", &id, "-o", "jobid,user,state,nnodes"]).1
    });
    assert_eq!(row, want, "sacct through the profile");
    move_pending(&cluster, plan.path());
    eprintln!("real_cluster: checks took {:.1?}", t.elapsed());
    // Applied again, nothing changes: the database has every account already.
    let (code, again) = cluster.apply(plan.path(), &[]);
    assert_eq!(code, Some(0), "{again}");
    let changed: Vec<&str> = again.lines().filter(|l| l.ends_with(": written") || l.ends_with(": started")).collect();
    assert!(changed.is_empty(), "{again}");
    // Every `add` finds what it adds there (a `modify` sets the same again).
    assert_eq!(counts(&again).1, adds, "{again}");
}

/// A job held on the box moves to the cluster with `cluster pending --move-pending`; the box
/// keeps its record, which `sacct -M local` reads beside the cluster's profile.
fn move_pending(cluster: &Cluster, plan: &Path) {
    let on_box = BoxDaemon::start();
    let profiles = cluster.profiles_file();
    let via = format!("{} exec {{node}}", super::nodes_sh().display());
    let plan = plan.to_str().unwrap();
    let status = || on_box.run(&profiles, &["cluster", "status", "-o", plan, "--via", &via]);
    let (ok, id) = on_box.run(
        &profiles,
        &[
            "sbatch",
            "--parsable",
            "--hold",
            "-J",
            "moved",
            "-t",
            "10",
            "-D",
            "/tmp",
            "-o",
            "/dev/null",
            "--wrap",
            "hostname",
        ],
    );
    let id = id.trim().to_string();
    assert!(ok, "sbatch on the box: {id}");
    let (ok, listing) = on_box.run(&profiles, &["cluster", "pending", "-M", "e2e"]);
    assert!(
        ok && listing.contains(&format!("scontrol -M local write batch_script {id} - | sbatch -M e2e ")),
        "{listing}"
    );
    // The fair-share tree: the cluster's raw shares are the box's, account by account and
    // user by user, and so are the users' normalized shares. The accounts' differ by
    // `default`, which the cluster has from the start (for the users the box's tree does not
    // list) and the box only once one of them has run: a sibling with one share and no
    // users, which holds no place in Fair Tree's ranks.
    let shares = ["sshare", "-n", "-P", "-a", "-o", "account,user,rawshares,normshares"];
    let tree = |text: &str| -> Vec<String> {
        let rows = text.lines().map(str::trim_start).filter(|l| l.starts_with("physics|") || l.starts_with("bio|"));
        let mut rows: Vec<String> = rows
            .map(|l| if l.contains("||") { l.rsplit_once('|').map_or(l, |(head, _)| head) } else { l }.to_string())
            .collect();
        rows.sort();
        rows
    };
    let (_, here) = on_box.run(&profiles, &shares);
    let (_, there) = cluster.on_box("e2e", &shares);
    let direct = cluster.run_as("root", &shares);
    assert_eq!(tree(&there), tree(&direct), "sshare through the profile and on the controller");
    assert_eq!(tree(&here), tree(&direct), "the box's sshare:\n{here}\nthe cluster's:\n{direct}");
    assert_eq!(tree(&here).len(), 5, "{here}");
    // The cluster as planned; the job waiting here is said.
    let (ok, said) = status();
    assert!(ok, "{said}");
    for line in [
        "ok   n1           idle, gpu:v100:2 as planned",
        "ok   cluster      partition a100 as planned",
        "ok   this machine profile e2e: slurmrestd answers (v0.0.43)",
        "WARN this machine 1 job(s) pending",
    ] {
        assert!(said.lines().any(|l| l == line), "no line {line:?} in:\n{said}");
    }
    let accounts =
        |l: &str| l.starts_with("ok   cluster      ") && l.ends_with(" accounts and associations as planned");
    assert!(said.lines().any(accounts), "{said}");
    let (ok, moved) = on_box.run(&profiles, &["cluster", "pending", "-M", "e2e", "--move-pending"]);
    let new = moved.lines().find_map(|l| l.strip_prefix(&format!("job {id} moved: e2e job "))).map(str::to_string);
    assert!(ok, "{moved}");
    let new = new.unwrap_or_else(|| panic!("no move of job {id} in:\n{moved}"));
    let (_, here) =
        on_box.run(&profiles, &["sacct", "-M", "local", "-X", "-n", "-P", "-j", &id, "-o", "jobname,state"]);
    assert!(here.starts_with("moved|CANCELLED"), "the box's record of job {id}: {here}");
    let (_, there) = cluster.on_box("e2e", &["squeue", "-h", "-j", &new, "-o", "%j|%T|%r|%a|%P"]);
    assert_eq!(there, "moved|PENDING|JobHeldUser|physics|short\n", "job {new} on the cluster");
    let (ok, released) = cluster.on_box("e2e", &["scontrol", "release", &new]);
    assert!(ok, "{released}");
    let want = format!("{new}|moved|COMPLETED\n");
    let row = wait_until(60, &want, || {
        cluster.on_box("e2e", &["sacct", "-X", "-n", "-P", "-j", &new, "-o", "jobid,jobname,state"]).1
    });
    assert_eq!(row, want, "the moved job on the cluster");
    // A drained node fails the status, with its reason and the fix.
    let drained = cluster.root_on("ctl", "scontrol update NodeName=n1 State=DRAIN Reason=checking");
    assert!(drained.status.success(), "{}", text(&drained));
    let (ok, said) = status();
    assert!(!ok, "{said}");
    let fix = "FAIL n1           drained: checking\n                  fix: once fixed: scontrol update NodeName=n1 State=RESUME";
    assert!(said.contains(fix), "{said}");
    assert!(said.lines().any(|l| l == "ok   this machine no jobs pending"), "{said}");
    let resumed = cluster.root_on("ctl", "scontrol update NodeName=n1 State=RESUME");
    assert!(resumed.status.success(), "{}", text(&resumed));
}
