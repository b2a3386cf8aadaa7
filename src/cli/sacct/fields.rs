//! sacct's fields: Slurm's table of names and default widths, and the value of each for a
//! job's row or one of its steps' rows, as Slurm's sacct prints them.

use crate::api::acct::{AcctJob, AcctStep, GpuUse, StepId, Tres, Usage, NO_VAL};

/// Every field sacct knows, with its default width (negative: left-justified), in Slurm's
/// order: a name given with `-o` picks the first field it starts (case ignored).
pub const FIELDS: &[(&str, i32)] = &[
    ("Account", 10),
    ("AdminComment", 15),
    ("AllocCPUS", 10),
    ("AllocNodes", 10),
    ("AllocTRES", 10),
    ("AssocID", 7),
    ("AveCPU", 10),
    ("AveCPUFreq", 10),
    ("AveDiskRead", 14),
    ("AveDiskWrite", 14),
    ("AvePages", 10),
    ("AveRSS", 10),
    ("AveVMSize", 10),
    ("BlockID", 16),
    ("Cluster", 10),
    ("Comment", 14),
    ("Constraints", 19),
    ("ConsumedEnergy", 14),
    ("ConsumedEnergyRaw", 17),
    ("Container", 19),
    ("CPUTime", 10),
    ("CPUTimeRAW", 10),
    ("DBIndex", -21),
    ("DerivedExitCode", 15),
    ("Elapsed", 10),
    ("ElapsedRaw", 10),
    ("Eligible", 19),
    ("End", 19),
    ("Exclusive", 14),
    ("ExitCode", 8),
    ("Extra", 14),
    ("FailedNode", 8),
    ("Flags", 19),
    ("GID", 6),
    ("Group", 9),
    ("JobID", -12),
    ("JobIDRaw", -12),
    ("JobName", 10),
    ("Layout", 9),
    ("Licenses", 10),
    ("MaxDiskRead", 12),
    ("MaxDiskReadNode", 15),
    ("MaxDiskReadTask", 15),
    ("MaxDiskWrite", 12),
    ("MaxDiskWriteNode", 16),
    ("MaxDiskWriteTask", 16),
    ("MaxPages", 8),
    ("MaxPagesNode", 12),
    ("MaxPagesTask", 14),
    ("MaxRSS", 10),
    ("MaxRSSNode", 10),
    ("MaxRSSTask", 10),
    ("MaxVMSize", 10),
    ("MaxVMSizeNode", 14),
    ("MaxVMSizeTask", 14),
    ("McsLabel", 12),
    ("MinCPU", 10),
    ("MinCPUNode", 10),
    ("MinCPUTask", 10),
    ("NCPUS", 10),
    ("NNodes", 8),
    ("NodeList", 15),
    ("NTasks", 8),
    ("OriginalSLUID", 14),
    ("OverSubscribe", 14),
    ("Partition", 10),
    ("Planned", 10),
    ("PlannedCPU", 10),
    ("PlannedCPURAW", 13),
    ("Priority", 10),
    ("QOS", 10),
    ("QOSRAW", 6),
    ("QOSREQ", 10),
    ("Reason", 22),
    ("ReqCPUFreq", 10),
    ("ReqCPUFreqGov", 13),
    ("ReqCPUFreqMax", 13),
    ("ReqCPUFreqMin", 13),
    ("ReqCPUS", 8),
    ("ReqMem", 10),
    ("ReqNodes", 8),
    ("ReqTRES", 10),
    ("Reservation", 20),
    ("ReservationId", 8),
    ("ReqReservation", 20),
    ("Restarts", 8),
    ("SegmentSize", 11),
    ("SLUID", 14),
    ("Start", 19),
    ("State", 10),
    ("StdErr", 20),
    ("StdIn", 20),
    ("StdOut", 20),
    ("Submit", 19),
    ("SubmitLine", 20),
    ("Suspended", 10),
    ("SystemComment", 15),
    ("SystemCPU", 10),
    ("Timelimit", 10),
    ("TimelimitRaw", 10),
    ("TotalCPU", 10),
    ("TRESUsageInAve", 14),
    ("TRESUsageInMax", 14),
    ("TRESUsageInMaxNode", 18),
    ("TRESUsageInMaxTask", 18),
    ("TRESUsageInMin", 14),
    ("TRESUsageInMinNode", 18),
    ("TRESUsageInMinTask", 18),
    ("TRESUsageInTot", 14),
    ("TRESUsageOutAve", 15),
    ("TRESUsageOutMax", 15),
    ("TRESUsageOutMaxNode", 19),
    ("TRESUsageOutMaxTask", 19),
    ("TRESUsageOutMin", 15),
    ("TRESUsageOutMinNode", 19),
    ("TRESUsageOutMinTask", 19),
    ("TRESUsageOutTot", 15),
    ("UID", 6),
    ("User", 9),
    ("UserCPU", 10),
    ("WCKey", 10),
    ("WCKeyID", 10),
    ("WorkDir", 20),
];

