//! Crash safety under load. The daemon is killed with SIGKILL at random moments while
//! clients submit and cancel GPU jobs, and while many jobs end at once; supervisors are
//! killed too. Every job the daemon acknowledged must exist exactly once and end in a final
//! state, no GPU may be held by two jobs at overlapping times (by the jobs' own records of
//! when they ran), and no job id may be handed out twice.
//!
//! `SLURMLET_TORTURE_ROUNDS=N` sets the number of kills (default: a few, for CI);
//! `SLURMLET_TORTURE_SEED=S` replays a run's random choices.

use crate::common;
use crate::torture;
use common::T;

use common::*;
use slurmlet::api::client::Client;
use slurmlet::api::types::{JobInfo, JobQuery, SignalScope};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use torture::*;

/// What the client threads of the load test saw.
#[derive(Default)]
struct Seen {
    /// Submits the daemon acknowledged: job id and the submission's unique name.
    acked: Mutex<Vec<(u32, String)>>,
    /// Jobs a cancel was sent for, and those whose cancel was acknowledged.
    cancel_sent: Mutex<HashSet<u32>>,
    cancel_acked: Mutex<HashSet<u32>>,
    /// Jobs not yet ended in the last listing (the submitters hold back above a bound).
    active: AtomicUsize,
    listings: AtomicUsize,
    failed_requests: AtomicUsize,
    /// Everything that went wrong, for the final assertion.
    problems: Mutex<Vec<String>>,
}

impl Seen {
    fn problem(&self, text: String) {
        self.problems.lock().unwrap().push(text);
    }
}

