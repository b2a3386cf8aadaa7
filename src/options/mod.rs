//! The one job-option model shared by the command line, `#SBATCH` directives, `SBATCH_*`
//! input variables and the REST job description.
//!
//! Directives and input variables are turned into option tokens and fed through the same clap
//! parser as the command line, in the order directive < environment < command line; clap's
//! "last one wins" gives Slurm's precedence.

pub mod array;
pub mod begin;
pub mod dependency;
pub mod directive;
pub mod error;
pub mod export;
pub mod gres;
pub mod hostlist;
pub mod memory;
pub mod pattern;
pub mod signal;
pub mod time;

pub use error::OptionError;
pub use export::{job_environment, parse_export, ExportMode};

use crate::api::noval::NoVal;
use crate::api::types::JobDescMsg;
use clap::Args;

/// Resource and placement options common to sbatch (and later srun and salloc).
#[derive(Debug, Clone, Default, Args, PartialEq)]
pub struct JobOptions {
    /// Name of the job
    #[arg(short = 'J', long = "job-name", value_name = "jobname")]
    pub job_name: Option<String>,
    /// File for batch script's standard output
    #[arg(short = 'o', long, value_name = "out")]
    pub output: Option<String>,
    /// File for batch script's standard error
    #[arg(short = 'e', long, value_name = "err")]
    pub error: Option<String>,
    /// File for batch script's standard input
    #[arg(short = 'i', long, value_name = "in")]
    pub input: Option<String>,
    /// Partition requested
    #[arg(short = 'p', long, value_name = "partition")]
    pub partition: Option<String>,
    /// Time limit
    #[arg(short = 't', long, value_name = "minutes", allow_hyphen_values = true)]
    pub time: Option<String>,
    /// Number of nodes on which to run (N = min[-max])
    #[arg(short = 'N', long, value_name = "N")]
    pub nodes: Option<String>,
    /// Number of tasks to run
    #[arg(short = 'n', long, value_name = "ntasks")]
    pub ntasks: Option<u32>,
    /// Number of cpus required per task
    #[arg(short = 'c', long = "cpus-per-task", value_name = "ncpus")]
    pub cpus_per_task: Option<u32>,
    /// Number of tasks to invoke on each node
    #[arg(long = "ntasks-per-node", alias = "tasks-per-node", value_name = "n")]
    pub ntasks_per_node: Option<u32>,
    /// Change working directory
    #[arg(short = 'D', long, value_name = "path")]
    pub chdir: Option<String>,
    /// Request a specific list of hosts
    #[arg(short = 'w', long, value_name = "hosts")]
    pub nodelist: Option<String>,
    /// Exclude a specific list of hosts
    #[arg(short = 'x', long, value_name = "hosts")]
    pub exclude: Option<String>,
    /// Minimum amount of real memory
    #[arg(long, value_name = "MB")]
    pub mem: Option<String>,
    /// Maximum amount of real memory per allocated cpu required by the job
    #[arg(long = "mem-per-cpu", value_name = "MB")]
    pub mem_per_cpu: Option<String>,
    /// Required generic resources
    #[arg(long, value_name = "list")]
    pub gres: Option<String>,
    /// Number of GPUs required by the job
    #[arg(short = 'G', long, value_name = "n")]
    pub gpus: Option<String>,
    /// Number of GPUs required per allocated node
    #[arg(long = "gpus-per-node", value_name = "n")]
    pub gpus_per_node: Option<String>,
    /// Arbitrary comment
    #[arg(long, value_name = "name")]
    pub comment: Option<String>,
    /// Specify environment variables to export
    #[arg(long, value_name = "[ALL|NONE|]VARS")]
    pub export: Option<String>,
    /// Submit job in held state
    #[arg(short = 'H', long)]
    pub hold: bool,
    /// Open the output and error files using append or truncate mode
    #[arg(long = "open-mode", value_name = "append|truncate")]
    pub open_mode: Option<String>,
    /// Send signal when time limit within time seconds
    #[arg(long, value_name = "[R:][B:]num[@time]")]
    pub signal: Option<String>,
    /// wckey to run job under
    #[arg(long, value_name = "wckey")]
    pub wckey: Option<String>,
    /// Defer job until HH:MM MM/DD/YY
    #[arg(short = 'b', long, value_name = "time")]
    pub begin: Option<String>,
    /// Charge job to specified account
    #[arg(short = 'A', long, value_name = "name")]
    pub account: Option<String>,
    /// Quality of service
    #[arg(short = 'q', long, value_name = "qos")]
    pub qos: Option<String>,
    /// Specify a list of constraints
    #[arg(short = 'C', long, value_name = "list")]
    pub constraint: Option<String>,
    /// Notify on state change: BEGIN, END, FAIL or ALL
    #[arg(long = "mail-type", value_name = "type")]
    pub mail_type: Option<String>,
    /// Who to send email notification for job state changes
    #[arg(long = "mail-user", value_name = "user")]
    pub mail_user: Option<String>,
    /// Allocate nodes in exclusive mode when cpu consumable resource is enabled
    #[arg(long, value_name = "user|mcs", num_args = 0..=1, default_missing_value = "")]
    pub exclusive: Option<String>,
    /// If a job is requeued, it may be requeued
    #[arg(long)]
    pub requeue: bool,
    /// If a job is requeued, do not requeue it
    #[arg(long = "no-requeue")]
    pub no_requeue: bool,
    /// Decrease scheduling priority by value
    #[arg(long, value_name = "value", num_args = 0..=1, default_missing_value = "100", allow_hyphen_values = true)]
    pub nice: Option<String>,
    /// Defer job start until condition on jobid is satisfied
    #[arg(short = 'd', long, value_name = "type:jobid[:time]")]
    pub dependency: Option<String>,
    /// Job array index values
    #[arg(short = 'a', long, value_name = "indexes")]
    pub array: Option<String>,
}

