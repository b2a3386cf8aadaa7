//! The `[cgroup]` settings: `scontrol show config` prints Slurm's `Cgroup Support
//! Configuration` with what this machine lets them be, and a constraint that cannot be had
//! is one warning line in the daemon's log.

use crate::common;
use common::*;
use slurmlet::stepd::containment::cgroup::hierarchy::{Controller, Hierarchies};

/// The `Key = Value` lines of `scontrol show config`'s cgroup section.
fn cgroup_section(c: &Cluster) -> Vec<String> {
    let out = c.run("scontrol", &["show", "config"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .skip_while(|l| *l != "Cgroup Support Configuration:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn the_settings_asked_for_are_shown_as_this_machine_can_have_them() {
    let c =
        Cluster::start("0", "[cgroup]\nconstrain_cores = true\nconstrain_ram_space = true\nallowed_ram_space = 90.0");
    let machine = Hierarchies::of_this_machine();
    let section = cgroup_section(&c);
    let value = |key: &str| {
        section
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{key:<23} = ")))
            .unwrap_or_else(|| panic!("{key} in {section:?}"))
            .to_string()
    };
    assert_eq!(value("AllowedRAMSpace"), "90.0%");
    assert_eq!(value("ConstrainSwapSpace"), "no");
    assert_eq!(value("ConstrainDevices"), "no", "a user's daemon does not filter devices unless asked");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // A user's daemon contains its jobs in cgroups only as root (or where some are delegated).
    let cores = root && machine.choose(Controller::Cpuset).is_some();
    assert_eq!(value("ConstrainCores"), if cores { "yes" } else { "no" });
    let plugin = if root { machine.plugin().map_or("disabled", |v| v.plugin()) } else { "disabled" };
    assert_eq!(value("CgroupPlugin"), plugin);
    let warned = c.log().lines().any(|l| l.contains("asked for but not enforced"));
    assert_eq!(warned, !cores || machine.choose(Controller::Memory).is_none(), "{}", c.log());
}

#[test]
fn an_unknown_cgroup_key_is_refused_by_name() {
    let c = Cluster::configure("0", "[cgroup]\nconstrain_ram = true");
    let out = c.run("sbatch", &["--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown field `constrain_ram`"), "{}", stderr(&out));
}

#[test]
fn a_system_daemon_whose_jobs_stay_in_its_memory_group_says_that_its_limit_holds_them() {
    let test = "a_system_daemon_whose_jobs_stay_in_its_memory_group_says_that_its_limit_holds_them";
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(test, "not root: a system daemon and a memory group of its own need root");
        return;
    }
    let machine = Hierarchies::of_this_machine();
    let Some(place) = machine.choose(Controller::Memory) else {
        skip(test, "this machine has no memory controller");
        return;
    };
    // A memory group with a limit, as systemd makes one for a unit with MemoryMax=2G.
    let group = place.mount.join(format!("slurmlet-memtest-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&group) {
        skip(test, &format!("cannot make a memory group {}: {e}", group.display()));
        return;
    }
    let limit_file = if place.version == slurmlet::stepd::containment::cgroup::hierarchy::Version::V2 {
        "memory.max"
    } else {
        "memory.limit_in_bytes"
    };
    std::fs::write(group.join(limit_file), "2147483648").unwrap();
    let run = |cgroup: &str| {
        let c = Cluster::configure("0", &format!("mode = \"system\"\n{cgroup}"));
        // The daemon joins the group before it starts, as a unit's main process does.
        let mut daemon = std::process::Command::new("sh")
            .args(["-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\""])
            .arg(&group)
            .arg(c.bin.join("slurmletd"))
            .args(["--system", "--config"])
            .arg(&c.config)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(c.dir.path().join("daemon.log")).unwrap())
            .spawn()
            .unwrap();
        wait_for("the daemon", std::time::Duration::from_secs(20), || {
            until(std::os::unix::net::UnixStream::connect(&c.socket).is_ok(), || c.log())
        });
        let _ = daemon.kill();
        let _ = daemon.wait();
        let log = c.log();
        remove_daemon_cgroups(true, &c.dir.path().join("state"));
        log
    };
    let said =
        "jobs stay in the daemon's memory cgroup, whose limit of 2048 MiB (the unit's MemoryMax) they share with it";
    let kept = run("[cgroup]\ncgroup_plugin = \"disabled\"");
    let moved = run("");
    let _ = std::fs::remove_dir(&group);
    assert!(kept.contains(said), "{kept}");
    assert!(!moved.contains(said), "jobs that leave the group are not held by its limit: {moved}");
}
