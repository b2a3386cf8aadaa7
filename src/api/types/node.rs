//! The machine and its partitions as `GET /nodes`, `GET /partitions` and `GET /ping`
//! report them.

use super::{ApiError, ApiWarning, Meta};
use crate::api::noval::NoVal;
use serde::{Deserialize, Serialize};

/// `node`: the machine as `GET /nodes` reports it.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Node {
    pub architecture: String,
    pub boards: u32,
    pub boot_time: NoVal<u64>,
    pub cluster_name: String,
    pub cores: u32,
    pub cpu_load: u32,
    pub free_mem: NoVal<u64>,
    pub cpus: u32,
    pub effective_cpus: u32,
    pub features: Vec<String>,
    pub active_features: Vec<String>,
    pub gres: String,
    pub gres_drained: String,
    pub gres_used: String,
    pub last_busy: NoVal<u64>,
    pub name: String,
    pub address: String,
    pub hostname: String,
    pub state: Vec<String>,
    pub operating_system: String,
    pub owner: String,
    pub partitions: Vec<String>,
    pub real_memory: u64,
    pub comment: String,
    pub reason: String,
    /// When the reason changed.
    pub reason_changed_at: NoVal<u64>,
    /// Who set the reason (the daemon's user for the reasons it finds itself).
    pub reason_set_by_user: String,
    pub alloc_memory: u64,
    pub alloc_cpus: u32,
    pub alloc_idle_cpus: u32,
    pub tres_used: String,
    pub slurmd_start_time: NoVal<u64>,
    pub sockets: u32,
    pub threads: u32,
    pub temporary_disk: u32,
    pub weight: u32,
    pub tres: String,
    pub version: String,
}

/// `GET /slurm/v0.0.43/nodes` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct NodesResponse {
    pub nodes: Vec<Node>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// `partition_info.nodes`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionNodes {
    pub allowed_allocation: String,
    pub configured: String,
    pub total: u32,
}

/// `partition_info.cpus`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionCpus {
    pub task_binding: u32,
    pub total: u32,
}

/// `partition_info.defaults`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionDefaults {
    pub memory_per_cpu: u64,
    pub partition_memory_per_cpu: NoVal<u64>,
    pub partition_memory_per_node: NoVal<u64>,
    pub time: NoVal<u32>,
    pub job: String,
}

/// `partition_info.maximums` (the part slurmlet fills).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionMaximums {
    pub cpus_per_node: NoVal<u32>,
    pub memory_per_cpu: u64,
    pub partition_memory_per_node: NoVal<u64>,
    pub nodes: NoVal<u32>,
    pub shares: u32,
    pub time: NoVal<u32>,
}

/// `partition_info.partition`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionState {
    pub state: Vec<String>,
}

/// `partition_info.tres`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionTres {
    pub billing_weights: String,
    pub configured: String,
}

/// `partition_info.priority`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionPriority {
    pub job_factor: u32,
    pub tier: u32,
}

/// `partition_info`: one partition as `GET /partitions` reports it.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionInfo {
    pub nodes: PartitionNodes,
    pub tres: PartitionTres,
    pub cluster: String,
    pub cpus: PartitionCpus,
    pub defaults: PartitionDefaults,
    pub grace_time: u32,
    pub maximums: PartitionMaximums,
    pub name: String,
    pub node_sets: String,
    pub priority: PartitionPriority,
    pub partition: PartitionState,
    /// Partition flags as data_parser v0.0.45 reports them; slurmlet sets `DEFAULT` on the
    /// default partition (v0.0.43 has no field for it).
    pub flags: Vec<String>,
}

/// `GET /slurm/v0.0.43/partitions` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PartitionsResponse {
    pub partitions: Vec<PartitionInfo>,
    pub last_update: NoVal<u64>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// One entry of `pings[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Ping {
    pub hostname: String,
    pub pinged: String,
    pub responding: bool,
    pub latency: u64,
    pub mode: String,
    pub primary: bool,
}

/// `GET /slurm/v0.0.43/ping` reply.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PingResponse {
    pub pings: Vec<Ping>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}
