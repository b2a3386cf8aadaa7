//! The system daemon shared by real users: jobs run as their owners, files are theirs, and
//! nobody acts on anyone else's job. These tests create users with `useradd`, so they need
//! root (as CI has); run as anyone else they say so and check nothing.

use crate::common;
use common::T;

use common::system::{is_root, retrying, shared_bin, text, Shared, User};
use common::{read, wait_for};
use slurmlet::api::client::Client;
use slurmlet::api::types::SignalScope;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[test]
fn jobs_run_as_their_owners_and_their_files_are_theirs() {
    if !is_root("jobs_run_as_their_owners_and_their_files_are_theirs") {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("a");
    let bob = shared.user("b");
    let script = "#!/bin/sh\necho \"uid=$(id -u) gid=$(id -g) user=$USER logname=$LOGNAME home=$HOME\"\necho \"$0\"\ncat \"$0\" > /dev/null && echo script-readable\n";
    for user in [&alice, &bob] {
        std::fs::write(user.home.join("job.sh"), script).unwrap();
        let id = shared.sbatch_as(user, &["-o", "logs/%j.out", "job.sh"]);
        shared.wait_state(id, "COMPLETED");
        let out = user.home.join(format!("logs/{id}.out"));
        let meta = std::fs::metadata(&out).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (user.uid, user.gid), "{} is not {}'s", out.display(), user.name);
        let dir = std::fs::metadata(user.home.join("logs")).unwrap();
        assert_eq!(dir.uid(), user.uid, "the output directory was created by someone else");
        let text = read(&out);
        assert!(
            text.contains(&format!(
                "uid={} gid={} user={} logname={} home={}",
                user.uid,
                user.gid,
                user.name,
                user.name,
                user.home.display()
            )),
            "{text}"
        );
        assert!(text.contains("script-readable"), "{text}");
    }

    // Nobody reads the daemon's store or another user's job files.
    let state = shared.dir.path().join("state");
    let db = std::fs::metadata(state.join("slurmlet.db")).unwrap();
    assert_eq!(db.permissions().mode() & 0o077, 0, "the store is open to others");
    std::fs::write(alice.home.join("secret.sh"), "#!/bin/sh\ntouch started\nsleep 300\n").unwrap();
    let secret = shared.sbatch_as(&alice, &["secret.sh"]);
    // RUNNING is recorded before the supervisor writes the job's files; the script having
    // begun says they are all there.
    let started = alice.home.join("started");
    wait_for("the secret job to begin", T, || common::until(started.exists(), || shared.state(secret)));
    let job_dir = state.join("jobs").join(secret.to_string());
    let peek = |file: &str| bob.as_me(|| std::fs::read(job_dir.join(file)).map_err(|e| e.kind()));
    assert_eq!(peek("slurm_script"), Err(std::io::ErrorKind::PermissionDenied));
    assert_eq!(peek("spec.json"), Err(std::io::ErrorKind::PermissionDenied));
    assert!(alice.as_me(|| std::fs::read(job_dir.join("slurm_script"))).is_ok(), "the owner cannot read its script");

    // A path the user may not write is refused at submit time, though root could create it.
    let closed = shared.dir.path().join("root-only");
    std::fs::create_dir(&closed).unwrap();
    let target = closed.join("sub").join("x.out");
    let out = shared.run_as(&alice, "sbatch", &["-o", target.to_str().unwrap(), "--wrap", "true"]);
    let (_, err) = text(&out);
    assert!(!out.status.success(), "submit with an unwritable output succeeded: {err}");
    assert!(err.contains("Permission denied") && err.contains(&closed.display().to_string()), "{err}");
    assert!(!closed.join("sub").exists(), "root created a directory for the user");

    // A step runs as the job's owner too.
    let out = shared.run_as(&bob, "srun", &["sh", "-c", "id -u; id -g"]);
    let (stdout, err) = text(&out);
    assert!(out.status.success(), "srun as {}: {err}", bob.name);
    assert_eq!(stdout, format!("{}\n{}\n", bob.uid, bob.gid));
}

/// Runs `command` (sbatch, srun) with `args` as `user`, in their home, under `umask`, as
/// they would from their shell.
fn run_with_umask(shared: &Shared, user: &User, umask: &str, command: &str, args: &[&str]) -> std::process::Output {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(shared.bin.join(command))
        .args(args)
        .current_dir(&user.home)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", shared.bin.display()))
        .env("HOME", &user.home)
        .env("USER", &user.name)
        .env("SLURMLET_SYSTEM_CONF", &shared.config)
        .uid(user.uid)
        .gid(user.gid)
        .stdin(Stdio::null());
    retrying(|| c.output())
}

