//! Fair-share among real users of a system daemon: a user who floods the queue goes behind
//! those who have used less, and over a run of short jobs each user's GPU-seconds come to
//! their share; sprio and sshare show each user where they stand. Needs root.

use crate::common;
use crate::common::system::{is_root, Shared, User};
use slurmlet::api::client::Client;
use std::time::{Duration, Instant};

/// Each user's RawUsage (GPU-seconds under `GRES/gpu=1`) as root reads the tree.
fn usage(shared: &Shared, users: &[&User]) -> Vec<f64> {
    let reply = Client::at(&shared.socket).unwrap().shares(&[], &[]).unwrap();
    users
        .iter()
        .map(|u| reply.shares.shares.iter().find(|s| s.is_user() && s.name == u.name).map_or(0.0, |s| s.usage as f64))
        .collect()
}

/// Every job's id, priority, user and compact state in squeue's order, as `user` sees them.
fn queue(shared: &Shared, user: &User) -> Vec<(u32, u64, String, String)> {
    let out = shared.run_as(user, "squeue", &["-h", "-o", "%i %Q %u %t"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].to_string(), f[3].to_string())
        })
        .collect()
}

/// sprio shows the fair-share part of B's (or C's) job larger than that of A's `a_job`, for
/// whichever still waits; when both started, root's view of the tree shows B's FairShare
/// above A's.
fn fair_share_part_is_larger(shared: &Shared, client: &Client, (a, b): (&User, &User), others: [u32; 2], a_job: u32) {
    // sprio shows the fair-share part of B's (or C's) job larger than A's, for whichever
    // still waits; sshare shows the same factor for users whose jobs all started.
    let out = shared.run_as(b, "sprio", &["-h", "-o", "%i %F %u"]);
    let sprio = String::from_utf8_lossy(&out.stdout).into_owned();
    let fs_of = |id: u32| -> Option<u64> {
        sprio
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(|f| f.parse().unwrap())
    };
    let a_fs = fs_of(a_job).unwrap_or_else(|| panic!("A's last job not in sprio: {sprio}"));
    match others.iter().find_map(|id| fs_of(*id)) {
        Some(fs) => assert!(fs > a_fs, "{sprio}"),
        None => {
            let reply = client.shares(&[], &[]).unwrap();
            let factor = |u: &User| {
                let row = reply.shares.shares.iter().find(|s| s.is_user() && s.name == u.name);
                row.and_then(|s| s.fairshare.factor.get()).unwrap_or_else(|| panic!("no FairShare for {}", u.name))
            };
            assert!(factor(b) > factor(a), "B's FairShare {} not above A's {}", factor(b), factor(a));
        }
    }
}

