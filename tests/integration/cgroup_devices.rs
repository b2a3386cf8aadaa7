//! A group's device filter on this machine's own hierarchies (as root): two stand-in device
//! nodes with the numbers of /dev/null (1:3) and /dev/zero (1:5), the second denied; a
//! process in the group opens the first and is refused the second ("Operation not
//! permitted"), through `devices.deny` on the v1 devices hierarchy and through a BPF program
//! on the cgroup2 mount. Skipped, loudly, where a piece is missing.

use crate::common;
use common::device_nodes::Nodes;
use common::skip;
use slurmlet::stepd::containment::cgroup::devices::{Device, DeviceFilter, DeviceKind};
use slurmlet::stepd::containment::cgroup::group::Group;
use slurmlet::stepd::containment::cgroup::hierarchy::{Hierarchies, Place, Version};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A test's group, removed when the test ends, passed or not (its process may still be
/// exiting then, so removal is tried for a while).
struct Scratch(Group);

impl Drop for Scratch {
    fn drop(&mut self) {
        for _ in 0..100 {
            if self.0.remove().is_ok() || !self.0.path().exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("cannot remove test group {}", self.0.path().display());
    }
}

/// Makes a group named after `test` in the hierarchy at `place`, or says why not.
fn scratch_group(place: &Place, test: &str) -> Result<Scratch, String> {
    let relative = format!("slurmlet-test-{test}-{}", std::process::id());
    let group = Group::create(place, Path::new(&relative))
        .map_err(|e| format!("cannot make a group in {}: {e}", place.mount.display()))?;
    Ok(Scratch(group))
}

/// What a shell in `group` reports when it opens `files` in turn: the lines `opened FILE`
/// on its standard output, and its complaints on its standard error. It is moved into the
/// group before it opens anything.
fn open_in_group(group: &Group, files: &[&Path]) -> (String, String) {
    let script = r#"read go || exit 1
for f in "$@"; do
    if true < "$f"; then echo "opened $f"; fi
done"#;
    let mut child = Command::new("sh")
        .args(["-c", script, "sh"])
        .args(files)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    group.add(child.id() as i32).unwrap();
    assert!(group.members().contains(&(child.id() as i32)));
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The filter denying the node `nodes.denied`, checked to name 1:5 only.
fn deny_one(nodes: &Nodes) -> DeviceFilter {
    let filter = DeviceFilter::denying(std::slice::from_ref(&nodes.denied)).unwrap();
    assert_eq!(filter.denied(), &[Device { kind: DeviceKind::Char, major: 1, minor: 5 }]);
    assert!(filter.missing().is_empty());
    filter
}

/// Asserts that the shell opened `nodes.allowed` and was refused `nodes.denied`.
fn assert_only_the_denied_node_is_refused(nodes: &Nodes, (stdout, stderr): (String, String)) {
    assert!(stdout.contains(&format!("opened {}", nodes.allowed.display())), "{stdout:?} {stderr:?}");
    assert!(!stdout.contains(&format!("opened {}", nodes.denied.display())), "{stdout:?} {stderr:?}");
    let refusal = stderr.lines().find(|l| l.contains(&*nodes.denied.to_string_lossy()));
    assert!(refusal.is_some_and(|l| l.contains("Operation not permitted")), "{stderr:?}");
}

#[test]
fn a_v1_devices_group_refuses_the_denied_device() {
    let test = "a_v1_devices_group_refuses_the_denied_device";
    let nodes = match Nodes::make("v1-devices") {
        Ok(n) => n,
        Err(why) => return skip(test, &why),
    };
    let Some(mount) = Hierarchies::of_this_machine().legacy.get("devices").cloned() else {
        return skip(test, "no v1 devices hierarchy is mounted");
    };
    let place = Place { version: Version::V1, mount };
    let scratch = match scratch_group(&place, "devices-v1") {
        Ok(s) => s,
        Err(why) => return skip(test, &why),
    };
    deny_one(&nodes).apply_v1(scratch.0.path()).unwrap();
    assert_only_the_denied_node_is_refused(&nodes, open_in_group(&scratch.0, &[&nodes.allowed, &nodes.denied]));
    // Outside the group both still open.
    std::fs::File::open(&nodes.denied).unwrap();
}

#[test]
fn a_v2_device_program_refuses_the_denied_device() {
    let test = "a_v2_device_program_refuses_the_denied_device";
    let nodes = match Nodes::make("v2-devices") {
        Ok(n) => n,
        Err(why) => return skip(test, &why),
    };
    let Some((mount, _)) = Hierarchies::of_this_machine().unified else {
        return skip(test, "no cgroup2 hierarchy is mounted");
    };
    let place = Place { version: Version::V2, mount };
    let scratch = match scratch_group(&place, "devices-v2") {
        Ok(s) => s,
        Err(why) => return skip(test, &why),
    };
    match deny_one(&nodes).attach_v2(scratch.0.path()) {
        Ok(()) => {}
        Err(e) if matches!(e.errno(), Some(libc::EPERM | libc::ENOSYS)) => {
            return skip(test, &format!("the kernel refuses BPF device programs here: {e}"));
        }
        Err(e) => panic!("{e}"),
    }
    assert_only_the_denied_node_is_refused(&nodes, open_in_group(&scratch.0, &[&nodes.allowed, &nodes.denied]));
    // The groups around it are untouched: outside the group both open.
    std::fs::File::open(&nodes.denied).unwrap();
}
