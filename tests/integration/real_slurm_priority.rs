//! sprio, sshare and sacctmgr, line for line against what a real Slurm 26.05 printed for the same
//! configuration (`tests/fixtures/real-slurm-priority/used/`, made by
//! `scripts/real-slurm/priority.sh`): the same account tree, shares, weights and node
//! (2 CPUs), the same usage (alice 1214 in physics, carol 53 in chem, as the store keeps it),
//! the same jobs pending with the same ids. Needs root: the users are alice, bob and carol,
//! made for the test where the machine has none of them.

use crate::common::system::{is_root, Shared, User};
use std::path::Path;
use std::process::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real-slurm-priority/used");

/// The configuration of the real cluster's priority.sh.
const CONFIG: &str = "cluster_name = \"ci26\"\ncpus = 2\ngpus = 4\n\
    priority_weight_age = 1000\npriority_weight_fairshare = 10000\npriority_weight_job_size = 100\n\
    priority_weight_partition = 1000\npriority_max_age = \"7-0\"\npriority_decay_half_life = \"7-0\"\n\
    # The running jobs' usage is not what this compares (the real cluster had not yet counted\n\
    # theirs): their billing is 0 here.\n\
    tres_billing_weights = \"CPU=0\"\n\
    [qos.scavenger]\npriority = 0\n\
    [qos.high]\npriority = 100\n\
    [accounts.root]\nqos = [\"normal\"]\n\
    [accounts.chem]\nusers = [\"carol\"]\n\
    [accounts.physics]\nfairshare = 2\nusers = [\"alice\", \"bob\"]\n\
    [accounts.theory]\nparent = \"physics\"\nusers = [\"bob\"]\n\
    [accounts.research]\nusers = [\"alice\", \"root\"]\ndescription = \"ci\"\norganization = \"ci\"\n\
    [users.alice]\ndefault_account = \"research\"\n\
    [users.bob]\ndefault_account = \"physics\"\n";

/// A capture: its file, the user who ran it (root: `None`) and the command's arguments.
type Case = (&'static str, Option<&'static str>, &'static [&'static str]);

/// sprio's captures.
const SPRIO: &[Case] = &[
    ("sprio.txt", None, &[]),
    ("sprio_-l.txt", None, &["-l"]),
    ("sprio_-n.txt", None, &["-n"]),
    ("sprio_-w.txt", None, &["-w"]),
    ("sprio_-w_-n.txt", None, &["-w", "-n"]),
    ("sprio_-l_-n.txt", None, &["-l", "-n"]),
    ("sprio_-h.txt", None, &["-h"]),
    ("sprio_-u_alice.txt", None, &["-u", "alice"]),
    ("sprio_-j_ID.txt", None, &["-j", "26"]),
    ("sprio_-p_gpu.txt", None, &["-p", "gpu"]),
    ("sprio_-p_debug.txt", None, &["-p", "debug"]),
    ("sprio_-S_-y.txt", None, &["-S", "-y"]),
    ("sprio_-S_y.txt", None, &["-S", "y"]),
];

/// sshare's captures.
const SSHARE: &[Case] = &[
    ("sshare.txt", None, &[]),
    ("sshare_-a.txt", None, &["-a"]),
    ("sshare_-l.txt", None, &["-l"]),
    ("sshare_-l_-a.txt", None, &["-l", "-a"]),
    ("sshare_-P_-a.txt", None, &["-P", "-a"]),
    ("sshare_-p_-a.txt", None, &["-p", "-a"]),
    ("sshare_-n_-a.txt", None, &["-n", "-a"]),
    ("sshare_-P_-l_-a.txt", None, &["-P", "-l", "-a"]),
    ("sshare_-A_physics.txt", None, &["-A", "physics"]),
    ("sshare_-A_physics_-a.txt", None, &["-A", "physics", "-a"]),
    ("sshare_-u_bob.txt", None, &["-u", "bob"]),
    ("sshare_-u_bob_-a.txt", None, &["-u", "bob", "-a"]),
    ("sshare_-U_--format_Account%256_--noheader.txt", Some("alice"), &["-U", "--format", "Account%256", "--noheader"]),
    ("sshare.as-alice.txt", Some("alice"), &[]),
    ("sshare_-U.as-alice.txt", Some("alice"), &["-U"]),
    ("sshare.as-bob.txt", Some("bob"), &[]),
];

