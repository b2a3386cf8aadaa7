//! `GET /slurmlet/v1/priorities` (sprio's data; slurmrestd has no call for it): each
//! pending job's priority factors, 0 to 1, and the weights they are multiplied by.

use super::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// Reply of `GET /slurmlet/v1/priorities`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct PrioritiesResponse {
    /// The weights (slurm.conf's `PriorityWeight*`).
    pub weights: PriorityWeights,
    /// The pending jobs, in id order.
    pub jobs: Vec<JobPriority>,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// The weights.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct PriorityWeights {
    pub age: u32,
    pub fairshare: u32,
    pub job_size: u32,
    pub partition: u32,
    pub qos: u32,
    /// `priority_weight_tres`, per resource (`GRES/gpu`, …).
    pub tres: Vec<TresValue>,
    /// Whether priorities are computed (some weight is not 0).
    pub multifactor: bool,
}

/// A resource and a number.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct TresValue {
    pub name: String,
    pub value: f64,
}

/// One pending job's factors.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct JobPriority {
    pub job_id: u32,
    pub user_name: String,
    pub account: String,
    pub partition: String,
    pub qos: String,
    /// Its priority now.
    pub priority: u32,
    pub site: i64,
    pub age: f64,
    pub fairshare: f64,
    pub job_size: f64,
    pub partition_factor: f64,
    pub qos_factor: f64,
    /// Each weighted resource's share of the node.
    pub tres: Vec<TresValue>,
    pub nice: i32,
}
