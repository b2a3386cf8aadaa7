//! Containment in cgroups: a job's processes are those of its group. The supervisor makes the
//! job's and the step's groups with their limits ([`Cgroups::make`]); each new process
//! writes itself into the step's groups before `execve`, so that nothing it runs escapes
//! them, whatever sessions or process groups it makes. The job's processes are listed,
//! signalled, frozen and killed through the group (`cgroup.kill` on v2; freeze, kill, thaw
//! on v1), and what they used is read from it. Process groups are kept beside the cgroups:
//! the batch shell still leads the job's process group, which `scancel --batch` signals.

use super::group::Group;
use super::hierarchy::{Controller, Place, Version};
use super::plan::{CgroupPlan, Limits};
use crate::api::acct::Usage;
use crate::stepd::containment::process_group::ProcessGroups;
use crate::stepd::containment::Containment;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The group of the job's extern step, for processes adopted into it from outside.
pub const EXTERN_STEP: &str = "step_extern";

/// What went wrong making a job's groups.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// A group could not be made.
    #[error("cannot make cgroup {path}: {source}")]
    Create {
        /// The group's directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The device filter could not be set.
    #[error("cannot deny the job's other GPUs: {0}")]
    Devices(#[from] super::devices::DeviceError),
    /// A limit could not be set.
    #[error("cannot set {what} of cgroup {path}: {source}")]
    Limit {
        /// What was set (`memory limit`, `cpus`).
        what: &'static str,
        /// The group's directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The cgroups of one job or step.
#[derive(Debug)]
pub struct Cgroups {
    /// The process groups and sessions of the processes started, as without cgroups.
    inner: ProcessGroups,
    /// `cgroup.procs` of the step's group in each hierarchy, open for each new process to
    /// write itself into.
    procs: Vec<OwnedFd>,
    /// The step's groups, one per hierarchy.
    step_groups: Vec<Group>,
    /// The group whose processes are the container's: the job's (a job's supervisor, or the
    /// daemon), or the step's (a step's supervisor).
    tracked: Group,
    /// Where the container is frozen, when there is a freezer.
    freezer: Option<Group>,
    /// The step's memory group: its peak and its OOM kills.
    memory: Option<Group>,
    /// The step's CPU time group.
    cpu: Option<Group>,
    /// The step's memory at the looks taken while it ran: their sum (KiB) and count.
    samples: std::cell::Cell<(u64, u64)>,
    /// How often to look.
    sample_every: Option<std::time::Duration>,
}

impl Cgroups {
    /// Makes the groups of `plan`: the job's in each hierarchy, with the job's limits and
    /// device filter, then the step's below it with the step's. The container is the whole
    /// job (`whole_job`: a job's supervisor, whose end ends every step) or the step alone.
    pub fn make(plan: &CgroupPlan, inner: ProcessGroups, whole_job: bool) -> Result<Cgroups, CgroupError> {
        let mut step_groups = Vec::new();
        let mut procs = Vec::new();
        for place in plan.distinct_places() {
            let job = make_group(place, &plan.job_group)?;
            delegate_along(place, plan);
            set_limits(plan, place, &job, &plan.job_limits)?;
            if whole_job {
                // Slurm's extern step: processes adopted into the job from outside (as
                // pam_slurm_adopt puts an ssh session there) are the job's, within its limits,
                // and end with it.
                let external = make_group(place, &plan.job_group.join(EXTERN_STEP))?;
                if plan.place(Controller::Devices) == Some(place) {
                    deny_devices(&plan.denied_devices, &external)?;
                }
            }
            let step = make_group(place, &plan.job_group.join(plan.step_dir()))?;
            set_limits(plan, place, &step, &plan.step_limits)?;
            if plan.place(Controller::Devices) == Some(place) {
                deny_devices(&plan.denied_devices, &step)?;
            }
            let file = step.path().join("cgroup.procs");
            let fd = std::fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .map_err(|source| CgroupError::Create { path: step.path().to_path_buf(), source })?;
            procs.push(OwnedFd::from(fd));
            step_groups.push(step);
        }
        let step_in = |c: Controller| plan.place(c).map(|p| plan.job_group_in(p).child(&plan.step_dir()));
        let tracking = plan.tracking_place().ok_or_else(|| CgroupError::Create {
            path: plan.job_group.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no hierarchy to make it in"),
        })?;
        let tracked =
            if whole_job { plan.job_group_in(tracking) } else { plan.job_group_in(tracking).child(&plan.step_dir()) };
        let freezer = plan.place(Controller::Freezer).map(|p| {
            let job = plan.job_group_in(p);
            if whole_job {
                job
            } else {
                job.child(&plan.step_dir())
            }
        });
        Ok(Cgroups {
            inner,
            procs,
            step_groups,
            tracked,
            freezer,
            memory: step_in(Controller::Memory),
            cpu: step_in(Controller::CpuAccounting),
            samples: Default::default(),
            sample_every: (plan.sample_secs > 0).then(|| std::time::Duration::from_secs(plan.sample_secs)),
        })
    }

    /// A running job's containment seen from the daemon: its groups `groups` (the tracking
    /// one first, as the job directory's `cgroup` file lists them) beside its process groups
    /// `inner`. `None` when no group is listed.
    pub fn of_job(groups: Vec<Group>, inner: ProcessGroups) -> Option<Cgroups> {
        let tracked = groups.first()?.clone();
        let freezer = groups.iter().find(|g| is_freezer(g)).cloned();
        Some(Cgroups {
            inner,
            procs: Vec::new(),
            step_groups: Vec::new(),
            tracked,
            freezer,
            memory: None,
            cpu: None,
            samples: Default::default(),
            sample_every: None,
        })
    }

    /// Kills every process at once: `cgroup.kill` on v2; on v1 the group is frozen first,
    /// so that no process forks while the others are killed, then thawed for the kills to
    /// land.
    fn kill_all(&self) {
        // Most jobs end with nothing left: nothing to freeze then.
        if self.tracked.all_members().is_empty() || self.tracked.kill_all() {
            return;
        }
        let frozen = self.freezer.as_ref().filter(|f| f.set_frozen(true).is_ok());
        if let Some(f) = frozen {
            let until = std::time::Instant::now() + std::time::Duration::from_millis(200);
            while !f.is_frozen() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        for pid in self.tracked.all_members() {
            let _ = crate::sys::kill_pid(pid, libc::SIGKILL);
        }
        if let Some(f) = frozen {
            let _ = f.set_frozen(false);
        }
    }
}

/// Whether `group` lies in a freezer hierarchy (v1 `freezer.state`, v2 `cgroup.freeze`).
fn is_freezer(group: &Group) -> bool {
    let file = match group.version() {
        Version::V1 => "freezer.state",
        Version::V2 => "cgroup.freeze",
    };
    group.path().join(file).exists()
}

/// Makes the group at `relative` in the hierarchy at `place`.
fn make_group(place: &Place, relative: &std::path::Path) -> Result<Group, CgroupError> {
    Group::create(place, relative).map_err(|source| CgroupError::Create { path: place.mount.join(relative), source })
}

/// On v2, lets each level from the hierarchy's root down to the job's group hand its
/// children the controllers the job uses there.
fn delegate_along(place: &Place, plan: &CgroupPlan) {
    if place.version != Version::V2 {
        return;
    }
    let wanted: Vec<&str> = plan
        .places
        .iter()
        .filter(|(_, p)| p == place)
        .filter_map(|(c, _)| match c {
            Controller::Cpuset => Some("cpuset"),
            Controller::Memory => Some("memory"),
            Controller::Pids => Some("pids"),
            Controller::CpuAccounting => Some("cpu"),
            Controller::Devices | Controller::Freezer => None,
        })
        .collect();
    let mut dir = place.mount.clone();
    Group::of_dir(Version::V2, dir.clone()).delegate_controllers(&wanted);
    for part in plan.job_group.components() {
        dir.push(part);
        Group::of_dir(Version::V2, dir.clone()).delegate_controllers(&wanted);
    }
}

/// Sets `limits` on `group`, in the hierarchy at `place`, where the plan uses that hierarchy
/// for them.
fn set_limits(plan: &CgroupPlan, place: &Place, group: &Group, limits: &Limits) -> Result<(), CgroupError> {
    let here = |c: Controller| plan.place(c) == Some(place);
    let failed = |what: &'static str| {
        move |source: std::io::Error| CgroupError::Limit { what, path: group.path().to_path_buf(), source }
    };
    if here(Controller::Memory) {
        if let Some(bytes) = limits.memory_bytes {
            group.limit_memory(bytes).map_err(failed("memory limit"))?;
        }
        if let Some(bytes) = limits.swap_bytes {
            // Without swap accounting in the kernel there is no such file: swap is then
            // limited by nothing but the memory limit.
            let _ = group.limit_swap(bytes);
        }
    }
    if here(Controller::Cpuset) && !limits.cpus.is_empty() {
        group.pin_cpus(&machine_cpus(place, &limits.cpus)).map_err(failed("cpus"))?;
    }
    Ok(())
}

/// Keeps the processes of `group` from opening the device files `denied` (`devices.deny` on
/// v1, a BPF program on v2), before any process joins it. Files missing from the machine
/// are said once, on the supervisor's error output.
fn deny_devices(denied: &[PathBuf], group: &Group) -> Result<(), CgroupError> {
    if denied.is_empty() {
        return Ok(());
    }
    let filter = super::devices::DeviceFilter::denying(denied)?;
    if !filter.missing().is_empty() {
        let missing: Vec<String> = filter.missing().iter().map(|p| p.display().to_string()).collect();
        eprintln!("slurmstepd: warning: no such GPU device files to deny: {}", missing.join(", "));
    }
    match group.version() {
        Version::V1 => filter.apply_v1(group.path())?,
        Version::V2 => filter.attach_v2(group.path())?,
    }
    Ok(())
}

/// The machine's CPUs of the allocator's `ids`, as a cpuset list: id `i` is the `i`-th CPU
/// the hierarchy's root has (wrapping round where the node claims more CPUs than it has).
fn machine_cpus(place: &Place, ids: &[u32]) -> String {
    let file = match place.version {
        Version::V1 => "cpuset.cpus",
        Version::V2 => "cpuset.cpus.effective",
    };
    let online = crate::id_set::parse_ranges(&std::fs::read_to_string(place.mount.join(file)).unwrap_or_default());
    let mut cpus: Vec<u32> =
        if online.is_empty() { ids.to_vec() } else { ids.iter().map(|&i| online[i as usize % online.len()]).collect() };
    cpus.sort_unstable();
    cpus.dedup();
    crate::id_set::ranges(&cpus)
}

impl Containment for Cgroups {
    unsafe fn enter(&self, leads_session: bool) {
        // SAFETY: our caller is the child right after fork, as `enter` asks, and so passes
        // that on.
        unsafe { self.inner.enter(leads_session) };
        for fd in &self.procs {
            // "0" moves the writer itself.
            // SAFETY: write reads the one byte of the literal; the descriptor was opened
            // before the fork and is held by `self`.
            unsafe { libc::write(fd.as_raw_fd(), c"0".as_ptr().cast(), 1) };
        }
    }

    fn placed(&mut self, pid: i32, leads_session: bool) {
        self.inner.placed(pid, leads_session);
        // Also from the parent, so that the child is in its groups when this returns.
        for group in &self.step_groups {
            let _ = group.add(pid);
        }
    }

    fn signal_all(&self, signal: i32) -> std::io::Result<()> {
        if signal == libc::SIGKILL {
            self.kill_all();
            return Ok(());
        }
        // The groups of the processes started first (a group is signalled at once), then
        // every other process of the cgroup, each once.
        let result = self.inner.signal_groups(signal);
        let groups = self.inner.groups();
        for pid in self.tracked.all_members() {
            if !crate::sys::process_group(pid).is_some_and(|g| groups.contains(&g)) {
                let _ = crate::sys::kill_pid(pid, signal);
            }
        }
        result
    }

    fn freeze(&self) {
        match &self.freezer {
            Some(f) if f.set_frozen(true).is_ok() => {}
            _ => self.inner.freeze(),
        }
    }

    fn thaw(&self) {
        match &self.freezer {
            Some(f) if f.set_frozen(false).is_ok() => {}
            _ => self.inner.thaw(),
        }
    }

    fn members(&self) -> Vec<i32> {
        let mut pids = self.tracked.all_members();
        pids.retain(|&p| !crate::sys::is_zombie(p));
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    fn usage(&self) -> Usage {
        let mut usage = self.inner.usage();
        if let Some((user, sys)) = self.cpu.as_ref().and_then(Group::cpu_times) {
            (usage.user_usec, usage.sys_usec) = (user, sys);
        }
        if let Some(peak) = self.memory.as_ref().and_then(Group::memory_peak) {
            usage.max_rss_kb = peak / 1024;
        }
        let (sum, count) = self.samples.get();
        usage.ave_rss_kb = sum.checked_div(count).unwrap_or(0);
        usage
    }

    fn sample(&self) {
        if let Some(now) = self.memory.as_ref().and_then(Group::memory_now) {
            let (sum, count) = self.samples.get();
            self.samples.set((sum + now / 1024, count + 1));
        }
    }

    fn sample_every(&self) -> Option<std::time::Duration> {
        self.sample_every
    }

    fn oom_kills(&self) -> u64 {
        self.memory.as_ref().map_or(0, Group::oom_kills)
    }

    fn covers_steps(&self) -> bool {
        self.tracked.path().file_name().is_some_and(|n| n.to_string_lossy().starts_with("job_"))
    }
}
