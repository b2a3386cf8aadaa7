//! sreport against a real Slurm 26.05: `scripts/real-slurm/sreport.sh` wrote known finished
//! jobs into a real cluster's job table, let slurmdbd roll them up, and captured what the
//! cluster's own sreport printed (`tests/fixtures/real-slurm-sreport/`, see its INDEX.md).
//! Here the same jobs really run on a slurmlet daemon (cluster `ci26`, 2 CPUs, 4 GPUs);
//! with the daemon stopped, each job's record is given the times, owner, account, CPUs and
//! GPUs of its twin; the daemon is started again on that store, and slurmlet's sreport
//! must print every capture byte for byte (TZ=UTC, as the captures were made).

use crate::common::*;
use std::path::Path;
use std::time::Duration;

/// The jobs of sreport.sh's JOBS table: id, uid (root, daemon, bin: the same names and
/// GECOS on the chroot and here), account, CPUs, GPUs, start, end (UTC).
const JOBS: &[(u32, u32, &str, u32, u32, &str, &str)] = &[
    (1, 0, "research", 2, 1, "2026-11-26T01:00:00", "2026-11-26T03:30:00"),
    (2, 1, "physics", 1, 2, "2026-11-26T03:30:00", "2026-11-26T05:45:30"),
    (3, 2, "physics", 1, 0, "2026-11-26T04:10:00", "2026-11-26T04:30:00"),
    (4, 1, "chem", 2, 4, "2026-11-26T22:30:00", "2026-11-27T01:00:00"),
    (5, 2, "chem", 1, 1, "2026-11-25T23:00:00", "2026-11-26T00:40:00"),
    (6, 0, "research", 1, 0, "2026-11-27T05:00:00", "2026-11-27T06:10:00"),
    (7, 2, "physics", 2, 3, "2026-11-26T12:00:00", "2026-11-26T12:00:40"),
];

/// UNIX time of `YYYY-MM-DDTHH:MM:SS` in UTC.
fn utc(text: &str) -> u64 {
    let n = |a: usize, b: usize| text[a..b].parse::<i64>().unwrap();
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    (days * 86400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19)) as u64
}

/// Rewrites the stored record of each job as its twin's.
fn give_the_jobs_their_twins_times(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    for &(id, uid, account, cpus, gpus, start, end) in JOBS {
        let text: String = conn.query_row("SELECT record FROM jobs WHERE id = ?1", [id], |r| r.get(0)).unwrap();
        let mut rec: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (s, e) = (utc(start), utc(end));
        for (k, v) in [("submit_time", s), ("begin_time", s), ("start_time", s), ("end_time", e)] {
            rec[k] = v.into();
        }
        rec["uid"] = uid.into();
        rec["gid"] = uid.into();
        rec["account"] = account.into();
        rec["req"]["cpus"] = cpus.into();
        rec["req"]["gpus"] = gpus.into();
        rec["gpu_ids"] = (0..gpus).collect::<Vec<u32>>().into();
        conn.execute(
            "UPDATE jobs SET record = ?1, end_time = ?2 WHERE id = ?3",
            rusqlite::params![rec.to_string(), e, id],
        )
        .unwrap();
    }
}

/// A daemon of cluster ci26 whose store holds the seven jobs with their twins' records.
fn cluster_with_the_jobs() -> Cluster {
    let mut c = Cluster::configure("4", "cpus = 2");
    let config = std::fs::read_to_string(&c.config).unwrap().replace("\"testcluster\"", "\"ci26\"");
    std::fs::write(&c.config, config).unwrap();
    c.start_daemon();
    for i in 1..=JOBS.len() {
        let id = c.sbatch(&["-J", &format!("job{i}"), "--wrap", "true"]);
        c.wait_state(id, &["COMPLETED"], Duration::from_secs(30));
    }
    // The store is written off the scheduler's path: wait until it holds every job's end.
    let db = c.dir.path().join("state/slurmlet.db");
    wait_for("the jobs' ends in the store", Duration::from_secs(30), || {
        let conn = rusqlite::Connection::open(&db).map_err(|e| e.to_string())?;
        let n: u32 = conn
            .query_row("SELECT count(*) FROM jobs WHERE state = 'COMPLETED' AND end_time > 0", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        until(n as usize == JOBS.len(), || format!("{n} stored"))
    });
    c.kill_daemon();
    give_the_jobs_their_twins_times(&db);
    c.start_daemon();
    c
}

/// The captures slurmlet reproduces: (file, arguments).
fn captures() -> Vec<(String, Vec<String>)> {
    let index = std::fs::read_to_string(fixtures().join("INDEX.md")).unwrap();
    index
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?.to_string();
            let cmd = cells.get(2)?.trim_matches('`');
            let args: Vec<String> = cmd.split(' ').skip(1).map(String::from).collect();
            Some((file, args))
        })
        .collect()
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-slurm-sreport")
}

