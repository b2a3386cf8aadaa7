//! `GET /slurmlet/v1/steps`: the steps of the running jobs, for `squeue -s` and `scontrol show
//! step`. As Slurm's controller lists them: a batch job's script is its `batch` step, and
//! every srun step that started follows it.
//!
//! Only the jobs holding resources are looked at, so a long queue of pending jobs costs this
//! listing nothing; the jobs listing (`squeue`) does not build steps at all.

use crate::api::acct::StepId;
use crate::api::step_info::StepInfo;
use crate::config::Config;
use crate::daemon::model::caller::Caller;
use crate::daemon::model::job::{Job, JobState};
use crate::daemon::model::step_record::StepRecord;
use crate::daemon::scheduling::core::Core;
use crate::daemon::scheduling::steps::Srun;

/// `?stats=true`: with what each step's processes use now (`sstat`).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct StepsQuery {
    /// Fill in [`crate::api::step_info::StepInfo::stats`].
    #[serde(default)]
    pub stats: bool,
}

/// The steps of the running (or suspended, or completing) jobs `caller` may see, by job id,
/// without their owners' names: a completing job's steps are listed until they have ended,
/// as Slurm's controller lists them, with the job's state.
pub fn running(core: &Core, caller: Caller) -> Vec<StepInfo> {
    let mut jobs: Vec<&Job> = core
        .holding()
        .filter(|j| matches!(j.state(), JobState::Running | JobState::Suspended | JobState::Completing))
        .filter(|j| caller.may_see(j, &core.config))
        .collect();
    jobs.sort_by_key(|j| j.id);
    jobs.into_iter().flat_map(|j| job_steps(j, core.steps.listed(j.id), &core.config)).collect()
}

/// The steps of `job`: its batch step (a batch job's), then `srun_steps`.
fn job_steps<'a>(
    job: &Job,
    srun_steps: impl Iterator<Item = (&'a StepRecord, &'a Srun)>,
    config: &Config,
) -> Vec<StepInfo> {
    let base = StepInfo {
        job_id: job.id,
        array_job_id: job.array.map_or(0, |a| a.job_id),
        array_task_id: job.array.map(|a| a.task_id),
        partition: job.partition.to_string(),
        user_id: job.uid,
        nodes: config.node_name.clone(),
        state: job.state().name().to_string(),
        ..Default::default()
    };
    let batch = (!job.interactive).then(|| StepInfo {
        step: StepId::Batch,
        name: "batch".into(),
        start_time: job.start_time,
        tasks: 1,
        ..base.clone()
    });
    let sruns =
        srun_steps.map(|(r, srun)| (r, srun, job.step_gres(r.gpus))).map(|(r, srun, (gpus, shards))| StepInfo {
            step: StepId::Number(r.step),
            name: r.name.clone(),
            start_time: r.start,
            time_limit: r.time_limit,
            cpus: r.cpus,
            tasks: r.ntasks,
            tres: super::info::step_tres(r.cpus, r.mem_mb, gpus, shards),
            tres_per_node: match (gpus, shards) {
                (0, 0) => String::new(),
                (0, shards) => format!("gres/shard:{shards}"),
                (gpus, _) => format!("gres/gpu:{gpus}"),
            },
            // One node: one task is laid out cyclically, more in a block (Slurm's default).
            distribution: if r.ntasks > 1 { "Block" } else { "Cyclic" }.into(),
            srun_host: srun.host.clone(),
            srun_pid: srun.pid,
            ..base.clone()
        });
    batch.into_iter().chain(sruns).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: u32, name: &str, ntasks: u32, gpus: u32) -> StepRecord {
        StepRecord {
            job: 7,
            step,
            name: name.into(),
            state: JobState::Running,
            start: 1000 + step as u64,
            end: 0,
            exit_status: None,
            ntasks,
            cpus: ntasks,
            gpus,
            mem_mb: 2000,
            time_limit: (step == 1).then_some(5),
            cancelled_by: None,
            usage: None,
            gpu_use: None,
        }
    }

    #[test]
    fn a_batch_job_lists_its_script_then_its_srun_steps() {
        let file = toml::from_str("node_name = \"node1\"\ncpus = 4\nmemory = 8000\ngpus = 0\n").unwrap();
        let config = Config::resolve(file, std::path::Path::new("test.toml")).unwrap();
        let mut job = Job { id: 7, uid: 1000, partition: "gpu".into(), start_time: 990, ..Default::default() };
        job.state = Some(JobState::Running);
        job.array = Some(crate::daemon::model::job::ArrayTask { job_id: 5, task_id: 2, ..Default::default() });
        let (a, b) = (record(0, "sleep", 1, 0), record(1, "train", 2, 1));
        let srun = Srun { host: "vm".into(), pid: 42 };
        let steps = job_steps(&job, [(&a, &srun), (&b, &srun)].into_iter(), &config);
        let ids: Vec<String> = steps.iter().map(StepInfo::display_id).collect();
        assert_eq!(ids, ["5_2.batch", "5_2.0", "5_2.1"]);
        assert_eq!((steps[0].cpus, steps[0].tasks, steps[0].start_time, steps[0].tres.as_str()), (0, 1, 990, ""));
        assert_eq!(steps[1].tres, "cpu=1,mem=2000M,node=1");
        assert_eq!(steps[1].distribution, "Cyclic");
        assert_eq!(steps[2].tres, "cpu=2,gres/gpu=1,mem=2000M,node=1");
        assert_eq!((steps[2].distribution.as_str(), steps[2].tres_per_node.as_str()), ("Block", "gres/gpu:1"));
        assert_eq!((steps[2].time_limit, steps[2].srun_pid, steps[2].nodes.as_str()), (Some(5), 42, "node1"));
        job.interactive = true;
        let steps = job_steps(&job, [(&a, &srun)].into_iter(), &config);
        assert_eq!(steps.iter().map(StepInfo::display_id).collect::<Vec<_>>(), ["5_2.0"]);
    }

    #[test]
    fn a_step_of_a_shard_job_is_given_its_shards_not_its_gpu() {
        let file =
            toml::from_str("node_name = \"node1\"\ncpus = 4\nmemory = 8000\ngpus = 2\nshards_per_gpu = 8\n").unwrap();
        let config = Config::resolve(file, std::path::Path::new("test.toml")).unwrap();
        let mut job = Job { id: 8, uid: 1000, start_time: 990, interactive: true, ..Default::default() };
        job.state = Some(JobState::Running);
        job.req.shards = 3;
        let step = record(0, "train", 1, 1);
        let srun = Srun { host: "vm".into(), pid: 42 };
        let steps = job_steps(&job, [(&step, &srun)].into_iter(), &config);
        assert_eq!(steps[0].tres, "cpu=1,gres/shard=3,mem=2000M,node=1");
        assert_eq!(steps[0].tres_per_node, "gres/shard:3");
    }
}