/// sacctmgr's captures.
const SACCTMGR: &[Case] = &[
    ("sacctmgr_show_assoc.txt", None, &["show", "assoc"]),
    ("sacctmgr_-P_show_assoc.txt", None, &["-P", "show", "assoc"]),
    ("sacctmgr_-p_show_assoc.txt", None, &["-p", "show", "assoc"]),
    ("sacctmgr_-n_show_assoc.txt", None, &["-n", "show", "assoc"]),
    ("sacctmgr_show_assoc_tree.txt", None, &["show", "assoc", "tree"]),
    (
        "sacctmgr_show_assoc_format=Cluster,Account,User,Partition,Fairshare,ParentName,QOS,DefaultQOS.txt",
        None,
        &["show", "assoc", "format=Cluster,Account,User,Partition,Fairshare,ParentName,QOS,DefaultQOS"],
    ),
    (
        "sacctmgr_show_assoc_tree_format=Account,User,Fairshare,ParentName.txt",
        None,
        &["show", "assoc", "tree", "format=Account,User,Fairshare,ParentName"],
    ),
    ("sacctmgr_show_assoc_where_user=bob.txt", None, &["show", "assoc", "where", "user=bob"]),
    (
        "sacctmgr_-n_-s_list_user_alice_format=account%256.txt",
        None,
        &["-n", "-s", "list", "user", "alice", "format=account%256"],
    ),
    (
        "sacctmgr_-n_-s_list_user_alice_format=account%256.as-alice.txt",
        Some("alice"),
        &["-n", "-s", "list", "user", "alice", "format=account%256"],
    ),
    ("sacctmgr_show_user.txt", None, &["show", "user"]),
    ("sacctmgr_show_user_-s.txt", None, &["show", "user", "-s"]),
    ("sacctmgr_show_user_withassoc.txt", None, &["show", "user", "withassoc"]),
    ("sacctmgr_show_account.txt", None, &["show", "account"]),
    ("sacctmgr_show_account_-s.txt", None, &["show", "account", "-s"]),
    ("sacctmgr_show_account_withassoc.txt", None, &["show", "account", "withassoc"]),
    ("sacctmgr_show_qos.txt", None, &["show", "qos"]),
    ("sacctmgr_-P_show_qos.txt", None, &["-P", "show", "qos"]),
    ("sacctmgr_show_qos_format=name,priority.txt", None, &["show", "qos", "format=name,priority"]),
];

/// The users of the real cluster, made here unless they exist (then used as they are).
struct Users {
    /// Removed when the test ends.
    _made: Vec<User>,
}

