#![no_main]
//! The body of a queue listing (`POST /slurmlet/v1/jobs/query`), read and answered over a
//! few jobs: never a panic, and the reply is always valid JSON with one cell per code.
use libfuzzer_sys::fuzz_target;
use slurmlet::api::types::{JobDescMsg, JobRows};
use slurmlet::config::{Config, ConfigFile, GpuConfig};
use slurmlet::daemon::model::caller::Caller;
use slurmlet::daemon::http::request::parse_job_query;
use slurmlet::daemon::model::job::{Job, JobState};
use slurmlet::daemon::scheduling::submit::build;
use slurmlet::daemon::views::listing;
use std::sync::OnceLock;

fn setup() -> &'static (Config, Vec<Job>) {
    static SETUP: OnceLock<(Config, Vec<Job>)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let file = ConfigFile {
            node_name: Some("node1".into()),
            cpus: Some(8),
            memory: Some(16000),
            gpus: Some(GpuConfig::Count(4)),
            state_dir: Some("/nonexistent/state".into()),
            socket: Some("/nonexistent/sock".into()),
            ..Default::default()
        };
        let config = Config::resolve(file, std::path::Path::new("fuzz.toml")).expect("a valid configuration");
        let mut jobs = Vec::new();
        for (id, state, name) in
            [(1, JobState::Running, "train"), (2, JobState::Pending, "eval job"), (3, JobState::Completed, "x\"y\\z")]
        {
            let desc = JobDescMsg {
                name: Some(name.into()),
                current_working_directory: Some("/".into()),
                environment: Some(vec!["PATH=/bin".into()]),
                script: Some("#!/bin/sh\ntrue\n".into()),
                tres_per_job: Some("gres/gpu:1".into()),
                ..Default::default()
            };
            let mut job = build(&desc, None, Caller { uid: 1000, gid: 1000 }, &config, 1_800_000_000, false)
                .expect("a valid job")
                .job;
            job.id = id;
            job.state = Some(state);
            jobs.push(job);
        }
        (config, jobs)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(q) = parse_job_query(data) else { return };
    let (config, jobs) = setup();
    let now = 1_800_000_100;
    if q.json {
        let (listed, found) = listing::select_json(jobs.iter(), config, &q);
        let reply = listing::json_reply(&listed, config, found, now);
        serde_json::from_slice::<serde_json::Value>(&reply).expect("the --json reply is JSON");
        return;
    }
    let reply = listing::query(jobs.iter(), config, &q, now);
    let rows: JobRows = serde_json::from_slice(&reply).expect("the reply is JSON");
    let codes = q.codes.chars().count();
    assert!(rows.rows.iter().all(|r| r.len() == codes), "a row without one cell per code");
});
