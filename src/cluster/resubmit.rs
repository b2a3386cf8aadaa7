//! A job still pending on this machine, as the `sbatch` options that ask a cluster for the
//! same: what `slurmlet cluster pending` prints for each job, and what `--move-pending`
//! submits. The options are read back from the job as this machine's API shows it (the
//! same fields `scontrol show job` prints), so that the cluster's `sbatch` parses them with
//! the one option model every submit goes through; the script is the one submitted.
//!
//! What does not carry is said, never dropped in silence: a dependency on a job of this
//! machine (its id means nothing on the cluster) makes the job unmovable; node names,
//! a reservation and a begin time are left out with a note. The environment is the mover's,
//! as `sbatch`'s default `--export=ALL` takes it: this machine does not hand a job's
//! environment out.

use crate::api::types::JobInfo;

/// Why a pending job cannot be moved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotMovable {
    /// It is not a batch job (an `salloc` or `srun` waiting for its allocation).
    #[error("not a batch job: resubmit it with the command that made it")]
    NotBatch,
    /// It depends on jobs of this machine.
    #[error("it depends on {0} here: move it once that has ended, or drop the dependency (scontrol update)")]
    Dependency(String),
}

/// The options, and what was left out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resubmit {
    /// `sbatch`'s options, each one word (`--name=value`).
    pub options: Vec<String>,
    /// What the job asked for that the options leave out, and why.
    pub notes: Vec<String>,
}

impl Resubmit {
    fn put(&mut self, name: &str, value: impl std::fmt::Display) {
        self.options.push(format!("--{name}={value}"));
    }

    fn put_text(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.put(name, value);
        }
    }
}

/// The options that ask for `job` again.
pub fn options(job: &JobInfo) -> Result<Resubmit, NotMovable> {
    if !job.batch_flag {
        return Err(NotMovable::NotBatch);
    }
    let dependency = job.dependency.trim();
    if !dependency.is_empty() && dependency != "(null)" {
        return Err(NotMovable::Dependency(dependency.to_string()));
    }
    let mut r = Resubmit::default();
    r.put_text("job-name", &job.name);
    r.put_text("partition", &job.partition);
    r.put_text("account", &job.account);
    r.put_text("qos", &job.qos);
    if let Some(minutes) = job.time_limit.get() {
        r.put("time", minutes);
    }
    sizes(job, &mut r);
    gres(job, &mut r);
    r.put_text("chdir", &job.current_working_directory);
    r.put_text("output", &job.standard_output);
    r.put_text("error", &job.standard_error);
    if job.standard_input != "/dev/null" {
        r.put_text("input", &job.standard_input);
    }
    if job.array_job_id.get().is_some_and(|id| id != 0) && !job.array_task_string.is_empty() {
        let throttle = job.array_max_tasks.get().filter(|n| *n > 0).map(|n| format!("%{n}")).unwrap_or_default();
        let tasks = job.array_task_string.split('%').next().unwrap_or_default();
        r.put("array", format!("{tasks}{throttle}"));
    }
    r.put_text("comment", &job.comment);
    r.put_text("constraint", &job.features);
    let mail: Vec<&str> = job.mail_type.iter().map(String::as_str).filter(|t| *t != "NONE").collect();
    if !mail.is_empty() {
        r.put("mail-type", mail.join(","));
        r.put_text("mail-user", &job.mail_user);
    }
    if job.nice != 0 {
        r.put("nice", job.nice);
    }
    if job.hold {
        r.options.push("--hold".into());
    }
    left_out(job, &mut r);
    Ok(r)
}

/// Nodes, tasks, CPUs and memory.
fn sizes(job: &JobInfo, r: &mut Resubmit) {
    if let Some(min) = job.node_count.get().filter(|n| *n > 0) {
        match job.max_nodes.get().filter(|max| *max > min) {
            Some(max) => r.put("nodes", format!("{min}-{max}")),
            None => r.put("nodes", min),
        }
    }
    if let Some(tasks) = job.tasks.get().filter(|n| *n > 0) {
        r.put("ntasks", tasks);
    }
    if let Some(per_node) = job.tasks_per_node.get().filter(|n| *n > 0) {
        r.put("ntasks-per-node", per_node);
    }
    if let Some(cpus) = job.cpus_per_task.get().filter(|n| *n > 0) {
        r.put("cpus-per-task", cpus);
    }
    if let Some(mb) = job.memory_per_cpu.get().filter(|n| *n > 0) {
        r.put("mem-per-cpu", format!("{mb}M"));
    } else if let Some(mb) = job.memory_per_node.get().filter(|n| *n > 0) {
        r.put("mem", format!("{mb}M"));
    }
}

