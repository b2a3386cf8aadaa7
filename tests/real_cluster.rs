//! A real multi-host Slurm 26.05 on this machine, brought up only from the files
//! `slurmlet cluster plan` wrote: `scripts/real-slurm/nodes.sh hosts` makes a controller host
//! and two GPU nodes (each its own network, UTS, mount and cgroup namespaces in a copy of the
//! cached Debian chroot, with stand-in `/dev/nvidia*`), the plan probes the nodes through
//! `nodes.sh exec` (the chroot has no slurmlet: this binary is sent) with a slurmlet
//! configuration per node (n1: 2 × v100, n2: 2 × a100), and `nodes.sh up PLAN` starts Slurm
//! from the plan's files as they were written, none edited. Then the cluster must do what
//! the plan promised: a partition per GPU type beside the box's, jobs across both nodes, a
//! typed GPU request on the node of that type. `slurmlet cluster apply` makes the same
//! hosts a cluster too, with and without accounting (`real_cluster/accounting.rs`: the box's
//! shares and limits on the cluster, `sacct` showing a job).
//!
//! Needs root and the chroot (built by `scripts/real-slurm/up.sh`, about a minute the first
//! time); without them each test says loudly that it checked nothing (and fails instead with
//! `REAL_SLURM_REQUIRED=1`). `.ci/run` runs it after the real-Slurm suite. The tests share
//! the one cluster of `nodes.sh`: they take turns.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `nodes.sh` has one cluster at a time: the tests take turns.
static CLUSTER: Mutex<()> = Mutex::new(());

/// The box the cluster is planned from: its partitions, beside which the plan adds one per
/// GPU type.
const BOX: &str = "cluster_name = \"e2e\"\n\
    [[partitions]]\nname = \"short\"\ndefault = true\nmax_time = \"1:00:00\"\n\
    [[partitions]]\nname = \"long\"\n";

/// Each node's slurmlet configuration: two GPUs of `gpu_type` with their device files.
fn node_config(gpu_type: &str) -> String {
    format!("gpus = {{ type = \"{gpu_type}\", ids = [0, 1], files = [\"/dev/nvidia0\", \"/dev/nvidia1\"] }}\n")
}

fn nodes_sh() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/real-slurm/nodes.sh")
}

/// Says loudly that `test` checked nothing, and why, on stderr and as a line of the list of
/// skipped tests (`REAL_SLURM_SKIPPED_LIST`, else the target directory's
/// `skipped-tests.txt`, which `.ci/run` prints at its end).
fn skip(test: &str, why: &str) {
    use std::io::Write;
    let line = format!("*** {test} SKIPPED, nothing checked: {why} ***");
    assert!(std::env::var("REAL_SLURM_REQUIRED").ok().as_deref() != Some("1"), "REAL_SLURM_REQUIRED=1: {line}");
    // Past the harness's capture.
    let _ = std::io::stderr().write_all(format!("\n{line}\n\n").as_bytes());
    let list = std::env::var_os("REAL_SLURM_SKIPPED_LIST").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target directory").join("skipped-tests.txt")
    });
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&list)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot record the skip in {}: {e}", list.display());
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The hosts `nodes.sh hosts` made; dropping it takes the cluster down, whatever happened.
struct Cluster {
    /// The directory every host sees as `/home`.
    home: PathBuf,
    /// The controller's address, as this machine reaches it.
    ctl_addr: String,
    /// The profiles file `cluster apply` writes the cluster's profile into (not root's own).
    profiles: tempfile::TempDir,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let t = Instant::now();
        match Command::new(nodes_sh()).arg("down").output() {
            Ok(out) if out.status.success() => eprintln!("real_cluster: down took {:.1?}", t.elapsed()),
            Ok(out) => eprintln!("real_cluster: nodes.sh down failed: {}", text(&out)),
            Err(e) => eprintln!("real_cluster: nodes.sh down could not run: {e}"),
        }
    }
}

