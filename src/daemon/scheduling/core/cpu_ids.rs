//! The node's CPUs by id, as the scheduler hands them out: numbered 0 to the node's CPU
//! count less one, a job gets the lowest free ids (Slurm's default fills cores in order),
//! gives them back when it ends or waits again, and a job re-adopted after a restart holds
//! its own again.
//!
//! The plan and the backfill count CPUs; the ids follow the count. Every CPU a holding job
//! counts is one of its ids, so when the count says a job fits, that many ids are free.

use super::Core;

impl Core {
    /// Takes the `count` lowest free CPU ids, ascending.
    pub(super) fn take_cpu_ids(&mut self, count: u32) -> Vec<u32> {
        debug_assert!(
            self.resources.free_cpus.len() >= count as usize,
            "{count} CPUs fit by the count, but only {} ids are free",
            self.resources.free_cpus.len()
        );
        let ids: Vec<u32> = self.resources.free_cpus.iter().copied().take(count as usize).collect();
        for id in &ids {
            self.resources.free_cpus.remove(id);
        }
        ids
    }

    /// Gives `ids` back: other jobs may be given them.
    pub(super) fn release_cpu_ids(&mut self, ids: &[u32]) {
        let node = self.config.cpus;
        self.resources.free_cpus.extend(ids.iter().copied().filter(|&id| id < node));
    }

    /// Marks `ids`, those of a job re-adopted after a restart, as given.
    pub(super) fn hold_cpu_ids(&mut self, ids: &[u32]) {
        for id in ids {
            self.resources.free_cpus.remove(id);
        }
    }

    /// The node's CPU ids no job holds, ascending.
    pub fn free_cpu_ids(&self) -> Vec<u32> {
        self.resources.free_cpus.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::daemon::model::job::{Job, JobState, Resources};
    use crate::stepd::{EndCause, EndStatus};

    /// A daemon's state on a node of `cpus` CPUs and no GPUs, its store in `dir`.
    fn core(dir: &std::path::Path, cpus: u32) -> Core {
        let text = format!("cpus = {cpus}\nmemory = 16000\ngpus = 0\nstate_dir = \"{}\"\n", dir.display());
        let config = Config::resolve(toml::from_str(&text).unwrap(), &dir.join("slurmlet.toml")).unwrap();
        Core::open(config, Default::default()).unwrap()
    }

    /// Queues job `id` asking for `cpus` CPUs.
    fn submit(core: &mut Core, id: u32, cpus: u32) {
        let job = Job {
            id,
            state: Some(JobState::Pending),
            partition: "gpu".into(),
            priority: 1,
            ntasks: 1,
            cpus_per_task: cpus,
            req: Resources { cpus, ..Default::default() },
            ..Default::default()
        };
        drop(core.writer.insert_all(std::slice::from_ref(&job), crate::daemon::store::Payload::default()));
        let _ = core.admit(vec![job]);
    }

    /// Runs a scheduling pass; the jobs it started.
    fn schedule(core: &mut Core) -> Vec<u32> {
        core.schedule().launch.into_iter().map(|(id, _)| id).collect()
    }

    fn end(core: &mut Core, id: u32) {
        let status = EndStatus { wait_status: 0, cause: EndCause::Exited, end_time: 1, usage: None };
        core.finish(id, Some(status));
    }

    fn ids(core: &Core, id: u32) -> Vec<u32> {
        core.jobs[&id].cpu_ids.clone()
    }

    #[test]
    fn two_one_cpu_jobs_get_different_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = core(dir.path(), 4);
        submit(&mut core, 1, 1);
        submit(&mut core, 2, 1);
        assert_eq!(schedule(&mut core), vec![1, 2]);
        assert_eq!((ids(&core, 1), ids(&core, 2)), (vec![0], vec![1]));
        assert_eq!(core.free_cpu_ids(), vec![2, 3]);
    }

