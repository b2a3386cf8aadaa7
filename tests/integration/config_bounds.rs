//! Configuration values no machine could have, as a careless or hostile file writes them:
//! the daemon refuses to start on them, naming the key, the value and the allowed range, and
//! a reload (SIGHUP) that brings one in is refused while the daemon goes on with the
//! configuration it had.

use crate::common;
use common::T;

use common::*;

#[test]
fn a_daemon_refuses_to_start_on_a_value_out_of_range_naming_key_value_and_range() {
    // (the GPUs, other lines, what the refusal says)
    let cases = [
        ("4000000000", "", "gpus = 4000000000 is out of range: 0 to 1024"),
        ("0", "cpus = 4000000000", "cpus = 4000000000 is out of range: 1 to 8192"),
        (
            "0",
            "job_acct_gather_frequency = 9223372036854775807",
            "job_acct_gather_frequency = 9223372036854775807 is out of range: 0 to 86400 seconds",
        ),
        (
            "0",
            "gpu_sample_interval = 9223372036854775807",
            "gpu_sample_interval = 9223372036854775807 is out of range: 0 to 86400 seconds",
        ),
        ("0", "[cgroup]\nallowed_ram_space = -50", "cgroup.allowed_ram_space = -50 is out of range: 1 to 1000 percent"),
    ];
    for (gpus, extra, says) in cases {
        let c = Cluster::configure(gpus, extra);
        let o = c.start_refused();
        assert_eq!(o.status.code(), Some(1), "{extra}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).lines().last().unwrap_or_default(),
            format!("slurmletd: error: {}: {says}", c.config.display())
        );
        assert!(!c.dir.path().join("state").exists(), "{extra}: nothing was made of the state directory");
    }
}

/// The value `scontrol show config` gives `key`.
fn shown(c: &Cluster, key: &str) -> String {
    let o = c.run("scontrol", &["show", "config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o).lines().find(|l| l.split_whitespace().next() == Some(key)).map(String::from);
    line.and_then(|l| l.split_once('=').map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no {key} in scontrol show config"))
}

/// Sends SIGHUP to `c`'s daemon and waits until its log has one more line saying `says`.
fn reload(c: &Cluster, says: &str) {
    let before = c.log().matches(says).count();
    let pid = c.daemon.as_ref().expect("a daemon started as a child").id() as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    wait_for(&format!("{says:?} in the log"), T, || until(c.log().matches(says).count() > before, || c.log()));
}

#[test]
fn a_reload_with_a_value_out_of_range_is_refused_and_the_daemon_goes_on_as_it_was() {
    let c = Cluster::start("0", "max_array_size = 10");
    let base = read(&c.config);
    // A reload that changes a key applied at once and brings a bad one: nothing of it is
    // taken, the daemon says why.
    let bad = base.replace("max_array_size = 10", "max_array_size = 20").replace("kill_wait = 2", "kill_wait = 70000");
    std::fs::write(&c.config, &bad).unwrap();
    reload(&c, "configuration reload failed, keeping the old one");
    let log = c.log();
    assert!(log.contains("kill_wait = 70000 is out of range: 0 to 65533 seconds"), "{log}");
    assert_eq!(shown(&c, "MaxArraySize"), "10");
    assert_eq!(shown(&c, "KillWait"), "2 sec");
    // It answers at once and runs jobs as before.
    let o = c.run("squeue", &["-h"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = c.sbatch(&["--wrap", "true"]);
    c.wait_state(id, &["COMPLETED"], T);
    // The same change without the bad value is taken.
    std::fs::write(&c.config, bad.replace("kill_wait = 70000", "kill_wait = 2")).unwrap();
    reload(&c, "configuration reloaded");
    assert_eq!(shown(&c, "MaxArraySize"), "20");
}

#[test]
fn a_reload_names_each_key_that_waits_for_the_next_start_and_takes_the_others() {
    let c = Cluster::start("0", "max_array_size = 10");
    let base = read(&c.config);
    let changed = format!(
        "{}\nnvml_library = \"/nonexistent/libnvidia-ml.so.1\"\n",
        base.replace("max_array_size = 10", "max_array_size = 30")
    );
    std::fs::write(&c.config, &changed).unwrap();
    reload(&c, "configuration reloaded");
    let log = c.log();
    // The library was neither applied nor reported before: it is named now.
    assert!(log.contains("configuration reload: nvml_library changed; it takes effect after a restart"), "{log}");
    assert!(!log.contains("configuration reload: max_array_size"), "{log}");
    assert_eq!(shown(&c, "MaxArraySize"), "30");
}
