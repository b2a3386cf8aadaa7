//! Remote profiles: the same commands talk to a cluster's REST API (slurmrestd's shapes) with
//! a token, here slurmlet's own daemon over TCP. What a command prints through the profile is
//! what it prints on the local socket; what the REST API cannot do fails with one clear line.

use crate::common;

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
    let (c, addr) = Cluster::start_on_tcp(gpus, "");
    let token = c.run("scontrol", &["token", "lifespan=600"]);
    assert!(token.status.success(), "{}", stderr(&token));
    let token_file = c.dir.path().join("token");
    std::fs::write(&token_file, stdout(&token)).unwrap();
    let profiles = c.dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        format!(
            "[profiles.tcp]\nurl = \"http://{addr}/\"\ntoken_file = \"{}\"\n\
             [profiles.badtoken]\nurl = \"http://{addr}\"\ntoken_command = \"echo SLURM_JWT=not.a.token\"\n",
            token_file.display()
        ),
    )
    .unwrap();
    (c, profiles)
}

/// The cache directory the commands of cluster `c` use (`XDG_CACHE_HOME`).
fn cache_home(c: &Cluster) -> std::path::PathBuf {
    c.dir.path().join("cache")
}

/// `name ARGS` through profile `profile` (none: the local socket).
fn via(c: &Cluster, profiles: &std::path::Path, profile: Option<&str>, name: &str, args: &[&str]) -> Output {
    let mut cmd = c.cmd(name);
    cmd.args(args)
        .env("SLURMLET_PROFILES", profiles)
        .env("XDG_CACHE_HOME", cache_home(c))
        .env_remove("SLURMLET_VERBOSE");
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

    // The daemon's OpenAPI document, read over TCP with the token, offers v0.0.43: spoken,
    // and remembered for the profile and its URL.
    assert!(text.contains(", data_parser v0.0.43\n"), "{text}");
    let cached = std::fs::read_to_string(cache_home(&c).join("slurmlet/data_parser/tcp.json")).unwrap();
    let cached: serde_json::Value = serde_json::from_str(&cached).unwrap();
    assert_eq!(cached["offered"], serde_json::json!(["v0.0.43"]), "{cached}");
    assert!(cached["url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{cached}");
    let o = remote("squeue", &["-v", "-h"]);
    assert!(o.status.success() && !stderr(&o).contains("data_parser"), "{}", stderr(&o));
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

    // scontrol's actions and its configuration have no slurmrestd endpoint: one line each.
    for args in [
        vec!["show", "config"],
        vec!["requeue", &id],
        vec!["suspend", &id],
        vec!["resume", &id],
        vec!["write", "batch_script", &id],
    ] {
        let o = via(&c, &profiles, Some("tcp"), "scontrol", &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let what = match args[0] {
            "show" => "scontrol show config".to_string(),
            "write" => "scontrol write batch_script".to_string(),
            other => format!("scontrol {other}"),
        };
        assert_eq!(
            stderr(&o),
            format!(
                "scontrol: error: {what}: slurmrestd's data_parser v0.0.43 has no endpoint for it (profile 'tcp'); \
                 use the cluster's own scontrol on its login node\n"
            ),
            "{args:?}"
        );
    }

    assert!(!c.path(&format!("slurm-{id}.sh")).exists(), "the file opened for the script is removed again");

    // sacct -M names the profile to ask, not a filter on the cluster's records.
    let o = via(&c, &profiles, None, "sacct", &["-M", "tcp", "-n", "-X", "-P", "-j", &id, "-o", "JobID,State"]);
    assert_eq!((stdout(&o), stderr(&o)), (format!("{id}|PENDING\n"), String::new()));
}

#[test]
fn slurmlet_profile_selects_the_profile_for_one_command() {
    let (c, profiles) = cluster_with_profile("0");
    let id = c.sbatch(&["--hold", "--wrap", "true"]);
    let slurmlet = |args: &[&str]| via(&c, &profiles, None, "slurmlet", args);

    for flag in [&["--profile", "tcp"][..], &["--profile=tcp"]] {
        let o = slurmlet(&[flag, &["squeue", "-h", "-o", "%i %r"]].concat());
        assert!(o.status.success(), "{flag:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), format!("{id} JobHeldUser\n"));
    }
    // slurmlet's own view of the GPUs has no slurmrestd endpoint.
    let o = slurmlet(&["--profile", "tcp", "gpus"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "slurmlet gpus: error: slurmlet gpus: slurmrestd's data_parser v0.0.43 has no endpoint for it \
         (profile 'tcp'); it speaks only to a slurmlet daemon\n"
    );
    // Nor has seff's: slurmdbd's records and the GPU samples are slurmlet's.
    let o = slurmlet(&["--profile", "tcp", "seff", &id.to_string()]);
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(1)));
    assert_eq!(
        stderr(&o),
        "seff: error: seff: slurmrestd's data_parser v0.0.43 has no endpoint for it (profile 'tcp'); \
         use the cluster's own seff on its login node\n"
    );
    // Through the profile: its refused token says so.
    let o = slurmlet(&["--profile", "badtoken", "squeue"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("refused the token of profile 'badtoken'"), "{}", stderr(&o));
    // Before SLURMLET_PROFILE; a command's own -M/--clusters still wins.
    let o = via(&c, &profiles, Some("badtoken"), "slurmlet", &["--profile=tcp", "squeue", "-h", "-o", "%i"]);
    assert_eq!(stdout(&o), format!("{id}\n"), "{}", stderr(&o));
    let o = slurmlet(&["--profile", "badtoken", "squeue", "-M", "tcp", "-h", "-o", "%i"]);
    assert_eq!(stdout(&o), format!("{id}\n"), "{}", stderr(&o));
    // `local` is this machine's daemon; `slurmlet profiles` marks the one selected.
    let o = via(&c, &profiles, Some("badtoken"), "slurmlet", &["--profile", "local", "squeue", "-h", "-o", "%i"]);
    assert_eq!(stdout(&o), format!("{id}\n"), "{}", stderr(&o));
    let o = slurmlet(&["--profile", "tcp", "profiles"]);
    assert!(stdout(&o).contains("* tcp: http://"), "{}", stdout(&o));

    let o = slurmlet(&["--profile", "nosuch", "squeue"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "slurmlet: error: --profile: no profile named 'nosuch' in {} (profiles there: local, badtoken, tcp)\n",
            profiles.display()
        )
    );
    assert!(stdout(&o).is_empty());
    let o = slurmlet(&["--profile"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "slurmlet: option '--profile' requires an argument\n");
    let o = slurmlet(&["--help"]);
    assert!(stderr(&o).starts_with("usage: slurmlet [--profile NAME] <command> [args…]\n"), "{}", stderr(&o));
}

#[test]
fn an_expired_token_is_reported_with_its_time_and_not_sent() {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let (c, profiles) = cluster_with_profile("0");
    let part = |s: &str| URL_SAFE_NO_PAD.encode(s);
    let token = format!(
        "{}.{}.{}",
        part(r#"{"alg":"HS256","typ":"JWT"}"#),
        part(r#"{"exp":1000000000,"iat":999999000,"sun":"alice"}"#),
        part("signature")
    );
    let file = c.dir.path().join("old-token");
    std::fs::write(&file, format!("SLURM_JWT={token}\n")).unwrap();
    let mut text = std::fs::read_to_string(&profiles).unwrap();
    let url = text.lines().find_map(|l| l.strip_prefix("url = ")).unwrap().to_string();
    text.push_str(&format!("[profiles.old]\nurl = {url}\ntoken_file = \"{}\"\n", file.display()));
    std::fs::write(&profiles, text).unwrap();

    let o = via(&c, &profiles, Some("old"), "squeue", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "squeue: error: the token of profile 'old' expired at {}; write a new one into {} \
             (`scontrol token` on the cluster's login node prints one)\n",
            slurmlet::sys::format_local_time(1_000_000_000),
            file.display()
        )
    );
    assert!(!stderr(&o).contains(&token[10..]), "the token is never shown");
    assert!(!c.log().contains("REST request refused"), "it never reached the daemon:\n{}", c.log());
    let o = via(&c, &profiles, Some("badtoken"), "squeue", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(c.log().contains("REST request refused"), "a token that is sent is logged when refused:\n{}", c.log());
}

/// `slurmlet profiles` only looks: with no local daemon running it says so, and starts none.
#[test]
fn listing_the_profiles_starts_no_daemon() {
    let c = Cluster::configure("0", "");
    let o =
        c.cmd("slurmlet").arg("profiles").env("SLURMLET_PROFILES", c.dir.path().join("none.toml")).output().unwrap();
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "* local: this machine's daemon\n    not running: no daemon answers on {}",
            c.socket.display()
        )),
        "{text}{}",
        stderr(&o)
    );
    assert!(!c.socket.exists(), "no daemon was started");
}