    #[test]
    fn cpus_given_back_at_the_end_are_given_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = core(dir.path(), 2);
        submit(&mut core, 1, 1);
        submit(&mut core, 2, 1);
        submit(&mut core, 3, 1);
        assert_eq!(schedule(&mut core), vec![1, 2], "the third waits for a CPU");
        assert!(core.free_cpu_ids().is_empty());
        end(&mut core, 1);
        assert_eq!(ids(&core, 1), vec![0], "an ended job still shows what it held");
        assert_eq!(core.free_cpu_ids(), vec![0]);
        assert_eq!(schedule(&mut core), vec![3]);
        assert_eq!(ids(&core, 3), vec![0], "job 1's CPU");
        assert!(core.free_cpu_ids().is_empty());
    }

    #[test]
    fn a_job_on_a_fragmented_node_gets_the_free_cpus() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = core(dir.path(), 6);
        for id in 1..=6 {
            submit(&mut core, id, 1);
        }
        assert_eq!(schedule(&mut core).len(), 6);
        for id in [2, 4, 6] {
            end(&mut core, id);
        }
        assert_eq!(core.free_cpu_ids(), vec![1, 3, 5]);
        submit(&mut core, 7, 3);
        assert_eq!(schedule(&mut core), vec![7]);
        assert_eq!(ids(&core, 7), vec![1, 3, 5]);
        assert_eq!(crate::id_set::ranges(&ids(&core, 7)), "1,3,5");
    }

    #[test]
    fn a_requeued_job_gives_its_cpus_back_and_gets_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut core = core(dir.path(), 4);
        submit(&mut core, 1, 2);
        assert_eq!(schedule(&mut core), vec![1]);
        assert_eq!(ids(&core, 1), vec![0, 1]);
        core.jobs.get_mut(&1).unwrap().requeue_on_end = true;
        end(&mut core, 1);
        assert_eq!(core.jobs[&1].state(), JobState::Pending);
        assert!(ids(&core, 1).is_empty(), "a waiting job holds no CPU");
        assert_eq!(core.free_cpu_ids(), vec![0, 1, 2, 3]);
        submit(&mut core, 2, 1);
        assert_eq!(schedule(&mut core), vec![1, 2]);
        assert_eq!((ids(&core, 1), ids(&core, 2)), (vec![0, 1], vec![2]));
    }

    #[test]
    fn recovery_holds_each_jobs_cpus_again_and_gives_ids_to_jobs_stored_without() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = core(dir.path(), 4);
        submit(&mut first, 1, 1);
        submit(&mut first, 2, 2);
        assert_eq!(schedule(&mut first), vec![1, 2]);
        assert_eq!((ids(&first, 1), ids(&first, 2)), (vec![0], vec![1, 2]));
        first.flush();
        // Both ended while no daemon ran, and job 2 was given its CPUs by a daemon that
        // counted them only.
        let status = EndStatus { wait_status: 0, cause: EndCause::Exited, end_time: 1, usage: None };
        for id in [1, 2] {
            let dir = first.job_dir(id);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(crate::stepd::files::STATUS), serde_json::to_vec(&status).unwrap()).unwrap();
        }
        drop(first);
        let db = rusqlite::Connection::open(dir.path().join("slurmlet.db")).unwrap();
        db.execute("UPDATE jobs SET cpu_ids = NULL WHERE id = 2", []).unwrap();
        drop(db);

        let mut second = core(dir.path(), 4);
        assert_eq!((ids(&second, 1), ids(&second, 2)), (vec![0], vec![]), "as stored");
        let _ = second.recover();
        assert_eq!(ids(&second, 1), vec![0]);
        assert_eq!(ids(&second, 2), vec![1, 2], "the lowest free once job 1's own CPU is held again");
        assert_eq!(second.jobs[&2].state(), JobState::Completed);
        assert_eq!(second.free_cpu_ids(), vec![0, 1, 2, 3], "both ended and gave their CPUs back");
    }
}
