//! `slurmlet __complete` with a cluster profile selected asks the cluster's REST API, here
//! slurmlet's own daemon over TCP with a token (as tests/integration/remote.rs has it), and
//! offers what the local daemon offers, in the same order and with the same descriptions;
//! a cluster that does not answer gets nothing offered, within the deadline.

use crate::common;

use common::Cluster;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const PARTITIONS: &str = "[[partitions]]\nname = \"short\"\ndefault = true\n\n[[partitions]]\nname = \"long\"\n";

/// A profiles file naming `url` `tcp`, its token in a file.
fn profiles(c: &Cluster, url: &str, token: &str) -> PathBuf {
    let token_file = c.dir.path().join("token");
    std::fs::write(&token_file, token).unwrap();
    let profiles = c.dir.path().join("profiles.toml");
    std::fs::write(&profiles, format!("[profiles.tcp]\nurl = \"{url}\"\ntoken_file = \"{}\"\n", token_file.display()))
        .unwrap();
    profiles
}

/// `slurmlet __complete ARGS`: through profile `tcp` of `profiles`, with no local daemon to
/// fall back on (its socket is elsewhere), or on the local socket when `profiles` is `None`.
fn complete(c: &Cluster, profiles: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = c.cmd("slurmlet");
    cmd.arg("__complete").args(args).env("XDG_CACHE_HOME", c.dir.path().join("cache"));
    match profiles {
        Some(p) => cmd
            .env("SLURMLET_PROFILES", p)
            .env("SLURMLET_PROFILE", "tcp")
            .env("SLURMLET_SOCKET", c.dir.path().join("no-daemon-here.sock")),
        None => cmd.env_remove("SLURMLET_PROFILE").env("SLURMLET_PROFILES", c.dir.path().join("no-profiles.toml")),
    };
    let out = cmd.output().expect("run slurmlet __complete");
    assert!(out.status.success(), "{args:?}: {out:?}");
    out
}

#[test]
fn a_cluster_profile_completes_from_the_cluster_as_the_local_daemon_does() {
    let (c, addr) = Cluster::start_on_tcp("2", PARTITIONS);
    let token = c.run("scontrol", &["token", "lifespan=600"]);
    assert!(token.status.success(), "{token:?}");
    let profiles = profiles(&c, &format!("http://{addr}/"), &common::stdout(&token));

    let ended = c.sbatch(&["-J", "over", "--wrap", "true"]);
    c.wait_state(ended, &["COMPLETED"], common::T);
    let running = c.sbatch(&["-J", "train", "--wrap", "sleep 300"]);
    let held = c.sbatch(&["-H", "-J", "later", "--wrap", "true"]);
    c.wait_state(running, &["RUNNING"], Duration::from_secs(20));

    let remote = |args: &[&str]| common::stdout(&complete(&c, Some(&profiles), args));
    let local = |args: &[&str]| common::stdout(&complete(&c, None, args));
    let values =
        |text: &str| -> Vec<String> { text.lines().map(|l| l.split('\t').next().unwrap().to_string()).collect() };

    // The cluster's queued jobs, the running one first, with their names and states.
    let jobs = remote(&["jobs", ""]);
    assert_eq!(values(&jobs), [running.to_string(), held.to_string()], "{jobs}");
    assert!(jobs.starts_with(&format!("{running}\ttrain RUNNING\n")), "{jobs}");
    // sacct -j's: the ended one too, after them.
    let history = remote(&["history", ""]);
    assert_eq!(values(&history), [running.to_string(), held.to_string(), ended.to_string()], "{history}");
    assert!(history.ends_with(&format!("{ended}\tover COMPLETED\n")), "{history}");
    // The partitions, the default first.
    let partitions = remote(&["partitions", ""]);
    assert_eq!(values(&partitions), ["short", "long"], "{partitions}");
    assert_eq!(values(&remote(&["partitions", "short,l"])), ["short,long"]);

    // Each kind as the local daemon offers it, line for line.
    for args in [
        &["jobs", ""][..],
        &["jobs", &running.to_string()[..1]],
        &["history", ""],
        &["partitions", ""],
        &["nodes", ""],
        &["gres", ""],
        &["users", ""],
        &["scontrol", "show", "partition", ""],
    ] {
        let (r, l) = (remote(args), local(args));
        assert!(!l.is_empty(), "{args:?}: the local daemon offers something");
        assert_eq!(r, l, "{args:?}");
    }
}

#[test]
fn a_cluster_that_does_not_answer_gets_nothing_offered_within_the_deadline() {
    let c = Cluster::configure("2", PARTITIONS);
    // Takes connections and never answers, until told to stop; then says how many it took.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        while stopped.try_recv().is_err() {
            match listener.accept() {
                Ok((conn, _)) => conns.push(conn),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        conns.len()
    });
    let profiles = profiles(&c, &format!("http://{addr}/"), "SLURM_JWT=a.b.c\n");
    for kind in ["jobs", "partitions", "history"] {
        let started = Instant::now();
        let out = complete(&c, Some(&profiles), &[kind, ""]);
        let took = started.elapsed();
        assert_eq!(common::stdout(&out), "", "{kind}");
        assert_eq!(common::stderr(&out), "", "{kind}: a completion says nothing");
        assert!(took < Duration::from_secs(3), "{kind}: the helper waited {took:?}");
    }
    stop.send(()).unwrap();
    assert!(held.join().unwrap() >= 3, "the cluster was asked each time");
}
