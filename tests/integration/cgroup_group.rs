//! One cgroup group on this machine's own hierarchies (as root): a memory limit the kernel
//! enforces and counts, and CPUs a process is pinned to. Skipped, loudly, where the
//! controller is missing or groups cannot be made (not root).

use crate::common;
use common::skip;
use slurmlet::stepd::containment::cgroup::group::Group;
use slurmlet::stepd::containment::cgroup::hierarchy::{Controller, Hierarchies, Place};
use std::path::Path;
use std::process::Command;

/// The hierarchy of `controller` where this process may make groups, or why not.
fn writable(controller: Controller) -> Result<Place, String> {
    let place = Hierarchies::of_this_machine()
        .choose(controller)
        .ok_or_else(|| format!("no {} controller is mounted", controller.name()))?;
    let probe = place.mount.join(format!("slurmlet-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).map_err(|e| format!("cannot make a group in {}: {e}", place.mount.display()))?;
    let _ = std::fs::remove_dir(&probe);
    Ok(place)
}

/// A test's top group, removed with what is below it when the test ends, passed or not.
struct Scratch(Group);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.0.remove();
    }
}

#[test]
fn a_process_over_its_memory_limit_is_killed_and_counted() {
    let place = match writable(Controller::Memory) {
        Ok(p) => p,
        Err(why) => return skip("a_process_over_its_memory_limit_is_killed_and_counted", &why),
    };
    let top = format!("slurmlet-test-mem-{}", std::process::id());
    let _scratch = Scratch(Group::at(&place, Path::new(&top)));
    let group = Group::create(&place, &Path::new(&top).join("job_1")).unwrap();
    group.limit_memory(64 << 20).unwrap();
    // It waits to be moved, then holds 200 MB: tail keeps its whole input, which has no
    // line end.
    let mut child =
        Command::new("sh").args(["-c", "sleep 0.3; head -c 200000000 /dev/zero | tail > /dev/null"]).spawn().unwrap();
    group.add(child.id() as i32).unwrap();
    assert!(group.members().contains(&(child.id() as i32)));
    let status = child.wait().unwrap();
    assert!(!status.success(), "the pipeline's tail is killed: {status:?}");
    assert!(group.oom_kills() >= 1, "the kill is counted");
    let peak = group.memory_peak();
    assert!(peak.is_some_and(|p| p <= 64 << 20 && p > 1 << 20), "{peak:?}");
}

#[test]
fn a_new_cpuset_group_gets_its_parents_cpus_and_can_be_pinned() {
    let place = match writable(Controller::Cpuset) {
        Ok(p) => p,
        Err(why) => return skip("a_new_cpuset_group_gets_its_parents_cpus_and_can_be_pinned", &why),
    };
    let top = format!("slurmlet-test-cpus-{}", std::process::id());
    let _scratch = Scratch(Group::at(&place, Path::new(&top)));
    let group = Group::create(&place, &Path::new(&top).join("job_2")).unwrap();
    let mut child = Command::new("sleep").arg("5").spawn().unwrap();
    group.pin_cpus("0").unwrap();
    group.add(child.id() as i32).unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(allowed, "0");
}
