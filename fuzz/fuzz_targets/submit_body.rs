#![no_main]
//! A submit body, as the daemon reads it: the unknown-field scan and the typed parse
//! (`parse_submit`), then the checks that turn it into a job (`submit::build`), as a batch
//! job and as an interactive one. Never a panic; a job that is built fits the node and holds
//! no control character in the fields the commands print.
use libfuzzer_sys::fuzz_target;
use slurmlet::config::{Config, ConfigFile, GpuConfig, PartitionConfig};
use slurmlet::daemon::request::parse_submit;
use slurmlet::daemon::submit::{build, Caller};
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

fuzz_target!(|data: &[u8]| {
    let Ok(req) = parse_submit(data) else { return };
    let desc = req.job.unwrap_or_default();
    let config = config();
    for interactive in [false, true] {
        let Ok(new) =
            build(&desc, req.script.as_deref(), Caller { uid: 1000, gid: 1000 }, config, 1_800_000_000, interactive)
        else {
            continue;
        };
        let job = &new.job;
        assert!(job.req.cpus >= 1 && job.req.cpus <= config.cpus, "cpus {}", job.req.cpus);
        assert!(job.req.mem_mb <= config.memory, "memory {}", job.req.mem_mb);
        assert!(job.req.gpus as usize <= config.gpu_ids.len(), "gpus {}", job.req.gpus);
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
    }
});
