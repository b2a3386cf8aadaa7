//! `GET /slurmlet/v1/priorities`: sprio's data, each pending job's factors as its priority
//! was last computed with them (so that the weighted factors add up to the priority
//! squeue shows), and the weights. Held jobs, whose priority is 0, are left out, as
//! Slurm's sprio leaves them. Under `private_data = ["jobs"]` a caller who is not root or
//! an operator sees their own jobs only.

use crate::api::types::{JobPriority, PriorityWeights, TresValue};
use crate::daemon::model::job::JobState;
use crate::daemon::scheduling::core::Core;

/// The weights of `core`'s configuration.
pub fn weights(core: &Core) -> PriorityWeights {
    let w = &core.config.priority.weights;
    PriorityWeights {
        age: w.age,
        fairshare: w.fairshare,
        job_size: w.job_size,
        partition: w.partition,
        qos: w.qos,
        tres: w.tres.0.iter().map(|&(t, v)| TresValue { name: t.name().to_string(), value: v }).collect(),
        multifactor: core.multifactor(),
    }
}

/// The pending jobs' factors (`only`: of that user's jobs alone).
pub fn jobs(core: &Core, only: Option<u32>) -> Vec<JobPriority> {
    let at = core.priorities_computed_at().unwrap_or_else(crate::sys::now);
    core.jobs
        .values()
        .filter(|j| j.state() == JobState::Pending && !j.held && only.is_none_or(|uid| j.uid == uid))
        .map(|j| {
            let f = core.priority_factors(j, at);
            JobPriority {
                job_id: j.id,
                user_name: crate::identity::user_name(j.uid),
                account: j.account.to_string(),
                partition: j.partition.to_string(),
                qos: j.qos.to_string(),
                priority: j.priority,
                site: 0,
                age: f.age,
                fairshare: f.fairshare,
                job_size: f.job_size,
                partition_factor: f.partition,
                qos_factor: f.qos,
                tres: f.tres.iter().map(|&(t, v)| TresValue { name: t.name().to_string(), value: v }).collect(),
                nice: f.nice,
            }
        })
        .collect()
}
