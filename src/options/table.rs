//! The one table of job options shared by `sbatch`, `srun` and `salloc`.
//!
//! Every option documented in Slurm's man pages for the three commands has one row here: its
//! names, whether it takes a value, which commands accept it, where `--help` lists it, and what
//! slurmlet does with it ([`Support`]). The command lines, the `#SBATCH` directives, the input
//! environment variables, `--help`/`--usage`, the man pages and the shell completions are all
//! built from this table, so an option cannot be known to one of them and missing from another.

/// The commands that take job options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `sbatch`: submit a batch script.
    Sbatch,
    /// `srun`: run a parallel job step (in a new allocation or an existing one).
    Srun,
    /// `salloc`: obtain an allocation and run a command (a shell) in it.
    Salloc,
}

impl Tool {
    /// The command's name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Sbatch => "sbatch",
            Tool::Srun => "srun",
            Tool::Salloc => "salloc",
        }
    }

    /// All three commands.
    pub const ALL: [Tool; 3] = [Tool::Sbatch, Tool::Srun, Tool::Salloc];

    fn bit(self) -> u8 {
        match self {
            Tool::Sbatch => 1,
            Tool::Srun => 2,
            Tool::Salloc => 4,
        }
    }
}

/// A set of [`Tool`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tools(u8);

impl Tools {
    /// Whether `tool` is in the set.
    pub fn has(self, tool: Tool) -> bool {
        self.0 & tool.bit() != 0
    }
}

/// sbatch only.
const B: Tools = Tools(1);
/// srun only.
const R: Tools = Tools(2);
/// salloc only.
const A: Tools = Tools(4);
/// sbatch and srun.
const BR: Tools = Tools(3);
/// srun and salloc.
const RA: Tools = Tools(6);
/// sbatch and salloc.
const BA: Tools = Tools(5);
/// All three.
const BRA: Tools = Tools(7);

/// What an option takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Nothing (`--hold`).
    Flag,
    /// Nothing, and each use counts (`-vvv`).
    Count,
    /// A value, as `--opt=v`, `--opt v`, `-Xv` or `-X v`; the text names it in `--help`.
    Required(&'static str),
    /// An optional value, only as `--opt=v` or attached to the short name, `-Xv` (as with
    /// getopt's optional arguments).
    Optional(&'static str),
    /// Nothing, as the man pages document it; but Slurm declares the option with an optional
    /// value that it then ignores (`--overlap=yes`), so a value is accepted and ignored.
    IgnoredValue,
}

/// Where `--help` lists an option, as Slurm's commands group them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// Options of the job itself.
    Parallel,
    /// Node selection.
    Constraint,
    /// CPUs and memory.
    Consumable,
    /// Task binding.
    Affinity,
    /// GPUs.
    Gpu,
    /// `--help`, `--usage`.
    Help,
    /// `--version` and the rest.
    Other,
}

impl Section {
    /// The heading `--help` prints above the section.
    pub fn heading(self) -> &'static str {
        match self {
            Section::Parallel => "Parallel run options:",
            Section::Constraint => "Constraint options:",
            Section::Consumable => "Consumable resources related options:",
            Section::Affinity => "Affinity/Multi-core options: (when the task/affinity plugin is enabled)",
            Section::Gpu => "GPU scheduling options:",
            Section::Help => "Help options:",
            Section::Other => "Other options:",
        }
    }

    /// Every section, in `--help` order.
    pub const ALL: [Section; 7] = [
        Section::Parallel,
        Section::Constraint,
        Section::Consumable,
        Section::Affinity,
        Section::Gpu,
        Section::Help,
        Section::Other,
    ];
}

