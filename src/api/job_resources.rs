//! `job_res`: what a job holds, node by node, as slurmrestd reports it in a job's
//! `job_resources` (data_parser v0.0.43): the node's cores, each allocated to the job or
//! not, and the job's memory there. A node here is one socket of as many cores as it has
//! CPUs, so a core's index is its CPU id.

use super::noval::NoVal;
use serde::{Deserialize, Serialize};

/// `job_res`: a job's resources (`null` for a job that holds none yet).
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobRes {
    /// How the cores were selected (`CORE`).
    pub select_type: Vec<String>,
    /// The job's nodes.
    pub nodes: JobResNodes,
    /// CPUs the job holds.
    pub cpus: u32,
    /// Threads per core, when the job asked.
    pub threads_per_core: NoVal<u16>,
}

/// `job_res.nodes`: the job's nodes and what it holds on each.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResNodes {
    /// How many.
    pub count: u32,
    /// How they were selected (`ONE_ROW`).
    pub select_type: Vec<String>,
    /// Their names, as a host list.
    pub list: String,
    /// Whether the job holds them whole.
    pub whole: bool,
    /// What the job holds on each.
    pub allocation: Vec<JobResNode>,
}

/// `job_res_node`: what a job holds on one node.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResNode {
    /// The node's place in the job's node list.
    pub index: u32,
    /// The node's name.
    pub name: String,
    /// The job's CPUs there.
    pub cpus: JobResCpus,
    /// The job's memory there.
    pub memory: JobResMemory,
    /// The node's sockets and their cores.
    pub sockets: Vec<JobResSocket>,
}

/// `job_res_node.cpus`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResCpus {
    /// CPUs given to the job.
    pub count: u32,
    /// CPUs the job uses.
    pub used: u32,
}

/// `job_res_node.memory`, in MiB.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResMemory {
    /// Memory the job uses.
    pub used: u64,
    /// Memory given to the job.
    pub allocated: u64,
}

/// `job_res_socket`: one socket of a node and its cores.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResSocket {
    /// The socket's index on its node.
    pub index: u32,
    /// Its cores.
    pub cores: Vec<JobResCore>,
}

/// `job_res_core`: one core and whether the job holds it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobResCore {
    /// The core's index on its socket.
    pub index: u32,
    /// `ALLOCATED` or `UNALLOCATED`.
    pub status: Vec<String>,
}

/// A core's status when the job holds it.
const ALLOCATED: &str = "ALLOCATED";

impl JobRes {
    /// A job's resources on the one node `node` of `node_cpus` CPUs: the CPUs `cpu_ids` and
    /// `mem_mb` MiB of memory.
    pub fn on_one_node(node: &str, node_cpus: u32, cpu_ids: &[u32], mem_mb: u64) -> JobRes {
        let core = |index: u32| JobResCore {
            index,
            status: vec![if cpu_ids.contains(&index) { ALLOCATED } else { "UNALLOCATED" }.into()],
        };
        let count = cpu_ids.len() as u32;
        JobRes {
            select_type: vec!["CORE".into()],
            nodes: JobResNodes {
                count: 1,
                select_type: vec!["ONE_ROW".into()],
                list: node.into(),
                whole: false,
                allocation: vec![JobResNode {
                    index: 0,
                    name: node.into(),
                    cpus: JobResCpus { count, used: 0 },
                    memory: JobResMemory { used: 0, allocated: mem_mb },
                    sockets: vec![JobResSocket { index: 0, cores: (0..node_cpus).map(core).collect() }],
                }],
            },
            cpus: count,
            threads_per_core: NoVal::unset(),
        }
    }

    /// The ids of the CPUs the job holds on its first node, ascending: each allocated core's
    /// index, counted on from the cores of the sockets before its own.
    pub fn cpu_ids(&self) -> Vec<u32> {
        let Some(node) = self.nodes.allocation.first() else { return Vec::new() };
        let mut ids = Vec::new();
        let mut base = 0;
        for socket in &node.sockets {
            let held = socket.cores.iter().filter(|c| c.status.iter().any(|s| s == ALLOCATED));
            ids.extend(held.map(|c| base + c.index));
            base += socket.cores.len() as u32;
        }
        ids.sort_unstable();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_given_are_the_ids_read() {
        let res = JobRes::on_one_node("vm", 8, &[0, 1, 4], 2000);
        assert_eq!(res.cpu_ids(), vec![0, 1, 4]);
        assert_eq!(res.cpus, 3);
        let node = &res.nodes.allocation[0];
        assert_eq!(node.sockets[0].cores.len(), 8);
        assert_eq!(node.sockets[0].cores[2].status, vec!["UNALLOCATED"]);
        assert_eq!(node.memory.allocated, 2000);
    }

    #[test]
    fn slurmrestds_job_resources_read() {
        // Job 26 of the reference's `job_running_usr1.json` (slurmrestd 26.05).
        let text = r#"{"select_type":["CORE"],"nodes":{"count":1,"select_type":["ONE_ROW"],"list":"vm",
            "whole":false,"allocation":[{"index":0,"name":"vm","cpus":{"count":1,"used":0},
            "memory":{"used":0,"allocated":1000},"sockets":[{"index":0,"cores":[
            {"index":0,"status":["UNALLOCATED"]},{"index":1,"status":["ALLOCATED"]}]}]}]},
            "cpus":1,"threads_per_core":{"set":false,"infinite":false,"number":0}}"#;
        let res: JobRes = serde_json::from_str(text).unwrap();
        assert_eq!(res.cpu_ids(), vec![1]);
        assert_eq!(res, JobRes::on_one_node("vm", 2, &[1], 1000));
        // Cores of a second socket count on from the first's.
        let mut two = res.clone();
        two.nodes.allocation[0]
            .sockets
            .push(JobResSocket { index: 1, cores: vec![JobResCore { index: 1, status: vec![ALLOCATED.into()] }] });
        assert_eq!(two.cpu_ids(), vec![1, 3]);
    }
}
