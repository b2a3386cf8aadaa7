//! `--mail-type` notices through a real daemon: a stand-in mail program (a shell script that
//! records its arguments and variables, as `mail -s SUBJECT ADDRESS` would be called) and a
//! local webhook receiver record what is sent, with Slurm's subject lines; a hanging mail
//! program keeps nothing else waiting; on a shared machine the program runs as the job's
//! owner and must be one only root can change.

use crate::common;
use common::system::{is_root, Shared};
use common::{until, wait_for, Cluster, T};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Writes a stand-in mail program at `path` that appends `uid|-s|SUBJECT|ADDRESS|MAILTYPE`
/// to `log` (after `delay` seconds).
fn mail_program(path: &Path, log: &Path, delay: u32) {
    let script = format!(
        "#!/bin/sh\nsleep {delay}\nprintf '%s|%s|%s|%s|%s\\n' \"$(id -u)\" \"$1\" \"$2\" \"$3\" \"$SLURM_JOB_MAIL_TYPE\" >> {}\n",
        log.display()
    );
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The lines of `log` once it has `n` of them.
fn lines(log: &Path, n: usize) -> Vec<String> {
    wait_for(&format!("{n} notices in {}", log.display()), T, || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        until(lines.len() >= n, || text.clone()).map(|()| lines)
    })
}

/// The subjects among `lines` (`uid|-s|SUBJECT|ADDRESS|TYPE`) to `to` that start with `start`.
fn subjects<'a>(lines: &'a [String], start: &str) -> Vec<&'a str> {
    lines.iter().filter_map(|l| l.split('|').nth(2)).filter(|s| s.starts_with(start)).collect()
}

/// A cluster whose mail program is the stand-in (answering after `delay` seconds), with
/// `mail_domain = "lab.example.org"`; and the stand-in's log.
fn cluster_with_mail(delay: u32) -> (Cluster, PathBuf) {
    let mut c = Cluster::configure("0", "");
    let (program, log) = (c.dir.path().join("mail"), c.dir.path().join("mail.log"));
    mail_program(&program, &log, delay);
    let mut config = std::fs::OpenOptions::new().append(true).open(&c.config).unwrap();
    writeln!(config, "mail_program = \"{}\"\nmail_domain = \"lab.example.org\"", program.display()).unwrap();
    c.start_daemon();
    (c, log)
}

#[test]
fn begin_end_and_fail_are_mailed_with_slurms_subjects_and_addresses() {
    let (c, log) = cluster_with_mail(0);
    let me = slurmlet::identity::user_name(slurmlet::identity::uid());
    let ok = c.sbatch(&["--mail-type=BEGIN,END", "-J", "train", "--wrap", "true"]);
    let bad = c.sbatch(&["--mail-type=FAIL", "--mail-user=pi@lab.example.org", "-J", "broken", "--wrap", "exit 3"]);
    let quiet = c.sbatch(&["--mail-type=FAIL", "-J", "fine", "--wrap", "true"]);
    for id in [ok, bad, quiet] {
        c.wait_state(id, &["COMPLETED", "FAILED"], T);
    }
    let got = lines(&log, 3);
    let began = format!("-s|Slurm Job_id={ok} Name=train Began, Queued time 00:00:0");
    let ended = format!("Slurm Job_id={ok} Name=train Ended, Run time 00:00:0");
    let line =
        |start: &str| got.iter().find(|l| l.contains(start)).cloned().unwrap_or_else(|| panic!("{start} in {got:#?}"));
    assert!(line(&began).ends_with(&format!("|{me}@lab.example.org|Began")), "{got:#?}");
    assert!(line(&ended).ends_with(&format!(", COMPLETED, ExitCode 0|{me}@lab.example.org|Ended")), "{got:#?}");
    let failed = line(&format!("Slurm Job_id={bad} Name=broken Failed, Run time 00:00:0"));
    assert!(failed.ends_with(", FAILED, ExitCode 3|pi@lab.example.org|Failed"), "{failed}");
    // A job that asked for FAIL only and completed is not mailed.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let all = std::fs::read_to_string(&log).unwrap();
    assert!(!all.contains(&format!("Job_id={quiet} ")), "{all}");
    assert_eq!(all.lines().count(), 3, "{all}");
}

#[test]
fn an_array_tells_of_itself_once_unless_each_task_asks() {
    let (c, log) = cluster_with_mail(0);
    let whole =
        c.sbatch(&["--array=0-2", "--mail-type=BEGIN,END", "-J", "sweep", "--wrap", "exit $SLURM_ARRAY_TASK_ID"]);
    let each = c.sbatch(&["--array=0-1", "--mail-type=END,ARRAY_TASKS", "-J", "each", "--wrap", "true"]);
    let got = lines(&log, 4);
    assert_eq!(
        subjects(&got, &format!("Slurm Array Summary Job_id={whole}_* ({whole}) Name=sweep Began")).len(),
        1,
        "{got:#?}"
    );
    // Notices are sent a few at a time, so one of a job that began and ended at once may
    // come before the other.
    let mut summaries = subjects(&got, "Slurm Array Summary");
    summaries.sort();
    assert_eq!(
        summaries,
        [
            format!("Slurm Array Summary Job_id={whole}_* ({whole}) Name=sweep Began"),
            format!("Slurm Array Summary Job_id={whole}_* ({whole}) Name=sweep Ended, Mixed, ExitCode [0-2]"),
        ],
        "{got:#?}"
    );
    assert_eq!(subjects(&got, &format!("Slurm Array Task Job_id={each}_")).len(), 2, "{got:#?}");
    // The tasks end in any order: each has its own notice.
    for i in 0..2u32 {
        let id = each + i;
        let start = format!("Slurm Array Task Job_id={each}_{i} ({id}) Name=each Ended, Run time ");
        let mine = subjects(&got, &start);
        assert!(mine.len() == 1 && mine[0].ends_with(", COMPLETED, ExitCode 0"), "{got:#?}");
    }
}