/// What slurmlet does with an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// It does what Slurm's man page says.
    Implemented,
    /// The value is kept with the job (and shown by `squeue`/`scontrol`), but has no effect
    /// here; a warning says why.
    Recorded(&'static str),
    /// Accepted with a one-line warning that says why it has no effect here.
    NoEffect(&'static str),
    /// Refused: the job cannot run as asked. The text says why and what to do instead.
    Refused(&'static str),
}

/// One documented option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptSpec {
    /// Long name without dashes (`job-name`); also the option's id in the parsers.
    pub long: &'static str,
    /// Short name, if any (`J`).
    pub short: Option<char>,
    /// The commands for which the short name exists (a subset of `tools`).
    pub short_tools: Tools,
    /// What follows the name.
    pub value: Value,
    /// The commands that accept the option.
    pub tools: Tools,
    /// Where `--help` lists it.
    pub section: Section,
    /// What slurmlet does with it.
    pub support: Support,
    /// The one-line description `--help` prints.
    pub help: &'static str,
}

impl OptSpec {
    /// Whether `tool` accepts this option.
    pub fn for_tool(&self, tool: Tool) -> bool {
        self.tools.has(tool)
    }

    /// The short name `tool` accepts, if any.
    pub fn short_for(&self, tool: Tool) -> Option<char> {
        self.short.filter(|_| self.short_tools.has(tool))
    }

    /// The option as `--help` writes it: `-J, --job-name=jobname`.
    pub fn synopsis(&self, tool: Tool) -> String {
        let short = match self.short_for(tool) {
            Some(c) => format!("-{c}, "),
            None => "    ".into(),
        };
        let value = match self.value {
            Value::Flag | Value::Count | Value::IgnoredValue => String::new(),
            Value::Required(v) => format!("={v}"),
            Value::Optional(v) => format!("[={v}]"),
        };
        format!("{short}--{}{value}", self.long)
    }
}

use Section::{Affinity, Constraint, Consumable, Gpu, Help, Other, Parallel};
use Support::{Implemented, NoEffect, Recorded, Refused};
use Value::{Count, Flag, IgnoredValue, Optional, Required};

const fn opt(
    long: &'static str,
    short: Option<char>,
    value: Value,
    tools: Tools,
    section: Section,
    support: Support,
    help: &'static str,
) -> OptSpec {
    OptSpec { long, short, short_tools: tools, value, tools, section, support, help }
}

const ONE_NODE: &str = "this cluster is one node";
const NO_FEATURES: &str = "no node features are configured";
const NO_BINDING: &str = "tasks are not bound to CPUs, sockets or memory one by one here";

/// How `SLURM_CPU_BIND` begins in the environment of a step's tasks (the tasks' CPU masks
/// follow), as Slurm's task/affinity sets it. An srun that a task runs reads it as its
/// `--cpu-bind`, which then asks for nothing beyond the CPUs the job holds.
pub const TASK_CPU_BIND: &str = "quiet,mask_cpu:";
const NO_TOPOLOGY: &str = "no network topology is configured";
const NO_CONTAINERS: &str = "no container runtime is configured; run the container from the script";
const STEP_ONLY: &str = "only srun launches steps";
const STEP_SCRIPTS: &str = "not yet; run the program from the step's command";

/// Every documented option of sbatch, srun and salloc (Slurm 26.11 man pages), in
/// alphabetical order of long name.
pub static OPTIONS: &[OptSpec] = &[
    opt("account", Some('A'), Required("name"), BRA, Parallel, Implemented, "charge job to specified account"),
    opt(
        "acctg-freq",
        None,
        Required("<datatype>=<interval>"),
        BRA,
        Parallel,
        NoEffect("no accounting samples are taken"),
        "job accounting and profiling sampling intervals",
    ),
    opt("array", Some('a'), Required("indexes"), B, Parallel, Implemented, "job array index values"),
    opt("async", None, Flag, R, Parallel, NoEffect("steps always run while srun waits"), "run the step asynchronously"),
    opt("batch", None, Required("list"), B, Constraint, NoEffect(ONE_NODE), "features the batch host must have"),
    opt(
        "bb",
        None,
        Required("<spec>"),
        BRA,
        Parallel,
        Refused("no burst buffers are configured"),
        "burst buffer specifications",
    ),
    opt(
        "bbf",
        None,
        Required("<file_name>"),
        BRA,
        Parallel,
        Refused("no burst buffers are configured"),
        "burst buffer specification file",
    ),
    opt(
        "bcast",
        None,
        Optional("<dest_path>"),
        R,
        Parallel,
        NoEffect("the program is already on the only node"),
        "copy executable file to compute nodes",
    ),
    opt(
        "bcast-exclude",
        None,
        Required("<paths>"),
        R,
        Parallel,
        NoEffect("the program is already on the only node"),
        "shared object directories not to copy with --bcast",
    ),
    OptSpec {
        short_tools: BR,
        ..opt("begin", Some('b'), Required("time"), BRA, Parallel, Implemented, "defer job until HH:MM MM/DD/YY")
    },
    opt("bell", None, Flag, A, Other, Implemented, "ring the terminal bell when the job is allocated"),
    opt("chdir", Some('D'), Required("path"), BRA, Parallel, Implemented, "change working directory"),
    opt(
        "cluster-constraint",
        None,
        Required("[!]list"),
        BRA,
        Parallel,
        Refused("this cluster is not part of a federation"),
        "specify a list of cluster constraints",
    ),
    opt(
        "clusters",
        Some('M'),
        Required("names"),
        BRA,
        Parallel,
        Implemented,
        "comma separated list of clusters to issue commands to",
    ),
    opt("comment", None, Required("name"), BRA, Parallel, Implemented, "arbitrary comment"),
    opt(
        "compress",
        None,
        Optional("type"),
        R,
        Parallel,
        NoEffect("nothing is broadcast on one node"),
        "data compression library used with --bcast",
    ),
    opt(
        "consolidate-segments",
        None,
        Flag,
        BRA,
        Constraint,
        NoEffect(NO_TOPOLOGY),
        "consolidate all segments into one block",
    ),
    opt(
        "constraint",
        Some('C'),
        Required("list"),
        BRA,
        Constraint,
        Recorded(NO_FEATURES),
        "specify a list of constraints",
    ),
    opt("container", None, Required("path"), BRA, Parallel, Refused(NO_CONTAINERS), "path to OCI container bundle"),
    opt("container-id", None, Required("id"), BRA, Parallel, Refused(NO_CONTAINERS), "OCI container ID"),
    opt("contiguous", None, Flag, BRA, Constraint, NoEffect(ONE_NODE), "demand a contiguous range of nodes"),
    opt(
        "core-spec",
        Some('S'),
        Required("cores"),
        BRA,
        Consumable,
        NoEffect("no cores are set aside for the system"),
        "count of reserved cores",
    ),
    opt(
        "cores-per-socket",
        None,
        Required("C"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "number of cores per socket to allocate",
    ),
    opt("cpu-bind", None, Required("type"), R, Affinity, NoEffect(NO_BINDING), "bind tasks to CPUs"),
    opt(
        "cpu-freq",
        None,
        Required("min[-max[:gov]]"),
        BRA,
        Parallel,
        NoEffect("CPU frequency is not managed"),
        "requested cpu frequency (and governor)",
    ),
    opt("cpus-per-gpu", None, Required("n"), BRA, Gpu, Implemented, "number of CPUs required per allocated GPU"),
    opt("cpus-per-task", Some('c'), Required("ncpus"), BRA, Parallel, Implemented, "number of cpus required per task"),
    opt(
        "deadline",
        None,
        Required("time"),
        BRA,
        Parallel,
        NoEffect("a job is not removed when it cannot end by then"),
        "remove the job if no ending possible before this deadline",
    ),
    opt(
        "delay-boot",
        None,
        Required("mins"),
        BRA,
        Parallel,
        NoEffect("nodes are never rebooted"),
        "delay boot for desired node features",
    ),
    opt(
        "dependency",
        Some('d'),
        Required("type:jobid[:time]"),
        BRA,
        Parallel,
        Implemented,
        "defer job until condition on jobid is satisfied",
    ),
    opt("disable-status", Some('X'), Flag, R, Other, Implemented, "Disable Ctrl-C status feature"),
    opt(
        "distribution",
        Some('m'),
        Required("type"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "distribution method for processes to nodes",
    ),
    opt(
        "epilog",
        None,
        Required("program"),
        R,
        Other,
        Refused(STEP_SCRIPTS),
        "run \"program\" after launching job step",
    ),
    opt("error", Some('e'), Required("err"), BR, Parallel, Implemented, "file for batch script's standard error"),
    opt("exact", None, Flag, R, Parallel, Implemented, "use only the resources requested for the step"),
    opt("exclude", Some('x'), Required("hosts..."), BRA, Constraint, Implemented, "exclude a specific list of hosts"),
    opt(
        "exclusive",
        None,
        Optional("user|mcs|topo"),
        BRA,
        Consumable,
        NoEffect("the job gets only what it asks for; ask for the CPUs, memory and GPUs it needs"),
        "allocate nodes in exclusive mode",
    ),
    opt(
        "export",
        None,
        Required("[ALL|NONE|]VARS"),
        BR,
        Parallel,
        Implemented,
        "specify environment variables to export",
    ),
    opt(
        "export-file",
        None,
        Required("file|fd"),
        B,
        Parallel,
        Implemented,
        "specify environment variables file or file descriptor to export",
    ),
    opt("external-launcher", None, IgnoredValue, R, Parallel, NoEffect(STEP_ONLY), "create an external launcher step"),
    opt(
        "extra",
        None,
        Required("string"),
        BRA,
        Constraint,
        NoEffect(NO_FEATURES),
        "arbitrary string for node matching",
    ),
    opt(
        "extra-node-info",
        Some('B'),
        Required("S[:C[:T]]"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "combine request of sockets, cores and threads",
    ),
    opt("get-user-env", None, Optional("timeout][mode"), B, Other, Implemented, "load environment from local cluster"),
    opt(
        "gid",
        None,
        Required("group_id"),
        B,
        Other,
        Refused("a job runs with the submitting user's groups"),
        "group ID to run job as (user root only)",
    ),
    opt(
        "gpu-bind",
        None,
        Required("type"),
        BRA,
        Gpu,
        NoEffect("each job sees only its own GPUs (CUDA_VISIBLE_DEVICES); tasks are not bound further"),
        "task to gpu binding options",
    ),
    opt(
        "gpu-freq",
        None,
        Required("[type]=value"),
        BRA,
        Gpu,
        NoEffect("GPU clocks are not managed"),
        "frequency and voltage of GPUs",
    ),
    opt("gpus", Some('G'), Required("n"), BRA, Gpu, Implemented, "count of GPUs required for the job"),
    opt("gpus-per-node", None, Required("n"), BRA, Gpu, Implemented, "number of GPUs required per allocated node"),
    opt(
        "gpus-per-socket",
        None,
        Required("n"),
        BRA,
        Gpu,
        Refused("sockets are not scheduled; use --gpus-per-node"),
        "number of GPUs required per allocated socket",
    ),
    opt("gpus-per-task", None, Required("n"), BRA, Gpu, Implemented, "number of GPUs required per spawned task"),
    opt("gres", None, Required("list"), BRA, Consumable, Implemented, "required generic resources"),
    opt(
        "gres-flags",
        None,
        Required("opts"),
        BRA,
        Consumable,
        NoEffect("GPU and CPU affinity is not enforced"),
        "flags related to GRES management",
    ),
    opt("help", Some('h'), Flag, BRA, Help, Implemented, "show this help message"),
    opt(
        "het-group",
        None,
        Required("value"),
        R,
        Parallel,
        Refused("heterogeneous jobs are not available"),
        "hetjob component allocation(s) in which to launch application",
    ),
    opt(
        "hint",
        None,
        Required("type"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "bind tasks according to application hints",
    ),
    opt("hold", Some('H'), Flag, BRA, Parallel, Implemented, "submit job in held state"),
    opt("ignore-pbs", None, Flag, B, Other, Implemented, "ignore #PBS and #BSUB options in the batch script"),
    opt(
        "ignore-signals",
        None,
        Required("list"),
        R,
        Parallel,
        NoEffect("signals are always passed to the tasks"),
        "signals srun does not pass to the tasks",
    ),
    opt(
        "immediate",
        Some('I'),
        Optional("secs"),
        RA,
        Parallel,
        Implemented,
        "exit if resources not available in \"secs\"",
    ),
    opt("input", Some('i'), Required("in"), BR, Parallel, Implemented, "file for batch script's standard input"),
    opt("job-name", Some('J'), Required("jobname"), BRA, Parallel, Implemented, "name of job"),
    opt("jobid", None, Required("id"), R, Parallel, Implemented, "run under already allocated job"),
    opt("kill-command", Some('K'), Optional("signal"), A, Parallel, Implemented, "signal to send terminating job"),
    opt(
        "kill-on-bad-exit",
        Some('K'),
        Optional("0|1"),
        R,
        Parallel,
        Implemented,
        "kill the job if any task terminates with a non-zero exit code",
    ),
    opt("kill-on-invalid-dep", None, Required("yes|no"), B, Parallel, Implemented, "kill job if dependency is invalid"),
    opt("label", Some('l'), Flag, R, Parallel, Implemented, "prepend task number to lines of stdout/err"),
    opt(
        "licenses",
        Some('L'),
        Required("names"),
        BRA,
        Parallel,
        Refused("no licenses are configured"),
        "required license, comma separated",
    ),
    opt(
        "mail-type",
        None,
        Required("type"),
        BRA,
        Other,
        Implemented,
        "notify on state change: BEGIN, END, FAIL or ALL",
    ),
    opt(
        "mail-user",
        None,
        Required("user"),
        BRA,
        Other,
        Implemented,
        "who to send email notification for job state changes",
    ),
    opt(
        "mcs-label",
        None,
        Required("mcs"),
        BRA,
        Other,
        NoEffect("no MCS plugin is configured"),
        "mcs label if mcs plugin mcs/group is used",
    ),
    opt("mem", None, Required("MB"), BRA, Consumable, Implemented, "minimum amount of real memory"),
    opt(
        "mem-bind",
        None,
        Required("type"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "bind memory to locality domains (ldom)",
    ),
    opt(
        "mem-per-cpu",
        None,
        Required("MB"),
        BRA,
        Consumable,
        Implemented,
        "maximum amount of real memory per allocated cpu required by the job",
    ),
    opt("mem-per-gpu", None, Required("MB"), BRA, Gpu, Implemented, "real memory required per allocated GPU"),
    opt(
        "mem-update",
        None,
        Required("margin@delay"),
        BRA,
        Consumable,
        NoEffect("memory limits are not changed while a job runs"),
        "lower the memory limit to usage plus margin after delay",
    ),
    opt("mincpus", None, Required("n"), BRA, Constraint, Implemented, "minimum number of logical processors per node"),
    opt(
        "mpi",
        None,
        Required("type"),
        R,
        Parallel,
        NoEffect("srun starts the tasks itself; no PMI is offered"),
        "type of MPI being used",
    ),
    opt(
        "msg-timeout",
        None,
        Required("secs"),
        R,
        Parallel,
        NoEffect("no messages cross a network here"),
        "message timeout",
    ),
    opt(
        "multi-prog",
        None,
        Flag,
        R,
        Parallel,
        Refused("not yet; start one program and choose what to run from $SLURM_PROCID"),
        "if set the program name specified is the configuration specification for multiple programs",
    ),
    opt(
        "network",
        None,
        Required("type"),
        BRA,
        Parallel,
        NoEffect("no network plugin is configured"),
        "specify information pertaining to the switch or network",
    ),
    opt("nice", None, Optional("value"), BRA, Parallel, Implemented, "decrease scheduling priority by value"),
    opt(
        "no-allocate",
        Some('Z'),
        Flag,
        R,
        Parallel,
        Refused("only an administrator can run a step without an allocation"),
        "don't allocate nodes (must supply -w)",
    ),
    opt("no-bell", None, Flag, A, Other, Implemented, "do NOT ring the terminal bell"),
    opt("no-kill", Some('k'), Optional("off"), BRA, Parallel, NoEffect(ONE_NODE), "do not kill job on node failure"),
    opt("no-requeue", None, Flag, B, Parallel, Implemented, "if a job is requeued, do not requeue it"),
    opt(
        "no-shell",
        None,
        Flag,
        A,
        Other,
        Implemented,
        "immediately exit after allocating resources, without running a command",
    ),
    opt("nodefile", Some('F'), Required("filename"), BRA, Constraint, Implemented, "request a specific list of hosts"),
    opt("nodelist", Some('w'), Required("hosts..."), BRA, Constraint, Implemented, "request a specific list of hosts"),
    opt(
        "nodes",
        Some('N'),
        Required("N"),
        BRA,
        Parallel,
        Implemented,
        "number of nodes on which to run (N = min[-max])",
    ),
    opt("ntasks", Some('n'), Required("ntasks"), BRA, Parallel, Implemented, "number of tasks to run"),
    opt(
        "ntasks-per-core",
        None,
        Required("n"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "number of tasks to invoke on each core",
    ),
    opt("ntasks-per-gpu", None, Required("n"), BRA, Gpu, Implemented, "number of tasks to invoke for each GPU"),
    opt("ntasks-per-node", None, Required("n"), BRA, Parallel, Implemented, "number of tasks to invoke on each node"),
    opt(
        "ntasks-per-socket",
        None,
        Required("n"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "number of tasks to invoke on each socket",
    ),
    opt(
        "oom-kill-step",
        None,
        Optional("0|1"),
        BRA,
        Parallel,
        NoEffect("a process the kernel kills for memory ends alone: its step is not ended for it"),
        "set the OOMKillStep behaviour",
    ),
    opt(
        "open-mode",
        None,
        Required("{append|truncate}"),
        BR,
        Parallel,
        Implemented,
        "open the output and error files using append or truncate mode",
    ),
    opt("output", Some('o'), Required("out"), BR, Parallel, Implemented, "file for batch script's standard output"),
    opt(
        "overcommit",
        Some('O'),
        Flag,
        BRA,
        Parallel,
        NoEffect("each task is given its own CPUs"),
        "overcommit resources",
    ),
    opt(
        "overlap",
        None,
        IgnoredValue,
        R,
        Parallel,
        Implemented,
        "allow the step to share all resources with other steps",
    ),
    opt(
        "oversubscribe",
        Some('s'),
        Flag,
        BRA,
        Parallel,
        NoEffect("allocated CPUs and GPUs are never shared between jobs"),
        "over-subscribe resources with other jobs",
    ),
    opt(
        "parsable",
        None,
        Flag,
        BR,
        Other,
        Implemented,
        "outputs only the jobid and cluster name (if present), separated by semicolon, only on successful submission.",
    ),
    opt("partition", Some('p'), Required("partition"), BRA, Parallel, Implemented, "partition requested"),
    opt(
        "prefer",
        None,
        Required("list"),
        BRA,
        Constraint,
        NoEffect(NO_FEATURES),
        "features desired but not required by job",
    ),
    opt(
        "preserve-env",
        Some('E'),
        Flag,
        R,
        Parallel,
        NoEffect("a step takes its task count from -n, else from SLURM_NTASKS"),
        "env vars for node and task counts override command-line flags",
    ),
    opt(
        "priority",
        None,
        Required("value"),
        BRA,
        Parallel,
        Refused("only an administrator can set a job's priority; use --nice to lower it"),
        "set the priority of the job to value",
    ),
    opt(
        "profile",
        None,
        Required("value"),
        BRA,
        Parallel,
        NoEffect("no profiling plugin is configured"),
        "enable acct_gather_profile for detailed data",
    ),
    opt(
        "prolog",
        None,
        Required("program"),
        R,
        Other,
        Refused(STEP_SCRIPTS),
        "run \"program\" before launching job step",
    ),
    opt(
        "propagate",
        None,
        Optional("rlimits"),
        BR,
        Parallel,
        NoEffect("jobs get the daemon's resource limits"),
        "propagate all [or specific list of] rlimits",
    ),
    opt("pty", None, Optional("fd"), R, Parallel, Implemented, "run task zero in pseudo terminal"),
    opt("qos", Some('q'), Required("qos"), BRA, Parallel, Implemented, "quality of service"),
    opt("quiet", Some('Q'), Flag, BRA, Parallel, Implemented, "quiet mode (suppress informational messages)"),
    opt("quit-on-interrupt", None, Flag, R, Other, Implemented, "quit on single Ctrl-C"),
    opt(
        "reboot",
        None,
        Flag,
        BRA,
        Other,
        NoEffect("nodes are never rebooted"),
        "reboot compute nodes before starting job",
    ),
    opt(
        "relative",
        Some('r'),
        Required("n"),
        R,
        Parallel,
        NoEffect(ONE_NODE),
        "run job step relative to node n of allocation",
    ),
    opt("requeue", None, Optional("expedite"), B, Parallel, Implemented, "if a job is requeued, it may be requeued"),
    opt("reservation", None, Required("name"), BRA, Parallel, Implemented, "allocate resources from named reservation"),
    opt(
        "resources",
        None,
        Required("names"),
        BRA,
        Parallel,
        Refused("no hierarchical resources are configured"),
        "hierarchical resources required",
    ),
    opt(
        "resv-ports",
        None,
        Optional("count"),
        BRA,
        Parallel,
        NoEffect("no communication ports are reserved"),
        "reserve communication ports",
    ),
    opt("runtime", None, Required("name"), BRA, Parallel, Refused(NO_CONTAINERS), "runtime plugin to use for the job"),
    opt(
        "segment",
        None,
        Required("size"),
        BRA,
        Constraint,
        NoEffect(NO_TOPOLOGY),
        "segment size for topology-aware allocation",
    ),
    opt(
        "send-libs",
        None,
        Optional("yes|no"),
        R,
        Parallel,
        NoEffect("the program is already on the only node"),
        "broadcast the executable's shared objects with --bcast",
    ),
    opt(
        "signal",
        None,
        Required("[R:][B:]num[@time]"),
        BRA,
        Parallel,
        Implemented,
        "send signal when time limit within time seconds",
    ),
    opt("slurmd-debug", None, Required("level"), R, Other, NoEffect("there is no slurmd"), "slurmd debug level"),
    opt(
        "sockets-per-node",
        None,
        Required("S"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "number of sockets per node to allocate",
    ),
    opt("spread-job", None, Flag, BRA, Parallel, NoEffect(ONE_NODE), "spread job across as many nodes as possible"),
    opt(
        "spread-segments",
        None,
        Flag,
        BRA,
        Constraint,
        NoEffect(NO_TOPOLOGY),
        "keep a base block's nodes in one segment",
    ),
    opt(
        "stepmgr",
        None,
        Flag,
        BRA,
        Parallel,
        NoEffect("each job's steps are always managed on its node"),
        "enable step management per job",
    ),
    opt(
        "switches",
        None,
        Required("max-switches{@max-time-to-wait}"),
        BRA,
        Constraint,
        NoEffect(NO_TOPOLOGY),
        "optimum switches and max time to wait for optimum",
    ),
    opt(
        "task-epilog",
        None,
        Required("program"),
        R,
        Other,
        Refused(STEP_SCRIPTS),
        "run \"program\" after launching task",
    ),
    opt(
        "task-prolog",
        None,
        Required("program"),
        R,
        Other,
        Refused(STEP_SCRIPTS),
        "run \"program\" before launching task",
    ),
    opt(
        "test-only",
        None,
        Flag,
        BR,
        Parallel,
        Implemented,
        "validate the request and estimate when the job would start",
    ),
    opt(
        "thread-spec",
        None,
        Required("threads"),
        BRA,
        Consumable,
        NoEffect("no threads are set aside for the system"),
        "count of reserved threads",
    ),
    opt("threads", Some('T'), Required("threads"), R, Parallel, NoEffect(ONE_NODE), "set srun launch fanout"),
    opt(
        "threads-per-core",
        None,
        Required("T"),
        BRA,
        Affinity,
        NoEffect(NO_BINDING),
        "number of threads per core to allocate",
    ),
    opt("time", Some('t'), Required("minutes"), BRA, Parallel, Implemented, "time limit"),
    opt(
        "time-min",
        None,
        Required("minutes"),
        BRA,
        Parallel,
        NoEffect("a job always gets its full --time limit"),
        "minimum time limit (if distinct)",
    ),
    opt(
        "tmp",
        None,
        Required("MB"),
        BRA,
        Constraint,
        NoEffect("temporary disk space is not scheduled"),
        "minimum amount of temporary disk",
    ),
    opt("treewidth", None, Required("width"), R, Parallel, NoEffect(ONE_NODE), "fanout of the message tree"),
    opt("tres-bind", None, Required("..."), BRA, Affinity, NoEffect(NO_BINDING), "task to tres binding options"),
    opt("tres-per-task", None, Required("list"), BRA, Parallel, Implemented, "list of tres required per task"),
    opt(
        "uid",
        None,
        Required("user_id"),
        B,
        Other,
        Refused("a job runs as the user who submits it"),
        "user ID to run job as (user root only)",
    ),
    opt("unbuffered", Some('u'), Flag, R, Parallel, Implemented, "do not line-buffer stdout/err"),
    opt("usage", None, Flag, BRA, Help, Implemented, "display brief usage message"),
    opt(
        "use-min-nodes",
        None,
        Flag,
        BRA,
        Other,
        NoEffect(ONE_NODE),
        "if a range of node counts is given, prefer the smaller count",
    ),
    opt("verbose", Some('v'), Count, BRA, Parallel, Implemented, "verbose mode (multiple -v's increase verbosity)"),
    opt("version", Some('V'), Flag, BRA, Other, Implemented, "output version information and exit"),
    opt("wait", Some('W'), Flag, B, Parallel, Implemented, "wait for completion of submitted job"),
    opt(
        "wait",
        Some('W'),
        Required("sec"),
        R,
        Parallel,
        Implemented,
        "seconds to wait after first task exits before killing job",
    ),
    opt(
        "wait-all-nodes",
        None,
        Required("0|1"),
        BA,
        Parallel,
        NoEffect(ONE_NODE),
        "wait for all nodes to be allocated",
    ),
    opt(
        "wait-for-children",
        None,
        Flag,
        R,
        Parallel,
        NoEffect("a step ends when its tasks have exited; what they leave behind is killed then"),
        "wait for all processes in each task to end",
    ),
    opt("wckey", None, Required("wckey"), BRA, Parallel, Implemented, "wckey to run job under"),
    opt(
        "wrap",
        None,
        Required("command string"),
        B,
        Parallel,
        Implemented,
        "wrap command string in a sh script and submit",
    ),
    opt(
        "x11",
        None,
        Optional("all|first|last"),
        RA,
        Parallel,
        Refused("X11 forwarding is not available"),
        "forward X11 connections",
    ),
];

/// Older spellings Slurm still accepts, as (option, alias).
pub const ALIASES: &[(&str, &str)] = &[("ntasks-per-node", "tasks-per-node")];

/// The options `tool` accepts.
pub fn options_for(tool: Tool) -> impl Iterator<Item = &'static OptSpec> {
    OPTIONS.iter().filter(move |o| o.for_tool(tool))
}

/// The option `tool` knows as `--long`.
pub fn find(tool: Tool, long: &str) -> Option<&'static OptSpec> {
    options_for(tool).find(|o| o.long == long)
}

/// The input environment variables each command reads, as (command, variable, option).
///
/// A flag option is set by its variable's presence; the others take the variable's value.
pub static INPUT_VARS: &[(Tools, &str, &str)] = &[
    (B, "SBATCH_ACCOUNT", "account"),
    (B, "SBATCH_ACCTG_FREQ", "acctg-freq"),
    (B, "SBATCH_ARRAY_INX", "array"),
    (B, "SBATCH_BATCH", "batch"),
    (B, "SBATCH_CLUSTERS", "clusters"),
    (B, "SLURM_CLUSTERS", "clusters"),
    (B, "SBATCH_CONSTRAINT", "constraint"),
    (B, "SBATCH_CONTAINER", "container"),
    (B, "SBATCH_CONTAINER_ID", "container-id"),
    (B, "SBATCH_CORE_SPEC", "core-spec"),
    (B, "SBATCH_CPUS_PER_GPU", "cpus-per-gpu"),
    (B, "SBATCH_DEBUG", "verbose"),
    (B, "SBATCH_DELAY_BOOT", "delay-boot"),
    (B, "SBATCH_DISTRIBUTION", "distribution"),
    (B, "SBATCH_ERROR", "error"),
    (B, "SBATCH_EXCLUSIVE", "exclusive"),
    (B, "SBATCH_EXPORT", "export"),
    (B, "SBATCH_GET_USER_ENV", "get-user-env"),
    (B, "SBATCH_GPU_BIND", "gpu-bind"),
    (B, "SBATCH_GPU_FREQ", "gpu-freq"),
    (B, "SBATCH_GPUS", "gpus"),
    (B, "SBATCH_GPUS_PER_NODE", "gpus-per-node"),
    (B, "SBATCH_GPUS_PER_TASK", "gpus-per-task"),
    (B, "SBATCH_GRES", "gres"),
    (B, "SBATCH_GRES_FLAGS", "gres-flags"),
    (B, "SBATCH_HINT", "hint"),
    (B, "SLURM_HINT", "hint"),
    (B, "SBATCH_IGNORE_PBS", "ignore-pbs"),
    (B, "SBATCH_INPUT", "input"),
    (B, "SBATCH_JOB_NAME", "job-name"),
    (B, "SBATCH_MEM_BIND", "mem-bind"),
    (B, "SBATCH_MEM_PER_CPU", "mem-per-cpu"),
    (B, "SBATCH_MEM_PER_GPU", "mem-per-gpu"),
    (B, "SBATCH_MEM_PER_NODE", "mem"),
    (B, "SBATCH_NETWORK", "network"),
    (B, "SBATCH_NO_KILL", "no-kill"),
    (B, "SBATCH_NO_REQUEUE", "no-requeue"),
    (B, "SBATCH_OPEN_MODE", "open-mode"),
    (B, "SBATCH_OUTPUT", "output"),
    (B, "SBATCH_OVERCOMMIT", "overcommit"),
    (B, "SBATCH_PARTITION", "partition"),
    (B, "SBATCH_PROFILE", "profile"),
    (B, "SBATCH_QOS", "qos"),
    (B, "SBATCH_REQ_SWITCH", "switches"),
    (B, "SBATCH_REQUEUE", "requeue"),
    (B, "SBATCH_RESERVATION", "reservation"),
    (B, "SBATCH_RUNTIME", "runtime"),
    (B, "SBATCH_SEGMENT_SIZE", "segment"),
    (B, "SBATCH_SIGNAL", "signal"),
    (B, "SBATCH_SPREAD_JOB", "spread-job"),
    (B, "SBATCH_THREAD_SPEC", "thread-spec"),
    (B, "SBATCH_THREADS_PER_CORE", "threads-per-core"),
    (B, "SBATCH_TIMELIMIT", "time"),
    (B, "SBATCH_TRES_BIND", "tres-bind"),
    (B, "SBATCH_TRES_PER_TASK", "tres-per-task"),
    (B, "SBATCH_USE_MIN_NODES", "use-min-nodes"),
    (B, "SBATCH_WAIT", "wait"),
    (B, "SBATCH_WAIT_ALL_NODES", "wait-all-nodes"),
    (B, "SBATCH_WAIT4SWITCH", "switches"),
    (B, "SBATCH_WCKEY", "wckey"),
    (R, "SLURM_EXPORT_ENV", "export"),
    (R, "SLURM_ACCOUNT", "account"),
    (R, "SLURM_ACCTG_FREQ", "acctg-freq"),
    (R, "SLURM_BCAST", "bcast"),
    (R, "SLURM_BCAST_EXCLUDE", "bcast-exclude"),
    (R, "SLURM_BURST_BUFFER", "bb"),
    (R, "SLURM_CLUSTERS", "clusters"),
    (R, "SLURM_COMPRESS", "compress"),
    (R, "SLURM_CONSTRAINT", "constraint"),
    (R, "SLURM_CORE_SPEC", "core-spec"),
    (R, "SLURM_CPU_BIND", "cpu-bind"),
    (R, "SLURM_CPU_FREQ_REQ", "cpu-freq"),
    (R, "SLURM_CPUS_PER_GPU", "cpus-per-gpu"),
    (R, "SLURM_CPUS_PER_TASK", "cpus-per-task"),
    (R, "SLURM_DEBUG", "verbose"),
    (R, "SLURM_DELAY_BOOT", "delay-boot"),
    (R, "SLURM_DEPENDENCY", "dependency"),
    (R, "SLURM_DISABLE_STATUS", "disable-status"),
    (R, "SLURM_DISTRIBUTION", "distribution"),
    (R, "SLURM_EPILOG", "epilog"),
    (R, "SLURM_EXACT", "exact"),
    (R, "SLURM_EXCLUSIVE", "exclusive"),
    (R, "SLURM_GPU_BIND", "gpu-bind"),
    (R, "SLURM_GPU_FREQ", "gpu-freq"),
    (R, "SLURM_GPUS", "gpus"),
    (R, "SLURM_GPUS_PER_NODE", "gpus-per-node"),
    (R, "SLURM_GPUS_PER_TASK", "gpus-per-task"),
    (R, "SLURM_GRES", "gres"),
    (R, "SLURM_GRES_FLAGS", "gres-flags"),
    (R, "SLURM_HINT", "hint"),
    (R, "SLURM_IMMEDIATE", "immediate"),
    (R, "SLURM_JOB_ID", "jobid"),
    (R, "SLURM_JOB_NAME", "job-name"),
    (R, "SLURM_JOB_NUM_NODES", "nodes"),
    (R, "SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"),
    (R, "SLURM_LABELIO", "label"),
    (R, "SLURM_MEM_BIND", "mem-bind"),
    (R, "SLURM_MEM_PER_CPU", "mem-per-cpu"),
    (R, "SLURM_MEM_PER_GPU", "mem-per-gpu"),
    (R, "SLURM_MEM_PER_NODE", "mem"),
    (R, "SLURM_MPI_TYPE", "mpi"),
    (R, "SLURM_NETWORK", "network"),
    (R, "SLURM_NNODES", "nodes"),
    (R, "SLURM_NO_KILL", "no-kill"),
    (R, "SLURM_NPROCS", "ntasks"),
    (R, "SLURM_NTASKS", "ntasks"),
    (R, "SLURM_NTASKS_PER_CORE", "ntasks-per-core"),
    (R, "SLURM_NTASKS_PER_GPU", "ntasks-per-gpu"),
    (R, "SLURM_NTASKS_PER_NODE", "ntasks-per-node"),
    (R, "SLURM_NTASKS_PER_SOCKET", "ntasks-per-socket"),
    (R, "SLURM_OOMKILLSTEP", "oom-kill-step"),
    (R, "SLURM_OPEN_MODE", "open-mode"),
    (R, "SLURM_OVERCOMMIT", "overcommit"),
    (R, "SLURM_OVERLAP", "overlap"),
    (R, "SLURM_PARTITION", "partition"),
    (R, "SLURM_PROFILE", "profile"),
    (R, "SLURM_PROLOG", "prolog"),
    (R, "SLURM_QOS", "qos"),
    (R, "SLURM_REMOTE_CWD", "chdir"),
    (R, "SLURM_REQ_SWITCH", "switches"),
    (R, "SLURM_RESERVATION", "reservation"),
    (R, "SLURM_RESV_PORTS", "resv-ports"),
    (R, "SLURM_SEND_LIBS", "send-libs"),
    (R, "SLURM_SIGNAL", "signal"),
    (R, "SLURM_SPREAD_JOB", "spread-job"),
    (R, "SRUN_ERROR", "error"),
    (R, "SRUN_INPUT", "input"),
    (R, "SRUN_OUTPUT", "output"),
    (R, "SLURM_STEP_GRES", "gres"),
    (R, "SLURM_TASK_EPILOG", "task-epilog"),
    (R, "SLURM_TASK_PROLOG", "task-prolog"),
    (R, "SLURM_THREAD_SPEC", "thread-spec"),
    (R, "SLURM_THREADS", "threads"),
    (R, "SLURM_THREADS_PER_CORE", "threads-per-core"),
    (R, "SLURM_TIMELIMIT", "time"),
    (R, "SLURM_TRES_BIND", "tres-bind"),
    (R, "SLURM_TRES_PER_TASK", "tres-per-task"),
    (R, "SLURM_UNBUFFEREDIO", "unbuffered"),
    (R, "SLURM_USE_MIN_NODES", "use-min-nodes"),
    (R, "SLURM_WAIT", "wait"),
    (R, "SLURM_WAIT4SWITCH", "switches"),
    (R, "SLURM_WCKEY", "wckey"),
    (R, "SLURM_WORKING_DIR", "chdir"),
    (R, "SLURMD_DEBUG", "slurmd-debug"),
    (R, "SRUN_CONTAINER", "container"),
    (R, "SRUN_CONTAINER_ID", "container-id"),
    (R, "SRUN_RUNTIME", "runtime"),
    (R, "SRUN_EXPORT_ENV", "export"),
    (R, "SRUN_SEGMENT_SIZE", "segment"),
    (A, "SALLOC_ACCOUNT", "account"),
    (A, "SALLOC_ACCTG_FREQ", "acctg-freq"),
    (A, "SALLOC_BELL", "bell"),
    (A, "SALLOC_BURST_BUFFER", "bb"),
    (A, "SALLOC_CLUSTERS", "clusters"),
    (A, "SLURM_CLUSTERS", "clusters"),
    (A, "SALLOC_CONSTRAINT", "constraint"),
    (A, "SALLOC_CONTAINER", "container"),
    (A, "SALLOC_CONTAINER_ID", "container-id"),
    (A, "SALLOC_CORE_SPEC", "core-spec"),
    (A, "SALLOC_CPUS_PER_GPU", "cpus-per-gpu"),
    (A, "SALLOC_DEBUG", "verbose"),
    (A, "SALLOC_DELAY_BOOT", "delay-boot"),
    (A, "SALLOC_EXCLUSIVE", "exclusive"),
    (A, "SALLOC_GPU_BIND", "gpu-bind"),
    (A, "SALLOC_GPU_FREQ", "gpu-freq"),
    (A, "SALLOC_GPUS", "gpus"),
    (A, "SALLOC_GPUS_PER_NODE", "gpus-per-node"),
    (A, "SALLOC_GPUS_PER_TASK", "gpus-per-task"),
    (A, "SALLOC_GRES", "gres"),
    (A, "SALLOC_GRES_FLAGS", "gres-flags"),
    (A, "SALLOC_HINT", "hint"),
    (A, "SLURM_HINT", "hint"),
    (A, "SALLOC_IMMEDIATE", "immediate"),
    (A, "SALLOC_KILL_CMD", "kill-command"),
    (A, "SALLOC_MEM_BIND", "mem-bind"),
    (A, "SALLOC_MEM_PER_CPU", "mem-per-cpu"),
    (A, "SALLOC_MEM_PER_GPU", "mem-per-gpu"),
    (A, "SALLOC_MEM_PER_NODE", "mem"),
    (A, "SALLOC_NETWORK", "network"),
    (A, "SALLOC_NO_BELL", "no-bell"),
    (A, "SALLOC_NO_KILL", "no-kill"),
    (A, "SALLOC_OVERCOMMIT", "overcommit"),
    (A, "SALLOC_PARTITION", "partition"),
    (A, "SALLOC_PROFILE", "profile"),
    (A, "SALLOC_QOS", "qos"),
    (A, "SALLOC_REQ_SWITCH", "switches"),
    (A, "SALLOC_RESERVATION", "reservation"),
    (A, "SALLOC_RUNTIME", "runtime"),
    (A, "SALLOC_SEGMENT_SIZE", "segment"),
    (A, "SALLOC_SIGNAL", "signal"),
    (A, "SALLOC_SPREAD_JOB", "spread-job"),
    (A, "SALLOC_THREAD_SPEC", "thread-spec"),
    (A, "SALLOC_THREADS_PER_CORE", "threads-per-core"),
    (A, "SALLOC_TIMELIMIT", "time"),
    (A, "SALLOC_TRES_BIND", "tres-bind"),
    (A, "SALLOC_TRES_PER_TASK", "tres-per-task"),
    (A, "SALLOC_USE_MIN_NODES", "use-min-nodes"),
    (A, "SALLOC_WAIT_ALL_NODES", "wait-all-nodes"),
    (A, "SALLOC_WAIT4SWITCH", "switches"),
    (A, "SALLOC_WCKEY", "wckey"),
    // Read by Slurm's commands though their man pages leave them out.
    (B, "SBATCH_BURST_BUFFER", "bb"),
    (B, "SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"),
    (B, "SBATCH_CONSOLIDATE_SEGMENTS", "consolidate-segments"),
    (B, "SBATCH_CPU_FREQ_REQ", "cpu-freq"),
    (B, "SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"),
    (B, "SBATCH_SPREAD_SEGMENTS", "spread-segments"),
    (R, "SLURM_CLUSTER_CONSTRAINT", "cluster-constraint"),
    (R, "SLURM_CONSOLIDATE_SEGMENTS", "consolidate-segments"),
    (R, "SLURM_EXTERNAL_LAUNCHER", "external-launcher"),
    (R, "SLURM_GPUS_PER_SOCKET", "gpus-per-socket"),
    (R, "SLURM_NCORES_PER_SOCKET", "cores-per-socket"),
    (R, "SLURM_NSOCKETS_PER_NODE", "sockets-per-node"),
    (R, "SLURM_OOM_KILL_STEP", "oom-kill-step"),
    (R, "SLURM_SPREAD_SEGMENTS", "spread-segments"),
    (A, "SALLOC_CLUSTER_CONSTRAINT", "cluster-constraint"),
    (A, "SALLOC_CONSOLIDATE_SEGMENTS", "consolidate-segments"),
    (A, "SALLOC_CPU_FREQ_REQ", "cpu-freq"),
    (A, "SALLOC_GPUS_PER_SOCKET", "gpus-per-socket"),
    (A, "SALLOC_SPREAD_SEGMENTS", "spread-segments"),
];

/// The input variables `tool` reads, as (variable, option).
pub fn input_vars(tool: Tool) -> impl Iterator<Item = (&'static str, &'static OptSpec)> {
    INPUT_VARS
        .iter()
        .filter(move |(t, _, _)| t.has(tool))
        .filter_map(move |(_, var, long)| Some((*var, find(tool, long)?)))
}

/// Documented input variables that do not stand for an option, as (commands, variable, what
/// slurmlet does with it).
pub static OTHER_INPUT_VARS: &[(Tools, &str, &str)] = &[
    (BRA, "SLURM_CONF", "not read: slurmlet's configuration is its own TOML file (SLURMLET_CONFIG)"),
    (BRA, "SLURM_DEBUG_FLAGS", "not read: there are no debug flags"),
    (BRA, "SLURM_EXIT_ERROR", "not read: errors exit with Slurm's default codes"),
    (RA, "SLURM_EXIT_IMMEDIATE", "not read: --immediate failures exit with 1"),
    (BR, "SLURM_UMASK", "honoured: files the job creates get this umask"),
    (BR, "SLURM_STEP_KILLED_MSG_NODE_ID", "not read: there is one node"),
    (BRA, "SBATCH_POWER", "not read: --power is gone from Slurm"),
    (R, "SLURM_POWER", "not read: --power is gone from Slurm"),
    (A, "SALLOC_POWER", "not read: --power is gone from Slurm"),
    (R, "PMI_FANOUT_OFF_HOST", "not read: no PMI is offered"),
    (R, "PMI_TIME", "not read: no PMI is offered"),
    (R, "SLURM_PMI_KVS_NO_DUP_KEYS", "not read: no PMI is offered"),
    (R, "SLURM_DIST_PLANESIZE", "not read: tasks are not distributed"),
    (R, "SLURM_SRUN_REDUCE_TASK_EXIT_MSG", "not read: one line per task exit is printed"),
    (R, "SLURM_TEST_EXEC", "not read: the program is looked up when the task starts"),
];
