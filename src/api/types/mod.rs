//! Request and response bodies of slurmrestd's data_parser v0.0.43, as far as slurmlet uses them.
//!
//! Field names and nesting follow the OpenAPI document of slurmrestd 26.05 (`v0.0.43_*` schemas).
//! Every response type defaults missing fields so that replies of a real slurmrestd parse too.
//!
//! The envelope every reply carries is here; the bodies are in one file per group of calls
//! (a submit's, a job's, a job's changes, the node's and partitions', slurmlet's own calls,
//! squeue's query, Slurm's error numbers), all named from here.

pub mod errno;
mod job_change;
mod job_desc;
mod job_info;
mod node;
mod priorities;
mod queue_query;
mod shares;
mod slurmlet;

pub use job_change::{
    CancelResponse, JobPostResponse, JobUpdateResult, KillError, KillFederation, KillStatus, SignalScope,
};
pub use job_desc::{JobDescMsg, JobSubmitReq, JobSubmitResponse};
pub use job_info::{ExitCode, ExitSignal, JobInfo, JobsResponse};
pub use node::{
    Node, NodesResponse, PartitionCpus, PartitionDefaults, PartitionInfo, PartitionMaximums, PartitionNodes,
    PartitionPriority, PartitionState, PartitionTres, PartitionsResponse, Ping, PingResponse,
};
pub use priorities::{JobPriority, PrioritiesResponse, PriorityWeights, TresValue};
pub use queue_query::{Cell, JobQuery, JobRows, LayoutField, LayoutItem};
pub use shares::{AssocShares, FairshareStanding, SharesMsg, SharesResponse, SharesTres, TresCount, LEVEL_FS_INFINITE};
pub use slurmlet::{BatchScriptResponse, ConfigInfo, ConfigResponse, TokenRequest, TokenResponse, MAX_TOKEN_LIFESPAN};

use serde::{Deserialize, Serialize};

/// The data_parser version this crate speaks.
pub const DATA_PARSER: &str = "v0.0.43";

/// `meta.plugin` of a response.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaPlugin {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub data_parser: String,
    pub accounting_storage: String,
}

/// `meta.client` of a response.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaClient {
    pub source: String,
    pub user: String,
    pub group: String,
}

/// `meta.slurm.version`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Version {
    pub major: String,
    pub micro: String,
    pub minor: String,
}

/// `meta.slurm`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MetaSlurm {
    pub version: Version,
    pub release: String,
    pub cluster: String,
}

/// The `meta` object every response carries.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Meta {
    pub plugin: MetaPlugin,
    pub client: MetaClient,
    pub command: Vec<String>,
    pub slurm: MetaSlurm,
}

/// One entry of `errors[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ApiError {
    pub description: String,
    pub error_number: i32,
    pub error: String,
    pub source: String,
}

/// One entry of `warnings[]`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct ApiWarning {
    pub description: String,
    pub source: String,
}

/// The `meta`/`errors`/`warnings` envelope shared by all responses.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Envelope {
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}
