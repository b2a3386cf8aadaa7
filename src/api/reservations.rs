//! slurmrestd's reservation objects (data_parser v0.0.43): `GET /slurm/v0.0.43/reservations`
//! and `/reservation/{name}` list them (`v0.0.43_reservation_info`), `POST
//! /slurm/v0.0.43/reservation` creates or updates one from a `v0.0.43_reservation_desc_msg`,
//! `DELETE /slurm/v0.0.43/reservation/{name}` removes one.
//!
//! slurmlet adds `gpu_indices` to the info (which of the node's GPUs it holds: Slurm says
//! only how many), and takes `gpu_indices` in a description to reserve those GPUs. Its own
//! clients create and update through `/slurmlet/v1/reservation/{create,update}`, which take
//! the same description but refuse a create of a name that exists and an update of one that
//! does not, as `scontrol` does.

use super::noval::NoVal;
use super::types::{ApiError, ApiWarning, Meta};
use serde::{Deserialize, Serialize};

/// One reservation as slurmrestd lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ReservationInfo {
    /// `ReservationName`.
    pub name: String,
    /// When its window opens.
    pub start_time: NoVal<u64>,
    /// When it closes.
    pub end_time: NoVal<u64>,
    /// `Users`, comma-separated (`-bob` for one kept out).
    pub users: String,
    /// `Accounts`, comma-separated.
    pub accounts: String,
    /// `Groups` (never set here).
    pub groups: String,
    /// Its flags, by Slurm's names.
    pub flags: Vec<String>,
    /// `Nodes`.
    pub node_list: String,
    /// `NodeCnt`.
    pub node_count: u32,
    /// `CoreCnt`.
    pub core_count: u32,
    /// The CPUs it holds by id, where it holds CPUs rather than whole nodes
    /// (`NodeName=node1 CoreIDs=0-1`).
    pub core_specializations: Vec<CoreSpec>,
    /// `PartitionName`.
    pub partition: String,
    /// `TRES` (`cpu=2,gres/gpu=2`).
    pub tres: String,
    /// `Features`.
    pub features: String,
    /// `Licenses`.
    pub licenses: String,
    /// `BurstBuffer`.
    pub burst_buffer: String,
    /// `MaxStartDelay`, seconds.
    pub max_start_delay: u32,
    /// `Comment` (slurmrestd lists it in newer versions).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// slurmlet's: the node's GPUs it holds, by device index.
    pub gpu_indices: Vec<u32>,
}

/// `v0.0.43_reservation_core_spec`: the CPUs a reservation holds on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct CoreSpec {
    /// The node.
    pub node: String,
    /// Its CPUs by id, as a range list (`0-1`).
    pub core: String,
}

/// `v0.0.43_openapi_reservation_resp`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ReservationsResponse {
    /// The reservations, by start.
    pub reservations: Vec<ReservationInfo>,
    /// When they last changed.
    pub last_update: NoVal<u64>,
    /// Who answered.
    pub meta: Meta,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}

/// One TRES of a description (`v0.0.43_tres`): `{"type": "gres", "name": "gpu", "count": 2}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Tres {
    /// `cpu`, `gres`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// `gpu` for a gres.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// How many.
    pub count: i64,
}

/// `v0.0.43_reservation_desc_msg`: a reservation to create, or the changes to one. In an
/// update, a list entry written `+name` adds, `-name` removes (`Users+=bob` is `["+bob"]`),
/// and a flag written `NO_FLAG` takes the flag away, as Slurm's update message carries them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ReservationDesc {
    /// `ReservationName` (made up from the first user when a create has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `StartTime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<NoVal<u64>>,
    /// `EndTime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<NoVal<u64>>,
    /// `Duration`, minutes (infinite: `UNLIMITED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<NoVal<u32>>,
    /// `Users`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<Vec<String>>,
    /// `Accounts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accounts: Option<Vec<String>>,
    /// `Groups` (refused: not supported here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// `Flags`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// `TRES` (`cpu`, `gres/gpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tres: Option<Vec<Tres>>,
    /// `CoreCnt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_count: Option<NoVal<u32>>,
    /// `Nodes` (this node's name, or `ALL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_list: Option<Vec<String>>,
    /// `NodeCnt` (1 on this node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_count: Option<NoVal<u32>>,
    /// `PartitionName`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `Comment`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// slurmlet's: reserve these GPUs (device indices) rather than any that are free.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_indices: Option<Vec<u32>>,
    /// Keys this daemon does not know: refused by name, never ignored.
    #[serde(flatten, skip_serializing)]
    pub unknown: std::collections::BTreeMap<String, serde_json::Value>,
}

/// `v0.0.43_openapi_reservation_mod_resp`: what a create or update made.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ReservationModResponse {
    /// The reservations as they now stand (one: the one made or changed).
    pub reservations: Vec<ReservationDesc>,
    /// Who answered.
    pub meta: Meta,
    /// Errors.
    pub errors: Vec<ApiError>,
    /// Warnings.
    pub warnings: Vec<ApiWarning>,
}
