//! `slurmlet cluster plan` against nodes that are this machine under other names: each node
//! is a UTS namespace with its own host name and its own slurmlet configuration (configured
//! GPUs of its own type, with stand-in device files), reached through `--via` instead of
//! ssh. The plan carries the box's partitions, priorities, shards, cgroup settings and
//! limits; a node where a user of the box has another uid fails with the fix; a node that
//! answers lies is refused without a line of it in the files. Needs root (namespaces).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const BOX: &str =
    "cluster_name = \"lab\"\nshards_per_gpu = 4\npriority_weight_fairshare = 10000\npriority_weight_age = 100\n\
    preempt_type = \"preempt/qos\"\npreempt_mode = \"REQUEUE\"\n\
    [[partitions]]\nname = \"short\"\ndefault = true\nmax_time = \"1:00:00\"\n[[partitions]]\nname = \"long\"\n\
    [limits]\nmax_gpus_per_user = 2\n\
    [qos.high]\npriority = 100\npreempt = [\"normal\"]\n\
    [accounts.physics]\nusers = [\"nobody\"]\n\
    [cgroup]\nconstrain_cores = true\nconstrain_devices = true\n";

fn node_config(gpu_type: &str) -> String {
    format!("gpus = {{ type = \"{gpu_type}\", ids = [0, 1], files = [\"/dev/nvidia0\", \"/dev/nvidia1\"] }}\n")
}

/// `unshare` with a host name of the node's, its own configuration, and on `n2` a passwd
/// file where `nobody` has another uid.
fn via(dir: &Path) -> String {
    format!(
        "unshare --uts --mount env SLURMLET_CONF={d}/{{node}}.toml sh -c 'hostname {{node}} && \
         if [ -f {d}/{{node}}.passwd ]; then mount --bind {d}/{{node}}.passwd /etc/passwd; fi && exec \"$@\"' sh",
        d = dir.display()
    )
}

fn plan(dir: &Path, extra: &[&str], nodes: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slurmlet"))
        .env("SLURMLET_CONF", dir.join("box.toml"))
        .args(["cluster", "plan", "-o"])
        .arg(dir.join("plan"))
        .args(["--controller", "localhost", "--via", &via(dir)])
        .args(extra)
        .args(nodes)
        .output()
        .unwrap()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join("plan").join(file)).unwrap()
}

fn facts_of(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&read(dir, "nodes.json")).unwrap()
}

fn setup() -> Option<tempfile::TempDir> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        crate::common::skip("cluster_plan", "not root: the nodes are namespaces with their own host names");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("box.toml"), BOX).unwrap();
    std::fs::write(dir.path().join("n1.toml"), node_config("v100")).unwrap();
    std::fs::write(dir.path().join("n2.toml"), node_config("a100")).unwrap();
    Some(dir)
}

