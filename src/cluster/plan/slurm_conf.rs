//! `slurm.conf`: a configless controller (`SlurmctldParameters=enable_configless`, the nodes
//! fetch it), `cons_tres`, the nodes as `slurmd -C` prints them with their GPUs, the box's
//! partitions plus one per GPU type when the nodes' types differ, its priority weights,
//! limits and preemption, and cgroup confinement where every node has cgroups.

use super::model::Inputs;
use crate::cluster::facts::NodeFacts;
use crate::config::priority::UsageReset;
use crate::config::qos::PreemptMode;
use std::collections::BTreeMap;

/// `D-HH:MM:SS`, as slurm.conf takes a duration.
pub fn duration(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    format!("{d}-{h:02}:{m:02}:{s:02}")
}

/// A limit in minutes as slurm.conf writes it (`UNLIMITED` for none).
fn minutes(limit: Option<u32>) -> String {
    limit.map_or("UNLIMITED".into(), |m| duration(u64::from(m) * 60))
}

/// The gres of one node: `gpu:TYPE:N` for each type (untyped ones as `gpu:N`), and
/// `shard:M` when the box hands out shards.
pub fn node_gres(facts: &NodeFacts, shards_per_gpu: u32) -> Option<String> {
    if facts.gpus.is_empty() {
        return None;
    }
    let mut by_type: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    for gpu in &facts.gpus {
        *by_type.entry(gpu.gres_type.as_deref()).or_default() += 1;
    }
    let mut parts: Vec<String> = by_type
        .iter()
        .map(|(t, n)| match t {
            Some(t) => format!("gpu:{t}:{n}"),
            None => format!("gpu:{n}"),
        })
        .collect();
    if shards_per_gpu > 0 {
        parts.push(format!("shard:{}", facts.gpus.len() as u64 * u64::from(shards_per_gpu)));
    }
    Some(parts.join(","))
}

/// The node's line, as `slurmd -C` prints it, with its address when the box reaches it by
/// another name, and its gres.
pub fn node_line(given: &str, facts: &NodeFacts, shards_per_gpu: u32) -> String {
    let c = &facts.cpu;
    let mut line = format!("NodeName={}", facts.hostname);
    if given != facts.hostname {
        line.push_str(&format!(" NodeAddr={given}"));
    }
    line.push_str(&format!(
        " CPUs={} Boards=1 SocketsPerBoard={} CoresPerSocket={} ThreadsPerCore={} RealMemory={}",
        c.cpus, c.sockets, c.cores_per_socket, c.threads_per_core, facts.real_memory_mib
    ));
    if let Some(gres) = node_gres(facts, shards_per_gpu) {
        line.push_str(&format!(" Gres={gres}"));
    }
    line.push_str(" State=UNKNOWN");
    line
}

/// The partitions per GPU type: each type some node has, with the nodes that have it, when
/// the nodes have more than one type (with one, the box's partitions say it all).
pub fn type_partitions(nodes: &[(String, NodeFacts)]) -> Vec<(String, Vec<String>)> {
    let mut by_type: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (_, facts) in nodes {
        let mut types: Vec<&str> = facts.gpus.iter().filter_map(|g| g.gres_type.as_deref()).collect();
        types.dedup();
        for t in types {
            let list = by_type.entry(t).or_default();
            if !list.contains(&facts.hostname) {
                list.push(facts.hostname.clone());
            }
        }
    }
    if by_type.len() < 2 {
        return Vec::new();
    }
    by_type.into_iter().map(|(t, n)| (t.to_string(), n)).collect()
}

/// The memory a job gets per CPU when it asks for none: the box's `def_mem_per_cpu`, else
/// each CPU's share of the smallest node's memory. Without a default, Slurm's `CR_*_Memory`
/// gives such a job all of its node's memory, and a node runs one job at a time, where the
/// box (which reserves nothing for it) runs one per GPU; `DefMemPerCPU=0` means the same
/// there, so the box's 0 gets the share too.
pub fn def_mem_per_cpu(configured: Option<u64>, nodes: &[(String, NodeFacts)]) -> Option<u64> {
    match configured {
        Some(mem) if mem > 0 => Some(mem),
        _ => nodes.iter().map(|(_, f)| f.real_memory_mib / u64::from(f.cpu.cpus.max(1))).filter(|m| *m > 0).min(),
    }
}

/// Whether every node has cgroups, so that jobs can be confined with them.
pub fn cgroups_everywhere(nodes: &[(String, NodeFacts)]) -> bool {
    nodes.iter().all(|(_, f)| f.cgroup_version.is_some())
}

