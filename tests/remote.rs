//! Remote profiles: the same commands talk to a cluster's REST API (slurmrestd's shapes) with
//! a token, here slurmlet's own daemon over TCP. What a command prints through the profile is
//! what it prints on the local socket; what the REST API cannot do fails with one clear line.

mod common;

use common::Cluster;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A cluster whose daemon listens on TCP too, and a profiles file naming it `tcp` with a
/// token from `scontrol token` in a file; returns the cluster and the profiles file.
fn cluster_with_profile(gpus: &str) -> (Cluster, std::path::PathBuf) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let c = Cluster::start(gpus, &format!("listen = \"127.0.0.1:{port}\"\n"));
    let token = c.run("scontrol", &["token", "lifespan=600"]);
    assert!(token.status.success(), "{}", stderr(&token));
    let token_file = c.dir.path().join("token");
    std::fs::write(&token_file, stdout(&token)).unwrap();
    let profiles = c.dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        format!(
            "[profiles.tcp]\nurl = \"http://127.0.0.1:{port}/\"\ntoken_file = \"{}\"\n\
             [profiles.badtoken]\nurl = \"http://127.0.0.1:{port}\"\ntoken_command = \"echo SLURM_JWT=not.a.token\"\n",
            token_file.display()
        ),
    )
    .unwrap();
    (c, profiles)
}

/// `name ARGS` through profile `profile` (none: the local socket).
fn via(c: &Cluster, profiles: &std::path::Path, profile: Option<&str>, name: &str, args: &[&str]) -> Output {
    let mut cmd = c.cmd(name);
    cmd.args(args).env("SLURMLET_PROFILES", profiles);
    match profile {
        Some(p) => cmd.env("SLURMLET_PROFILE", p),
        None => cmd.env_remove("SLURMLET_PROFILE"),
    };
    cmd.output().expect("run command")
}

#[test]
fn the_commands_print_the_same_through_a_profile_as_on_the_socket() {
    let (c, profiles) = cluster_with_profile("2");
    let remote = |name: &str, args: &[&str]| via(&c, &profiles, Some("tcp"), name, args);
    let local = |name: &str, args: &[&str]| via(&c, &profiles, None, name, args);

    // Submitted through the profile: a GPU job, a held array, a job depending on the array.
    let o = remote("sbatch", &["--parsable", "--gres=gpu:1", "-J", "gpu", "--wrap", "sleep 30"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let gpu: u32 = stdout(&o).trim().parse().unwrap();
    let o = remote("sbatch", &["--parsable", "--hold", "--array=0-3%2", "-J", "arr", "--wrap", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let array: u32 = stdout(&o).trim().parse().unwrap();
    let o =
        remote("sbatch", &["--parsable", "-J", "dep", "--dependency", &format!("afterok:{array}"), "--wrap", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    c.wait_state(gpu, &["RUNNING"], std::time::Duration::from_secs(30));

    for (name, args) in [
        ("squeue", vec![]),
        ("squeue", vec!["-r"]),
        ("squeue", vec!["-o", "%i %j %T %r %b %E", "-S", "-i"]),
        ("squeue", vec!["-j", &format!("{array}_2"), "-h"]),
        ("sinfo", vec![]),
        ("scontrol", vec!["show", "job", &gpu.to_string()]),
        ("scontrol", vec!["show", "partition"]),
    ] {
        let (r, l) = (remote(name, &args), local(name, &args));
        assert!(r.status.success(), "{name} {args:?}: {}", stderr(&r));
        // The TIME column may tick between the two.
        let strip = |o: &Output| stdout(o).replace("0:01", "0:00").replace("RunTime=00:00:01", "RunTime=00:00:00");
        assert_eq!(strip(&r), strip(&l), "{name} {args:?}");
    }

    // Holds, releases and cancels through the profile.
    let o = remote("scontrol", &["release", &format!("{array}_[0-1]")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = remote("scancel", &[&gpu.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    c.wait_state(gpu, &["CANCELLED"], std::time::Duration::from_secs(30));

    // `slurmlet profiles` lists and checks every endpoint, the one in use marked.
    let o = remote("slurmlet", &["profiles"]);
    let text = stdout(&o);
    assert!(text.contains("* tcp: http://127.0.0.1:"), "{text}");
    assert!(text.contains("UP: cluster testcluster"), "{text}");
    assert!(text.contains("token from command `echo SLURM_JWT=not.a.token`"), "{text}");
    assert!(
        !text.contains(&std::fs::read_to_string(c.dir.path().join("token")).unwrap().trim().replace("SLURM_JWT=", "")),
        "a token is never shown"
    );
    assert_eq!(o.status.code(), Some(1), "one profile's token is refused: {text}");
}

#[test]
fn what_the_rest_api_cannot_do_and_a_refused_token_fail_with_one_clear_line() {
    let (c, profiles) = cluster_with_profile("0");
    let o = via(&c, &profiles, Some("tcp"), "srun", &["true"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("cannot run steps or interactive allocations (profile 'tcp')"), "{}", stderr(&o));
    assert!(stderr(&o).contains("use the cluster's own srun or salloc on its login node"), "{}", stderr(&o));

    let o = via(&c, &profiles, Some("badtoken"), "squeue", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the cluster refused the token of profile 'badtoken' (HTTP 401)"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not.a.token"), "{}", stderr(&o));

    let o = via(&c, &profiles, Some("nosuch"), "squeue", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no profile named 'nosuch'"), "{}", stderr(&o));
    assert!(stderr(&o).contains("(profiles there: local, badtoken, tcp)"), "{}", stderr(&o));

    // -M/--clusters names the profile, as it names a cluster to Slurm's commands.
    let o = via(&c, &profiles, None, "sbatch", &["-M", "tcp", "--parsable", "--hold", "--wrap", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = stdout(&o).trim().to_string();
    let o = via(&c, &profiles, None, "squeue", &["--clusters=tcp", "-h", "-o", "%i %r"]);
    assert_eq!(stdout(&o), format!("{id} JobHeldUser\n"));
    let o = via(&c, &profiles, None, "scontrol", &["-M", "badtoken", "release", &id]);
    assert!(stderr(&o).contains("refused the token of profile 'badtoken'"), "{}", stderr(&o));
    let o = via(&c, &profiles, None, "scontrol", &["-M", "tcp", "ping"]);
    assert_eq!(stdout(&o), "Slurmctld(primary) at node1 is UP\n");
    let o = via(&c, &profiles, None, "scontrol", &["-M", "badtoken", "ping"]);
    assert_eq!(o.status.code(), Some(1), "a refused token reads as DOWN: {}", stdout(&o));
    let o = via(&c, &profiles, None, "scancel", &["-M", "nosuch", &id]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no profile named 'nosuch'"), "{}", stderr(&o));

    // sacct -M names the profile to ask, not a filter on the cluster's records.
    let o = via(&c, &profiles, None, "sacct", &["-M", "tcp", "-n", "-X", "-P", "-j", &id, "-o", "JobID,State"]);
    assert_eq!((stdout(&o), stderr(&o)), (format!("{id}|PENDING\n"), String::new()));
}
