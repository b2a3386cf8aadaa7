//! What the daemon tells a supervisor about the cgroups of its job and step: where each
//! controller's hierarchy is, which groups to make, and the limits to set on them. The
//! layout is Slurm's: `…/slurmlet/job_N/step_S`, the job's limits on `job_N`, the step's on
//! `step_S`, each in every hierarchy the job uses.

use super::group::Group;
use super::hierarchy::{Controller, Place};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The limits set on one group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// The CPUs it is pinned to, as the allocator numbers them (empty: not pinned).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// Its memory limit, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Its limit of memory and swap together, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
}

/// The cgroups of one job's step, as its supervisor makes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupPlan {
    /// Where each controller the job uses is.
    pub places: Vec<(Controller, Place)>,
    /// The job's group, below each hierarchy's mount (`slurmlet/job_7`).
    pub job_group: PathBuf,
    /// The step's name (`batch`, `interactive`, `0`): its group is `step_NAME`.
    pub step: String,
    /// The job's limits.
    pub job_limits: Limits,
    /// The step's limits.
    pub step_limits: Limits,
    /// The device files the job may not open (the node's GPUs it was not given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_devices: Vec<PathBuf>,
    /// Seconds between two looks at the step's memory while it runs (Slurm's
    /// `JobAcctGatherFrequency`); 0: none.
    #[serde(default)]
    pub sample_secs: u64,
}

impl CgroupPlan {
    /// Where `controller` is, if the job uses it.
    pub fn place(&self, controller: Controller) -> Option<&Place> {
        self.places.iter().find(|(c, _)| *c == controller).map(|(_, p)| p)
    }

    /// The hierarchy a job's processes are listed, signalled and frozen in: the freezer's,
    /// else the first one the job uses.
    pub fn tracking_place(&self) -> Option<&Place> {
        self.place(Controller::Freezer).or_else(|| self.places.first().map(|(_, p)| p))
    }

    /// The hierarchies the job uses, each once (v1 controllers may share a mount; v2 has
    /// one).
    pub fn distinct_places(&self) -> Vec<&Place> {
        let mut places: Vec<&Place> = Vec::new();
        for (_, p) in &self.places {
            if !places.iter().any(|q| q.mount == p.mount) {
                places.push(p);
            }
        }
        places
    }

    /// The step's group below the job's (`step_batch`).
    pub fn step_dir(&self) -> String {
        format!("step_{}", self.step)
    }

    /// The job's group in the hierarchy at `place` (made or not).
    pub fn job_group_in(&self, place: &Place) -> Group {
        Group::at(place, &self.job_group)
    }
}

/// The job group's directories, one per line, the tracking hierarchy's first: the
/// `cgroup` file of a job's directory, by which the daemon finds a running job's groups
/// again (after a restart too) and removes them once the job's end is stored.
pub fn job_groups_text(plan: &CgroupPlan) -> String {
    let mut places = plan.distinct_places();
    if let Some(tracking) = plan.tracking_place() {
        places.retain(|p| p.mount != tracking.mount);
        places.insert(0, tracking);
    }
    places.iter().map(|p| format!("{}\t{}\n", version_word(p), plan.job_group_in(p).path().display())).collect()
}

/// The groups a `cgroup` file lists ([`job_groups_text`]), the tracking one first.
pub fn read_job_groups(file: &Path) -> Vec<Group> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (version, path) = l.split_once('\t')?;
            let version = match version {
                "v1" => super::hierarchy::Version::V1,
                "v2" => super::hierarchy::Version::V2,
                _ => return None,
            };
            Some(Group::of_dir(version, PathBuf::from(path)))
        })
        .collect()
}

/// `v1` or `v2`, as the `cgroup` file writes a place's version.
fn version_word(place: &Place) -> &'static str {
    match place.version {
        super::hierarchy::Version::V1 => "v1",
        super::hierarchy::Version::V2 => "v2",
    }
}

#[cfg(test)]
mod tests {
    use super::super::hierarchy::Version;
    use super::*;

    fn hybrid_plan() -> CgroupPlan {
        let v1 = |name: &str| Place { version: Version::V1, mount: PathBuf::from(format!("/sys/fs/cgroup/{name}")) };
        CgroupPlan {
            places: vec![
                (Controller::Memory, v1("memory")),
                (Controller::CpuAccounting, v1("cpu,cpuacct")),
                (Controller::Pids, v1("pids")),
                (Controller::Freezer, v1("freezer")),
            ],
            job_group: PathBuf::from("slurmlet/job_7"),
            step: "batch".into(),
            job_limits: Limits::default(),
            step_limits: Limits::default(),
            denied_devices: Vec::new(),
            sample_secs: 30,
        }
    }

    #[test]
    fn the_freezer_tracks_and_each_hierarchy_is_listed_once() {
        let plan = hybrid_plan();
        assert_eq!(plan.tracking_place().unwrap().mount, Path::new("/sys/fs/cgroup/freezer"));
        assert_eq!(plan.step_dir(), "step_batch");
        let dir = std::env::temp_dir().join(format!("cgroup-file-{}", std::process::id()));
        std::fs::write(&dir, job_groups_text(&plan)).unwrap();
        let groups = read_job_groups(&dir);
        std::fs::remove_file(&dir).unwrap();
        let paths: Vec<&Path> = groups.iter().map(|g| g.path()).collect();
        assert_eq!(paths[0], Path::new("/sys/fs/cgroup/freezer/slurmlet/job_7"), "the tracking group comes first");
        assert_eq!(paths.len(), 4);
        assert!(groups.iter().all(|g| g.version() == Version::V1));
    }
}
