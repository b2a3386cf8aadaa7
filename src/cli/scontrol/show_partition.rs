//! `scontrol show partition[s] [NAME]`: partitions in Slurm's `Key=Value` layout (that of
//! Slurm 24.11), from `GET /slurm/v0.0.43/partitions`; with `--json`, that reply.

use super::record::Record;
use super::Flags;
use crate::api::noval::NoVal;
use crate::api::types::PartitionInfo;
use crate::options::time::format_limit_long;
use std::fmt::Write;

/// A partition's time limit: `UNLIMITED`, a time, or `absent` when unset.
fn limit(value: NoVal<u32>, absent: &str) -> String {
    if value.infinite {
        return "UNLIMITED".into();
    }
    match value.get() {
        Some(m) => format_limit_long(Some(m)),
        None => absent.into(),
    }
}

/// A count that may be unlimited.
fn count(value: NoVal<u32>) -> String {
    match value.get() {
        Some(n) if !value.infinite => n.to_string(),
        _ => "UNLIMITED".into(),
    }
}

/// One partition as `scontrol show partition` prints it.
pub fn render(p: &PartitionInfo, flags: Flags) -> String {
    let mut r = Record::new(flags.one_liner);
    let default = if p.flags.iter().any(|f| f == "DEFAULT") { "YES" } else { "NO" };
    let _ = write!(r, "PartitionName={}", p.name);
    r.end_line();
    let _ = write!(r, "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL");
    r.end_line();
    let _ = write!(r, "AllocNodes=ALL Default={default} QoS=N/A");
    r.end_line();
    let _ = write!(
        r,
        "DefaultTime={} DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO GraceTime={} Hidden=NO",
        limit(p.defaults.time, "NONE"),
        p.grace_time
    );
    r.end_line();
    let _ = write!(
        r,
        "MaxNodes={} MaxTime={} MinNodes=0 LLN=NO MaxCPUsPerNode={} MaxCPUsPerSocket=UNLIMITED",
        count(p.maximums.nodes),
        limit(p.maximums.time, "UNLIMITED"),
        count(p.maximums.cpus_per_node)
    );
    r.end_line();
    let _ = write!(r, "NodeSets={}", if p.node_sets.is_empty() { "ALL" } else { &p.node_sets });
    r.end_line();
    let _ = write!(r, "Nodes={}", p.nodes.configured);
    r.end_line();
    let _ = write!(
        r,
        "PriorityJobFactor={} PriorityTier={} RootOnly=NO ReqResv=NO OverSubscribe=NO",
        p.priority.job_factor, p.priority.tier
    );
    r.end_line();
    let _ = write!(r, "OverTimeLimit=NONE PreemptMode=OFF");
    r.end_line();
    let state = p.partition.state.first().map(String::as_str).unwrap_or("UP");
    let _ =
        write!(r, "State={state} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE", p.cpus.total, p.nodes.total);
    r.end_line();
    let _ = write!(r, "JobDefaults=(null)");
    r.end_line();
    match p.defaults.partition_memory_per_cpu.get() {
        Some(mb) => {
            let _ = write!(r, "DefMemPerCPU={mb} ");
        }
        None => {
            let _ = write!(r, "DefMemPerNode=UNLIMITED ");
        }
    }
    let _ = write!(r, "MaxMemPerNode=UNLIMITED");
    r.end_line();
    let _ = write!(r, "TRES={}", p.tres.configured);
    r.finish()
}

/// Runs `scontrol show partition [NAME]`.
pub fn run(name: Option<&str>, flags: Flags, argv: &[String]) -> i32 {
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut reply = match client.partitions() {
        Ok(r) => r,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
    };
    if let Some(name) = name {
        reply.partitions.retain(|p| p.name == name);
    }
    let code = i32::from(name.is_some() && reply.partitions.is_empty());
    if flags.json {
        super::json::stamp(&mut reply.meta, argv);
        super::json::print(&reply);
        return code;
    }
    if reply.partitions.is_empty() {
        if !flags.quiet {
            match name {
                Some(name) => println!("Partition {name} not found"),
                None => println!("No partitions in the system"),
            }
        }
        return code;
    }
    let text: String = reply.partitions.iter().map(|p| render(p, flags)).collect();
    crate::cli::format::emit_text(&text);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::*;

    /// A partition as the daemon reports one (`src/daemon/views/info.rs`).
    fn gpu() -> PartitionInfo {
        PartitionInfo {
            nodes: PartitionNodes { configured: "vm".into(), total: 1, ..Default::default() },
            tres: PartitionTres { configured: "cpu=2,mem=23081M,node=1,billing=2".into(), ..Default::default() },
            cpus: PartitionCpus { total: 2, ..Default::default() },
            maximums: PartitionMaximums {
                time: NoVal::infinite(),
                nodes: NoVal::infinite(),
                cpus_per_node: NoVal::infinite(),
                ..Default::default()
            },
            name: "gpu".into(),
            node_sets: "ALL".into(),
            priority: PartitionPriority { job_factor: 1, tier: 1 },
            partition: PartitionState { state: vec!["UP".into()] },
            flags: vec!["DEFAULT".into()],
            ..Default::default()
        }
    }

    /// `scontrol show partition` of the slurm-24.11 transcript (section 1).
    #[test]
    fn the_transcript_partitions() {
        let debug = PartitionInfo {
            name: "debug".into(),
            flags: Vec::new(),
            maximums: PartitionMaximums { time: NoVal::of(30), ..gpu().maximums },
            ..gpu()
        };
        let text = render(&gpu(), Flags::default()) + &render(&debug, Flags::default());
        let expected = "PartitionName=gpu
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED
   NodeSets=ALL
   Nodes=vm
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=2 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=2,mem=23081M,node=1,billing=2

PartitionName=debug
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=NO QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED
   NodeSets=ALL
   Nodes=vm
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=OFF
   State=UP TotalCPUs=2 TotalNodes=1 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=2,mem=23081M,node=1,billing=2

";
        assert_eq!(text, expected);
    }

    #[test]
    fn default_time_memory_and_one_line() {
        let p = PartitionInfo {
            defaults: PartitionDefaults {
                time: NoVal::of(90),
                partition_memory_per_cpu: NoVal::of(2000),
                ..Default::default()
            },
            ..gpu()
        };
        let text = render(&p, Flags { one_liner: true, ..Flags::default() });
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains(" DefaultTime=01:30:00 "), "{text}");
        assert!(text.contains(" DefMemPerCPU=2000 MaxMemPerNode=UNLIMITED TRES="), "{text}");
        assert!(text.ends_with("TRES=cpu=2,mem=23081M,node=1,billing=2\n"), "{text}");
    }
}