#[test]
fn sreport_prints_what_the_real_slurm_printed_for_the_same_jobs() {
    let c = cluster_with_the_jobs();
    let mut checked = 0;
    for (file, args) in captures() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = c.cmd("sreport").args(&args).env("TZ", "UTC").output().unwrap();
        let want = std::fs::read_to_string(fixtures().join(&file)).unwrap();
        assert_eq!(stdout(&o), want, "sreport {args:?} ({file}); stderr: {}", stderr(&o));
        let err = fixtures().join(file.replace(".txt", ".stderr.txt"));
        let want_err = std::fs::read_to_string(&err).unwrap_or_default();
        assert_eq!(stderr(&o), want_err, "stderr of sreport {args:?} ({file})");
        checked += 1;
    }
    assert!(checked >= 36, "only {checked} captures compared");
}

/// The job report's conditions the captures do not cover, on the same jobs: what Slurm's
/// job report does with them (its source, src/sreport/job_reports.c), worked out by hand
/// from the jobs' times (a day: job 1 18000 CPU-seconds, 2 8130, 3 1200, 4 10800, 5 2400,
/// 7 80; job 6 ran the next day).
#[test]
fn the_job_report_takes_slurms_conditions() {
    let c = cluster_with_the_jobs();
    let day = ["job", "sizesbyaccount", "start=2026-11-26T00:00:00", "end=2026-11-27T00:00:00", "-n", "-P"];
    let report = |more: &[&str]| {
        let args: Vec<&str> = day.iter().chain(more).copied().collect();
        let o = c.cmd("sreport").args(&args).env("TZ", "UTC").output().unwrap();
        assert_eq!(stderr(&o), "", "sreport {args:?}");
        assert_eq!(o.status.code(), Some(0), "sreport {args:?}");
        stdout(&o)
    };
    // Each account the jobs were charged to, against the cluster's 40610 CPU-seconds.
    assert_eq!(
        report(&["FlatView"]),
        "ci26|chem|220|0|0|0|0|220|32.50%\nci26|physics|157|0|0|0|0|157|23.17%\nci26|research|300|0|0|0|0|300|44.32%\n"
    );
    // Named accounts: only their jobs count, the cluster's total too.
    assert_eq!(
        report(&["accounts=Physics,chem"]),
        "ci26|chem|220|0|0|0|0|220|58.38%\nci26|physics|157|0|0|0|0|157|41.62%\n"
    );
    // root's sub-accounts.
    assert_eq!(report(&["AcctAsParent", "accounts=root"]), report(&["FlatView"]));
    assert_eq!(report(&["PrintJobCount"]), "ci26|root|6|0|0|0|0|6|100.00%\n");
    // bin's jobs 3, 5 and 7: 3680 CPU-seconds.
    assert_eq!(report(&["users=bin"]), "ci26|root|61|0|0|0|0|61|100.00%\n");
    // A column per CPU count: 1 CPU (jobs 2, 3, 5) and 2 CPUs (jobs 1, 4, 7).
    assert_eq!(report(&["grouping=individual", "format=a"]), "root|196|481|677|100.00%\n");
    assert_eq!(report(&["grouping=2", "format=a", "-t", "percent"]), "root|28.88%|71.12%|4061000.00%|100.00%\n");
    assert_eq!(report(&["cluster=other"]), "");
}

#[test]
fn the_job_report_takes_a_single_tres() {
    let c = Cluster::start("0", "");
    let o = c.run("sreport", &["job", "sizesbyaccount", "--tres=cpu,gres/gpu"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        " Job report only supports a single --tres type.\n Generate a separate report for each TRES type.\n"
    );
    assert_eq!(stdout(&o), "");
}

#[test]
fn reports_and_options_slurmlet_lacks_are_refused_by_name() {
    let c = Cluster::start("0", "");
    for (args, word) in [
        (&["job", "SizesByWcKey"][..], "SizesByWcKey"),
        (&["job", "sizes", "associations=3"][..], "associations=3"),
        (&["cluster", "AccountUtilizationByQOS"][..], "AccountUtilizationByQOS"),
        (&["cluster", "utilization", "--tres=billing"][..], "billing"),
        (&["cluster", "AccountUtilizationByUser", "tree"][..], "tree"),
        (&["-a", "cluster", "utilization"][..], "-a"),
    ] {
        let o = c.run("sreport", args);
        assert_eq!(o.status.code(), Some(1), "sreport {args:?}");
        assert!(stderr(&o).contains(word), "sreport {args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "sreport {args:?}: {}", stdout(&o));
    }
}
