//! The GPUs and shards a job asks for, read from its `--gres`, `--gpus*` and per-task
//! requests and checked against the node's, so that a request no GPU here can meet is
//! refused at submit time.

use super::submit_refusals::{explained, submit_error, NODE_CONFIG};
use crate::api::types::{errno, JobDescMsg};
use crate::config::Config;
use crate::daemon::model::gres_type::{GresType, MAX_GRES_TYPE};
use crate::daemon::model::refusal::Refusal;
use crate::options::gres;

/// What a job asks for of the node's GPUs: whole GPUs, or shards of one GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::daemon) struct GpuRequest {
    /// GPUs given whole, none shared with another job.
    pub gpus: u32,
    /// Shards of one GPU (`--gres=shard:N`).
    pub shards: u32,
    /// The type of GPU asked for (`--gres=gpu:tesla_t4:1`), one of the node's; `None`: any.
    pub gpu_type: Option<GresType>,
}

/// The GPUs and shards a job asks for: of each, the largest of its per-node, per-job and
/// per-task (times the task count) requests, each checked against the node's GPUs. A job
/// asks for whole GPUs or for shards, and its shards must fit on one GPU.
pub(in crate::daemon) fn requested_gres(
    desc: &JobDescMsg,
    config: &Config,
    ntasks: u32,
) -> Result<GpuRequest, Refusal> {
    let invalid = invalid_gres;
    let mut asked = GpuRequest::default();
    let per_task = desc.tres_per_task.as_deref().map(|t| (t, ntasks));
    let whole = [desc.tres_per_node.as_deref(), desc.tres_per_job.as_deref()].into_iter().flatten().map(|t| (t, 1));
    for (tres, times) in whole.chain(per_task) {
        if tres.is_empty() {
            continue;
        }
        let reqs = gres::parse_gres(tres).map_err(|_| invalid(tres.to_string()))?;
        for r in reqs {
            let count = r.count.saturating_mul(times);
            match r.name.as_str() {
                "gpu" => asked.gpus = asked.gpus.max(count),
                "shard" if config.shards_per_gpu > 0 => asked.shards = asked.shards.max(count),
                "shard" => {
                    return Err(invalid(format!(
                        "this node has no 'shard' resource (it has {}; shards_per_gpu in the configuration splits GPUs into shards)",
                        config.gres()
                    )))
                }
                other => {
                    return Err(invalid(format!("this node has no '{other}' resource (it has {})", config.gres())))
                }
            }
            if let Some(kind) = &r.kind {
                let kind = typed(kind, config, &asked)?;
                let have = config.gpus.iter().filter(|g| g.gres_type.as_deref() == Some(kind.as_str())).count();
                if r.name == "gpu" && count as usize > have {
                    return Err(explained(
                        errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
                        NODE_CONFIG,
                        format!(
                            "the job asks for {count} GPUs of type '{kind}'; node {} has {have} ({})",
                            config.node_name,
                            config.gres()
                        ),
                    ));
                }
                asked.gpu_type = Some(kind);
            }
        }
    }
    if asked.gpus > 0 && asked.shards > 0 {
        return Err(invalid(format!(
            "the job asks for {} GPU(s) and {} shard(s): a job is given whole GPUs or shards of one, not both",
            asked.gpus, asked.shards
        )));
    }
    if asked.shards > config.shards_per_gpu {
        return Err(explained(
            errno::REQUESTED_NODE_CONFIG_UNAVAILABLE,
            NODE_CONFIG,
            format!(
                "the job asks for {} shards; shards are given on one GPU, and each GPU of node {} has {}",
                asked.shards, config.node_name, config.shards_per_gpu
            ),
        ));
    }
    Ok(asked)
}

/// Slurm's refusal of a GRES request it cannot read, with why.
fn invalid_gres(why: String) -> Refusal {
    explained(
        errno::INVALID_GRES,
        "Invalid generic resource (gres) specification",
        format!("Invalid generic resource (gres) specification: {why}"),
    )
}

/// The GPU type `kind` of a request, if the node has GPUs of that type and the request has
/// named no other; refused otherwise, as Slurm refuses a type no node has ("Requested node
/// configuration is not available"). A job's GPUs are of one type here.
fn typed(kind: &str, config: &Config, asked: &GpuRequest) -> Result<GresType, Refusal> {
    let unavailable = |why: String| explained(errno::REQUESTED_NODE_CONFIG_UNAVAILABLE, NODE_CONFIG, why);
    if !config.gpus.iter().any(|g| g.gres_type.as_deref() == Some(kind)) {
        let why = format!("no GPU of type '{kind}' here (this node has {})", config.gres());
        // Where no GPU is typed, Slurm finds the request itself invalid.
        return Err(match config.gpus.iter().any(|g| g.gres_type.is_some()) {
            true => unavailable(why),
            false => invalid_gres(why),
        });
    }
    let kind =
        GresType::new(kind).ok_or_else(|| unavailable(format!("a GPU type name is at most {MAX_GRES_TYPE} bytes")))?;
    match asked.gpu_type {
        Some(other) if other != kind => Err(unavailable(format!(
            "the job asks for GPUs of two types ('{other}' and '{kind}'): a job's GPUs are of one type here"
        ))),
        _ => Ok(kind),
    }
}

/// The number in a per-GPU request (`gres/gpu:N`, as sent for `--cpus-per-gpu` and
/// `--mem-per-gpu`).
pub(super) fn per_gpu(tres: Option<&str>) -> Result<Option<u64>, Refusal> {
    let Some(tres) = tres.filter(|t| !t.is_empty()) else { return Ok(None) };
    tres.strip_prefix("gres/gpu:")
        .or_else(|| tres.strip_prefix("gpu:"))
        .and_then(|n| n.parse().ok())
        .map(Some)
        .ok_or_else(|| submit_error(errno::INVALID_GRES, &format!("Invalid per-GPU request: {tres}")))
}