/// `--format` of `-b`.
pub const BRIEF_FIELDS: &str = "jobid,state,exitcode";
/// The default format.
pub const DEFAULT_FIELDS: &str = "jobid,jobname,partition,account,alloccpus,state,exitcode";
/// `--format` of `-l`.
pub const LONG_FIELDS: &str = "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";

/// A field to print: its name and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The field's name as Slurm spells it (the header).
    pub name: &'static str,
    /// Its width; negative: left-justified.
    pub width: i32,
}

/// The fields of a `--format` list (`name[%width]`, comma separated; `ALL`, or any start of
/// it, is every field), or Slurm's error. A width given to a field applies to every use of
/// it, as in Slurm.
pub fn parse_format(list: &str) -> Result<Vec<Column>, String> {
    parse_fields(list, FIELDS, true)
}

/// The fields of `table` a `--format` list picks (sacct's and sstat's grammar); with
/// `all`, `ALL` (or any start of it) picks every field.
pub fn parse_fields(list: &str, table: &[(&'static str, i32)], all: bool) -> Result<Vec<Column>, String> {
    let mut picked: Vec<(usize, Option<i32>)> = Vec::new();
    for item in list.split(',') {
        let item = item.trim_start();
        if item.is_empty() {
            continue;
        }
        let (name, width) = match item.split_once('%') {
            Some((name, w)) => (name, Some(leading_int(w))),
            None => (item, None),
        };
        if all && name.len() <= 3 && "ALL"[..name.len()].eq_ignore_ascii_case(name) {
            picked.extend((0..table.len()).map(|i| (i, width)));
            continue;
        }
        let found = table
            .iter()
            .position(|(field, _)| field.len() >= name.len() && field[..name.len()].eq_ignore_ascii_case(name));
        match found {
            Some(i) => picked.push((i, width)),
            None if name.eq_ignore_ascii_case("AllocGRES") => {
                return Err("AllocGRES has been removed, please use AllocTRES".into())
            }
            None if name.eq_ignore_ascii_case("ReqGRES") => {
                return Err("ReqGRES has been removed, please use ReqTRES".into())
            }
            None => return Err(format!("Invalid field requested: \"{name}\"")),
        }
    }
    let width_of = |i: usize| picked.iter().rev().find_map(|&(j, w)| if j == i { w } else { None });
    Ok(picked.iter().map(|&(i, _)| Column { name: table[i].0, width: width_of(i).unwrap_or(table[i].1) }).collect())
}

/// `atoi`: the leading (signed) integer of `s`, 0 if none.
fn leading_int(s: &str) -> i32 {
    let s = s.trim_start();
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    sign * digits[..end].parse::<i32>().unwrap_or(0)
}

/// A value to print, of the kind that decides how: text (cut to the width with a `+`),
/// numbers, times of day, durations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Text; `None` prints blank.
    Text(Option<String>),
    /// A number; `None` prints blank.
    Number(Option<u64>),
    /// A time (0: `Unknown`, Slurm's `NO_VAL`: `None`).
    Date(u64),
    /// A duration in seconds; `None` prints blank.
    Secs(Option<u64>),
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(Some(s.into()))
}

const BLANK: Cell = Cell::Text(None);

/// One printed row: a job's own, or one of its steps'.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    /// The job (its allocation).
    Job(&'a AcctJob),
    /// One of its steps.
    Step(&'a AcctJob, &'a AcctStep),
}

/// How values are printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Units {
    /// `--noconvert`: sizes stay in their own unit.
    pub no_convert: bool,
    /// `--units`: sizes in this unit (`K`, `M`, `G`, `T`, `P`).
    pub unit: Option<char>,
    /// `--expand-patterns`: file names with their patterns filled in.
    pub expand_patterns: bool,
}

