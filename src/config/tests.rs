//! The configuration's resolution: defaults, ranges and refusals.

use super::*;

#[test]
fn unknown_keys_are_errors() {
    let err = toml::from_str::<ConfigFile>("gpuz = 4").unwrap_err().to_string();
    assert!(err.contains("unknown field `gpuz`"), "{err}");
}

#[test]
fn gpus_as_count_or_list() {
    let f: ConfigFile = toml::from_str("gpus = 4").unwrap();
    assert_eq!(f.gpus, Some(GpuConfig::Count(4)));
    let f: ConfigFile = toml::from_str("gpus = { type = \"tesla\", ids = [0, 2] }").unwrap();
    let c = Config::resolve(f, Path::new("x")).unwrap();
    let indices: Vec<u32> = c.gpus.iter().map(|g| g.index).collect();
    assert_eq!(indices, vec![0, 2]);
    assert_eq!(c.gres(), "gpu:tesla:2");
}

#[test]
fn no_gpus_key_leaves_detection_to_the_daemon() {
    let c = Config::resolve(toml::from_str("cpus = 2").unwrap(), Path::new("x")).unwrap();
    assert_eq!(c.gpu_setting, GpuSetting::Detect);
    assert!(c.gpus.is_empty(), "reading the configuration finds no GPU");
    let c = Config::resolve(toml::from_str("gpus = 0").unwrap(), Path::new("x")).unwrap();
    assert_eq!(c.gpu_setting, GpuSetting::Configured(Vec::new()));
}

#[test]
fn history_days_zero_or_absent_keeps_everything() {
    let days = |text: &str| Config::resolve(toml::from_str(text).unwrap(), Path::new("x")).unwrap().history_days;
    assert_eq!(days("gpus = 0\nhistory_days = 30"), Some(30));
    assert_eq!(days("gpus = 0\nhistory_days = 0"), None);
    assert_eq!(days("gpus = 0"), None);
}

#[test]
fn listen_is_an_address_and_port() {
    let f: ConfigFile = toml::from_str("listen = \"127.0.0.1:6820\"").unwrap();
    assert_eq!(f.listen, Some("127.0.0.1:6820".parse().unwrap()));
    assert!(toml::from_str::<ConfigFile>("listen = \"127.0.0.1\"").is_err(), "a port is needed");
}

/// Each numeric key, a value past its range, and the refusal it gets.
const OUT_OF_RANGE: &[(&str, &str)] = &[
    ("gpus = 4000000000", "gpus = 4000000000 is out of range: 0 to 1024"),
    ("gpus = -1", "gpus = -1 is out of range: 0 to 1024"),
    ("gpus = { ids = [0, 5000] }", "gpus.ids = 5000 is out of range: 0 to 1023"),
    ("cpus = 4000000000", "cpus = 4000000000 is out of range: 1 to 8192"),
    ("cpus = 0", "cpus = 0 is out of range: 1 to 8192"),
    ("memory = 0", "memory = 0 is out of range: 1 to 4294967296 MB"),
    ("memory = 4294967297", "memory = 4294967297 is out of range: 1 to 4294967296 MB"),
    ("def_mem_per_cpu = -1", "def_mem_per_cpu = -1 is out of range: 0 to 4294967296 MB"),
    (
        "gpu_sample_interval = 9223372036854775807",
        "gpu_sample_interval = 9223372036854775807 is out of range: 0 to 86400 seconds",
    ),
    (
        "job_acct_gather_frequency = 9223372036854775807",
        "job_acct_gather_frequency = 9223372036854775807 is out of range: 0 to 86400 seconds",
    ),
    ("job_acct_gather_frequency = -1", "job_acct_gather_frequency = -1 is out of range: 0 to 86400 seconds"),
    ("gpu_history_resolution = 0", "gpu_history_resolution = 0 is out of range: 1 to 86400 seconds"),
    ("gpu_history_days = 3651", "gpu_history_days = 3651 is out of range: 0 to 3650 days"),
    ("history_days = 36501", "history_days = 36501 is out of range: 0 to 36500 days"),
    ("foreign_gpu_memory = 1048577", "foreign_gpu_memory = 1048577 is out of range: 0 to 1048576 MiB"),
    ("kill_wait = 65534", "kill_wait = 65534 is out of range: 0 to 65533 seconds"),
    ("min_job_age = 31536001", "min_job_age = 31536001 is out of range: 0 to 31536000 seconds"),
    ("max_array_size = 4000002", "max_array_size = 4000002 is out of range: 0 to 4000001"),
    ("shards_per_gpu = 1025", "shards_per_gpu = 1025 is out of range: 0 to 1024"),
    (
        "[limits]\nmax_running_jobs_per_user = -1",
        "limits.max_running_jobs_per_user = -1 is out of range: 0 to 67108863 jobs",
    ),
    (
        "[limits]\nmax_submitted_jobs_per_user = 67108864",
        "limits.max_submitted_jobs_per_user = 67108864 is out of range: 0 to 67108863 jobs",
    ),
    ("[limits]\nmax_gpus_per_user = 1025", "limits.max_gpus_per_user = 1025 is out of range: 0 to 1024"),
    ("[cgroup]\nallowed_ram_space = -50", "cgroup.allowed_ram_space = -50 is out of range: 1 to 1000 percent"),
    ("[cgroup]\nallowed_ram_space = nan", "cgroup.allowed_ram_space = NaN is out of range: 1 to 1000 percent"),
    ("[cgroup]\nallowed_swap_space = 1000.5", "cgroup.allowed_swap_space = 1000.5 is out of range: 0 to 1000 percent"),
    ("[cgroup]\nallowed_swap_space = -1.0", "cgroup.allowed_swap_space = -1 is out of range: 0 to 1000 percent"),
    ("listen = \"127.0.0.1:0\"", "listen port = 0 is out of range: 1 to 65535"),
    (
        "[[partitions]]\nname = \"long\"\nmax_time = \"99999999999\"",
        "partition long: max_time = \"99999999999\" is out of range: 0 to 4294967294 minutes",
    ),
    (
        "[[partitions]]\nname = \"short\"\ndefault_time = \"9999999-0\"",
        "partition short: default_time = \"9999999-0\" is out of range: 0 to 4294967294 minutes",
    ),
];