#[test]
fn output_files_and_their_directories_get_the_submitters_umask_as_slurmstepd_gives_them() {
    if !is_root("output_files_and_their_directories_get_the_submitters_umask_as_slurmstepd_gives_them") {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("um");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // (umask, directory, file): slurmstepd makes directories 0755 and files 0666, less the
    // umask (not the root daemon's private 077).
    for (umask, dir_mode, file_mode) in [("002", 0o755, 0o664), ("027", 0o750, 0o640), ("077", 0o700, 0o600)] {
        let dir = format!("logs-{umask}");
        let out = run_with_umask(
            &shared,
            &alice,
            umask,
            "sbatch",
            &["--parsable", "-o", &format!("{dir}/%j.out"), "-e", &format!("{dir}/sub/%j.err"), "--wrap", "echo hi"],
        );
        let (stdout, err) = text(&out);
        assert!(out.status.success(), "sbatch: {err}");
        let id: u32 = stdout.trim().parse().unwrap();
        shared.wait_state(id, "COMPLETED");
        let dir = alice.home.join(dir);
        assert_eq!(mode(&dir), dir_mode, "umask {umask}: {}", dir.display());
        assert_eq!(mode(&dir.join("sub")), dir_mode, "umask {umask}");
        assert_eq!(mode(&dir.join(format!("{id}.out"))), file_mode, "umask {umask}");
        assert_eq!(mode(&dir.join(format!("sub/{id}.err"))), file_mode, "umask {umask}");
        // A step's output files too.
        let step_out = format!("step-{umask}.out");
        let out = run_with_umask(&shared, &alice, umask, "srun", &["-o", &step_out, "true"]);
        assert!(out.status.success(), "srun: {}", text(&out).1);
        assert_eq!(mode(&alice.home.join(&step_out)), file_mode, "umask {umask}: the step's file");
    }
}

#[test]
fn nobody_acts_on_another_users_job() {
    if !is_root("nobody_acts_on_another_users_job") {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let shared = Shared::start(&format!("listen = \"{addr}\"\n"));
    let alice = shared.user("c");
    let bob = shared.user("d");
    let id = shared.sbatch_as(&alice, &["--gres=gpu:1", "--wrap", "sleep 300"]);
    shared.wait_state(id, "RUNNING");
    let pending = shared.sbatch_as(&alice, &["--gres=gpu:2", "--wrap", "true"]);

    // Holding: Slurm's controller says "Invalid user id" to anyone but the owner and root.
    let out = shared.run_as(&bob, "scontrol", &["hold", &pending.to_string()]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(err.contains(&format!("Invalid user id for job {pending}")), "{err}");
    let reason = Client::at(&shared.socket).unwrap().job(&pending.to_string()).unwrap().jobs[0].state_reason.clone();
    assert!(!reason.starts_with("JobHeld"), "bob's hold took effect: {reason}");
    let out = shared.run_as(&alice, "scontrol", &["hold", &pending.to_string()]);
    assert!(out.status.success(), "{}", text(&out).1);
    let out = shared.run_as(&bob, "scontrol", &["release", &pending.to_string()]);
    assert!(!out.status.success(), "bob released alice's hold");

    // The batch script: its owner may read it; to anyone else Slurm says "Invalid user id",
    // and still exits 0.
    let out = shared.run_as(&bob, "scontrol", &["write", "batch_script", &pending.to_string(), "-"]);
    assert_eq!(
        (out.status.code(), text(&out)),
        (Some(0), (String::new(), "job script retrieval failed: Invalid user id\n".to_string()))
    );
    let out = shared.run_as(&alice, "scontrol", &["write", "batch_script", &pending.to_string(), "-"]);
    assert_eq!(text(&out).0, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n", "{}", text(&out).1);

    // Suspending and updating: bob is refused as Slurm refuses him; alice may lower her
    // running job's time limit, not raise it again.
    let sid = id.to_string();
    let out = shared.run_as(&bob, "scontrol", &["suspend", &sid]);
    assert_eq!(text(&out).1, format!("Access/permission denied for job {id}\n"));
    assert_eq!(out.status.code(), Some(1));
    shared.wait_state(id, "RUNNING");
    let job_id = format!("JobId={id}");
    let out = shared.run_as(&bob, "scontrol", &["update", &job_id, "TimeLimit=1"]);
    assert_eq!((out.status.code(), text(&out).1), (Some(1), format!("Invalid user id for job {id}\n")));
    let out = shared.run_as(&alice, "scontrol", &["update", &job_id, "TimeLimit=100"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let out = shared.run_as(&alice, "scontrol", &["update", &job_id, "TimeLimit=200"]);
    assert_eq!((out.status.code(), text(&out).1), (Some(1), format!("Access/permission denied for job {id}\n")));
    let limit = Client::at(&shared.socket).unwrap().job(&sid).unwrap().jobs[0].time_limit.number;
    assert_eq!(limit, 100);

    // Over TCP: no token, no answer; bob's own token does not make him alice.
    let path = format!("/slurm/v0.0.43/job/{id}");
    assert_eq!(common::http::http(&addr, "DELETE", &path, &[], None).status, 401);
    let out = shared.run_as(&bob, "scontrol", &["token"]);
    let bobs = text(&out).0.trim().trim_start_matches("SLURM_JWT=").to_string();
    assert!(out.status.success() && !bobs.is_empty(), "{}", text(&out).1);
    let auth = [("X-SLURM-USER-NAME", bob.name.as_str()), ("X-SLURM-USER-TOKEN", bobs.as_str())];
    let reply = common::http::http(&addr, "DELETE", &path, &auth, None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["status"][0]["error"]["code"], 2002, "{}", reply.body);
    let as_alice = [("X-SLURM-USER-NAME", alice.name.as_str()), ("X-SLURM-USER-TOKEN", bobs.as_str())];
    assert_eq!(
        common::http::http(&addr, "DELETE", &path, &as_alice, None).status,
        401,
        "bob's token passed for alice's"
    );

    let out = shared.run_as(&bob, "scancel", &[&id.to_string()]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert_eq!(err, format!("scancel: error: Kill job error on job id {id}: Access/permission denied\n"));
    let out = shared.run_as(&bob, "scancel", &["-s", "KILL", &id.to_string()]);
    assert!(!out.status.success(), "{}", text(&out).1);

    // REST, straight on the socket, as bob: refused in the job's status, as slurmrestd does.
    let reply =
        bob.as_me(|| Client::at(&shared.socket).unwrap().cancel(&id.to_string(), None, SignalScope::Steps)).unwrap();
    let refusal = reply.status.first().map(|s| (s.error.code, s.error.string.as_str()));
    assert_eq!(refusal, Some((2002, "Access/permission denied")), "{reply:?}");

    assert!(shared.log().contains("refused: not the job's owner"), "denials are not logged:\n{}", shared.log());
    // Nor start steps in it.
    let out = shared.run_as(&bob, "srun", &["--jobid", &id.to_string(), "true"]);
    let (_, err) = text(&out);
    assert!(!out.status.success() && err.contains("Access/permission denied"), "{err}");
    shared.wait_state(id, "RUNNING");

    // Everybody may list jobs, as in Slurm.
    // (Slurm's default order: pending jobs first.)
    let out = shared.run_as(&bob, "squeue", &["-h", "-o", "%i %u %T %r"]);
    assert_eq!(
        text(&out).0,
        format!("{pending} {name} PENDING JobHeldUser\n{id} {name} RUNNING None\n", name = alice.name)
    );

    // Its owner may.
    let out = shared.run_as(&alice, "scancel", &[&id.to_string()]);
    assert!(out.status.success(), "{}", text(&out).1);
    shared.wait_state(id, "CANCELLED");
}

#[test]
fn operators_may_act_and_private_data_hides_other_users_jobs() {
    if !is_root("operators_may_act_and_private_data_hides_other_users_jobs") {
        return;
    }
    let tag = std::process::id() % 100_000;
    let (alice_name, bob_name, oscar_name) = (format!("sl{tag}e"), format!("sl{tag}f"), format!("sl{tag}o"));
    // Users first: the configuration names the operator.
    let dir = tempfile::tempdir().unwrap();
    let alice = User::create(&alice_name, &dir.path().join("e"));
    let bob = User::create(&bob_name, &dir.path().join("f"));
    let oscar = User::create(&oscar_name, &dir.path().join("o"));
    let shared = Shared::start(&format!("operators = [\"{oscar_name}\"]\nprivate_data = [\"jobs\"]\n"));
    let id = shared.sbatch_as(&alice, &["--gres=gpu:1", "--wrap", "sleep 300"]);
    shared.wait_state(id, "RUNNING");

    let listing = |user: &User| text(&shared.run_as(user, "squeue", &["-h", "-o", "%i"])).0;
    assert_eq!(listing(&bob), "", "bob sees alice's job");
    assert_eq!(listing(&alice), format!("{id}\n"));
    assert_eq!(listing(&oscar), format!("{id}\n"));
    // The GPU is held all the same, by a job bob is not told of.
    let holder = |user: &User| {
        let out = shared.run_as(user, "slurmlet", &["gpus", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&text(&out).0).expect("slurmlet gpus --json is JSON");
        v["gpus"][0]["jobs"].clone()
    };
    let hidden = serde_json::json!([{
        "job": null, "job_id": null, "user_id": null, "user_name": null,
        "used_memory": null, "shards": null, "share_bytes": null
    }]);
    assert_eq!(holder(&bob), hidden);
    let shown = serde_json::json!([{
        "job": id.to_string(), "job_id": id, "user_id": alice.uid, "user_name": alice_name,
        "used_memory": null, "shards": null, "share_bytes": null
    }]);
    assert_eq!(holder(&alice), shown);
    assert_eq!(holder(&oscar), shown);
    let table = text(&shared.run_as(&bob, "slurmlet", &["gpus"])).0;
    assert!(table.lines().nth(1).is_some_and(|l| l.ends_with("another user's job")), "{table}");
    let lookup = bob.as_me(|| Client::at(&shared.socket).unwrap().job(&id.to_string())).unwrap();
    assert!(lookup.jobs.is_empty(), "{lookup:?}");

    let out = shared.run_as(&oscar, "scancel", &[&id.to_string()]);
    assert!(out.status.success(), "the operator could not cancel: {}", text(&out).1);
    shared.wait_state(id, "CANCELLED");
}

#[test]
fn the_boards_queue_job_samples_and_usage_keep_to_what_private_data_lets_each_user_see() {
    if !is_root("the_boards_queue_job_samples_and_usage_keep_to_what_private_data_lets_each_user_see") {
        return;
    }
    let tag = std::process::id() % 100_000;
    let (alice_name, bob_name, oscar_name) = (format!("sl{tag}q"), format!("sl{tag}r"), format!("sl{tag}s"));
    let dir = tempfile::tempdir().unwrap();
    let alice = User::create(&alice_name, &dir.path().join("q"));
    let bob = User::create(&bob_name, &dir.path().join("r"));
    let oscar = User::create(&oscar_name, &dir.path().join("s"));
    let shared = Shared::start(&format!("operators = [\"{oscar_name}\"]\nprivate_data = [\"jobs\", \"usage\"]\n"));
    let mine = shared.sbatch_as(&alice, &["--gres=gpu:1", "--wrap", "sleep 300"]);
    let theirs = shared.sbatch_as(&bob, &["--gres=gpu:1", "--wrap", "sleep 300"]);
    shared.wait_state(mine, "RUNNING");
    shared.wait_state(theirs, "RUNNING");
    let waiting = shared.sbatch_as(&alice, &["--gres=gpu:1", "--wrap", "true"]);
    let client = || Client::at(&shared.socket).unwrap();

    // The queue: squeue's view of each.
    let queue = |user: &User| {
        let q = user.as_me(|| client().queue(10)).unwrap();
        let ids = |jobs: &[slurmlet::api::activity::QueueJob]| jobs.iter().map(|j| j.job_id).collect::<Vec<_>>();
        (ids(&q.running), ids(&q.pending), q.running_total, q.pending_total)
    };
    assert_eq!(queue(&bob), (vec![theirs], vec![], 1, 0));
    assert_eq!(queue(&alice), (vec![mine], vec![waiting], 1, 1));
    assert_eq!(queue(&oscar), (vec![mine, theirs], vec![waiting], 2, 1));
    assert_eq!(alice.as_me(|| client().queue(10)).unwrap().running[0].user_name, alice_name);

    // Another user's job's samples: refused as the job endpoint refuses it.
    let samples = bob.as_me(|| client().job_gpu_samples(mine)).unwrap();
    let lookup = bob.as_me(|| client().job(&mine.to_string())).unwrap();
    assert!(!samples.errors.is_empty(), "{samples:?}");
    assert_eq!(
        samples.errors.iter().map(|e| (e.error_number, e.description.clone())).collect::<Vec<_>>(),
        lookup.errors.iter().map(|e| (e.error_number, e.description.clone())).collect::<Vec<_>>()
    );
    let own = alice.as_me(|| client().job_gpu_samples(mine)).unwrap();
    assert!(own.errors.is_empty() && own.job_id == mine, "{own:?}");
    assert!(oscar.as_me(|| client().job_gpu_samples(mine)).unwrap().errors.is_empty());

    // Usage: each user their own row, the operator everyone's.
    std::thread::sleep(Duration::from_secs(1));
    let users = |user: &User| {
        let mut names: Vec<String> =
            user.as_me(|| client().usage(1)).unwrap().users.into_iter().map(|u| u.user_name).collect();
        names.sort();
        names
    };
    assert_eq!(users(&bob), std::slice::from_ref(&bob_name));
    assert_eq!(users(&alice), std::slice::from_ref(&alice_name));
    let mut both = vec![alice_name.clone(), bob_name.clone()];
    both.sort();
    assert_eq!(users(&oscar), both);
}

#[test]
fn commands_use_the_system_daemon_and_never_start_their_own() {
    if !is_root("commands_use_the_system_daemon_and_never_start_their_own") {
        return;
    }
    let mut shared = Shared::start("");
    let alice = shared.user("g");
    let out = shared.run_as(&alice, "sinfo", &["-h", "-o", "%P %G"]);
    assert_eq!(text(&out).0, "gpu* gpu:2\n", "{}", text(&out).1);
    // Only root stops the system daemon.
    let out = shared.run_as(&alice, "slurmlet", &["daemon", "stop"]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("only the daemon's owner may stop it"), "{}", text(&out).1);
    assert!(std::os::unix::net::UnixStream::connect(&shared.socket).is_ok(), "the daemon stopped");

    shared.stop_daemon();
    let out = shared.run_as(&alice, "squeue", &[]);
    let (_, err) = text(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("system daemon does not answer") && err.contains(&shared.config.display().to_string()),
        "{err}"
    );
    let own = PathBuf::from(format!("/tmp/slurmlet-{}", alice.uid)).join("slurmlet.sock");
    assert!(!own.exists(), "a per-user daemon was started");
    assert!(!common::process_running(&format!("slurmletd --socket {}", own.display())));
}

#[test]
fn a_users_daemon_contains_its_jobs_in_the_subtree_delegated_to_it() {
    use slurmlet::stepd::containment::cgroup::{group::Group, hierarchy::Hierarchies, hierarchy::Version};
    use std::io::Write;
    let test = "a_users_daemon_contains_its_jobs_in_the_subtree_delegated_to_it";
    if !is_root(test) {
        return;
    }
    let Some((mount, _)) = Hierarchies::of_this_machine().unified else {
        return common::skip(test, "no cgroup2 mount");
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let user = User::create(&format!("sd{}", std::process::id() % 100_000), &dir.path().join("home"));
    // The subtree as systemd's Delegate=yes hands it over: the group, its cgroup.procs and its
    // cgroup.subtree_control are the user's.
    let top = Group::of_dir(Version::V2, mount.join(format!("slurmlet-test-delegated-{}", std::process::id())));
    let own = top.path().join("svc");
    std::fs::create_dir_all(&own).unwrap();
    for path in [own.clone(), own.join("cgroup.procs"), own.join("cgroup.subtree_control")] {
        std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
    }
    let config = user.home.join("slurmlet.toml");
    std::fs::write(
        &config,
        format!(
            "cluster_name = \"c\"\nnode_name = \"node1\"\ncpus = 2\nmemory = 4000\ngpus = 0\nstate_dir = \"{}\"\nsocket = \"{}\"\n",
            user.home.join("state").display(),
            user.home.join("run/s.sock").display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(user.home.join("daemon.log")).unwrap();
    // The daemon starts as the user once root has put it in the subtree.
    let mut daemon = Command::new("sh")
        .args(["-c", "read go; exec \"$0\" daemon run --config \"$1\""])
        .arg(shared_bin().join("slurmlet"))
        .arg(&config)
        .env_clear()
        .env("HOME", &user.home)
        .env("PATH", "/usr/bin:/bin")
        .uid(user.uid)
        .gid(user.gid)
        .stdin(Stdio::piped())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    std::fs::write(own.join("cgroup.procs"), daemon.id().to_string()).unwrap();
    daemon.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let socket = user.home.join("run/s.sock");
    wait_for("the user's daemon", T, || common::until(socket.exists(), || read(&user.home.join("daemon.log"))));
    let sbatch = Command::new(shared_bin().join("sbatch"))
        .args(["--wait", "-o", "groups.out", "--wrap", "cat /proc/self/cgroup"])
        .current_dir(&user.home)
        .env_clear()
        .env("HOME", &user.home)
        .env("PATH", format!("{}:/usr/bin:/bin", shared_bin().display()))
        .env("SLURMLET_CONF", &config)
        .uid(user.uid)
        .gid(user.gid)
        .output()
        .unwrap();
    let log_text = read(&user.home.join("daemon.log"));
    assert!(sbatch.status.success(), "{}{log_text}", String::from_utf8_lossy(&sbatch.stderr));
    let out = read(&user.home.join("groups.out"));
    let top_name = top.path().file_name().unwrap().to_string_lossy().into_owned();
    let expected = format!("0::/{top_name}/svc/jobs/job_1/step_batch");
    // The daemon moved itself into a leaf of its subtree.
    let daemon_leaf = std::fs::read_to_string(own.join("daemon/cgroup.procs")).unwrap_or_default();
    let _ = daemon.kill();
    let _ = daemon.wait();
    common::remove_cgroup_tree(top.path());
    assert!(out.lines().any(|l| l == expected), "{expected} in {out}; log: {log_text}");
    assert!(daemon_leaf.lines().any(|p| p == daemon.id().to_string()), "{daemon_leaf}");
}

#[test]
fn a_gpus_shards_serve_one_owner_at_a_time_under_an_mps_server_run_as_that_owner() {
    let test = "a_gpus_shards_serve_one_owner_at_a_time_under_an_mps_server_run_as_that_owner";
    if !is_root(test) {
        return;
    }
    // A stand-in control program the users may run, logging who runs it and what it is told.
    let fake = tempfile::tempdir().unwrap();
    std::fs::set_permissions(fake.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let calls = fake.path().join("calls");
    std::fs::write(&calls, "").unwrap();
    std::fs::set_permissions(&calls, std::fs::Permissions::from_mode(0o666)).unwrap();
    let program = fake.path().join("nvidia-cuda-mps-control");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -d ]; then echo \"start $CUDA_VISIBLE_DEVICES uid=$(id -u)\" >> {log}; : > \"$CUDA_MPS_PIPE_DIRECTORY/control\" || exit 1; exit 0; fi\nwhile read -r line; do echo \"$line $CUDA_VISIBLE_DEVICES uid=$(id -u)\" >> {log}; rm -f \"$CUDA_MPS_PIPE_DIRECTORY/control\"; done\n",
            log = calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap_or_default());
    let shared = Shared::start_with("shards_per_gpu = 4\nmps = true", vec![("PATH".into(), path)]);
    let alice = shared.user("i");
    let bob = shared.user("j");
    // Alice's shards on both GPUs, one shard free on each.
    let hold = "env | grep ^CUDA_MPS_PIPE; while [ ! -e release ]; do sleep 0.1; done";
    let a0 = shared.sbatch_as(&alice, &["--gres=shard:3", "-o", "a0.out", "--wrap", hold]);
    shared.wait_state(a0, "RUNNING");
    let a1 = shared.sbatch_as(&alice, &["--gres=shard:3", "-o", "a1.out", "--wrap", hold]);
    shared.wait_state(a1, "RUNNING");
    let b = shared.sbatch_as(&bob, &["--gres=shard:1", "-o", "b.out", "--wrap", "env | grep ^CUDA_MPS_PIPE"]);
    let reason = || {
        let r = Client::at(&shared.socket).unwrap().job(&b.to_string()).unwrap();
        r.jobs.first().map(|j| j.state_reason.clone()).unwrap_or_default()
    };
    wait_for("bob's job to wait for alice's servers", T, || {
        let r = reason();
        common::until(r == "GpuMpsServerOfOtherUser", || format!("{r}; log:\n{}", shared.log()))
    });
    assert_eq!(shared.state(b), "PENDING");
    let seen = read(&calls);
    let mut starts: Vec<&str> = seen.lines().filter(|l| l.starts_with("start")).collect();
    starts.sort();
    assert_eq!(starts, vec![format!("start 0 uid={}", alice.uid), format!("start 1 uid={}", alice.uid)], "{seen}");
    // Her server's directories are hers, and her job is told its own.
    let state = shared.dir.path().join("state");
    let pipe = |gpu: u32, uid: u32| state.join(format!("mps/gpu{gpu}-uid{uid}/pipe"));
    let meta = std::fs::metadata(pipe(0, alice.uid)).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (alice.uid, 0o700));
    let a0_out = alice.home.join("a0.out");
    let told = wait_for("a0's variables", T, || {
        let text = std::fs::read_to_string(&a0_out).unwrap_or_default();
        common::until(text.ends_with('\n'), String::new).map(|()| text)
    });
    assert!(
        told == format!("CUDA_MPS_PIPE_DIRECTORY={}\n", pipe(0, alice.uid).display())
            || told == format!("CUDA_MPS_PIPE_DIRECTORY={}\n", pipe(1, alice.uid).display()),
        "{told}"
    );
    // Her jobs end: her servers are quit as her, and Bob's job runs under his own.
    std::fs::write(alice.home.join("release"), "").unwrap();
    shared.wait_state(a0, "COMPLETED");
    shared.wait_state(a1, "COMPLETED");
    shared.wait_state(b, "COMPLETED");
    // Idle servers are quit by the daemon after their jobs end, not before the end is told:
    // wait for both quits rather than reading the log once.
    let her_quit = |l: &&str| *l == format!("quit 0 uid={}", alice.uid) || *l == format!("quit 1 uid={}", alice.uid);
    let seen = wait_for("both of alice's servers to be quit", T, || {
        let seen = read(&calls);
        let quits = seen.lines().filter(her_quit).count();
        common::until(quits == 2, || seen.clone()).map(|()| seen.clone())
    });
    assert_eq!(seen.lines().filter(her_quit).count(), 2, "{seen}");
    // On the GPU Bob's job is given, his server starts once hers there is gone.
    let lines: Vec<&str> = seen.lines().collect();
    let bob_start = lines.iter().position(|l| l.starts_with("start") && l.ends_with(&format!("uid={}", bob.uid)));
    let gpu = bob_start.map(|at| lines[at].split(' ').nth(1).unwrap_or_default()).unwrap_or_default();
    let her_quit = lines.iter().position(|l| *l == format!("quit {gpu} uid={}", alice.uid));
    assert!(bob_start.is_some() && bob_start > her_quit, "bob's server starts once alice's is gone:\n{seen}");
    let b_out = read(&bob.home.join("b.out"));
    assert!(
        b_out.starts_with("CUDA_MPS_PIPE_DIRECTORY=") && b_out.contains(&format!("-uid{}/pipe", bob.uid)),
        "{b_out}"
    );
}

/// `slurmlet board --port 0` run as `user`, killed when dropped; and its `127.0.0.1:PORT`
/// and access token.
struct BoardAs {
    child: Child,
    addr: String,
    token: String,
}

impl BoardAs {
    fn start(shared: &Shared, user: &User) -> BoardAs {
        use std::io::BufRead;
        let mut c = Command::new(shared.bin.join("slurmlet"));
        c.args(["board", "--port", "0"])
            .current_dir(&user.home)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", shared.bin.display()))
            .env("HOME", &user.home)
            .env("USER", &user.name)
            .env("SLURMLET_SYSTEM_CONF", &shared.config)
            .uid(user.uid)
            .gid(user.gid)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut child = retrying(|| c.spawn());
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("slurmlet board printed its URL").expect("its output");
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        let (addr, token) = url.trim_start_matches("http://").split_once("/#token=").expect("a URL with a token");
        BoardAs { child, addr: addr.into(), token: token.into() }
    }

    /// The header that carries the token, as the board's page sends it.
    fn authorization(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// `method path` with the token.
    fn call(&self, method: &str, path: &str) -> common::http::Reply {
        let body = (method == "POST").then_some("{}");
        common::http::http(&self.addr, method, path, &[("Authorization", &self.authorization())], body)
    }

    /// The event stream, opened with a ticket as the page opens it.
    fn events(&self) -> std::net::TcpStream {
        use std::io::Write;
        let r = self.call("POST", "/api/ticket");
        assert_eq!(r.status, 200, "{}", r.body);
        let ticket = r.json()["ticket"].as_str().expect("a ticket").to_string();
        let mut events = std::net::TcpStream::connect(&self.addr).unwrap();
        events.set_read_timeout(Some(T)).unwrap();
        write!(events, "GET /events?ticket={ticket} HTTP/1.1\r\nHost: {}\r\n\r\n", self.addr).unwrap();
        events
    }
}

impl Drop for BoardAs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_board_shows_and_acts_as_its_user() {
    if !is_root("the_board_shows_and_acts_as_its_user") {
        return;
    }
    let mut shared = Shared::start("private_data = [\"jobs\"]\n");
    let alice = shared.user("k");
    let bob = shared.user("l");
    let hers = shared.sbatch_as(&alice, &["--gres=gpu:1", "--wrap", "sleep 300"]);
    shared.wait_state(hers, "RUNNING");
    let his = shared.sbatch_as(&bob, &["--begin=now+1hour", "--wrap", "sleep 300"]);
    let board = BoardAs::start(&shared, &bob);

    // Without the token: refused.
    let r = common::http::http(&board.addr, "GET", "/api/live", &[], None);
    assert_eq!(r.status, 401, "{}", r.body);

    // Bob's board sees what bob's squeue sees: his job, and a GPU held by a job not named.
    let live = board.call("GET", "/api/live");
    assert_eq!(live.status, 200, "{}", live.body);
    let v = live.json();
    assert_eq!(v["live"]["caller"]["name"], bob.name.as_str());
    let queued: Vec<u64> = ["running", "pending"]
        .iter()
        .flat_map(|list| v["live"]["queue"][list].as_array().cloned().unwrap_or_default())
        .filter_map(|j| j["job_id"].as_u64())
        .collect();
    assert_eq!(queued, [u64::from(his)], "{v}");
    let holders: Vec<serde_json::Value> = v["live"]["gpus"]
        .as_array()
        .expect("the GPUs")
        .iter()
        .flat_map(|g| g["jobs"].as_array().cloned().unwrap())
        .collect();
    assert_eq!(holders.len(), 1, "{v}");
    assert_eq!(holders[0]["job_id"], serde_json::Value::Null, "alice's job is named to bob: {v}");

    // Nor is her job's page shown to him.
    let page = board.call("GET", &format!("/api/job/{hers}"));
    assert_eq!(page.status, 404, "{}", page.body);

    // Alice's job cannot be cancelled nor held from bob's board.
    for action in ["cancel", "hold"] {
        let r = board.call("POST", &format!("/api/job/{hers}/{action}"));
        assert_eq!(r.status, 409, "{action} of alice's job: {}", r.body);
        assert_eq!(r.json()["ok"], false);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(shared.state(hers), "RUNNING");
    let reason = Client::at(&shared.socket).unwrap().job(&hers.to_string()).unwrap().jobs[0].state_reason.clone();
    assert!(!reason.contains("Held"), "{reason}");

    // His own: held, then cancelled.
    let r = board.call("POST", &format!("/api/job/{his}/hold"));
    assert_eq!(r.status, 200, "{}", r.body);
    let reason = Client::at(&shared.socket).unwrap().job(&his.to_string()).unwrap().jobs[0].state_reason.clone();
    assert!(reason.contains("Held"), "{reason}");
    let r = board.call("POST", &format!("/api/job/{his}/cancel"));
    assert_eq!(r.status, 200, "{}", r.body);
    shared.wait_state(his, "CANCELLED");

    // The system daemon stops while a page is open: the page is told (no daemon is started).
    use std::io::Read;
    let mut events = board.events();
    let mut seen = String::new();
    let mut buf = [0u8; 8192];
    let mut read_until = |events: &mut std::net::TcpStream, seen: &mut String, what: &str| {
        while !seen.contains(what) {
            let n = events.read(&mut buf).expect("the event stream");
            assert!(n > 0, "the event stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    read_until(&mut events, &mut seen, "\"live\":");
    // Her job ends first, so that no job outlives the daemon.
    Client::at(&shared.socket).unwrap().cancel(&hers.to_string(), Some("KILL"), SignalScope::Steps).unwrap();
    shared.wait_state(hers, "CANCELLED");
    shared.stop_daemon();
    read_until(&mut events, &mut seen, "\"error\":");
    assert!(seen.contains("the system daemon does not answer"), "{seen}");
}

/// Bob, another user of the machine, against Alice's board. Knowing its address (anyone may
/// list the listening sockets) but not its token, he reads nothing through it and does
/// nothing with it, not even by naming another host as a rebound DNS name would. When he
/// replaces her job's output, in a directory both may write to, by a file of his, by a link
/// to a file of hers or by a FIFO, her board shows none of them as her output and answers at
/// once, and the jobs of both run on.
#[test]
fn the_board_gives_another_user_nothing_and_shows_only_its_users_own_output() {
    let test = "the_board_gives_another_user_nothing_and_shows_only_its_users_own_output";
    if !is_root(test) {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("m");
    let bob = shared.user("n");
    // A project directory both may write to, as a group's often is: not sticky, so each may
    // put a file of theirs in the place of the other's.
    let project = shared.dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o777)).unwrap();
    let output = project.join("hers.out");
    let hers =
        shared.sbatch_as(&alice, &["-o", output.to_str().unwrap(), "--wrap", "echo the output of alice; sleep 300"]);
    shared.wait_state(hers, "RUNNING");
    wait_for("her job's output", T, || {
        let text = std::fs::read_to_string(&output).unwrap_or_default();
        common::until(text.contains("the output of alice"), || text.clone())
    });
    let notes = alice.home.join("notes.txt");
    std::fs::write(&notes, "notes of alice, not the output of a job\n").unwrap();
    std::os::unix::fs::chown(&notes, Some(alice.uid), Some(alice.gid)).unwrap();

    let board = BoardAs::start(&shared, &alice);
    let page = || {
        let started = std::time::Instant::now();
        let r = board.call("GET", &format!("/api/job/{hers}"));
        let took = started.elapsed();
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        let why = v["missing"].as_array().unwrap().iter().find(|m| m["part"] == "output").map(|m| m["why"].to_string());
        (v, took, why.unwrap_or_default())
    };
    let (v, _, _) = page();
    assert!(v["output_tail"].as_str().is_some_and(|t| t.contains("the output of alice")), "{v}");

    // Bob has the address only: nothing through it, with or without a cookie or another host.
    let port = board.addr.rsplit(':').next().unwrap().to_string();
    let rebound = format!("evil.example:{port}");
    let tries = bob.as_me(|| {
        let mut tries = Vec::new();
        let job_path = format!("/api/job/{hers}");
        let cancel_path = format!("/api/job/{hers}/cancel");
        for (method, path) in [
            ("GET", "/api/live"),
            ("GET", job_path.as_str()),
            ("POST", cancel_path.as_str()),
            ("POST", "/api/ticket"),
            ("GET", "/events"),
        ] {
            let guessed = format!("slurmlet_board={}", "0".repeat(64));
            for headers in [vec![], vec![("Cookie", guessed.as_str())], vec![("Host", rebound.as_str())]] {
                let body = (method == "POST").then_some("{}");
                let r = common::http::http(&board.addr, method, path, &headers, body);
                tries.push((r.status, format!("{method} {path} with {headers:?}: {} {}", r.status, r.body)));
            }
        }
        let page = common::http::http(&board.addr, "GET", "/", &[], None);
        tries.push((page.status, page.body));
        tries
    });
    let (page_status, page_body) = tries.last().unwrap();
    assert_eq!(*page_status, 200, "the page itself is anyone's: {page_body}");
    assert!(!page_body.contains(&board.token), "the page gave the token away");
    for (status, what) in &tries[..tries.len() - 1] {
        assert!([401, 403].contains(status), "{what}");
        assert!(!what.contains("the output of alice"), "{what}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(shared.state(hers), "RUNNING", "bob cancelled her job through her board");

    // Bob puts a file of his in the place of her output: not shown as hers.
    let replace = |make: &(dyn Fn(&Path) + Sync)| bob.as_me(|| common::replace_by(&output, make));
    replace(&|at: &Path| std::fs::write(at, "output forged by bob\n").unwrap());
    let (v, _, why) = page();
    assert!(v["output_tail"].is_null() && why.contains(&format!("owned by {}, not by you", bob.name)), "{v}");
    assert!(!v.to_string().contains("forged by bob"), "{v}");
    // A link to a file of hers: not followed.
    replace(&|at: &Path| std::os::unix::fs::symlink(&notes, at).unwrap());
    let (v, _, why) = page();
    assert!(v["output_tail"].is_null() && why.contains("a symbolic link, which the board does not follow"), "{v}");
    assert!(!v.to_string().contains("notes of alice"), "the link was followed: {v}");
    // A FIFO: each view answers at once.
    replace(&|at: &Path| common::mkfifo(at));
    for _ in 0..5 {
        let (v, took, why) = page();
        assert!(took < Duration::from_secs(2), "her job's page took {took:?}");
        assert!(v["output_tail"].is_null() && why.contains("not a regular file"), "{v}");
    }

    // Her board answers at once, and the jobs of both run.
    let started = std::time::Instant::now();
    let live = board.call("GET", "/api/live");
    assert!(live.status == 200 && started.elapsed() < Duration::from_secs(2), "{:?}: {}", started.elapsed(), live.body);
    let his = shared.sbatch_as(&bob, &["-o", "/dev/null", "--wrap", "true"]);
    shared.wait_state(his, "COMPLETED");
    assert_eq!(shared.state(hers), "RUNNING");
}

#[test]
fn a_user_holding_a_thousand_half_open_connections_shuts_nobody_else_out() {
    use common::connections::{look, room_for, wait_end, End, HALF_A_HEAD, SLACK};
    use slurmlet::daemon::http::{accept::HEADER_TIMEOUT, admission::MAX_PER_PEER};
    use std::io::Write;
    let test = "a_user_holding_a_thousand_half_open_connections_shuts_nobody_else_out";
    if !is_root(test) {
        return;
    }
    const HELD: usize = 1000;
    // The test holds them, the daemon twice as many (it lets in half its limit).
    if !room_for(2 * HELD as u64 + 256) {
        common::skip(test, "the descriptor limit (RLIMIT_NOFILE) is too low for a thousand connections");
        return;
    }
    let shared = Shared::start("");
    let mallory = shared.user("cm");
    let alice = shared.user("ca");
    let opened = std::time::Instant::now();
    let mut conns: Vec<std::os::unix::net::UnixStream> = mallory.as_me(|| {
        (0..HELD)
            .map(|_| {
                let mut s = std::os::unix::net::UnixStream::connect(&shared.socket).expect("connect");
                // A write to a connection the daemon has already refused and closed may fail.
                let _ = s.write_all(HALF_A_HEAD);
                s.set_nonblocking(true).unwrap();
                s
            })
            .collect()
    });

    // Another user is answered while they are held, and their job runs.
    let out = shared.run_as(&alice, "squeue", &["-h"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let seen: Vec<End> = conns.iter_mut().map(look).collect();
    if opened.elapsed() < HEADER_TIMEOUT {
        let open = seen.iter().filter(|end| **end == End::Open).count();
        assert_eq!(open, MAX_PER_PEER, "mallory holds the most one user may while alice is answered");
    }
    let id = shared.sbatch_as(&alice, &["--wrap", "true"]);
    shared.wait_state(id, "COMPLETED");

    // Every one of mallory's connections ends within the header timeout: those past the
    // limit at once, with the 503 that says why; the others closed unanswered.
    let until = opened + HEADER_TIMEOUT + SLACK;
    let mut refused = 0;
    for (i, (conn, seen)) in conns.iter_mut().zip(seen).enumerate() {
        let end = match seen {
            End::Open => wait_end(conn, until),
            closed => closed,
        };
        match end {
            End::Open => panic!("connection {i} is still open after {:?}", opened.elapsed()),
            End::Closed(reply) if reply.is_empty() => {}
            End::Closed(reply) => {
                let reply = String::from_utf8_lossy(&reply);
                assert!(reply.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{reply}");
                assert!(reply.contains(&format!("uid {} holds {MAX_PER_PEER} connections", mallory.uid)), "{reply}");
                refused += 1;
            }
        }
    }
    assert_eq!(refused, HELD - MAX_PER_PEER);
    let out = shared.run_as(&alice, "squeue", &["-h"]);
    assert!(out.status.success(), "{}", text(&out).1);
}