impl Users {
    fn make(dir: &Path) -> Users {
        let made = ["alice", "bob", "carol"]
            .iter()
            .filter(|name| slurmlet::identity::user_uid(name).is_none())
            .map(|name| User::create(name, &dir.join(format!("home-{name}"))))
            .collect();
        Users { _made: made }
    }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs `cmd` with `args` as `user` (root: `None`) against the shared daemon; its stdout.
fn output(shared: &Shared, user: Option<&str>, cmd: &str, args: &[&str]) -> String {
    let mut c = Command::new(shared.bin.join(cmd));
    c.args(args).env_clear().env("PATH", "/usr/bin:/bin").env("SLURMLET_SYSTEM_CONF", &shared.config);
    if let Some(name) = user {
        use std::os::unix::process::CommandExt;
        let (uid, gid) = slurmlet::identity::user_ids(name).expect("the user exists");
        c.uid(uid).gid(gid).current_dir("/tmp");
    }
    let out = crate::common::system::retrying(|| c.output());
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Submits as `user` into `account`; the job's id.
fn sbatch(shared: &Shared, user: &str, account: &str, script: &str) -> u32 {
    let args = ["--parsable", "-A", account, "--gres=gpu:1", "--wrap", script];
    output(shared, Some(user), "sbatch", &args).trim().parse().unwrap()
}

/// Puts the real cluster's usage into the store of the stopped daemon: alice 1214.3 in
/// physics and carol 53.49944 in chem, as of now: their RawUsage (1214, 53), NormUsage
/// (0.957801, 0.042199) and the accounts' LevelFS (0.417623, 4.739487) are then the real
/// cluster's to the last printed digit.
fn keep_usage(state: &Path) {
    let db = rusqlite::Connection::open(state.join("slurmlet.db")).unwrap();
    let now = slurmlet::sys::now() as i64;
    for (account, user, usage) in [("physics", "alice", 1214.3), ("chem", "carol", 53.499_437)] {
        let uid = slurmlet::identity::user_uid(user).unwrap();
        db.execute(
            "INSERT OR REPLACE INTO usage (account, uid, usage, as_of) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![account, uid, usage, now],
        )
        .unwrap();
    }
}

#[test]
fn sprio_sshare_and_sacctmgr_print_what_a_real_slurm_prints_for_the_same_tree_and_usage() {
    if !is_root(
        "real_slurm_priority::sprio_sshare_and_sacctmgr_print_what_a_real_slurm_prints_for_the_same_tree_and_usage",
    ) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let _users = Users::make(home.path());
    let mut shared = Shared::start(CONFIG);
    shared.stop_daemon();
    keep_usage(&shared.dir.path().join("state"));
    shared.start_daemon();
    // The real cluster's jobs had ids from 22: the same here.
    for _ in 1..22 {
        let id = output(&shared, None, "sbatch", &["--parsable", "--hold", "--wrap", "true"]);
        output(&shared, None, "scancel", &[id.trim()]);
    }
    let holds: Vec<u32> = (0..4).map(|_| sbatch(&shared, "root", "research", "sleep 600")).collect();
    assert_eq!(holds, [22, 23, 24, 25]);
    shared.wait_state(23, "RUNNING");
    assert_eq!(sbatch(&shared, "alice", "physics", "sleep 60"), 26);
    sbatch(&shared, "alice", "physics", "sleep 60");
    sbatch(&shared, "bob", "theory", "sleep 60");
    sbatch(&shared, "bob", "physics", "sleep 60");
    assert_eq!(sbatch(&shared, "carol", "chem", "sleep 60"), 30);
    let mut differ = Vec::new();
    let mut compare = |file: &str, user: Option<&str>, cmd: &str, args: &[&str]| {
        let ours = output(&shared, user, cmd, args);
        let theirs = fixture(file);
        if ours != theirs {
            differ.push(format!(
                "{cmd} {} (as {}):\n--- real Slurm\n{theirs}--- ours\n{ours}",
                args.join(" "),
                user.unwrap_or("root")
            ));
        }
    };
    for (cmd, cases) in [("sprio", SPRIO), ("sshare", SSHARE), ("sacctmgr", SACCTMGR)] {
        for (file, user, args) in cases {
            compare(file, *user, cmd, args);
        }
    }
    // Changes are the configuration file's: sacctmgr says so and changes nothing.
    let mut add = Command::new(shared.bin.join("sacctmgr"));
    add.args(["-i", "add", "account", "x"]).env("SLURMLET_SYSTEM_CONF", &shared.config);
    let out = crate::common::system::retrying(|| add.output());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("configuration file") && said.contains("nothing was changed"),
        "{said}"
    );
    let _ = output(&shared, None, "scancel", &["-u", "root"]);
    for user in ["alice", "bob", "carol"] {
        let _ = output(&shared, None, "scancel", &["-u", user]);
    }
    assert!(differ.is_empty(), "{} of the outputs differ:\n{}", differ.len(), differ.join("\n"));
}