/// A one-line notice about an option that has no effect here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionWarning(pub String);

/// The `SBATCH_*` input variables and the option each one stands for.
/// Flags (no value) are marked `true`.
pub const SBATCH_INPUT_VARS: &[(&str, &str, bool)] = &[
    ("SBATCH_ACCOUNT", "--account", false),
    ("SBATCH_ARRAY_INX", "--array", false),
    ("SBATCH_CONSTRAINT", "--constraint", false),
    ("SBATCH_ERROR", "--error", false),
    ("SBATCH_EXCLUSIVE", "--exclusive", true),
    ("SBATCH_EXPORT", "--export", false),
    ("SBATCH_GPUS", "--gpus", false),
    ("SBATCH_GPUS_PER_NODE", "--gpus-per-node", false),
    ("SBATCH_GRES", "--gres", false),
    ("SBATCH_HOLD", "--hold", true),
    ("SBATCH_INPUT", "--input", false),
    ("SBATCH_JOB_NAME", "--job-name", false),
    ("SBATCH_MEM_PER_CPU", "--mem-per-cpu", false),
    ("SBATCH_MEM_PER_NODE", "--mem", false),
    ("SBATCH_NO_REQUEUE", "--no-requeue", true),
    ("SBATCH_OPEN_MODE", "--open-mode", false),
    ("SBATCH_OUTPUT", "--output", false),
    ("SBATCH_PARTITION", "--partition", false),
    ("SBATCH_QOS", "--qos", false),
    ("SBATCH_REQUEUE", "--requeue", true),
    ("SBATCH_SIGNAL", "--signal", false),
    ("SBATCH_TIMELIMIT", "--time", false),
    ("SBATCH_WCKEY", "--wckey", false),
];

/// Turns the `SBATCH_*` input variables present in `env` into option tokens.
pub fn env_tokens(env: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (var, opt, flag) in SBATCH_INPUT_VARS {
        if let Some((_, v)) = env.iter().find(|(k, _)| k == var) {
            if *flag {
                out.push(opt.to_string());
            } else {
                out.push(format!("{opt}={v}"));
            }
        }
    }
    out
}

impl JobOptions {
    /// Checks every value's syntax, so that a bad value is reported where it was written.
    pub fn validate(&self) -> Result<Vec<OptionWarning>, OptionError> {
        let mut warnings = Vec::new();
        if let Some(t) = &self.time {
            time::parse_time_limit(t)?;
        }
        if let Some(m) = &self.mem {
            memory::parse_mem_mb(m, "mem")?;
        }
        if let Some(m) = &self.mem_per_cpu {
            memory::parse_mem_mb(m, "mem-per-cpu")?;
        }
        if let Some(g) = &self.gres {
            gres::parse_gres(g)?;
        }
        if let Some(g) = &self.gpus {
            gres::parse_gpus(g, "gpus")?;
        }
        if let Some(g) = &self.gpus_per_node {
            gres::parse_gpus(g, "gpus-per-node")?;
        }
        if let Some(s) = &self.signal {
            signal::parse_signal_spec(s)?;
        }
        if let Some(n) = &self.nodes {
            parse_node_range(n)?;
        }
        if let Some(m) = &self.open_mode {
            if !matches!(m.as_str(), "append" | "a" | "truncate" | "t") {
                return Err(OptionError::InvalidSpec { option: "open-mode", value: m.clone() });
            }
        }
        if let Some(h) = &self.nodelist {
            hostlist::expand(h)?;
        }
        if let Some(h) = &self.exclude {
            hostlist::expand(h)?;
        }
        if let Some(b) = &self.begin {
            begin::parse_begin(b, now())?;
        }
        if let Some(n) = &self.nice {
            n.parse::<i32>().map_err(|_| OptionError::InvalidSpec { option: "nice", value: n.clone() })?;
        }
        if self.array.is_some() {
            return Err(OptionError::Unsupported {
                option: "array",
                why: "job arrays are not implemented yet; submit one job per index".into(),
            });
        }
        if self.dependency.is_some() {
            return Err(OptionError::Unsupported {
                option: "dependency",
                why: "job dependencies are not implemented yet; use sbatch --wait in a script".into(),
            });
        }
        let no_effect: [(&str, bool); 7] = [
            ("account", self.account.is_some()),
            ("qos", self.qos.is_some()),
            ("constraint", self.constraint.is_some()),
            ("mail-type", self.mail_type.is_some()),
            ("mail-user", self.mail_user.is_some()),
            ("exclusive", self.exclusive.is_some()),
            ("requeue", self.requeue || self.no_requeue),
        ];
        for (name, given) in no_effect {
            if given {
                warnings
                    .push(OptionWarning(format!("--{name} has no effect on this cluster (one node, no accounting)")));
            }
        }
        Ok(warnings)
    }

