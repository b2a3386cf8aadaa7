//! The board's data, as a real daemon serves it under `/slurmlet/v1/…`: the GPU samples it
//! keeps (here from the stand-in NVML of `tests/fake_nvml/`, looked at every second and kept
//! at a one-second resolution), a job's samples, the queue in scheduling order with the
//! expected starts `squeue --start` shows, each user's GPU-seconds, and the change counter's
//! long poll. The samples outlive the daemon, and the old ones are pruned.

use crate::common;
use common::fake_nvml::{self, A100_MODEL, MACHINE_VARIABLE, UUID0, UUID1};
use common::T;
use common::*;
use slurmlet::api::activity::Sample;
use std::path::Path;
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;

/// The lines that keep a sample per second.
const EVERY_SECOND: &str = "gpu_history_resolution = 1";

/// Describes the fake machine: GPU 0 with `used` bytes in use at `util` %, its compute
/// processes `on0` (`(pid, bytes, SM %)`); GPU 1 idle.
fn set_machine(machine: &Path, used: u64, util: u32, on0: &[(u32, u64, u32)]) {
    let mut gpu0 = fake_nvml::gpu(0, A100_MODEL, UUID0);
    gpu0["memory_used"] = used.into();
    gpu0["utilization"] = util.into();
    gpu0["processes"] = fake_nvml::processes(on0);
    let gpu1 = fake_nvml::gpu(1, A100_MODEL, UUID1);
    fake_nvml::write_machine(machine, serde_json::json!({ "gpus": [gpu0, gpu1] }));
}

/// GPU `index`'s samples since `since`, as the daemon serves them.
fn samples_of(c: &Cluster, since: i64, index: u32) -> Vec<Sample> {
    let reply = c.client().gpu_samples(Some(since)).expect("GET /slurmlet/v1/gpus/samples");
    reply.gpus.into_iter().find(|g| g.index == index).map(|g| g.samples).unwrap_or_default()
}

