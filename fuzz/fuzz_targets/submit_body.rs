#![no_main]
//! A submit body, as the daemon reads it: the unknown-field scan and the typed parse
//! (`parse_submit`), then the checks that turn it into a job (`submit::build`), as a batch
//! job and as an interactive one, then the job as the daemon reports it running (REST and
//! squeue's rows). Never a panic; a job that is built fits the node, holds no control
//! character in the fields the commands print, and begins by the end of the year 9999.
use libfuzzer_sys::fuzz_target;
use slurmlet::api::types::JobQuery;
use slurmlet::config::{Config, ConfigFile, GpuConfig, PartitionConfig};
use slurmlet::daemon::model::caller::Caller;
use slurmlet::daemon::http::request::parse_submit;
use slurmlet::daemon::model::job::JobState;
use slurmlet::daemon::scheduling::submit::{build, MAX_TIME};
use slurmlet::daemon::views::{info, listing};
use std::sync::OnceLock;

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let part = |name: &str, default: bool, max: Option<&str>| PartitionConfig {
            name: name.into(),
            default,
            max_time: max.map(Into::into),
            default_time: None,
        };
        let file = ConfigFile {
            cluster_name: Some("fuzz".into()),
            node_name: Some("node1".into()),
            cpus: Some(8),
            memory: Some(16000),
            gpus: Some(GpuConfig::Count(4)),
            partitions: Some(vec![part("gpu", true, None), part("short", false, Some("30:00"))]),
            state_dir: Some("/nonexistent/state".into()),
            socket: Some("/nonexistent/sock".into()),
            ..Default::default()
        };
        Config::resolve(file, std::path::Path::new("fuzz.toml")).expect("a valid configuration")
    })
}

const NOW: u64 = 1_800_000_000;

/// Every letter and the other squeue codes.
const CODES: &str = "aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ%";

fuzz_target!(|data: &[u8]| {
    let Ok(req) = parse_submit(data) else { return };
    let desc = req.job.unwrap_or_default();
    let config = config();
    for interactive in [false, true] {
        let Ok(new) = build(&desc, req.script.as_deref(), Caller { uid: 1000, gid: 1000 }, config, NOW, interactive)
        else {
            continue;
        };
        let mut job = new.job;
        assert!(job.req.cpus >= 1 && job.req.cpus <= config.cpus, "cpus {}", job.req.cpus);
        assert!(job.req.mem_mb <= config.memory, "memory {}", job.req.mem_mb);
        assert!(job.req.gpus as usize <= config.gpu_ids.len(), "gpus {}", job.req.gpus);
        assert!(job.begin_time <= MAX_TIME, "begin time {}", job.begin_time);
        for text in [
            &job.name,
            &job.comment,
            &job.wckey,
            &job.account,
            &job.qos,
            &job.stdout,
            &job.stderr,
            &job.stdin,
            &job.cwd,
        ] {
            assert!(!text.as_str().chars().any(char::is_control), "control character in {:?}", text.as_str());
        }
        // As the daemon reports it once it runs: every time and every squeue code.
        job.id = 7;
        job.start_time = job.begin_time.max(NOW);
        job.state = Some(JobState::Running);
        serde_json::to_vec(&info::job_info(&job, config)).expect("a job serializes");
        let q = JobQuery { codes: CODES.into(), ..Default::default() };
        serde_json::from_slice::<serde_json::Value>(&listing::query(std::iter::once(&job), config, &q, NOW))
            .expect("the rows are JSON");
    }
});