#[test]
fn a_plan_carries_the_boxs_settings_and_each_nodes_gpus_into_slurms_files() {
    let Some(dir) = setup() else { return };
    let dir = dir.path();
    // slurmlet is not on the nodes' PATH under this name: the binary is sent.
    let out = plan(dir, &["--remote-slurmlet", "slurmlet-not-installed"], &["n[1-2]"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{report}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains("(not ssh: each command runs on the node through it)"), "{report}");
    assert!(report.contains("ok   n1           2 CPUs") || report.contains("ok   n1"), "{report}");
    let conf = read(dir, "slurm.conf");
    for line in [
        "ClusterName=lab",
        "SlurmctldHost=localhost",
        "SlurmctldParameters=enable_configless",
        "SelectType=select/cons_tres",
        "GresTypes=gpu,shard",
        "PriorityType=priority/multifactor",
        "PriorityWeightFairshare=10000",
        "PriorityWeightAge=100",
        "PreemptType=preempt/qos",
        "PreemptMode=REQUEUE",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageTRES=gres/gpu,gres/shard",
        "AccountingStorageEnforce=associations,limits,qos,safe",
        "PartitionName=short Nodes=ALL Default=YES MaxTime=0-01:00:00 PriorityJobFactor=1 State=UP",
        "PartitionName=long Nodes=ALL Default=NO MaxTime=UNLIMITED PriorityJobFactor=1 State=UP",
        "PartitionName=a100 Nodes=n2 Default=NO MaxTime=UNLIMITED State=UP",
        "PartitionName=v100 Nodes=n1 Default=NO MaxTime=UNLIMITED State=UP",
    ] {
        assert!(conf.lines().any(|l| l == line), "no line {line:?} in:\n{conf}");
    }
    let node = |name: &str, gpu: &str| {
        let line =
            conf.lines().find(|l| l.starts_with(&format!("NodeName={name} "))).unwrap_or_else(|| panic!("{conf}"));
        assert!(line.contains(" Boards=1 SocketsPerBoard=") && line.contains(" RealMemory="), "{line}");
        assert!(line.ends_with(&format!(" Gres=gpu:{gpu}:2,shard:8 State=UNKNOWN")), "{line}");
    };
    node("n1", "v100");
    node("n2", "a100");
    let gres = read(dir, "gres.conf");
    for line in [
        "NodeName=n1 AutoDetect=off",
        "NodeName=n1 Name=gpu Type=v100 File=/dev/nvidia0",
        "NodeName=n1 Name=gpu Type=v100 File=/dev/nvidia1",
        "NodeName=n2 Name=gpu Type=a100 File=/dev/nvidia1",
        "NodeName=n2 Name=shard Count=8",
    ] {
        assert!(gres.lines().any(|l| l == line), "no line {line:?} in:\n{gres}");
    }
    let accounts = read(dir, "accounts.sh");
    for line in [
        "sacctmgr -n -P show cluster format=cluster | grep -qx lab || run sacctmgr -i add cluster lab",
        "run sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=2",
        "run sacctmgr -i modify qos high set Priority=100 Preempt=normal",
        "run sacctmgr -i add account physics cluster=lab parent=root fairshare=1 description=physics organization=physics",
        "run sacctmgr -i add user nobody cluster=lab account=physics fairshare=1 defaultaccount=physics",
    ] {
        assert!(accounts.lines().any(|l| l == line), "no line {line:?} in:\n{accounts}");
    }
    let cgroup = read(dir, "cgroup.conf");
    assert!(cgroup.contains("ConstrainCores=yes\n") && cgroup.contains("ConstrainDevices=yes\n"), "{cgroup}");
    let v1 = facts_of(dir)["n1"]["cgroup_version"] == 1;
    assert!(cgroup.contains(if v1 { "CgroupPlugin=cgroup/v1\n" } else { "CgroupPlugin=autodetect\n" }), "{cgroup}");
    assert!(read(dir, "systemd/slurmd.service.d/slurmlet-configless.conf").contains("--conf-server localhost"));
    let facts = facts_of(dir);
    assert_eq!(facts["n2"]["gpus"][0]["gres_type"], "a100");
    // The secrets are private, ignored by git, and kept by planning again (slurmlet found
    // on the nodes this time).
    let key_path = dir.join("plan/munge.key");
    let key = std::fs::read(&key_path).unwrap();
    assert_eq!(key.len(), 1024);
    assert_eq!(std::fs::metadata(&key_path).unwrap().permissions().mode() & 0o777, 0o400);
    assert_eq!(std::fs::metadata(dir.join("plan/slurmdbd.conf")).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(
        read(dir, ".gitignore").lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>(),
        ["munge.key", "jwt_hs256.key", "slurmdbd.conf"]
    );
    let jwt_path = dir.join("plan/jwt_hs256.key");
    let jwt = std::fs::read(&jwt_path).unwrap();
    assert_eq!((jwt.len(), std::fs::metadata(&jwt_path).unwrap().permissions().mode() & 0o777), (32, 0o400));
    let jwt_line = "AuthAltParameters=jwt_key=/var/spool/slurmctld/jwt_hs256.key";
    for conf in ["slurm.conf", "slurmdbd.conf"] {
        let text = read(dir, conf);
        assert!(text.contains(&format!("AuthAltTypes=auth/jwt\n{jwt_line}\n")), "{conf}:\n{text}");
    }
    let dbd = read(dir, "slurmdbd.conf");
    let again = plan(dir, &["--remote-slurmlet", env!("CARGO_BIN_EXE_slurmlet")], &["n1", "n2"]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stdout));
    assert_eq!(std::fs::read(&key_path).unwrap(), key, "planning again changed munge's key");
    assert_eq!(std::fs::read(&jwt_path).unwrap(), jwt, "planning again changed the JWT key");
    assert_eq!(read(dir, "slurmdbd.conf"), dbd, "planning again changed the database's password");
}

#[test]
fn a_user_with_another_uid_on_a_node_fails_the_plan_with_the_fix() {
    let Some(dir) = setup() else { return };
    let dir = dir.path();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let nobody: u32 =
        passwd.lines().find(|l| l.starts_with("nobody:")).and_then(|l| l.split(':').nth(2)).unwrap().parse().unwrap();
    let moved: String = passwd
        .lines()
        .map(
            |l| if l.starts_with("nobody:") { l.replacen(&format!(":{nobody}:"), ":65000:", 1) } else { l.to_string() },
        )
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(dir.join("n2.passwd"), moved).unwrap();
    let out = plan(dir, &["--remote-slurmlet", env!("CARGO_BIN_EXE_slurmlet")], &["n1", "n2"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    let failed: Vec<&str> = report.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed, [format!("FAIL n2           user nobody has uid 65000 there but {nobody} here")], "{report}");
    assert!(
        report.contains(&format!("fix: give nobody the same uid on every machine (usermod -u {nobody} nobody)")),
        "{report}"
    );
    // The files are written all the same, for the person to read.
    assert!(read(dir, "slurm.conf").contains("NodeName=n2 "));
}

#[test]
fn a_node_that_lies_or_a_name_that_is_an_option_gets_no_line_in_the_files() {
    let Some(dir) = setup() else { return };
    let dir = dir.path();
    let liar = dir.join("liar.sh");
    let mut facts: serde_json::Value = serde_json::from_str(
        &String::from_utf8(
            Command::new(env!("CARGO_BIN_EXE_slurmlet")).args(["cluster", "probe"]).output().unwrap().stdout,
        )
        .unwrap(),
    )
    .unwrap();
    facts["hostname"] = "n1\nPartitionName=evil Nodes=ALL".into();
    std::fs::write(&liar, format!("#!/bin/sh\ncat <<'EOF'\n{facts}\nEOF\n")).unwrap();
    std::fs::set_permissions(&liar, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = plan(dir, &["--remote-slurmlet", liar.to_str().unwrap()], &["n1"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report
            .contains("FAIL n1           no facts: hostname: \"n1\\nPartitionName=evil Nodes=ALL\" is not a host name"),
        "{report}"
    );
    assert!(!read(dir, "slurm.conf").contains("evil"));

    let out = plan(dir, &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("name the compute nodes"), "{out:?}");

    let out = plan(dir, &["--"], &["-oProxyCommand=touch"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a host name"), "{out:?}");
}

#[test]
fn node_check_on_a_node_without_gpus_says_so_and_asks_slurm_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A node whose configuration says it has none (whatever this machine has).
    std::fs::write(dir.path().join("cpu.toml"), "gpus = 0\n").unwrap();
    // `false` as scontrol: any call to it would fail the check.
    let out = Command::new(env!("CARGO_BIN_EXE_slurmlet"))
        .env("SLURMLET_CONF", dir.path().join("cpu.toml"))
        .args(["node-check", "--node", "cpu1", "--scontrol", "false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "node cpu1: no GPU found here: nothing to look at\n");
}