/// The rows of `table` in the cluster's store.
fn rows(c: &Cluster, table: &str) -> i64 {
    let db = c.dir.path().join("state").join("slurmlet.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

/// GPU `gpu`'s rows in the cluster's store with `memory` bytes in use, oldest first.
fn stored_samples(c: &Cluster, gpu: u32, memory: u64) -> Vec<Sample> {
    let db = c.dir.path().join("state").join("slurmlet.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT time, memory_used, utilization FROM gpu_samples WHERE gpu = ?1 AND memory_used = ?2 ORDER BY time",
        )
        .unwrap();
    stmt.query_map([gpu as i64, memory as i64], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

#[test]
fn each_gpus_samples_carry_its_figures_and_outlive_the_daemon() {
    let (mut c, machine) = fake_nvml::start_watching(EVERY_SECOND);
    let start = now();
    set_machine(&machine, 12 * GIB, 87, &[]);
    // Looks every second, one sample a second: those after the machine was described.
    let steady = wait_for("three samples of GPU 0 at 12 GiB and 87 %", T, || {
        let found: Vec<Sample> =
            samples_of(&c, start, 0).into_iter().filter(|s| (s.1, s.2) == (12 * GIB, 87)).collect();
        until(found.len() >= 3, || format!("{found:?}")).map(|()| found)
    });
    let reply = c.client().gpu_samples(Some(start)).unwrap();
    assert_eq!(reply.resolution, 1);
    assert_eq!(reply.since, start);
    assert_eq!(reply.gpus.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1]);
    assert!(reply.gpus.iter().all(|g| g.total_memory == Some(40 * GIB)), "{:?}", reply.gpus);
    for series in &reply.gpus {
        let times: Vec<i64> = series.samples.iter().map(|s| s.0).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "oldest first, one per second: {times:?}");
        assert!(times.iter().all(|&t| t >= start), "none before since: {times:?}");
    }
    assert!(reply.gpus[1].samples.iter().all(|s| (s.1, s.2) == (0, 0)), "GPU 1 is idle: {:?}", reply.gpus[1]);
    // Without `since`: the last hour, which holds them.
    let default = c.client().gpu_samples(None).unwrap();
    assert!(default.since <= start && default.since >= start - 3600 - 5, "{}", default.since);
    assert!(default.gpus[0].samples.contains(&steady[0]));

    // They are in the store, one row per GPU per step, and a new daemon serves them.
    let stored = wait_for("two steps stored", T, || {
        let stored = stored_samples(&c, 0, 12 * GIB);
        until(stored.len() >= 2 && rows(&c, "gpu_samples") >= 4, || format!("{stored:?}")).map(|()| stored)
    });
    c.kill_daemon();
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    let again = samples_of(&c, start, 0);
    for sample in &stored {
        assert!(again.contains(sample), "{sample:?} kept across the restart: {again:?}");
    }
}

#[test]
fn a_jobs_samples_sum_its_processes_and_a_job_not_known_is_refused_as_the_job_endpoint_does() {
    let (c, machine) = fake_nvml::start_watching(EVERY_SECOND);
    std::fs::write(
        c.path("job.sh"),
        "#!/bin/sh\nsleep 300 &\necho $! > child.pid\necho $$ > job.pid\n\
         while [ ! -e release ]; do sleep 0.1; done\nkill $!\n",
    )
    .unwrap();
    let job = c.sbatch(&["--gres=gpu:1", "-o", "job.out", "job.sh"]);
    let pid: u32 = c.wait_file("job.pid", T).trim().parse().unwrap();
    let child: u32 = c.wait_file("child.pid", T).trim().parse().unwrap();
    // Its two processes: their memory and utilisation are summed.
    set_machine(&machine, 4 * GIB, 60, &[(pid, 3 * GIB, 50), (child, GIB, 20)]);
    wait_for("three samples of the job at 4 GiB and 70 %", T, || {
        let samples = c.client().job_gpu_samples(job).unwrap().samples;
        let steady = samples.iter().filter(|s| (s.1, s.2) == (4 * GIB, 70)).count();
        until(steady >= 3, || format!("{samples:?}"))
    });
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(job, &["COMPLETED"], T);
    set_machine(&machine, 0, 0, &[]);
    std::thread::sleep(Duration::from_millis(2500));
    let reply = c.client().job_gpu_samples(job).unwrap();
    assert_eq!((reply.job_id, reply.resolution), (job, 1));
    let times: Vec<i64> = reply.samples.iter().map(|s| s.0).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    let info = c.job(job);
    let (started, ended) = (info.start_time.number as i64, info.end_time.number as i64);
    assert!(times.iter().all(|&t| t >= started - 1 && t <= ended), "within its life {started}..{ended}: {times:?}");
    assert!(reply.samples.iter().all(|s| s.1 <= 4 * GIB && s.2 <= 70), "{:?}", reply.samples);

    // A job the daemon does not know: the job endpoint's refusal, word for word.
    let client = c.client();
    let (status, samples): (u16, serde_json::Value) =
        client.get_with_status("/slurmlet/v1/job/999999/gpu_samples").unwrap();
    let (job_status, job_reply): (u16, serde_json::Value) =
        client.get_with_status("/slurm/v0.0.43/job/999999").unwrap();
    assert_eq!((status, job_status), (404, 404));
    assert_eq!(samples["errors"], job_reply["errors"]);
    let (status, _): (u16, serde_json::Value) = client.get_with_status("/slurmlet/v1/job/x/gpu_samples").unwrap();
    assert_eq!(status, 422);
}

#[test]
fn old_samples_are_pruned_and_recent_ones_kept() {
    let (mut c, machine) = fake_nvml::start_watching("gpu_history_days = 1");
    c.kill_daemon();
    let db = c.dir.path().join("state").join("slurmlet.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (old, recent) = (now() - 3 * 86_400, now() - 600);
    for t in [old, recent] {
        conn.execute("INSERT INTO gpu_samples (time, gpu, memory_used, utilization) VALUES (?1, 0, 5, 6)", [t])
            .unwrap();
        conn.execute("INSERT INTO job_gpu_samples (job_id, time, memory_used, utilization) VALUES (77, ?1, 5, 6)", [t])
            .unwrap();
    }
    drop(conn);
    c.start_daemon_with(&[(MACHINE_VARIABLE, machine.to_str().unwrap())]);
    // The daemon prunes when it starts (and every hour).
    wait_for("the old rows pruned", T, || {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let left: i64 =
            conn.query_row("SELECT COUNT(*) FROM job_gpu_samples WHERE time < ?1", [recent], |r| r.get(0)).unwrap();
        until(left == 0, || format!("{left} old job rows"))
    });
    assert_eq!(samples_of(&c, 0, 0).first(), Some(&(recent, 5, 6)), "the recent sample is kept, the old one gone");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let times: Vec<i64> = conn
        .prepare("SELECT time FROM job_gpu_samples WHERE job_id = 77")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(times, [recent]);
}

#[test]
fn a_week_of_samples_is_served_whole() {
    let (c, _machine) = fake_nvml::start_watching("");
    // A week at one-minute steps on both GPUs, written as the daemon writes them.
    let db = c.dir.path().join("state").join("slurmlet.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let week_ago = now() - 7 * 86_400 + 120;
    let step = week_ago - week_ago % 60;
    conn.execute(
        "WITH RECURSIVE t(time) AS (SELECT ?1 UNION ALL SELECT time + 60 FROM t WHERE time + 60 < ?2)
         INSERT OR REPLACE INTO gpu_samples (time, gpu, memory_used, utilization)
         SELECT time, gpu, 1073741824 * gpu, 50 FROM t, (SELECT 0 AS gpu UNION ALL SELECT 1)",
        [step, now() - 60],
    )
    .unwrap();
    drop(conn);
    let began = Instant::now();
    let reply = c.client().gpu_samples(Some(week_ago - 60)).unwrap();
    let took = began.elapsed();
    let counts: Vec<usize> = reply.gpus.iter().map(|g| g.samples.len()).collect();
    eprintln!("GET /slurmlet/v1/gpus/samples of a week at one-minute steps, 2 GPUs ({counts:?} samples): {took:?} (debug build)");
    assert!(counts.iter().all(|&n| n >= 10_000), "{counts:?}");
    assert_eq!(reply.gpus[1].samples[0], (step, GIB, 50));
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// `squeue --start`'s expected start of each pending job, as UNIX seconds (`None`: N/A).
fn squeue_starts(c: &Cluster) -> Vec<(u32, Option<i64>)> {
    let out = c.run("squeue", &["--start", "-h", "-o", "%i|%S"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| {
            let (id, start) = l.trim().split_once('|').unwrap();
            (id.parse().unwrap(), seconds_of(start))
        })
        .collect()
}

/// UNIX seconds of squeue's local time text (`2026-11-26T13:37:00`); `None` for `N/A`.
fn seconds_of(text: &str) -> Option<i64> {
    if text == "N/A" {
        return None;
    }
    let out = std::process::Command::new("date").args(["-d", text, "+%s"]).output().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).trim().parse().unwrap())
}

#[test]
fn the_queue_lists_jobs_in_scheduling_order_with_squeues_expected_starts() {
    let c = Cluster::start("1", "");
    let running = c.sbatch(&["--gres=gpu:1", "-t", "10", "--wrap", "sleep 300"]);
    c.wait_state(running, &["RUNNING"], T);
    let waiting = c.sbatch(&["--gres=gpu:1", "-t", "5", "--wrap", "true"]);
    let held = c.sbatch(&["-H", "--wrap", "true"]);
    let later = c.sbatch(&["--gres=gpu:1", "--begin=now+3600", "--wrap", "true"]);
    let next = c.sbatch(&["--gres=gpu:1", "--wrap", "true"]);
    // Behind `next`, which has no time limit (counted as running a year): past the day an
    // expected start is shown within.
    let beyond = c.sbatch(&["--gres=gpu:1", "-t", "5", "--wrap", "true"]);
    wait_for("the pending reasons", T, || {
        let q = c.client().queue(10).unwrap();
        until(q.pending.iter().all(|j| j.reason.is_some()), || format!("{:?}", q.pending))
    });
    let q = c.client().queue(10).unwrap();
    assert_eq!(q.running.iter().map(|j| j.job_id).collect::<Vec<_>>(), [running]);
    let first = &q.running[0];
    assert_eq!((first.state.as_str(), first.gpus.as_slice(), first.gpu_count), ("RUNNING", &[0][..], 1));
    assert_eq!(first.user_name, fake_nvml::me());
    assert!(first.start_time.is_some() && first.reason.is_none(), "{first:?}");
    // Priority, then submit order; the held job, which the scheduler passes over, last.
    let order: Vec<u32> = q.pending.iter().map(|j| j.job_id).collect();
    assert_eq!(order, [waiting, later, next, beyond, held]);
    assert_eq!((q.running_total, q.pending_total), (1, 5));
    assert_eq!(q.pending[4].reason.as_deref(), Some("JobHeldUser"));
    assert_eq!(q.pending[1].reason.as_deref(), Some("BeginTime"));
    assert_eq!((q.pending[0].time_limit, q.pending[0].gpus.len(), q.pending[0].gpu_count), (Some(300), 0, 1));
    // The expected starts are squeue --start's.
    let ours: std::collections::BTreeMap<u32, Option<i64>> =
        q.pending.iter().map(|j| (j.job_id, j.start_time)).collect();
    let theirs = squeue_starts(&c);
    assert_eq!(theirs.len(), 5, "{theirs:?}");
    for (id, start) in theirs {
        assert_eq!(ours[&id], start, "job {id}");
    }
    assert!(ours[&later].is_some_and(|t| t > now() + 3000), "{ours:?}");
    // The backfill plan's: the first waits for the running job's time limit to end, the next
    // for the first's after it; the held one has none.
    let running_start = first.start_time.unwrap();
    assert_eq!(ours[&waiting], Some(running_start + 600), "{ours:?}");
    assert_eq!(ours[&next], Some(running_start + 900), "{ours:?}");
    assert_eq!(ours[&held], None, "{ours:?}");
    assert_eq!(ours[&beyond], None, "{ours:?}");
    let sched = c.run("squeue", &["--start", "-h", "-o", "%i|%Y"]);
    assert!(stdout(&sched).contains(&format!("{waiting}|node1")), "{}", stdout(&sched));
    // `pending` bounds the list, not the totals.
    let one = c.client().queue(1).unwrap();
    assert_eq!((one.pending.len(), one.pending_total, one.pending[0].job_id), (1, 5, waiting));
    assert!(one.generation >= q.generation);
    let (status, _): (u16, serde_json::Value) = c.client().get_with_status("/slurmlet/v1/queue?pending=x").unwrap();
    assert_eq!(status, 400);
    let _ = c.run("scancel", &[&running.to_string()]);
}

#[test]
fn the_queue_stays_cheap_with_ten_thousand_pending_jobs() {
    let c = Cluster::start("1", "[limits]\nmax_submitted_jobs_per_user = 20000");
    let running = c.sbatch(&["--gres=gpu:1", "--wrap", "sleep 300"]);
    c.wait_state(running, &["RUNNING"], T);
    // Ten arrays of a thousand tasks (sbatch takes up to Slurm's default MaxArraySize).
    let arrays: Vec<u32> = (0..10).map(|_| c.sbatch(&["--array=0-999", "--gres=gpu:1", "--wrap", "true"])).collect();
    let client = c.client();
    let first = client.queue(200).unwrap();
    assert_eq!((first.pending_total, first.pending.len(), first.running_total), (10_000, 200, 1));
    assert_eq!(first.pending[0].job, format!("{}_0", arrays[0]));
    assert_eq!(first.pending[199].job, format!("{}_199", arrays[0]));
    let calls = 20;
    let began = Instant::now();
    for _ in 0..calls {
        let q = client.queue(200).unwrap();
        assert_eq!(q.pending_total, 10_000);
    }
    let each = began.elapsed() / calls;
    eprintln!("GET /slurmlet/v1/queue?pending=200 with 10000 pending jobs: {each:?} per call (debug build)");
    assert!(each < Duration::from_millis(500), "{each:?} per call");
    let began = Instant::now();
    let all = client.queue(10_000).unwrap();
    eprintln!("GET /slurmlet/v1/queue?pending=10000 with 10000 pending jobs: {:?} (debug build)", began.elapsed());
    assert_eq!(all.pending.len(), 10_000);
    let ids: Vec<String> = arrays.iter().map(u32::to_string).chain([running.to_string()]).collect();
    let _ = c.run("scancel", &ids.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn usage_sums_the_gpu_seconds_of_the_jobs_that_ran() {
    let mut c = Cluster::start("2", "min_job_age = 1");
    let two = c.sbatch(&["--gres=gpu:2", "--wrap", "sleep 2"]);
    let cpu = c.sbatch(&["--wrap", "true"]);
    // MinJobAge of a second: the jobs' ends are read from the accounting records.
    for job in [two, cpu] {
        wait_for("the job's end", T, || {
            let out = c.run("sacct", &["-j", &job.to_string(), "-X", "-n", "-P", "-o", "State"]);
            until(stdout(&out).trim() == "COMPLETED", || stdout(&out))
        });
    }
    let out = c.run("sacct", &["-j", &two.to_string(), "-X", "-n", "-P", "-o", "ElapsedRaw"]);
    let held: u64 = stdout(&out).trim().parse().unwrap_or_else(|_| panic!("{}", stdout(&out)));
    assert!(held >= 2, "{held}");
    let me = fake_nvml::me();
    let mine = |c: &Cluster| {
        let reply = c.client().usage(1).unwrap();
        assert!(reply.until - reply.since == 86_400, "{} .. {}", reply.since, reply.until);
        reply.users.into_iter().find(|u| u.user_name == me).unwrap_or_else(|| panic!("no row of {me}"))
    };
    let row = mine(&c);
    assert_eq!((row.gpu_seconds, row.jobs), (2 * held, 2), "{row:?}");
    // Once the jobs have left the daemon's memory, the accounting records give the same.
    std::thread::sleep(Duration::from_secs(2));
    c.kill_daemon();
    c.start_daemon();
    let row = mine(&c);
    assert_eq!((row.gpu_seconds, row.jobs), (2 * held, 2), "{row:?}");
    // A running job counts up to now.
    let running = c.sbatch(&["--gres=gpu:1", "--wrap", "sleep 300"]);
    c.wait_state(running, &["RUNNING"], T);
    std::thread::sleep(Duration::from_secs(2));
    let row = mine(&c);
    assert!(row.jobs == 3 && row.gpu_seconds > 2 * held, "{row:?}");
    let _ = c.run("scancel", &[&running.to_string()]);
}

#[test]
fn the_change_counter_answers_a_submit_at_once_and_times_out_otherwise() {
    let mut c = Cluster::start("1", "");
    let client = c.client();
    let at = client.changes(0, 0).unwrap().generation;
    // Past `after` already: at once.
    if at > 0 {
        let began = Instant::now();
        assert_eq!(client.changes(at - 1, 30).unwrap().generation, at);
        assert!(began.elapsed() < Duration::from_secs(2), "{:?}", began.elapsed());
    }
    // Nothing happens: the wait runs out, the counter as it was.
    let began = Instant::now();
    assert_eq!(client.changes(at, 2).unwrap().generation, at);
    let waited = began.elapsed();
    assert!(waited >= Duration::from_millis(1900) && waited < Duration::from_secs(10), "{waited:?}");
    // A submit while a caller waits: answered promptly.
    let mut sbatch = c.cmd("sbatch");
    sbatch.args(["--wrap", "true"]);
    let submitter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        let out = sbatch.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        started
    });
    let began = Instant::now();
    let moved = client.changes(at, 30).unwrap().generation;
    let answered = Instant::now();
    let submitted = submitter.join().unwrap();
    assert!(moved > at, "{moved} after {at}");
    assert!(answered.duration_since(began) < Duration::from_secs(10), "{:?}", answered.duration_since(began));
    eprintln!(
        "GET /slurmlet/v1/changes answered {:?} after sbatch was started",
        answered.saturating_duration_since(submitted)
    );
    // `wait` is capped and a parameter that is no number refused.
    let (status, _): (u16, serde_json::Value) = client.get_with_status("/slurmlet/v1/changes?after=x").unwrap();
    assert_eq!(status, 400);

    // A daemon told to stop answers its waiting callers, rather than wait a minute for them.
    let waiter = {
        let client = c.client();
        std::thread::spawn(move || client.changes(u64::MAX - 1, 60).map(|r| r.generation))
    };
    std::thread::sleep(Duration::from_millis(500));
    let began = Instant::now();
    let pid = c.daemon.as_ref().expect("the daemon").id();
    assert!(std::process::Command::new("kill").arg(pid.to_string()).status().unwrap().success());
    let status = c.wait_daemon();
    assert!(status.success(), "{status:?}");
    assert!(began.elapsed() < Duration::from_secs(10), "stopped after {:?}", began.elapsed());
    assert!(waiter.join().unwrap().is_ok_and(|g| g >= moved), "the waiting caller was answered");
}
