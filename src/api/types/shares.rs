//! `GET /slurm/v0.0.43/shares` (sshare's data): every association of the fair-share tree
//! with its shares, usage and Fair Tree standing, as slurmrestd's `v0.0.43_shares_resp_msg`
//! gives them, in the tree's order (an account, then what hangs under it).

use super::{ApiError, ApiWarning, Meta};
use crate::api::noval::NoVal;
use serde::{Deserialize, Serialize};

/// Reply of `GET /slurm/v0.0.43/shares`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SharesResponse {
    pub shares: SharesMsg,
    pub meta: Meta,
    pub errors: Vec<ApiError>,
    pub warnings: Vec<ApiWarning>,
}

/// `v0.0.43_shares_resp_msg`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SharesMsg {
    /// The associations, root first, each account before what hangs under it.
    pub shares: Vec<AssocShares>,
    /// slurmrestd's `total_shares`.
    pub total_shares: i64,
}

/// `v0.0.43_assoc_shares_obj_wrap`: one association.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct AssocShares {
    /// Association id (its place in the tree, from 1).
    pub id: i64,
    /// Cluster name.
    pub cluster: String,
    /// A user's name, or an account's.
    pub name: String,
    /// The account it hangs under (empty for the root).
    pub parent: String,
    /// Partition (empty: every partition).
    pub partition: String,
    /// `NormShares`.
    pub shares_normalized: NoVal<f64>,
    /// `RawShares` (unset for the root).
    pub shares: NoVal<u32>,
    /// TRES lists (slurmlet fills none).
    pub tres: SharesTres,
    /// `EffectvUsage`.
    pub effective_usage: NoVal<f64>,
    /// `NormUsage`.
    pub usage_normalized: NoVal<f64>,
    /// `RawUsage`, billing-seconds.
    pub usage: i64,
    /// `FairShare` and `LevelFS`.
    pub fairshare: FairshareStanding,
    /// `["USER"]` or `["ASSOCIATION"]` (an account).
    #[serde(rename = "type")]
    pub kind: Vec<String>,
}

/// `tres` of an association.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct SharesTres {
    /// What its running jobs hold times the time left to their limits (`TRESRunMins`, in
    /// seconds here).
    pub run_seconds: Vec<TresCount>,
    /// Limits on TRES-minutes (`GrpTRESMins`; none are kept).
    pub group_minutes: Vec<TresCount>,
    /// Usage by TRES (none is kept by TRES).
    pub usage: Vec<serde_json::Value>,
}

/// `v0.0.43_shares_uint64_tres`: a TRES and a count.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct TresCount {
    pub name: String,
    pub value: NoVal<u64>,
}

/// `fairshare` of an association.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct FairshareStanding {
    /// `FairShare`, 0 to 1.
    pub factor: NoVal<f64>,
    /// `LevelFS`; infinite as slurmrestd writes it (its largest 64-bit number).
    pub level: NoVal<f64>,
}

impl AssocShares {
    /// Whether it is a user's association.
    pub fn is_user(&self) -> bool {
        self.kind.iter().any(|k| k == "USER")
    }
}

/// How slurmrestd writes an infinite `LevelFS`: `NO_VAL64` as a float.
pub const LEVEL_FS_INFINITE: f64 = 18_446_744_073_709_551_615.0;