/// The file's text.
pub fn render(inputs: &Inputs) -> String {
    let config = inputs.config;
    let [jwt_types, jwt_parameters] = super::jwt_lines();
    let mut out = vec![
        "# slurm.conf of the cluster, written by `slurmlet cluster plan` from the box's configuration".to_string(),
        "# and what each node reported. The nodes fetch it from the controller (configless).".to_string(),
        format!("ClusterName={}", inputs.cluster),
        format!("SlurmctldHost={}", inputs.controller),
        "SlurmctldParameters=enable_configless".into(),
        "SlurmUser=slurm".into(),
        "AuthType=auth/munge".into(),
        jwt_types,
        jwt_parameters,
        "CredType=cred/munge".into(),
        "StateSaveLocation=/var/spool/slurmctld".into(),
        "SlurmdSpoolDir=/var/spool/slurmd".into(),
        "SlurmctldLogFile=/var/log/slurm/slurmctld.log".into(),
        "SlurmdLogFile=/var/log/slurm/slurmd.log".into(),
        "SchedulerType=sched/backfill".into(),
        "SelectType=select/cons_tres".into(),
        "SelectTypeParameters=CR_Core_Memory".into(),
        "ReturnToService=2".into(),
        format!("KillWait={}", config.kill_wait),
        format!("MinJobAge={}", config.min_job_age),
        format!("MaxArraySize={}", config.max_array_size),
    ];
    if let Some(mem) = def_mem_per_cpu(config.def_mem_per_cpu, &inputs.nodes) {
        out.push(format!("DefMemPerCPU={mem}"));
    }
    out.push(format!("GresTypes=gpu{}", if config.shards_per_gpu > 0 { ",shard" } else { "" }));
    if cgroups_everywhere(&inputs.nodes) {
        out.extend(
            [
                "ProctrackType=proctrack/cgroup",
                "TaskPlugin=task/cgroup,task/affinity",
                "JobAcctGatherType=jobacct_gather/cgroup",
            ]
            .map(String::from),
        );
    } else {
        out.extend(
            ["ProctrackType=proctrack/linuxproc", "TaskPlugin=task/affinity", "JobAcctGatherType=jobacct_gather/linux"]
                .map(String::from),
        );
    }
    out.push(format!("JobAcctGatherFrequency={}", config.job_acct_gather_frequency));
    accounting(inputs, &mut out);
    priority(inputs, &mut out);
    if config.preempt_mode != PreemptMode::Off {
        out.push("PreemptType=preempt/qos".into());
        out.push(format!("PreemptMode={}", config.preempt_mode.name()));
    }
    if config.private_jobs {
        out.push(format!("PrivateData=jobs{}", if config.private_usage { ",usage" } else { "" }));
    }
    out.push(String::new());
    out.push("# The nodes, as `slurmd -C` prints them on each.".into());
    out.extend(inputs.nodes.iter().map(|(given, facts)| node_line(given, facts, config.shards_per_gpu)));
    out.push(String::new());
    partitions(inputs, &mut out);
    out.join("\n") + "\n"
}

fn accounting(inputs: &Inputs, out: &mut Vec<String>) {
    if !inputs.accounting {
        out.push("AccountingStorageType=accounting_storage/none".into());
        return;
    }
    out.push("AccountingStorageType=accounting_storage/slurmdbd".into());
    out.push(format!("AccountingStorageHost={}", inputs.controller));
    out.push(format!(
        "AccountingStorageTRES=gres/gpu{}",
        if inputs.config.shards_per_gpu > 0 { ",gres/shard" } else { "" }
    ));
    if super::model::limits_need_enforcing(inputs.config) {
        out.push("AccountingStorageEnforce=associations,limits,qos,safe".into());
    }
}

fn priority(inputs: &Inputs, out: &mut Vec<String>) {
    let p = &inputs.config.priority;
    if p.weights.all_zero() {
        return;
    }
    let w = &p.weights;
    out.push("PriorityType=priority/multifactor".into());
    out.push(format!("PriorityWeightAge={}", w.age));
    out.push(format!("PriorityWeightFairshare={}", w.fairshare));
    out.push(format!("PriorityWeightJobSize={}", w.job_size));
    out.push(format!("PriorityWeightPartition={}", w.partition));
    out.push(format!("PriorityWeightQOS={}", w.qos));
    if !w.tres.is_empty() {
        out.push(format!("PriorityWeightTRES={}", tres_weights(&w.tres)));
    }
    out.push(format!("PriorityMaxAge={}", duration(p.max_age_secs)));
    out.push(format!("PriorityDecayHalfLife={}", duration(p.decay_half_life_secs)));
    out.push(format!("PriorityCalcPeriod={}", (p.calc_period_secs / 60).max(1)));
    out.push(format!("PriorityFavorSmall={}", if p.favor_small { "YES" } else { "NO" }));
    if p.usage_reset != UsageReset::None && p.usage_reset != UsageReset::Now {
        out.push(format!("PriorityUsageResetPeriod={}", p.usage_reset.name()));
    }
}