/// GPUs and shards: per node (`--gres`), per job (`--gpus`), per task (`--gpus-per-task`).
fn gres(job: &JobInfo, r: &mut Resubmit) {
    // `gres/gpu:a100:2` or `gres/gpu=2`; other TRES (cpu, mem) are said by the sizes.
    let items = |list: &str| -> Vec<String> {
        list.split(',')
            .filter_map(|item| item.trim().strip_prefix("gres/"))
            .map(|item| item.replacen('=', ":", 1))
            .collect()
    };
    let per_node = items(&job.tres_per_node);
    if !per_node.is_empty() {
        r.put("gres", per_node.join(","));
    }
    for (name, list) in [("gpus", &job.tres_per_job), ("gpus-per-task", &job.tres_per_task)] {
        for item in items(list) {
            match item.strip_prefix("gpu:") {
                Some(count) => r.put(name, count),
                None => r.notes.push(format!("{item} {} is left out: sbatch asks for GPUs only that way", name)),
            }
        }
    }
}

/// What the job asked for that has no meaning on the cluster.
fn left_out(job: &JobInfo, r: &mut Resubmit) {
    let named = [
        ("nodes", &job.required_nodes, "--nodelist"),
        ("excluded nodes", &job.excluded_nodes, "--exclude"),
        ("reservation", &job.resv_name, "--reservation"),
    ];
    for (what, value, option) in named {
        if !value.is_empty() {
            r.notes.push(format!("{option}={value} is left out: the {what} of this machine are not the cluster's"));
        }
    }
    let now = crate::sys::now();
    if job.eligible_time.get().is_some_and(|at| at > now) && job.state_reason == "BeginTime" {
        r.notes.push("its begin time is left out: give --begin again if it still matters".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    fn pending() -> JobInfo {
        JobInfo {
            batch_flag: true,
            name: "train".into(),
            partition: "short".into(),
            account: "physics".into(),
            time_limit: NoVal::of(90),
            node_count: NoVal::of(2),
            tasks: NoVal::of(8),
            cpus_per_task: NoVal::of(4),
            memory_per_node: NoVal::of(16000),
            tres_per_node: "gres/gpu:a100:2".into(),
            current_working_directory: "/home/alice/run one".into(),
            standard_output: "/home/alice/run one/%x-%j.out".into(),
            standard_input: "/dev/null".into(),
            array_job_id: NoVal::of(7),
            array_task_string: "3-9".into(),
            array_max_tasks: NoVal::of(2),
            mail_type: vec!["END".into(), "FAIL".into()],
            mail_user: "alice@lab".into(),
            hold: true,
            required_nodes: "box1".into(),
            ..JobInfo::default()
        }
    }

    #[test]
    fn a_pending_job_is_asked_for_again_with_the_same_sizes_gpus_and_paths() {
        let r = options(&pending()).unwrap();
        assert_eq!(
            r.options,
            [
                "--job-name=train",
                "--partition=short",
                "--account=physics",
                "--time=90",
                "--nodes=2",
                "--ntasks=8",
                "--cpus-per-task=4",
                "--mem=16000M",
                "--gres=gpu:a100:2",
                "--chdir=/home/alice/run one",
                "--output=/home/alice/run one/%x-%j.out",
                "--array=3-9%2",
                "--mail-type=END,FAIL",
                "--mail-user=alice@lab",
                "--hold",
            ]
        );
        assert_eq!(r.notes, ["--nodelist=box1 is left out: the nodes of this machine are not the cluster's"]);
    }

    #[test]
    fn gpus_per_job_and_per_task_keep_their_form() {
        let job = JobInfo { tres_per_job: "gres/gpu=4".into(), tres_per_task: "gres/gpu:v100:1".into(), ..pending() };
        let r = options(&job).unwrap();
        assert!(r.options.contains(&"--gpus=4".to_string()), "{:?}", r.options);
        assert!(r.options.contains(&"--gpus-per-task=v100:1".to_string()), "{:?}", r.options);
    }

    #[test]
    fn a_dependency_or_an_allocation_is_not_moved() {
        let job = JobInfo { dependency: "afterok:12".into(), ..pending() };
        assert_eq!(options(&job), Err(NotMovable::Dependency("afterok:12".into())));
        assert_eq!(options(&JobInfo { batch_flag: false, ..pending() }), Err(NotMovable::NotBatch));
    }
}