    /// Builds the REST job description from these options.
    ///
    /// `script`, `argv`, `environment` and `current_working_directory` are the caller's.
    pub fn to_job_desc(&self) -> Result<JobDescMsg, OptionError> {
        let mut d = JobDescMsg {
            name: self.job_name.clone(),
            standard_output: self.output.clone(),
            standard_error: self.error.clone(),
            standard_input: self.input.clone(),
            partition: self.partition.clone(),
            comment: self.comment.clone(),
            wckey: self.wckey.clone(),
            account: self.account.clone(),
            qos: self.qos.clone(),
            constraints: self.constraint.clone(),
            tasks: self.ntasks,
            cpus_per_task: self.cpus_per_task,
            tasks_per_node: self.ntasks_per_node,
            ..Default::default()
        };
        if self.hold {
            d.hold = Some(true);
        }
        if let Some(t) = &self.time {
            d.time_limit = Some(match time::parse_time_limit(t)? {
                Some(m) => NoVal::of(m),
                None => NoVal::infinite(),
            });
        }
        if let Some(n) = &self.nodes {
            let (min, max) = parse_node_range(n)?;
            d.minimum_nodes = Some(min);
            d.maximum_nodes = max;
        }
        if let Some(m) = &self.mem {
            d.memory_per_node = Some(NoVal::of(memory::parse_mem_mb(m, "mem")?));
        }
        if let Some(m) = &self.mem_per_cpu {
            d.memory_per_cpu = Some(NoVal::of(memory::parse_mem_mb(m, "mem-per-cpu")?));
        }
        let mut per_node = Vec::new();
        if let Some(g) = &self.gres {
            per_node.extend(gres::parse_gres(g)?);
        }
        if let Some(g) = &self.gpus_per_node {
            per_node.push(gres::parse_gpus(g, "gpus-per-node")?);
        }
        if !per_node.is_empty() {
            d.tres_per_node = Some(gres::to_tres(&per_node));
        }
        if let Some(g) = &self.gpus {
            d.tres_per_job = Some(gres::to_tres(&[gres::parse_gpus(g, "gpus")?]));
        }
        if let Some(m) = &self.open_mode {
            d.open_mode = Some(vec![if m.starts_with('a') { "APPEND" } else { "TRUNCATE" }.into()]);
        }
        if let Some(s) = &self.signal {
            let spec = signal::parse_signal_spec(s)?;
            d.kill_warning_signal = Some(signal::signal_name(spec.signal));
            d.kill_warning_delay = Some(NoVal::of(spec.seconds.min(u16::MAX as u32) as u16));
            if spec.batch_only {
                d.kill_warning_flags = Some(vec!["BATCH_JOB".into()]);
            }
        }
        if let Some(h) = &self.nodelist {
            d.required_nodes = Some(hostlist::expand(h)?);
        }
        if let Some(h) = &self.exclude {
            d.excluded_nodes = Some(hostlist::expand(h)?);
        }
        if let Some(b) = &self.begin {
            d.begin_time = Some(NoVal::of(begin::parse_begin(b, now())?));
        }
        if let Some(n) = &self.nice {
            d.nice = n.parse().ok();
        }
        Ok(d)
    }
}

/// Parses `-N min[-max]`.
pub fn parse_node_range(text: &str) -> Result<(u32, Option<u32>), OptionError> {
    let bad = || OptionError::InvalidSpec { option: "nodes", value: text.to_string() };
    match text.split_once('-') {
        Some((a, b)) => Ok((a.parse().map_err(|_| bad())?, Some(b.parse().map_err(|_| bad())?))),
        None => Ok((text.parse().map_err(|_| bad())?, None)),
    }
}

/// Seconds since the UNIX epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