/// `CPU=1,Mem=0.25G,GRES/gpu=10` (memory's weight per MB as slurmlet keeps it, written per GB).
fn tres_weights(weights: &crate::config::priority::TresWeights) -> String {
    use crate::config::priority::Tres;
    let list: Vec<String> = weights
        .0
        .iter()
        .map(|(t, w)| match t {
            Tres::Mem => format!("Mem={}G", w * 1024.0),
            t => format!("{}={w}", t.name()),
        })
        .collect();
    list.join(",")
}

fn partitions(inputs: &Inputs, out: &mut Vec<String>) {
    let config = inputs.config;
    let billing = &config.priority.billing;
    let billing =
        if billing.is_empty() { String::new() } else { format!(" TRESBillingWeights=\"{}\"", tres_weights(billing)) };
    for p in &config.partitions {
        let default_time = p.default_time.map(|m| format!(" DefaultTime={}", minutes(Some(m)))).unwrap_or_default();
        out.push(format!(
            "PartitionName={} Nodes=ALL Default={} MaxTime={}{default_time} PriorityJobFactor={}{billing} State=UP",
            p.name,
            if p.default { "YES" } else { "NO" },
            minutes(p.max_time),
            p.priority_job_factor
        ));
    }
    let box_names: Vec<&str> = config.partitions.iter().map(|p| p.name.as_str()).collect();
    for (gpu_type, nodes) in type_partitions(&inputs.nodes) {
        if box_names.contains(&gpu_type.as_str()) {
            continue;
        }
        out.push(format!(
            "PartitionName={gpu_type} Nodes={} Default=NO MaxTime=UNLIMITED{billing} State=UP",
            nodes.join(",")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::facts::sample;

    #[test]
    fn a_node_is_written_as_slurmd_prints_it_with_its_gres() {
        let facts = sample("n1");
        assert_eq!(
            node_line("n1", &facts, 0),
            "NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=15000 Gres=gpu:tesla_v100-sxm2-32gb:2 State=UNKNOWN"
        );
        assert!(node_line("n1.lab.example", &facts, 4).contains("NodeName=n1 NodeAddr=n1.lab.example"));
        assert_eq!(node_gres(&facts, 4).unwrap(), "gpu:tesla_v100-sxm2-32gb:2,shard:8");
    }

    #[test]
    fn mixed_and_untyped_gpus_are_counted_by_type() {
        let mut facts = sample("n1");
        facts.gpus[1].gres_type = Some("tesla_t4".into());
        facts.gpus.push(crate::cluster::facts::GpuFact { gres_type: None, ..facts.gpus[0].clone() });
        assert_eq!(node_gres(&facts, 0).unwrap(), "gpu:1,gpu:tesla_t4:1,gpu:tesla_v100-sxm2-32gb:1");
    }

    #[test]
    fn nodes_of_several_types_get_a_partition_each() {
        let v100 = sample("n1");
        let mut a100 = sample("n2");
        for g in &mut a100.gpus {
            g.gres_type = Some("nvidia_a100".into());
        }
        let nodes = vec![("n1".to_string(), v100.clone()), ("n2".to_string(), a100), ("n3".to_string(), sample("n3"))];
        assert_eq!(
            type_partitions(&nodes),
            vec![
                ("nvidia_a100".to_string(), vec!["n2".to_string()]),
                ("tesla_v100-sxm2-32gb".to_string(), vec!["n1".to_string(), "n3".to_string()])
            ]
        );
        assert!(type_partitions(&[("n1".to_string(), v100)]).is_empty());
    }

    #[test]
    fn a_job_that_asks_for_no_memory_gets_a_cpus_share_not_the_whole_node() {
        let big = sample("n1");
        let mut small = sample("n2");
        small.real_memory_mib = 4000;
        let nodes = vec![("n1".to_string(), big), ("n2".to_string(), small)];
        // 15000 MiB / 8 CPUs and 4000 / 8: the smaller share fits on every node.
        assert_eq!(def_mem_per_cpu(None, &nodes), Some(500));
        assert_eq!(def_mem_per_cpu(Some(0), &nodes), Some(500));
        assert_eq!(def_mem_per_cpu(Some(1024), &nodes), Some(1024));
        assert_eq!(def_mem_per_cpu(None, &[]), None);
    }

    #[test]
    fn durations_are_written_as_slurm_reads_them() {
        assert_eq!(duration(7 * 86_400), "7-00:00:00");
        assert_eq!(duration(3_661), "0-01:01:01");
        assert_eq!(minutes(None), "UNLIMITED");
    }
}