#[test]
fn half_the_time_limit_is_told_and_a_cancel_ends_the_job() {
    let (c, log) = cluster_with_mail(0);
    let id = c.sbatch(&["--mail-type=TIME_LIMIT_50,END", "-t", "1", "-J", "long", "--wrap", "sleep 300"]);
    let got = lines(&log, 1);
    let half = subjects(&got, &format!("Slurm Job_id={id} Name=long Reached 50% of time limit, Run time 00:00:"));
    assert_eq!(half.len(), 1, "{got:#?}");
    assert!(c.run("scancel", &[&id.to_string()]).status.success());
    let got = lines(&log, 2);
    let end = subjects(&got, &format!("Slurm Job_id={id} Name=long Ended, Run time 00:00:"));
    assert!(end.len() == 1 && end[0].ends_with(", CANCELLED"), "{got:#?}");
}

#[test]
fn a_hanging_mail_program_keeps_no_job_waiting() {
    let (c, log) = cluster_with_mail(20);
    let mailed = c.sbatch(&["--mail-type=END", "--wrap", "true"]);
    c.wait_state(mailed, &["COMPLETED"], T);
    // The program sleeps; jobs go on starting and ending, squeue answers.
    let started = std::time::Instant::now();
    let next = c.sbatch(&["--wrap", "true"]);
    c.wait_state(next, &["COMPLETED"], T);
    assert!(c.run("squeue", &[]).status.success());
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "{:?}", started.elapsed());
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "", "the program is still asleep");
}

#[test]
fn without_a_mail_program_the_option_says_so_and_a_bad_address_is_refused() {
    let c = Cluster::start("0", "");
    let o = c.run("sbatch", &["--mail-type=END", "--wrap", "true"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--mail-type has no effect here: no mail is sent from this cluster"), "{err}");
    // Slurm drops a word it does not know without a word: said here.
    let o = c.run("sbatch", &["--mail-type=END,FINISH", "--wrap", "true"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--mail-type: 'FINISH' is no mail type; it is ignored"));
    let o = c.run("sbatch", &["--mail-type=SOON", "--wrap", "true"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("Invalid --mail-type specification"));
    // An address the mail program would read as an option never reaches it.
    let o = c.run("sbatch", &["--mail-type=END", "--mail-user=-oQ/tmp/x", "--wrap", "true"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--mail-user=-oQ/tmp/x: an address may not begin with '-'"), "{err}");
}

/// A webhook receiver on a local port: records each request's body, answers 503 to the
/// first `refuse` requests and 200 after.
fn receiver(refuse: usize) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook?token=secret", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let mut seen = record.lock().unwrap();
            seen.push(String::from_utf8_lossy(&body).into_owned());
            let status = if seen.len() <= refuse { "503 Service Unavailable" } else { "200 OK" };
            let _ = reader.get_mut().write_all(format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n").as_bytes());
        }
    });
    (url, seen)
}

#[test]
fn a_webhook_gets_the_subject_as_json_and_a_refusal_is_tried_again() {
    let (url, seen) = receiver(1);
    let c = Cluster::start("0", &format!("webhook = \"{url}\"\n"));
    let id = c.sbatch(&["--mail-type=END", "-J", "hooked", "--wrap", "exit 0"]);
    c.wait_state(id, &["COMPLETED"], T);
    let bodies = wait_for("two posts (the first refused)", T, || {
        let seen = seen.lock().unwrap().clone();
        until(seen.len() >= 2, || format!("{seen:?}\n{}", c.log())).map(|()| seen)
    });
    assert_eq!(bodies[0], bodies[1], "the same notice, posted again");
    let body: serde_json::Value = serde_json::from_str(&bodies[1]).unwrap();
    let text = body["text"].as_str().unwrap();
    assert!(text.starts_with(&format!("Slurm Job_id={id} Name=hooked Ended, Run time 00:00:0")), "{body}");
    assert!(text.ends_with(", COMPLETED, ExitCode 0"), "{body}");
    assert_eq!((body["event"].as_str(), body["job_id"].as_u64()), (Some("END"), Some(id as u64)));
    assert_eq!(body["job_state"], "COMPLETED");
    // No mail program is configured: the webhook alone is enough for the option to work.
    assert!(!c.log().contains("no mail is sent"));
}

#[test]
fn on_a_shared_machine_the_mail_program_runs_as_the_jobs_owner_and_must_be_roots() {
    if !is_root("on_a_shared_machine_the_mail_program_runs_as_the_jobs_owner_and_must_be_roots") {
        return;
    }
    // A directory the owner may write the log into, a program only root may change.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let (program, log) = (dir.path().join("mail"), logs.join("mail.log"));
    mail_program(&program, &log, 0);
    let mut shared = Shared::start(&format!("mail_program = \"{}\"\n", program.display()));
    let alice = shared.user("mail");
    let id = shared.sbatch_as(&alice, &["--mail-type=END", "--wrap", "true"]);
    shared.wait_state(id, "COMPLETED");
    let got = lines(&log, 1);
    assert_eq!(got[0].split('|').next(), Some(alice.uid.to_string().as_str()), "{got:?}");
    assert!(got[0].ends_with(&format!("|{}|Ended", alice.name)), "{got:?}");
    // A program its owner's group or others may change is refused at the start.
    shared.stop_daemon();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = std::process::Command::new(shared.bin.join("slurmletd"))
        .args(["--system", "--config"])
        .arg(&shared.config)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("mail_program: {} may be written by others (mode 0777)", program.display())),
        "{err}"
    );
}