/// The `exit:signal` text of a raw wait status.
pub fn exit_text(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        format!("0:{}", libc::WTERMSIG(status))
    } else {
        format!("{}:0", libc::WEXITSTATUS(status))
    }
}

/// A duration as Slurm's `secs2time_str`: `[D-]HH:MM:SS`.
pub fn secs_text(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// A CPU time as sacct's `TotalCPU`: `[D-]HH:MM:SS` from an hour, else `MM:SS.mmm` with
/// milliseconds, else `00:MM:SS`.
pub fn cpu_text(usec: u64) -> String {
    let (secs, ms) = (usec / 1_000_000, usec % 1_000_000 / 1000);
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else if ms > 0 {
        format!("{m:02}:{s:02}.{ms:03}")
    } else {
        format!("00:{m:02}:{s:02}")
    }
}

/// A time limit in minutes as Slurm's `mins2time_str`.
fn mins_text(mins: u32) -> String {
    secs_text(mins as u64 * 60)
}

/// A size as Slurm's `convert_num_unit` writes it: in unit `from` (0: none, 1: K, 2: M…),
/// moved up while that loses nothing (halves are kept: `1.50G`), or not at all, or to the
/// unit asked for.
pub fn size_text(value: u64, from: usize, units: &Units) -> String {
    const UNITS: &[u8] = b"\0KMGTP";
    if value == 0 {
        return "0".into();
    }
    let mut num = value as f64;
    let mut unit = from;
    match units.unit.and_then(|u| UNITS.iter().position(|&c| c == u.to_ascii_uppercase() as u8)) {
        Some(wanted) => {
            while unit > wanted {
                num *= 1024.0;
                unit -= 1;
            }
            while unit < wanted {
                num /= 1024.0;
                unit += 1;
            }
        }
        None if units.no_convert => {}
        None => {
            while num >= 1024.0 && (num as u64).is_multiple_of(512) {
                num /= 1024.0;
                unit += 1;
            }
        }
    }
    let suffix = match UNITS.get(unit) {
        Some(0) => String::new(),
        Some(&c) => (c as char).to_string(),
        None => "?".into(),
    };
    if num.fract() == 0.0 {
        format!("{}{suffix}", num as u64)
    } else {
        format!("{num:.2}{suffix}")
    }
}

/// A step's usage as sacct's `TRESUsageInMax` (`peak`) or `TRESUsageInAve` prints it, the
/// names in order: `cpu=00:00:01,energy=0,gres/gpumem=520M,gres/gpuutil=85,mem=2140K`; empty
/// when nothing was measured.
pub fn usage_tres_text(usage: Option<&Usage>, gpu_use: Option<&GpuUse>, peak: bool, units: &Units) -> String {
    if usage.is_none() && gpu_use.is_none() {
        return String::new();
    }
    let mut parts = Vec::new();
    if let Some(u) = usage {
        parts.push(format!("cpu={}", secs_text((u.user_usec + u.sys_usec) / 1_000_000)));
    }
    parts.push("energy=0".to_string());
    if let Some(g) = gpu_use {
        let (memory, util) = if peak { (g.mem_max, g.util_max) } else { (g.mem_ave, g.util_ave) };
        parts.push(format!("gres/gpumem={}", size_text(memory, 0, units)));
        parts.push(format!("gres/gpuutil={util}"));
    }
    if let Some(u) = usage {
        let memory = if peak { u.max_rss_kb } else { u.average_rss_kb() };
        parts.push(format!("mem={}", size_text(memory * 1024, 0, units)));
    }
    parts.join(",")
}

/// A TRES list as sacct prints it, by name: `billing=1,cpu=1,gres/gpu=2,mem=1000M,node=1`,
/// `billing=1,cpu=1,gres/shard=2,mem=1000M,node=1`.
pub fn tres_text(t: &Tres, billing: bool, units: &Units) -> String {
    let mut parts = Vec::new();
    if billing {
        parts.push(format!("billing={}", t.cpus));
    }
    parts.push(format!("cpu={}", t.cpus));
    if t.gpus > 0 {
        parts.push(format!("gres/gpu={}", t.gpus));
    }
    if t.shards > 0 {
        parts.push(format!("gres/shard={}", t.shards));
    }
    if t.mem_mb > 0 {
        parts.push(format!("mem={}", size_text(t.mem_mb, 2, units)));
    }
    parts.push(format!("node={}", t.nodes));
    parts.join(",")
}

/// A state, with `by UID` for a cancel someone asked for.
fn state_text(state: &str, cancelled_by: Option<u32>) -> String {
    match cancelled_by {
        Some(uid) if state == "CANCELLED" => format!("CANCELLED by {uid}"),
        _ => state.to_string(),
    }
}

/// Seconds between becoming eligible and starting (or ending unstarted; to `now` while
/// pending), Slurm's `Planned`.
fn planned(job: &AcctJob, now: u64) -> u64 {
    let never = job.start == 0 || job.start == NO_VAL;
    if job.eligible == 0 {
        0
    } else if never && job.end != 0 {
        job.end.saturating_sub(job.eligible)
    } else if !never {
        job.start.saturating_sub(job.eligible)
    } else {
        now.saturating_sub(job.eligible)
    }
}

/// The value of field `name` in `row`, at `now`.
pub fn value(name: &str, row: Row, now: u64, units: &Units) -> Cell {
    match row {
        Row::Job(job) => job_value(name, job, now, units),
        Row::Step(job, step) => step_value(name, job, step, now, units),
    }
}

fn job_value(name: &str, j: &AcctJob, now: u64, units: &Units) -> Cell {
    let cpus = j.alloc.map_or(0, |a| a.cpus) as u64;
    let elapsed = j.elapsed(now);
    let usage = j.usage();
    let file = |pattern: &str, expanded: &str| {
        if pattern.is_empty() {
            BLANK
        } else if units.expand_patterns {
            text(expanded)
        } else {
            text(pattern)
        }
    };
    match name {
        "Account" => text(&j.account),
        "AllocCPUS" | "NCPUS" => Cell::Number(Some(cpus)),
        "AllocNodes" => text(j.alloc.map_or(0, |a| a.nodes).to_string()),
        "AllocTRES" => Cell::Text(j.alloc.map(|a| tres_text(&a, true, units))),
        "AssocID" => Cell::Number(Some(0)),
        "Cluster" => text(&j.cluster),
        "Comment" => text(&j.comment),
        "AdminComment" => text(&j.admin_comment),
        "Reservation" | "ReqReservation" => text(&j.reservation),
        "ConsumedEnergy" => text("0"),
        "ConsumedEnergyRaw" => Cell::Number(Some(0)),
        "CPUTime" => Cell::Secs(Some(elapsed * cpus)),
        "CPUTimeRAW" => Cell::Number(Some(elapsed * cpus)),
        "DerivedExitCode" => text(exit_text(j.derived_status)),
        "Elapsed" => Cell::Secs(Some(elapsed)),
        "ElapsedRaw" => Cell::Number(Some(elapsed)),
        "Eligible" => Cell::Date(j.eligible),
        "End" => Cell::Date(j.end),
        "ExitCode" => text(exit_text(j.exit_status)),
        "GID" => Cell::Number(Some(j.gid as u64)),
        "Group" => text(&j.group),
        "JobID" => text(j.id_string()),
        "JobIDRaw" => text(j.id.to_string()),
        "JobName" => text(&j.name),
        "NNodes" => Cell::Number(Some(j.alloc.unwrap_or(j.req).nodes as u64)),
        "NodeList" => text(&j.nodes),
        "Partition" => text(&j.partition),
        "Planned" => Cell::Secs(Some(planned(j, now))),
        "PlannedCPU" => Cell::Secs(Some(planned(j, now) * j.req.cpus as u64)),
        "PlannedCPURAW" => Cell::Number(Some(planned(j, now) * j.req.cpus as u64)),
        "Priority" => Cell::Number(Some(j.priority as u64)),
        "QOS" => text(&j.qos),
        "Reason" => text(&j.reason),
        "ReqCPUS" => Cell::Number(Some(j.req.cpus as u64)),
        "ReqMem" => text(size_text(j.req.mem_mb, 2, units)),
        "ReqNodes" => text(j.req.nodes.to_string()),
        "ReqTRES" => text(tres_text(&j.req, true, units)),
        "Restarts" => Cell::Number(Some(0)),
        "Start" => Cell::Date(j.start),
        "State" => text(state_text(&j.state, j.cancelled_by)),
        "StdErr" => file(&j.stderr, &j.stderr_expanded),
        "StdIn" => file(&j.stdin, &j.stdin_expanded),
        "StdOut" => file(&j.stdout, &j.stdout_expanded),
        "Submit" => Cell::Date(j.submit),
        "Suspended" => Cell::Secs(Some(0)),
        "SystemCPU" => text(cpu_text(usage.sys_usec)),
        "Timelimit" => text(j.time_limit.map_or_else(|| "UNLIMITED".into(), mins_text)),
        "TimelimitRaw" => text(j.time_limit.map_or_else(|| "UNLIMITED".into(), |m| m.to_string())),
        "TotalCPU" => text(cpu_text(usage.user_usec + usage.sys_usec)),
        "UID" => Cell::Number(Some(j.uid as u64)),
        "User" => text(&j.user),
        "UserCPU" => text(cpu_text(usage.user_usec)),
        "WCKey" => text(&j.wckey),
        "WorkDir" => text(&j.cwd),
        _ => BLANK,
    }
}

fn step_value(name: &str, j: &AcctJob, s: &AcctStep, now: u64, units: &Units) -> Cell {
    let elapsed = s.elapsed(j.end, now);
    let end = if s.end == 0 { j.end } else { s.end };
    let usage = s.usage.unwrap_or_default();
    let measured = |f: &dyn Fn(&crate::api::acct::Usage) -> Cell| s.usage.as_ref().map_or(BLANK, f);
    match name {
        "Account" => text(&j.account),
        "AllocCPUS" | "NCPUS" => Cell::Number(Some(s.alloc.cpus as u64)),
        "AllocNodes" => text(s.alloc.nodes.to_string()),
        "AllocTRES" => text(tres_text(&s.alloc, false, units)),
        "AssocID" => Cell::Number(Some(0)),
        "Cluster" => text(&j.cluster),
        "ConsumedEnergy" => text("0"),
        "ConsumedEnergyRaw" => Cell::Number(Some(0)),
        "CPUTime" => Cell::Secs(Some(elapsed * s.alloc.cpus as u64)),
        "CPUTimeRAW" => Cell::Number(Some(elapsed * s.alloc.cpus as u64)),
        "DerivedExitCode" => text(""),
        "Elapsed" => Cell::Secs(Some(elapsed)),
        "ElapsedRaw" => Cell::Number(Some(elapsed)),
        "Eligible" | "Start" | "Submit" => Cell::Date(s.start),
        "End" => Cell::Date(end),
        "ExitCode" => text(exit_text(s.exit_status.unwrap_or(0))),
        "JobID" => text(format!("{}.{}", j.id_string(), s.id)),
        "JobIDRaw" => text(format!("{}.{}", j.id, s.id)),
        "JobName" => text(&s.name),
        "Layout" => text(if s.id == StepId::Batch { "Unknown" } else { "Block" }),
        "MaxRSS" => measured(&|u| text(size_text(u.max_rss_kb * 1024, 0, units))),
        "AveRSS" => measured(&|u| text(size_text(u.average_rss_kb() * 1024, 0, units))),
        "MaxRSSNode" => measured(&|_| text(&s.nodes)),
        "MaxRSSTask" => measured(&|_| Cell::Number(Some(0))),
        "TRESUsageInAve" => text(usage_tres_text(s.usage.as_ref(), s.gpu_use.as_ref(), false, units)),
        "TRESUsageInMax" => text(usage_tres_text(s.usage.as_ref(), s.gpu_use.as_ref(), true, units)),
        "NNodes" => Cell::Number(Some(s.alloc.nodes as u64)),
        "NodeList" => text(&s.nodes),
        "NTasks" => Cell::Number(Some(s.ntasks as u64)),
        "ReqCPUS" => Cell::Number(Some(s.alloc.cpus as u64)),
        "ReqMem" => text(""),
        "ReqNodes" => text(s.alloc.nodes.to_string()),
        "State" => text(state_text(&s.state, s.cancelled_by)),
        "Suspended" => Cell::Secs(Some(0)),
        "SystemCPU" => text(cpu_text(usage.sys_usec)),
        "Timelimit" => Cell::Text(s.time_limit.map(mins_text)),
        "TimelimitRaw" => Cell::Text(s.time_limit.map(|m| m.to_string())),
        "TotalCPU" => text(cpu_text(usage.user_usec + usage.sys_usec)),
        "UserCPU" => text(cpu_text(usage.user_usec)),
        _ => BLANK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_by_their_start_in_slurms_order() {
        let cols = parse_format("JobID,JobIDRaw,jobname%15,sta,user,nnodes,elapsed").unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["JobID", "JobIDRaw", "JobName", "Start", "User", "NNodes", "Elapsed"]);
        assert_eq!(cols[2].width, 15);
        assert_eq!(cols[0].width, -12);
        assert_eq!(parse_format("a").unwrap().len(), FIELDS.len(), "a start of ALL is every field");
        assert_eq!(parse_format("Bogus").unwrap_err(), "Invalid field requested: \"Bogus\"");
        assert_eq!(parse_format("AllocGRES").unwrap_err(), "AllocGRES has been removed, please use AllocTRES");
        // The last width given to a field is the one of every use of it.
        let twice = parse_format("JobID%5,State,JobID%20").unwrap();
        assert_eq!((twice[0].width, twice[2].width), (20, 20));
    }

    #[test]
    fn sizes_and_times_as_slurm_writes_them() {
        let u = Units::default();
        assert_eq!(size_text(1000, 2, &u), "1000M");
        assert_eq!(size_text(2048, 2, &u), "2G");
        assert_eq!(size_text(1536, 2, &u), "1.50G");
        assert_eq!(size_text(3196 * 1024, 0, &u), "3196K");
        let no = Units { no_convert: true, ..Default::default() };
        assert_eq!(size_text(2048, 2, &no), "2048M");
        let g = Units { unit: Some('G'), ..Default::default() };
        assert_eq!(size_text(1000, 2, &g), "0.98G");
        assert_eq!(secs_text(72), "00:01:12");
        assert_eq!(secs_text(86400 + 3661), "1-01:01:01");
        assert_eq!(mins_text(5), "00:05:00");
        assert_eq!(cpu_text(2430), "00:00.002");
        assert_eq!(cpu_text(0), "00:00:00");
        assert_eq!(cpu_text(3_600_000_000), "01:00:00");
        assert_eq!(exit_text(3 << 8), "3:0");
        assert_eq!(exit_text(libc::SIGKILL), "0:9");
    }

    #[test]
    fn usage_tres_in_slurms_order() {
        let u = Units::default();
        let usage = Usage { user_usec: 61_500_000, sys_usec: 0, max_rss_kb: 2140, ave_rss_kb: 0 };
        let gpu = GpuUse { mem_max: 520 << 20, mem_ave: 260 << 20, util_max: 85, util_ave: 40 };
        assert_eq!(
            usage_tres_text(Some(&usage), Some(&gpu), true, &u),
            "cpu=00:01:01,energy=0,gres/gpumem=520M,gres/gpuutil=85,mem=2140K"
        );
        assert_eq!(
            usage_tres_text(Some(&usage), Some(&gpu), false, &u),
            "cpu=00:01:01,energy=0,gres/gpumem=260M,gres/gpuutil=40,mem=2140K"
        );
        assert_eq!(usage_tres_text(None, Some(&gpu), true, &u), "energy=0,gres/gpumem=520M,gres/gpuutil=85");
        assert_eq!(usage_tres_text(None, None, true, &u), "");
    }

    #[test]
    fn tres_by_name() {
        let t = Tres { cpus: 2, mem_mb: 2000, gpus: 2, shards: 0, nodes: 1 };
        let u = Units::default();
        assert_eq!(tres_text(&t, true, &u), "billing=2,cpu=2,gres/gpu=2,mem=2000M,node=1");
        assert_eq!(tres_text(&t, false, &u), "cpu=2,gres/gpu=2,mem=2000M,node=1");
        let shards = Tres { cpus: 1, mem_mb: 1000, gpus: 0, shards: 2, nodes: 1 };
        assert_eq!(tres_text(&shards, true, &u), "billing=1,cpu=1,gres/shard=2,mem=1000M,node=1");
        assert_eq!(tres_text(&shards, false, &u), "cpu=1,gres/shard=2,mem=1000M,node=1");
    }
}