/// Each numeric key at the ends of its range: every one is taken.
const AT_THE_ENDS: &[&str] = &[
    "gpus = 1024",
    "gpus = { ids = [0, 1023] }",
    "cpus = 1",
    "cpus = 8192",
    "memory = 4294967296\ndef_mem_per_cpu = 4294967296",
    "gpu_sample_interval = 86400\njob_acct_gather_frequency = 86400\ngpu_history_resolution = 86400",
    "gpu_sample_interval = 0\njob_acct_gather_frequency = 0\ngpu_history_resolution = 1",
    "gpu_history_days = 3650\nhistory_days = 36500\nforeign_gpu_memory = 1048576",
    "kill_wait = 65533\nmin_job_age = 31536000\nmax_array_size = 4000001\nshards_per_gpu = 1024",
    "kill_wait = 0\nmin_job_age = 0\nmax_array_size = 0\nshards_per_gpu = 0",
    "[limits]\nmax_running_jobs_per_user = 67108863\nmax_submitted_jobs_per_user = 0\nmax_gpus_per_user = 1024",
    "[cgroup]\nallowed_ram_space = 1.0\nallowed_swap_space = 1000",
    "listen = \"127.0.0.1:65535\"",
    "[[partitions]]\nname = \"long\"\nmax_time = \"4294967294\"\ndefault_time = \"UNLIMITED\"",
];

fn resolve(text: &str) -> Result<Config, ConfigError> {
    let file = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    Config::resolve(file, Path::new("slurmlet.toml"))
}

#[test]
fn every_numeric_key_is_refused_past_its_range_naming_key_value_and_range() {
    for (text, says) in OUT_OF_RANGE {
        match resolve(text) {
            Err(e @ ConfigError::OutOfRange { .. }) => assert_eq!(e.to_string(), format!("slurmlet.toml: {says}")),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn every_numeric_key_is_taken_at_the_ends_of_its_range() {
    for text in AT_THE_ENDS {
        if let Err(e) = resolve(text) {
            panic!("{text}: {e}");
        }
    }
    let c =
        resolve("kill_wait = 65533\njob_acct_gather_frequency = 86400\n[cgroup]\nallowed_ram_space = 101.5").unwrap();
    assert_eq!((c.kill_wait, c.job_acct_gather_frequency, c.cgroup.allowed_ram_space), (65533, 86400, 101.5));
}

#[test]
fn a_gpu_listed_twice_or_too_many_gpus_are_refused() {
    let e = resolve("gpus = { ids = [0, 1, 0] }").unwrap_err().to_string();
    assert_eq!(e, "slurmlet.toml: gpus: id 0 is listed twice: each GPU may be given to one job at a time");
    let many: Vec<String> = (0..1025).map(|i| i.to_string()).collect();
    let e = resolve(&format!("gpus = {{ ids = [{}] }}", many.join(", "))).unwrap_err().to_string();
    assert_eq!(e, "slurmlet.toml: the number of gpus.ids = 1025 is out of range: 0 to 1024");
}

#[test]
fn first_partition_is_default_when_none_is_marked() {
    let f: ConfigFile =
        toml::from_str("[[partitions]]\nname = \"a\"\n[[partitions]]\nname = \"b\"\nmax_time = \"30\"\n").unwrap();
    let c = Config::resolve(f, Path::new("x")).unwrap();
    assert!(c.partitions[0].default);
    assert_eq!(c.partitions[1].max_time, Some(30));
}