#[test]
fn a_user_who_floods_the_queue_waits_behind_the_others_and_each_gets_their_share() {
    if !is_root("fair_share::a_user_who_floods_the_queue_waits_behind_the_others_and_each_gets_their_share") {
        return;
    }
    let mut shared = Shared::start("gpus = 4\npriority_weight_fairshare = 100000\npriority_weight_age = 10\ntres_billing_weights = \"GRES/gpu=1\"\n");
    let (a, b, c) = (shared.user("fsa"), shared.user("fsb"), shared.user("fsc"));
    let config = std::fs::read_to_string(&shared.config).unwrap()
        + &format!("[accounts.lab]\nusers = [\"{}\", \"{}\", \"{}\"]\n", a.name, b.name, c.name);
    std::fs::write(&shared.config, config).unwrap();
    shared.stop_daemon();
    shared.start_daemon();
    let job = ["--gres=gpu:1", "--wrap", "sleep 2"];
    let flood: Vec<u32> = (0..100).map(|_| shared.sbatch_as(&a, &job)).collect();
    // A's first four run and use the GPUs for a while before the others come (on a loaded
    // machine the 100 submits may outlast them: started is enough).
    let client = Client::at(&shared.socket).unwrap();
    common::wait_for("A's fourth job to start", common::T, || {
        let start = client.job(&flood[3].to_string()).map_err(|e| e.to_string())?.jobs[0].start_time.number;
        common::until(start > 0, || format!("job {} not started", flood[3]))
    });
    std::thread::sleep(Duration::from_millis(1500));
    let b_first = shared.sbatch_as(&b, &job);
    let c_first = shared.sbatch_as(&c, &job);
    // Both are ahead of every job of A's still waiting, by priority: pending before them in
    // the queue, or already running (a GPU of A's may free between the submit and squeue).
    let all = queue(&shared, &b);
    let queue: Vec<(u32, u64, String)> =
        all.iter().filter(|j| j.3 == "PD").map(|(i, p, u, _)| (*i, *p, u.clone())).collect();
    let rank = |id: u32| queue.iter().position(|(j, _, _)| *j == id);
    let first_of_a = queue.iter().position(|(_, _, u)| *u == a.name).expect("A still has jobs waiting");
    let priority_of = |id: u32| all.iter().find(|j| j.0 == id).unwrap_or_else(|| panic!("job {id} not in {all:?}")).1;
    for id in [b_first, c_first] {
        match rank(id) {
            Some(at) => assert!(at < first_of_a, "job {id} at {at}, A's first at {first_of_a}: {queue:?}"),
            None => assert!(
                all.iter().any(|j| j.0 == id && (j.3 == "R" || j.3 == "CG" || j.3 == "CD")),
                "job {id} neither pending nor started while A's older jobs wait: {all:?}"
            ),
        }
        assert!(priority_of(id) > queue[first_of_a].1, "job {id}: {all:?}");
    }
    fair_share_part_is_larger(&shared, &client, (&a, &b), [b_first, c_first], flood[99]);
    // B's and C's jobs start before any of A's that waited.
    let started = |id: u32| client.job(&id.to_string()).unwrap().jobs[0].start_time.number;
    for id in [b_first, c_first] {
        common::wait_for("B's and C's jobs to start", common::T, || {
            common::until(started(id) > 0, || format!("job {id} not started"))
        });
    }
    let a_waiting: Vec<u32> = queue.iter().filter(|(_, _, u)| *u == a.name).map(|(j, _, _)| *j).collect();
    let latest_bc = started(b_first).max(started(c_first));
    for id in &a_waiting {
        let s = shared.state(*id);
        assert!(s == "PENDING" || started(*id) >= latest_bc, "A's job {id} ({s}) started before B's and C's");
    }
    // Now all three keep the queue full of short jobs: each one's usage comes to a third.
    for user in [&b, &c] {
        for _ in 0..60 {
            shared.sbatch_as(user, &job);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(40);
    let users = [&a, &b, &c];
    let mut seen = usage(&shared, &users);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(2));
        seen = usage(&shared, &users);
        let total: f64 = seen.iter().sum();
        if total > 100.0 && seen.iter().all(|u| (u / total - 1.0 / 3.0).abs() * 3.0 < 0.15) {
            break;
        }
    }
    let total: f64 = seen.iter().sum();
    eprintln!("fair_share: GPU-seconds of the flooding user and the two others: {seen:?} of {total}");
    for (user, used) in users.iter().zip(&seen) {
        let share = used / total;
        assert!(
            (share * 3.0 - 1.0).abs() < 0.15,
            "{}: {used} of {total} GPU-seconds ({share:.3}); all: {seen:?}",
            user.name
        );
    }
    // sshare as B shows B's own row only, with the lab's three users counted.
    let out = shared.run_as(&b, "sshare", &["-n", "-P"]);
    let rows = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(rows.lines().any(|l| l.starts_with(&format!("  lab|{}|1|", b.name))), "{rows}");
    assert!(!rows.contains(&a.name), "{rows}");
    let _ = shared.run_as(&a, "scancel", &["-u", &a.name]);
    let _ = shared.run_as(&b, "scancel", &["-u", &b.name]);
    let _ = shared.run_as(&c, "scancel", &["-u", &c.name]);
}