/// Raises its flags when dropped.
struct StopOnDrop<'a>([&'a AtomicBool; 2]);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        for flag in self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// One submitting client: bursts of short GPU jobs, now and then a cancel of one of its own.
fn submitter(socket: &Path, work: &Path, me: usize, seed: u64, stop: &AtomicBool, seen: &Seen) {
    let mut rng = Rng::new(seed);
    let client = Client::at(socket).unwrap();
    let (mut seq, mut last_id, mut mine) = (0, 0u32, Vec::new());
    while !stop.load(Ordering::Relaxed) {
        if seen.active.load(Ordering::Relaxed) > 24 {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        for _ in 0..rng.range(1, 4) {
            seq += 1;
            let name = format!("c{me}-{seq}");
            let gpus = match rng.range(0, 9) {
                0 => 0,
                1 => 2,
                _ => 1,
            };
            let req = desc(work, &name, recording_script(rng.range(10, 60), None, 0), gpus);
            match client.submit(&req) {
                Ok(r) if r.errors.is_empty() && r.job_id > 0 => {
                    if r.job_id <= last_id {
                        seen.problem(format!("client {me} got job id {} after {last_id}", r.job_id));
                    }
                    last_id = r.job_id;
                    mine.push(r.job_id);
                    seen.acked.lock().unwrap().push((r.job_id, name));
                }
                Ok(r) => seen.problem(format!("submit of {name} refused: {:?}", r.errors)),
                // The daemon is down (or went down during the request): the outcome is unknown.
                Err(_) => {
                    seen.failed_requests.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        if !mine.is_empty() && rng.chance(30) {
            // One of its latest jobs, which is likely still pending or running.
            let back = rng.range(0, (mine.len() as u64 - 1).min(3)) as usize;
            let id = mine[mine.len() - 1 - back];
            seen.cancel_sent.lock().unwrap().insert(id);
            match client.cancel(&id.to_string(), None, SignalScope::Steps) {
                Ok(r) if r.errors.is_empty() && r.status.iter().all(|s| s.error.code == 0) => {
                    seen.cancel_acked.lock().unwrap().insert(id);
                }
                Ok(_) => {}
                Err(_) => {
                    seen.failed_requests.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(rng.range(5, 60)));
    }
}

/// The jobs not yet ended, with their GPUs, as `squeue --json` asks for them: cheap however
/// many jobs have ended.
fn active_jobs(client: &Client) -> Option<Vec<JobInfo>> {
    let q = JobQuery { json: true, ..Default::default() };
    client.post::<_, slurmlet::api::types::JobsResponse>("/slurmlet/v1/jobs/query", &q).ok().map(|r| r.jobs)
}

/// Lists the queue every few milliseconds while the load runs: no GPU may be held by two
/// listed jobs; and, every tenth time, every job acknowledged before a full listing was
/// asked for must be in it.
fn monitor(socket: &Path, stop: &AtomicBool, seen: &Seen) {
    let client = Client::at(socket).unwrap();
    for round in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if let Some(active) = active_jobs(&client) {
            if let Some(o) = listing_overlap(&active) {
                seen.problem(o);
            }
            seen.active.store(active.len(), Ordering::Relaxed);
        }
        let before: Vec<u32> = seen.acked.lock().unwrap().iter().map(|(id, _)| *id).collect();
        if let Some(r) = (round % 10 == 0).then(|| client.jobs().ok()).flatten() {
            seen.listings.fetch_add(1, Ordering::Relaxed);
            let listed: HashSet<u32> = r.jobs.iter().map(|j| j.job_id).collect();
            if let Some(lost) = before.iter().find(|id| !listed.contains(id)) {
                seen.problem(format!("acknowledged job {lost} missing from a listing"));
            }
            if listed.len() != r.jobs.len() {
                seen.problem("a listing names one job twice".into());
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Waits until no job is pending, running or completing; returns the final listing. Fails
/// when `stalled` passes without a job ending.
fn quiet_listing(c: &Cluster, stalled: Duration) -> Vec<JobInfo> {
    let client = c.client();
    let mut last: Vec<JobInfo> = Vec::new();
    let mut deadline = Instant::now() + stalled;
    loop {
        if let Some(active) = active_jobs(&client) {
            if active.is_empty() {
                return client.jobs().expect("the final listing").jobs;
            }
            if active.len() != last.len() {
                deadline = Instant::now() + stalled;
            }
            last = active;
        }
        if Instant::now() > deadline {
            let stuck: Vec<String> = last
                .iter()
                .map(|j| {
                    let proc = stepd_pid(c, j.job_id).map(|p| format!("supervisor {p} alive: {}", alive(p)));
                    format!("{} {:?} {} {}", j.job_id, j.job_state, j.state_reason, proc.unwrap_or_default())
                })
                .collect();
            panic!("no job ended for {stalled:?}: {stuck:?}; log:\n{}", c.log());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The checks on a quiet cluster: the final listing against the jobs' own records. `sane`
/// says whether a job may have ended in its state (joined with `+`), given its record.
fn check_final(
    listing: &[JobInfo],
    work: &Path,
    problems: &mut Vec<String>,
    sane: impl Fn(&str, &JobInfo, Option<&Record>) -> bool,
) -> BTreeMap<String, usize> {
    let records = read_records(work);
    let by_id: HashMap<u32, &JobInfo> = listing.iter().map(|j| (j.job_id, j)).collect();
    if by_id.len() != listing.len() {
        problems.push("the final listing names one job twice".into());
    }
    let mut names = HashSet::new();
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    for j in listing {
        if !names.insert(j.name.clone()) {
            problems.push(format!("submission {} stored twice (job {} is a duplicate)", j.name, j.job_id));
        }
        let state = j.job_state.join("+");
        *states.entry(state.clone()).or_default() += 1;
        let rec = records.get(&j.job_id);
        if !sane(&state, j, rec) {
            problems.push(format!("job {} ended {state} ({}) with record {rec:?}", j.job_id, j.state_reason));
        }
        if let Some(r) = rec {
            if !r.garbled.is_empty() {
                problems.push(format!("job {} record: {:?}", j.job_id, r.garbled));
            }
            let listed = gres_ids(&j.gres_detail);
            if r.gpus != listed {
                problems.push(format!("job {} ran on GPUs {:?} but is listed with {listed:?}", j.job_id, r.gpus));
            }
            if r.end.is_none() && state != "NODE_FAIL" {
                problems.push(format!("job {} never recorded its end but ended {state}", j.job_id));
            }
            if let Some(pid) = r.pid.filter(|&p| runs_script_of(p, j.job_id)) {
                problems.push(format!("job {} ended {state} but its shell {pid} still runs", j.job_id));
            }
        }
    }
    for id in records.keys().filter(|id| !by_id.contains_key(id)) {
        problems.push(format!("job {id} ran but the daemon does not know it"));
    }
    problems.extend(gpu_overlaps(&records));
    states
}

#[test]
fn kill_dash_nine_under_load_loses_no_job_and_hands_out_no_gpu_twice() {
    let rounds = rounds(5);
    let mut rng = Rng::from_env("load");
    let mut c = Cluster::start("4", "min_job_age = 1000000");
    std::fs::create_dir(c.work.join("rec")).unwrap();
    let (socket, work) = (c.socket.clone(), c.work.clone());
    let seen = Seen::default();
    let (stop_load, stop_monitor) = (AtomicBool::new(false), AtomicBool::new(false));
    let started = Instant::now();
    std::thread::scope(|s| {
        // However this thread leaves the scope (a failed check panics), the others stop, so
        // that the scope can end.
        let _stop = StopOnDrop([&stop_load, &stop_monitor]);
        for me in 0..3 {
            let seed = rng.next();
            let (socket, work, stop, seen) = (&socket, &work, &stop_load, &seen);
            s.spawn(move || submitter(socket, work, me, seed, stop, seen));
        }
        let (socket_m, stop_m, seen_m) = (&socket, &stop_monitor, &seen);
        s.spawn(move || monitor(socket_m, stop_m, seen_m));
        for _ in 0..rounds {
            std::thread::sleep(Duration::from_millis(rng.range(150, 1200)));
            c.kill_daemon();
            // Jobs go on and end while the daemon is away.
            std::thread::sleep(Duration::from_millis(rng.range(0, 250)));
            c.start_daemon();
        }
        std::thread::sleep(Duration::from_millis(300));
        stop_load.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
        quiet_listing(&c, T);
    });
    // One more restart on the quiet store: nothing changes.
    c.kill_daemon();
    c.start_daemon();
    let listing = quiet_listing(&c, T);

    let mut problems = std::mem::take(&mut *seen.problems.lock().unwrap());
    // Only the daemon was killed: every job that ran completed or was cancelled (a job given
    // resources just before a kill waits again and runs); none ends NODE_FAIL.
    let states = check_final(&listing, &work, &mut problems, |state, j, rec| match (state, rec) {
        ("COMPLETED", Some(r)) => r.end.is_some() && j.exit_code.return_code.number == 0,
        ("CANCELLED", None) => true,
        ("CANCELLED", Some(r)) => r.end.is_some(),
        _ => false,
    });
    let by_id: HashMap<u32, &JobInfo> = listing.iter().map(|j| (j.job_id, j)).collect();
    let acked = seen.acked.lock().unwrap().clone();
    for (id, name) in &acked {
        match by_id.get(id) {
            None => problems.push(format!("acknowledged job {id} ({name}) is lost")),
            Some(j) if &j.name != name => {
                problems.push(format!("job {id} is {} but was acknowledged for {name}", j.name))
            }
            Some(_) => {}
        }
    }
    let (sent, cancelled) = (seen.cancel_sent.lock().unwrap().clone(), seen.cancel_acked.lock().unwrap().clone());
    for j in &listing {
        let state = j.job_state.join("+");
        if cancelled.contains(&j.job_id) && state != "CANCELLED" && state != "COMPLETED" {
            problems.push(format!("job {} was cancelled but ended {state}", j.job_id));
        }
        if state == "CANCELLED" && !sent.contains(&j.job_id) {
            problems.push(format!("job {} ended CANCELLED but nobody cancelled it", j.job_id));
        }
    }
    // Ids are never handed out twice: a job submitted now gets an id past every one so far.
    let max = listing.iter().map(|j| j.job_id).max().unwrap_or(0);
    let next = c.sbatch(&["--hold", "--wrap", "true"]);
    if next <= max {
        problems.push(format!("job id {next} handed out again (the highest was {max})"));
    }
    eprintln!(
        "{rounds} kills in {:.1} s: {} submits acknowledged, {} cancels acknowledged, {} failed requests, {} listings; final states {states:?}",
        started.elapsed().as_secs_f64(),
        acked.len(),
        cancelled.len(),
        seen.failed_requests.load(Ordering::Relaxed),
        seen.listings.load(Ordering::Relaxed),
    );
    assert!(acked.len() > rounds, "too few jobs to tell anything: {}", acked.len());
    assert!(problems.is_empty(), "{} problems:\n{}\nlog:\n{}", problems.len(), problems.join("\n"), c.log());
}

#[test]
fn kill_dash_nine_while_many_jobs_end_at_once() {
    let rounds = rounds(3);
    let mut rng = Rng::from_env("completions");
    let mut c = Cluster::start("4", "min_job_age = 1000000");
    std::fs::create_dir(c.work.join("rec")).unwrap();
    let socket = c.socket.clone();
    let client = || Client::at(&socket).unwrap();
    let mut problems = Vec::new();
    let mut expected: BTreeMap<u32, i32> = BTreeMap::new();
    for round in 0..rounds {
        let release = format!("release-{round}");
        // Four 1-GPU jobs and four CPU jobs run; four more GPU jobs wait for their GPUs.
        let mut running = Vec::new();
        for i in 0..12u32 {
            let exit = if i % 5 == 4 { 3 } else { 0 };
            let gpus = if (4..8).contains(&i) { 0 } else { 1 };
            let script = recording_script(0, (i < 8).then_some(release.as_str()), exit);
            let r = client().submit(&desc(&c.work, &format!("r{round}-{i}"), script, gpus)).unwrap();
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            expected.insert(r.job_id, exit);
            if i < 8 {
                running.push(r.job_id);
            }
        }
        wait_for("the first eight jobs to run", T, || {
            let recs = read_records(&c.work);
            until(running.iter().all(|id| recs.contains_key(id)), || format!("{} started", recs.len()))
        });
        std::fs::write(c.work.join(&release), "").unwrap();
        std::thread::sleep(Duration::from_millis(rng.range(0, 40)));
        c.kill_daemon();
        std::thread::sleep(Duration::from_millis(rng.range(0, 200)));
        c.start_daemon();
        quiet_listing(&c, T);
    }
    let listing = quiet_listing(&c, T);
    let states = check_final(&listing, &c.work, &mut problems, |state, _, rec| {
        matches!(state, "COMPLETED" | "FAILED") && rec.is_some_and(|r| r.end.is_some())
    });
    for j in &listing {
        let want = expected[&j.job_id];
        let state = j.job_state.join("+");
        let want_state = if want == 0 { "COMPLETED" } else { "FAILED" };
        if state != want_state || j.exit_code.return_code.number != want as u32 {
            problems.push(format!(
                "job {} ended {state} with exit {}, wanted {want_state} with {want}",
                j.job_id, j.exit_code.return_code.number
            ));
        }
    }
    assert_eq!(listing.len(), expected.len());
    eprintln!("{rounds} kills during completions: final states {states:?}");
    assert!(problems.is_empty(), "{} problems:\n{}\nlog:\n{}", problems.len(), problems.join("\n"), c.log());
}

/// Memory the hog's big process holds, in MiB: a process that holds much takes a while to
/// exit after SIGKILL (its memory is freed first), long enough for the next job to start
/// beside it if its GPUs were given back at once.
const HOG_MIB: u64 = 512;

/// A job that holds both GPUs: its shell, a `sleep`, and a `dd` holding [`HOG_MIB`] of
/// memory, their pids in `hog.pid`; returns its id once they run.
fn gpu_hog(c: &Cluster) -> u32 {
    let script = format!(
        "#!/bin/bash\necho \"pid $$\" > hog.pid\nexec 3> >(sleep 300)\n\
         dd if=/dev/zero bs={HOG_MIB}M count=1 >&3 2>/dev/null & echo \"big $!\" >> hog.pid\n\
         sleep 300 & echo \"child $!\" >> hog.pid\nwait\n"
    );
    let r = Client::at(&c.socket).unwrap().submit(&desc(&c.work, "hog", script, 2)).unwrap();
    let id = r.job_id;
    let big = wait_for("the hog's pids", T, || {
        let t = std::fs::read_to_string(c.work.join("hog.pid")).unwrap_or_default();
        let big = t.lines().find_map(|l| l.strip_prefix("big ")?.parse::<i32>().ok());
        big.filter(|_| t.contains("child")).ok_or(t)
    });
    wait_for("the hog's memory", T, || {
        let status = std::fs::read_to_string(format!("/proc/{big}/status")).unwrap_or_default();
        let kib: u64 =
            status.lines().find_map(|l| l.strip_prefix("VmRSS:")?.split_whitespace().next()?.parse().ok()).unwrap_or(0);
        until(kib >= HOG_MIB * 1024 * 9 / 10, || format!("{kib} KiB"))
    });
    assert_eq!(c.state(id), "RUNNING");
    id
}

/// The hog's shell, its `dd` and its `sleep`.
fn hog_pids(c: &Cluster) -> Vec<i32> {
    read(&c.work.join("hog.pid")).lines().filter_map(|l| l.split_whitespace().nth(1)?.parse().ok()).collect()
}

/// A job that needs both GPUs and writes whether the hog's processes still ran when it
/// started.
fn next_on_the_gpus(c: &Cluster, hog: &[i32]) -> u32 {
    let checks: Vec<String> = hog
        .iter()
        .map(|p| format!("s=$(cut -d' ' -f3 /proc/{p}/stat 2>/dev/null); echo \"{p} ${{s:-gone}}\""))
        .collect();
    let script = format!(
        "#!/bin/bash\necho \"gpus $CUDA_VISIBLE_DEVICES\" > next.out\n{{ {}; }} >> next.out\n",
        checks.join("; ")
    );
    Client::at(&c.socket).unwrap().submit(&desc(&c.work, "next", script, 2)).unwrap().job_id
}

/// The hog ended NODE_FAIL, none of its processes runs, and the next job got both GPUs
/// only once they were gone.
fn check_node_fail_and_reuse(c: &Cluster, hog: u32, pids: &[i32], next: u32) {
    let j = c.wait_state(hog, &["NODE_FAIL", "FAILED", "COMPLETED", "CANCELLED"], T);
    assert_eq!(j.job_state, vec!["NODE_FAIL"], "reason {}", j.state_reason);
    assert_eq!(j.state_reason, "NodeDown");
    c.wait_state(next, &["COMPLETED"], T);
    let out = read(&c.path("next.out"));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("gpus 0,1"), "{out}");
    for line in lines {
        assert!(line.ends_with(" gone") || line.ends_with(" Z"), "a process of the failed job still ran: {out}");
    }
    for p in pids {
        assert!(!alive(*p), "process {p} of the failed job still runs");
    }
}

#[test]
fn a_killed_supervisor_fails_its_job_node_fail_and_frees_its_gpus() {
    let c = Cluster::start("2", "");
    let hog = gpu_hog(&c);
    let pids = hog_pids(&c);
    let stepd = stepd_pid(&c, hog).expect("stepd.pid");
    let next = next_on_the_gpus(&c, &pids);
    // The scheduler has looked at it, and left it waiting for the hog's GPUs.
    let j = wait_for("the next job to wait for the GPUs", T, || {
        let j = c.job(next);
        until(j.state_reason == "Resources", || format!("{:?} {}", j.job_state, j.state_reason)).map(|()| j)
    });
    assert_eq!(j.job_state, vec!["PENDING"]);
    // SAFETY: kill has no memory preconditions; the pid is the job's supervisor.
    assert_eq!(unsafe { libc::kill(stepd, libc::SIGKILL) }, 0);
    check_node_fail_and_reuse(&c, hog, &pids, next);
}

#[test]
fn a_daemon_killed_with_a_supervisor_fails_the_job_node_fail_when_it_restarts() {
    let mut c = Cluster::start("2", "");
    let hog = gpu_hog(&c);
    let pids = hog_pids(&c);
    let stepd = stepd_pid(&c, hog).expect("stepd.pid");
    let next = next_on_the_gpus(&c, &pids);
    c.kill_daemon();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(stepd, libc::SIGKILL) }, 0);
    // The job's own processes outlive both (once the supervisor is gone, nothing it could
    // have set up to take them along is still on its way); the restarted daemon must end them.
    wait_for("the supervisor to be gone", T, || until(!alive(stepd), || format!("{stepd} alive")));
    assert!(pids.iter().all(|p| untouched(*p)), "the job's processes died with their supervisor");
    c.start_daemon();
    check_node_fail_and_reuse(&c, hog, &pids, next);
    // And that end is durable.
    c.kill_daemon();
    c.start_daemon();
    assert_eq!(c.state(hog), "NODE_FAIL");
}
