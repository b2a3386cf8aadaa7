//! Advance reservations on a real daemon: a reservation of 2 of 4 GPUs a minute and a bit
//! ahead keeps a long job off them and says why, lets a short job run before it, survives a
//! restart, starts its own job at its start on its GPUs and ends it with its window; it
//! cannot be deleted while a job is in it; and in system mode another user's job that names
//! it is refused with Slurm's text, while only root and the operators make one.

use crate::common::system::{is_root, Shared};
use crate::common::*;
use std::time::Duration;

/// `squeue -h -o FORMAT -j ID`, trimmed.
fn squeue(c: &Cluster, format: &str, id: u32) -> String {
    stdout(&c.run("squeue", &["-h", "-o", format, "-j", &id.to_string()])).trim().to_string()
}

/// The UNIX time of a local `YYYY-MM-DDTHH:MM:SS`, as squeue's `%S` prints it.
fn parse_local(text: &str) -> u64 {
    let out = std::process::Command::new("date").args(["-d", text, "+%s"]).output().unwrap();
    stdout(&out).trim().parse().unwrap_or_else(|_| panic!("a time: {text:?}"))
}

#[test]
fn a_reservation_keeps_long_jobs_off_lets_short_ones_run_and_starts_its_own_at_its_start() {
    let mut c = Cluster::start("4", &format!("operators = [\"{}\"]", fake_nvml::me()));
    let me = fake_nvml::me();
    let users = format!("Users={me}");
    let out = c.run(
        "scontrol",
        &[
            "create",
            "reservation",
            "ReservationName=demo",
            "StartTime=now+75",
            "Duration=2",
            &users,
            "TRES=cpu=1,gres/gpu=2",
        ],
    );
    assert_eq!(outcome(&out), ("Reservation created: demo\n".into(), String::new(), Some(0)));
    let reply = c.client().reservations(Some("demo")).unwrap();
    let demo = &reply.reservations[0];
    let (start, end, reserved) = (demo.start_time.number, demo.end_time.number, demo.gpu_indices.clone());
    assert_eq!((reserved.len(), end - start), (2, 120), "{demo:?}");

    // All four GPUs for ten minutes would run into the window: it waits, for resources.
    let long = c.sbatch(&["--gres=gpu:4", "-t", "10", "-J", "long", "-o", "/dev/null", "--wrap", "sleep 600"]);
    // Two GPUs for a minute end before it: they run now, on the reserved GPUs if need be.
    let short = c.sbatch(&["--gres=gpu:2", "-t", "1", "-J", "short", "-o", "/dev/null", "--wrap", "sleep 600"]);
    c.wait_state(short, &["RUNNING"], T);
    wait_for("the long job's reason", T, || {
        let reason = squeue(&c, "%r", long);
        until(reason == "Resources", || reason.clone())
    });
    assert_eq!(c.state(long), "PENDING");

    // A restart keeps the reservation and what it means for the queue.
    c.kill_daemon();
    c.start_daemon();
    let shown = stdout(&c.run("scontrol", &["show", "reservation", "demo"]));
    assert!(shown.starts_with("ReservationName=demo StartTime="), "{shown}");
    assert!(shown.contains("TRES=cpu=1,gres/gpu=2") && shown.contains(&format!("Users={me} ")), "{shown}");
    let listed = stdout(&c.run("sinfo", &["-T", "-h"]));
    assert!(listed.starts_with("demo       INACTIVE  "), "{listed}");

    // Its own job waits for its start, and is expected then.
    let own = c.sbatch(&[
        "--reservation=demo",
        "--gres=gpu:2",
        "-t",
        "5",
        "-J",
        "own",
        "-o",
        "/dev/null",
        "--wrap",
        "sleep 600",
    ]);
    wait_for("the reservation's job to wait for it", T, || {
        let reason = squeue(&c, "%r %v", own);
        until(reason == "Reservation demo", || reason.clone())
    });
    let listed = stdout(&c.run("squeue", &["-h", "-R", "demo", "-o", "%i"]));
    assert_eq!(listed, format!("{own}\n"), "squeue -R lists the reservation's jobs alone");
    let expected = squeue(&c, "%S", own);
    assert_eq!(parse_local(&expected), start, "expected at the reservation's start: {expected}");

    // It starts at the start, on the reserved GPUs, and ends with the window at the latest.
    let running = c.wait_state(own, &["RUNNING"], Duration::from_secs(120));
    let started = running.start_time.number;
    assert!(started >= start && started <= start + 10, "started at {started}, the window opens at {start}");
    let detail = running.gres_detail.join(",");
    for g in &reserved {
        assert!(detail.contains(&g.to_string()), "GPU {g} of the reservation in {detail}");
    }
    assert!(stdout(&c.run("scontrol", &["show", "job", &own.to_string()])).contains("\n   Reservation=demo\n"));
    assert_eq!(running.end_time.number, end, "the window's end ends it (its own limit is later)");
    // The long job still waits; the reservation in use is not deleted.
    assert_eq!(c.state(long), "PENDING");
    let out = c.run("scontrol", &["delete", "reservation", "demo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with("delete_reservation reservation: Requested reservation is in use\n"),
        "{}",
        stderr(&out)
    );
    c.run("scancel", &[&own.to_string(), &long.to_string(), &short.to_string()]);
}

#[test]
fn a_maintenance_reservation_says_so_and_an_update_moves_it() {
    let c = Cluster::start("2", &format!("operators = [\"{}\"]", fake_nvml::me()));
    let users = format!("Users={}", fake_nvml::me());
    let out =
        c.run("scontrol", &["create", "res", "StartTime=now+600", "Duration=30", &users, "NodeCnt=1", "Flags=MAINT"]);
    let name = stdout(&out).trim().strip_prefix("Reservation created: ").map(str::to_string);
    let name = name.unwrap_or_else(|| panic!("{:?}", outcome(&out)));
    assert!(name.starts_with(&format!("{}_", fake_nvml::me())), "named after its user: {name}");
    let long = c.sbatch(&["-t", "60", "-o", "/dev/null", "--wrap", "sleep 600"]);
    wait_for("the maintenance reason", T, || {
        let reason = squeue(&c, "%r", long);
        until(reason == "ReqNodeNotAvail, Reserved for maintenance", || reason.clone())
    });
    // A job that ends before it runs.
    let short = c.sbatch(&["-t", "5", "-o", "/dev/null", "--wrap", "sleep 600"]);
    c.wait_state(short, &["RUNNING"], T);
    // Thirty minutes more.
    let out = c.run("scontrol", &["update", &format!("ReservationName={name}"), "Duration+=30"]);
    assert_eq!(outcome(&out), ("Reservation updated.\n".into(), String::new(), Some(0)));
    let shown = stdout(&c.run("scontrol", &["show", "res", &name]));
    assert!(shown.contains(" Duration=01:00:00\n") && shown.contains(" Flags=MAINT\n"), "{shown}");
    // Moved two days on, it no longer keeps the long job off.
    let out = c.run("scontrol", &["update", &format!("ReservationName={name}"), "StartTime=now+2days"]);
    assert_eq!(outcome(&out), ("Reservation updated.\n".into(), String::new(), Some(0)));
    c.wait_state(long, &["RUNNING"], T);
    // Deleted, it is gone from both listings.
    let out = c.run("scontrol", &["delete", &format!("ReservationName={name}")]);
    assert_eq!(outcome(&out), (String::new(), String::new(), Some(0)));
    assert_eq!(stdout(&c.run("sinfo", &["-T"])), "No reservations in the system\n");
    let out = c.run("scontrol", &["update", &format!("ReservationName={name}"), "Duration=5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).ends_with("slurm_update error: Requested reservation is invalid\n"), "{}", stderr(&out));
    c.run("scancel", &[&long.to_string(), &short.to_string()]);
}

#[test]
fn in_system_mode_only_operators_reserve_and_only_the_users_named_use_a_reservation() {
    if !is_root("in_system_mode_only_operators_reserve_and_only_the_users_named_use_a_reservation") {
        return;
    }
    let shared = Shared::start("");
    let alice = shared.user("rva");
    let bob = shared.user("rvb");
    let create =
        ["create", "reservation", "ReservationName=lab", "StartTime=now+3600", "Duration=60", "TRES=cpu=1,gres/gpu=1"];
    let for_alice = format!("Users={}", alice.name);
    let args: Vec<&str> = create.iter().copied().chain([for_alice.as_str()]).collect();
    // A user may not make one.
    let out = shared.run_as(&alice, "scontrol", &args);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).ends_with("Error creating the reservation: Invalid user id\n"), "{}", stderr(&out));
    // Root may.
    let out = std::process::Command::new(shared.bin.join("scontrol"))
        .args(&args)
        .env("SLURMLET_SYSTEM_CONF", &shared.config)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "Reservation created: lab\n", "{}", stderr(&out));
    // Alice's job in it is queued; Bob's is refused with Slurm's text, and so is a name that
    // does not exist.
    shared.sbatch_as(&alice, &["--reservation=lab", "--gres=gpu:1", "--wrap", "true"]);
    let out = shared.run_as(&bob, "sbatch", &["--reservation=lab", "--gres=gpu:1", "--wrap", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == "sbatch: error: Batch job submission failed: Access denied to requested reservation"),
        "{}",
        stderr(&out)
    );
    let out = shared.run_as(&bob, "sbatch", &["--reservation=nosuch", "--wrap", "true"]);
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == "sbatch: error: Batch job submission failed: Requested reservation is invalid"),
        "{}",
        stderr(&out)
    );
    // Everyone sees it.
    assert!(stdout(&shared.run_as(&bob, "scontrol", &["show", "res"])).starts_with("ReservationName=lab "));
}