impl Cluster {
    /// The hosts ctl, n1 and n2 with two stand-in GPUs each, no Slurm yet; `None` (after
    /// the notice) where they cannot be had here.
    fn hosts(test: &str) -> Option<Cluster> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip(test, "not root: the hosts are namespaces and mounts");
            return None;
        }
        let turn = CLUSTER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let t = Instant::now();
        let out = Command::new(nodes_sh()).args(["hosts", "n1:/dev/nvidia[0-1]", "n2:/dev/nvidia[0-1]"]).output();
        let out = out.expect("run nodes.sh");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let value = |key: &str| stdout.lines().find_map(|l| l.strip_prefix(key).map(String::from)).unwrap_or_default();
        // Taken down from here on, also after a failed or unavailable `hosts`.
        let cluster = Cluster {
            home: Path::new(&value("NODES_LOGS=")).join("shared/home"),
            ctl_addr: value("NODES_CTL_ADDR="),
            profiles: tempfile::tempdir().unwrap(),
            _turn: turn,
        };
        match out.status.code() {
            Some(0) => {}
            Some(3) => {
                let err = String::from_utf8_lossy(&out.stderr);
                let why = err.lines().filter_map(|l| l.strip_prefix("nodes: UNAVAILABLE: ")).next_back();
                skip(test, &format!("the hosts cannot be made here: {}", why.unwrap_or("nodes.sh hosts exit 3")));
                return None;
            }
            _ => panic!("nodes.sh hosts failed: {}", text(&out)),
        }
        eprintln!("real_cluster: hosts took {:.1?}", t.elapsed());
        let configs = cluster.home.join("slurmlet-nodes");
        std::fs::create_dir_all(&configs).unwrap();
        std::fs::write(configs.join("n1.toml"), node_config("v100")).unwrap();
        std::fs::write(configs.join("n2.toml"), node_config("a100")).unwrap();
        Some(cluster)
    }

    /// `slurmlet cluster plan` of n1 and n2 into `dir`, each node reached through `nodes.sh
    /// exec` with its own configuration; the report, which must have no failed check.
    fn plan(&self, dir: &Path, extra: &[&str]) -> String {
        self.plan_of(BOX, dir, extra)
    }

    /// [`Cluster::plan`] of a box configured with `box_toml`.
    fn plan_of(&self, box_toml: &str, dir: &Path, extra: &[&str]) -> String {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("box.toml"), box_toml).unwrap();
        let via =
            format!("{} exec {{node}} env SLURMLET_CONF=/home/slurmlet-nodes/{{node}}.toml", nodes_sh().display());
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
            .env("SLURMLET_CONF", work.path().join("box.toml"))
            .args(["cluster", "plan", "-o"])
            .arg(dir)
            .args(["--controller", "ctl", "--via", &via])
            .args(extra)
            .args(["n1", "n2"])
            .output()
            .unwrap();
        eprintln!("real_cluster: plan took {:.1?}", t.elapsed());
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(!report.lines().any(|l| l.starts_with("FAIL")), "{report}");
        for node in ["n1", "n2"] {
            let found =
                |l: &&str| l.starts_with(&format!("ok   {node} ")) && l.contains(" 2 GPU(s) found by configured");
            assert!(report.lines().any(|l| found(&l)), "{report}");
        }
        report
    }

    /// `nodes.sh up PLAN n1 n2`: Slurm from the plan's files, in these hosts.
    fn up(&self, plan: &Path) {
        let t = Instant::now();
        let out = Command::new(nodes_sh()).arg("up").arg(plan).args(["n1", "n2"]).output().unwrap();
        assert!(out.status.success(), "nodes.sh up {}: {}", plan.display(), text(&out));
        eprintln!("real_cluster: up took {:.1?}", t.elapsed());
    }

    /// `args` run as alice on the controller host: what it printed, stdout then stderr.
    fn run(&self, args: &[&str]) -> String {
        self.run_as("alice", args)
    }

    /// `args` run as `user` on the controller host: what it printed, stdout then stderr.
    fn run_as(&self, user: &str, args: &[&str]) -> String {
        let out = Command::new(nodes_sh()).env("NODES_USER", user).args(["exec", "ctl"]).args(args).output().unwrap();
        text(&out)
    }

    /// Two one-CPU jobs on n1 run at once, each with a GPU: a job that asks for no memory
    /// does not get the whole node's (the plan's `DefMemPerCPU`).
    fn two_jobs_share_a_node(&self) {
        let submit = || {
            let id = self.run(&["sbatch", "--parsable", "-w", "n1", "-n1", "--gres=gpu:1", "--wrap", "sleep 60"]);
            id.trim().to_string()
        };
        let ids = [submit(), submit()];
        let until = Instant::now() + Duration::from_secs(30);
        let states = loop {
            let states = self.run(&["squeue", "-h", "-j", &ids.join(","), "-o", "%T %r"]);
            if states == "RUNNING None\nRUNNING None\n" || Instant::now() > until {
                break states;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        self.run(&["scancel", &ids[0], &ids[1]]);
        assert_eq!(states, "RUNNING None\nRUNNING None\n", "jobs {ids:?} on n1");
    }

    /// Submits `sbatch -N2` writing its nodes' names, waits for it to end: its id and output.
    fn two_node_batch(&self) -> (String, String) {
        let id = self.run(&[
            "sbatch",
            "--parsable",
            "-N2",
            "-o",
            "nodes-%j.out",
            "--wrap",
            "scontrol show hostnames $SLURM_JOB_NODELIST",
        ]);
        let id = id.trim().to_string();
        assert!(!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()), "sbatch: {id}");
        let until = Instant::now() + Duration::from_secs(60);
        while !self.run(&["squeue", "-h", "-j", &id]).trim().is_empty() {
            assert!(Instant::now() < until, "job {id} still queued after 60 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        let output = std::fs::read_to_string(self.home.join(format!("alice/nodes-{id}.out"))).unwrap_or_default();
        (id, output)
    }
}

#[test]
fn a_cluster_planned_for_nodes_of_two_gpu_types_comes_up_from_the_plans_files() {
    let test = "real_cluster::a_cluster_planned_for_nodes_of_two_gpu_types_comes_up_from_the_plans_files";
    let Some(cluster) = Cluster::hosts(test) else { return };
    let plan = tempfile::tempdir().unwrap();
    let report = cluster.plan(plan.path(), &["--no-accounting"]);
    assert!(report.contains("accounting off"), "{report}");
    cluster.up(plan.path());
    let t = Instant::now();
    let mut sinfo: Vec<String> =
        cluster.run(&["sinfo", "-h", "-o", "%P %a %t %N %G"]).lines().map(String::from).collect();
    sinfo.sort();
    assert_eq!(
        sinfo,
        [
            "a100 up idle n2 gpu:a100:2",
            "long up idle n1 gpu:v100:2",
            "long up idle n2 gpu:a100:2",
            "short* up idle n1 gpu:v100:2",
            "short* up idle n2 gpu:a100:2",
            "v100 up idle n1 gpu:v100:2",
        ]
    );
    let mut hosts: Vec<String> =
        cluster.run(&["timeout", "60", "srun", "-N2", "-n2", "hostname"]).lines().map(String::from).collect();
    hosts.sort();
    assert_eq!(hosts, ["n1", "n2"]);
    let (_, output) = cluster.two_node_batch();
    assert_eq!(output, "n1\nn2\n");
    let typed = cluster.run(&[
        "timeout",
        "60",
        "srun",
        "--gres=gpu:a100:1",
        "bash",
        "-c",
        "echo $(hostname) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES",
    ]);
    assert_eq!(typed, "n2 CUDA_VISIBLE_DEVICES=0\n");
    let by_partition = cluster.run(&["timeout", "60", "srun", "-p", "v100", "--gres=gpu:2", "hostname"]);
    assert_eq!(by_partition, "n1\n");
    cluster.two_jobs_share_a_node();
    eprintln!("real_cluster: checks took {:.1?}", t.elapsed());
}

// Accounting: apply with slurmdbd, the box's shares and limits on the cluster.
#[path = "real_cluster/accounting.rs"]
mod accounting;

// The stand-in NVML library, built as the integration tests build it.
#[path = "fake_nvml/built.rs"]
mod fake_nvml;

/// `slurmlet node-check` on node n1, with the stand-in NVML library answering for the GPUs
/// (files under the hosts' shared `/home`).
struct NodeCheck {
    /// Where the binary, the library, its configuration and the machine's JSON are.
    dir: PathBuf,
}

impl NodeCheck {
    fn on(cluster: &Cluster) -> NodeCheck {
        let dir = cluster.home.join("slurmlet-nodes");
        std::fs::copy(env!("CARGO_BIN_EXE_slurmlet"), dir.join("slurmlet")).unwrap();
        std::fs::copy(fake_nvml::library(), dir.join("libfake_nvml.so")).unwrap();
        let config = "nvml_library = \"/home/slurmlet-nodes/libfake_nvml.so\"\nforeign_gpu_memory = 100\n";
        std::fs::write(dir.join("n1-check.toml"), config).unwrap();
        let evil = dir.join("evil");
        std::fs::create_dir_all(&evil).unwrap();
        // A user's program named like Slurm's step daemon, with a child on the GPU.
        std::fs::write(evil.join("slurmstepd"), "#!/bin/sh\nsleep 120 &\necho $!\nwait\n").unwrap();
        std::fs::set_permissions(evil.join("slurmstepd"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        NodeCheck { dir }
    }

    /// The machine: n1's first GPU, with these processes on it using 2 GiB each.
    fn gpu_used_by(&self, pids: &[u32]) {
        let processes: Vec<String> =
            pids.iter().map(|p| format!("{{\"pid\": {p}, \"used_memory\": 2147483648}}")).collect();
        let machine = format!(
            "{{\"gpus\": [{{\"name\": \"Tesla V100-SXM2-32GB\", \"uuid\": \"GPU-n1-0\", \"pci_bus_id\": \"00000000:07:00.0\", \
             \"memory_total\": 34359738368, \"minor\": 0, \"processes\": [{}]}}]}}",
            processes.join(", ")
        );
        std::fs::write(self.dir.join("machine.json"), machine).unwrap();
    }

    /// Runs node-check on n1 (`env` added): its exit code and what it printed.
    fn run(&self, env: &[&str]) -> (Option<i32>, String) {
        let mut args = vec!["exec", "n1", "env", "SLURMLET_CONF=/home/slurmlet-nodes/n1-check.toml"];
        args.push("SLURMLET_FAKE_NVML=/home/slurmlet-nodes/machine.json");
        args.extend_from_slice(env);
        args.extend(["/home/slurmlet-nodes/slurmlet", "node-check"]);
        let out = Command::new(nodes_sh()).args(&args).output().unwrap();
        (out.status.code(), text(&out))
    }

    /// n1's `State=` and `Reason=` as root sees them.
    fn node(&self) -> (String, String) {
        let out = Command::new(nodes_sh()).args(["exec", "ctl", "scontrol", "show", "node", "n1"]).output().unwrap();
        let shown = text(&out);
        let field = |key: &str| {
            shown.split_whitespace().find_map(|w| w.strip_prefix(key)).map(String::from).unwrap_or_default()
        };
        let reason = shown.lines().find_map(|l| l.trim().strip_prefix("Reason=")).unwrap_or("").to_string();
        (field("State="), reason)
    }

    /// Starts `args` on n1 in the background; the pid of the process it prints on its first line.
    fn start(&self, args: &[&str]) -> (std::process::Child, u32) {
        let mut child = Command::new(nodes_sh())
            .args(["exec", "n1"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        (child, line.trim().parse().unwrap_or_else(|_| panic!("no pid from {args:?}: {line:?}")))
    }
}

#[test]
fn node_check_drains_a_node_whose_gpu_is_used_outside_the_queue_and_resumes_it() {
    let test = "real_cluster::node_check_drains_a_node_whose_gpu_is_used_outside_the_queue_and_resumes_it";
    let Some(cluster) = Cluster::hosts(test) else { return };
    let plan = tempfile::tempdir().unwrap();
    cluster.plan(plan.path(), &["--no-accounting"]);
    cluster.up(plan.path());
    let check = NodeCheck::on(&cluster);
    // A job's process on the GPU: Slurm's own step daemon is above it.
    check.gpu_used_by(&[]);
    assert_eq!(check.run(&[]), (Some(0), "node n1: clear\n".to_string()));
    let pid_file = cluster.home.join("alice/job.pid");
    let job = cluster.run(&["sbatch", "--parsable", "-w", "n1", "--wrap", "echo $$ > job.pid; exec sleep 120"]);
    let until = Instant::now() + Duration::from_secs(30);
    let job_pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(Instant::now() < until, "job {job} did not start");
        std::thread::sleep(Duration::from_millis(200));
    };
    check.gpu_used_by(&[job_pid]);
    assert_eq!(check.run(&[]), (Some(0), "node n1: clear\n".to_string()));
    cluster.run(&["scancel", job.trim()]);
    // A process outside the queue drains n1, with the finding as its reason.
    let (mut outsider, outsider_pid) = check.start(&["sh", "-c", "echo $$; exec sleep 120"]);
    check.gpu_used_by(&[outsider_pid]);
    let reason = format!("slurmlet: gpu 0 busy outside the queue: pid {outsider_pid} (root), 2048 MiB");
    let drained = check.run(&[]);
    eprintln!("real_cluster: node-check: {}", drained.1);
    assert_eq!(drained, (Some(0), format!("node n1: drained: {reason}\n")));
    let (state, shown) = check.node();
    assert!(state.contains("DRAIN") && shown.starts_with(&format!("{reason} [root@")), "{state} {shown}");
    eprintln!("real_cluster: sinfo -R:\n{}", cluster.run(&["sinfo", "-R"]));
    // As Slurm's prolog, it keeps the job off the node.
    assert_eq!(check.run(&["SLURM_SCRIPT_CONTEXT=prolog_slurmd"]).0, Some(1));
    // A user's program named slurmstepd is no step daemon of Slurm's.
    let (mut evil, evil_pid) = check.start(&[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "/home/slurmlet-nodes/evil/slurmstepd",
    ]);
    check.gpu_used_by(&[evil_pid]);
    let (code, said) = check.run(&[]);
    assert_eq!(code, Some(0));
    assert!(
        said.starts_with(&format!("node n1: drained: slurmlet: gpu 0 busy outside the queue: pid {evil_pid} (")),
        "{said}"
    );
    // Clear again: resumed.
    check.gpu_used_by(&[]);
    assert_eq!(check.run(&[]), (Some(0), "node n1: resumed\n".to_string()));
    assert!(!check.node().0.contains("DRAIN"), "{:?}", check.node());
    // Drained by an admin: left as it is, busy or clear.
    let admin = Command::new(nodes_sh())
        .args(["exec", "ctl", "scontrol", "update", "nodename=n1", "state=drain", "reason=bad fan"])
        .output()
        .unwrap();
    assert!(admin.status.success(), "{}", text(&admin));
    check.gpu_used_by(&[outsider_pid]);
    assert_eq!(check.run(&[]), (Some(0), format!("node n1: {reason} (left drained as it was: bad fan)\n")));
    check.gpu_used_by(&[]);
    assert_eq!(check.run(&[]), (Some(0), "node n1: clear\n".to_string()));
    let (state, shown) = check.node();
    assert!(state.contains("DRAIN") && shown.starts_with("bad fan ["), "{state} {shown}");
    for (child, pid) in [(&mut outsider, outsider_pid), (&mut evil, evil_pid)] {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Cluster {
    /// `slurmlet cluster apply` of the plan in `dir` through `nodes.sh exec`: exit code and
    /// what it printed.
    fn apply(&self, dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
            .env("SLURMLET_PROFILES", self.profiles_file())
            .env("XDG_CACHE_HOME", self.profiles.path())
            .args(["cluster", "apply", "-o"])
            .arg(dir)
            .args(["--via", &format!("{} exec {{node}}", nodes_sh().display())])
            .args(["--rest-url", &format!("http://{}:6820", self.ctl_addr)])
            .args(extra)
            .output()
            .unwrap();
        eprintln!("real_cluster: apply took {:.1?}", t.elapsed());
        (out.status.code(), text(&out))
    }

    /// The profiles file `apply` writes into.
    fn profiles_file(&self) -> PathBuf {
        self.profiles.path().join("config.toml")
    }

    /// This machine's command `args` (its `slurmlet` binary, as root) through `profile` of
    /// those `apply` wrote: whether it succeeded, and what it printed, stdout then stderr.
    fn on_box(&self, profile: &str, args: &[&str]) -> (bool, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
            .env("SLURMLET_PROFILES", self.profiles_file())
            .env("XDG_CACHE_HOME", self.profiles.path())
            .env("SLURMLET_PROFILE", profile)
            .args(args)
            .output()
            .unwrap();
        (out.status.success(), text(&out))
    }

    /// Runs a shell line as root on `host`.
    fn root_on(&self, host: &str, line: &str) -> Output {
        Command::new(nodes_sh()).args(["exec", host, "sh", "-c", line]).output().unwrap()
    }
}

#[test]
fn apply_makes_the_plan_a_cluster_says_what_to_do_about_a_munged_with_an_old_key_and_changes_nothing_twice() {
    let test = "real_cluster::apply_makes_the_plan_a_cluster_says_what_to_do_about_a_munged_with_an_old_key_and_changes_nothing_twice";
    let Some(cluster) = Cluster::hosts(test) else { return };
    let plan = tempfile::tempdir().unwrap();
    cluster.plan(plan.path(), &["--no-accounting"]);
    // n2's munged already runs, with the key the hosts had before the plan's was copied.
    let started = cluster
        .root_on("n2", "install -d -o munge -g munge -m 0755 /run/munge && runuser -u munge -- /usr/sbin/munged");
    assert!(started.status.success(), "{}", text(&started));
    let (code, said) = cluster.apply(plan.path(), &[]);
    eprintln!("real_cluster: apply with n2's munged on the old key:\n{said}");
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("FAIL n2           munged there does not take the controller's credentials ("), "{said}");
    assert!(
        said.contains("fix: restart munged on n2 (systemctl restart munge): it still runs with the key it had before"),
        "{said}"
    );
    let stopped = cluster.root_on("n2", "kill $(cat /run/munge/munged.pid)");
    assert!(stopped.status.success(), "{}", text(&stopped));
    std::thread::sleep(Duration::from_millis(500));
    let (code, said) = cluster.apply(plan.path(), &[]);
    eprintln!("real_cluster: apply:\n{said}");
    assert_eq!(code, Some(0), "{said}");
    for line in [
        "n2           munged: started",
        "n2           munge: takes ctl's credentials",
        "ctl          slurm.conf: written",
        "ctl          slurmctld: started",
        "n1           slurmd: started",
        "ctl          check: n1 n2 idle",
        "ctl          check: a one-GPU job on n2: 0",
        "ctl          check: srun -N2 -n2 hostname ran on n1 n2",
        "the cluster is up: ctl and n1 n2",
    ] {
        assert!(said.lines().any(|l| l == line), "no line {line:?} in:\n{said}");
    }
    let sinfo = cluster.run(&["sinfo", "-h", "-p", "a100", "-o", "%N %G"]);
    assert_eq!(sinfo, "n2 gpu:a100:2\n");
    // Applied again, nothing changes.
    let (code, again) = cluster.apply(plan.path(), &[]);
    assert_eq!(code, Some(0), "{again}");
    let changed: Vec<&str> = again.lines().filter(|l| l.ends_with(": written") || l.ends_with(": started")).collect();
    assert!(changed.is_empty(), "{again}");
    assert!(again.lines().any(|l| l == "ctl          slurmctld: running"), "{again}");
    // --dry-run says what it would run, through the transport.
    let (code, dry) = cluster.apply(plan.path(), &["--dry-run"]);
    assert_eq!(code, Some(0), "{dry}");
    assert!(
        dry.lines().any(|l| l.starts_with("n1           slurmd: ") && l.contains("nodes.sh exec n1 sh -c")),
        "{dry}"
    );
}
