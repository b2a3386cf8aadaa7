//! The device files a group's processes may not open (the GPUs a job was not given), every
//! other device staying allowed. On a v1 hierarchy they are `devices.deny` lines; on v2 they
//! are a small BPF program of type `BPF_PROG_TYPE_CGROUP_DEVICE`, attached to the group,
//! which the kernel runs on each open (and `mknod`) of a device file by the group's
//! processes, and which answers 0 (refused: `EPERM`) or 1 (allowed).
//!
//! The program is built here as plain [`Instruction`]s, the way Slurm's cgroup/v2 plugin
//! builds its own: the device's type, major and minor are read from the kernel's request
//! into registers, each denied device is one chain of comparisons that skips its
//! "refuse" pair as soon as a number differs, and the last pair allows. The instructions are
//! `instruction.rs`'s, the `bpf(2)` calls that load and attach the program `bpf.rs`'s.

mod bpf;
mod instruction;

pub use instruction::Instruction;

use crate::sys::c_error_text;
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Char or block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceKind {
    /// A character device (`c`): GPUs, `/dev/null`.
    Char,
    /// A block device (`b`): disks.
    Block,
}

impl DeviceKind {
    /// Its letter in cgroup device rules (`c`, `b`).
    pub fn letter(self) -> char {
        match self {
            DeviceKind::Char => 'c',
            DeviceKind::Block => 'b',
        }
    }

    /// Its number in the type half of the kernel's request to the BPF program
    /// (`BPF_DEVCG_DEV_CHAR`, `BPF_DEVCG_DEV_BLOCK`).
    fn bpf_type(self) -> i32 {
        match self {
            DeviceKind::Block => 1,
            DeviceKind::Char => 2,
        }
    }
}

/// A device as cgroup device rules name it: its kind and numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Device {
    /// Char or block.
    pub kind: DeviceKind,
    /// The major number (the driver: 195 for NVIDIA's GPUs).
    pub major: u32,
    /// The minor number (the unit: the GPU's index).
    pub minor: u32,
}

impl Device {
    /// The device that file `path` (a device node, or a link to one) stands for.
    pub fn of_file(path: &Path) -> Result<Device, DeviceError> {
        let meta = std::fs::metadata(path).map_err(|source| DeviceError::Stat { file: path.to_path_buf(), source })?;
        let kind = match meta.file_type() {
            t if t.is_char_device() => DeviceKind::Char,
            t if t.is_block_device() => DeviceKind::Block,
            _ => return Err(DeviceError::NotADevice { file: path.to_path_buf() }),
        };
        let rdev = meta.rdev();
        Ok(Device { kind, major: libc::major(rdev), minor: libc::minor(rdev) })
    }
}

/// As cgroup device rules write it: `c 195:0`.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}:{}", self.kind.letter(), self.major, self.minor)
    }
}

/// Why a device filter could not be made or put in place.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A device file could not be looked at.
    #[error("cannot read device file {}: {}", .file.display(), c_error_text(.source))]
    Stat {
        /// The file.
        file: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file to deny is not a device file.
    #[error("{} is not a device file", .file.display())]
    NotADevice {
        /// The file.
        file: PathBuf,
    },
    /// A v1 group's `devices.deny` refused a rule.
    #[error("cannot deny {device} in {}: {}", .file.display(), c_error_text(.source))]
    Deny {
        /// The group's `devices.deny`.
        file: PathBuf,
        /// The device.
        device: Device,
        /// The error.
        source: io::Error,
    },
    /// A v2 group's directory could not be opened.
    #[error("cannot open cgroup {}: {}", .group.display(), c_error_text(.source))]
    OpenGroup {
        /// The group's directory.
        group: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The kernel refused to load the device program.
    #[error("cannot load the device filter of cgroup {}: {}{}", .group.display(), refusal(.source),
        .verifier.as_deref().map(|l| format!(" (verifier: {l})")).unwrap_or_default())]
    Load {
        /// The group's directory.
        group: PathBuf,
        /// The error.
        source: io::Error,
        /// Why the kernel verifier refused it: the last line of its log that says something.
        verifier: Option<String>,
    },
    /// The kernel refused to attach the loaded program to the group.
    #[error("cannot attach the device filter to cgroup {}: {}", .group.display(), refusal(.source))]
    Attach {
        /// The group's directory.
        group: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl DeviceError {
    /// The system error number behind it, if a system call failed.
    pub fn errno(&self) -> Option<i32> {
        match self {
            DeviceError::Stat { source, .. }
            | DeviceError::Deny { source, .. }
            | DeviceError::OpenGroup { source, .. }
            | DeviceError::Load { source, .. }
            | DeviceError::Attach { source, .. } => source.raw_os_error(),
            DeviceError::NotADevice { .. } => None,
        }
    }
}

/// A `bpf(2)` failure in words, with its number; `EPERM` says what is missing.
fn refusal(e: &io::Error) -> String {
    let text = c_error_text(e);
    match e.raw_os_error() {
        Some(libc::EPERM) => format!("needs root (CAP_BPF): {text} (errno {})", libc::EPERM),
        Some(errno) => format!("{text} (errno {errno})"),
        None => text,
    }
}

/// The device files a group's processes may not open; everything else stays allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceFilter {
    denied: Vec<Device>,
    missing: Vec<PathBuf>,
}

impl DeviceFilter {
    /// Denies the device files `files`. Files that do not exist are skipped and kept in
    /// [`DeviceFilter::missing`], for the caller to say so once; a file that is there but is
    /// no device, or cannot be looked at, is an error.
    pub fn denying(files: &[PathBuf]) -> Result<DeviceFilter, DeviceError> {
        let mut filter = DeviceFilter::default();
        for file in files {
            match Device::of_file(file) {
                Ok(device) => filter.deny(device),
                Err(DeviceError::Stat { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                    filter.missing.push(file.clone())
                }
                Err(e) => return Err(e),
            }
        }
        Ok(filter)
    }

    /// Denies `devices`, named by their numbers.
    pub fn of_devices(devices: impl IntoIterator<Item = Device>) -> DeviceFilter {
        let mut filter = DeviceFilter::default();
        devices.into_iter().for_each(|device| filter.deny(device));
        filter
    }

    /// Adds `device` to the denied ones, unless it is there already.
    fn deny(&mut self, device: Device) {
        if !self.denied.contains(&device) {
            self.denied.push(device);
        }
    }

    /// The devices denied, each once, in the order given.
    pub fn denied(&self) -> &[Device] {
        &self.denied
    }

    /// The files [`DeviceFilter::denying`] was given that do not exist.
    pub fn missing(&self) -> &[PathBuf] {
        &self.missing
    }

    /// Whether it denies nothing.
    pub fn is_empty(&self) -> bool {
        self.denied.is_empty()
    }

    /// cgroup v1: writes one `c MAJ:MIN rwm` line per denied device to the `devices.deny` of
    /// the group at `group_dir`, one write per line (the kernel reads one rule a write).
    pub fn apply_v1(&self, group_dir: &Path) -> Result<(), DeviceError> {
        let file = group_dir.join("devices.deny");
        for &device in &self.denied {
            std::fs::write(&file, format!("{device} rwm")).map_err(|source| DeviceError::Deny {
                file: file.clone(),
                device,
                source,
            })?;
        }
        Ok(())
    }

    /// The BPF program's instructions: allow (1) unless the request names a denied device
    /// (0), whatever the access (read, write, mknod). An empty filter is the allowing pair
    /// alone.
    pub fn program(&self) -> Vec<Instruction> {
        let allow_and_exit = [Instruction::mov64(R0, ALLOW), Instruction::exit()];
        if self.denied.is_empty() {
            return allow_and_exit.to_vec();
        }
        // The request (`struct bpf_cgroup_dev_ctx`) is three u32s: access << 16 | type,
        // major, minor.
        let mut program = vec![
            Instruction::load_u32(TYPE, R1, 0),
            Instruction::and32(TYPE, 0xffff),
            Instruction::load_u32(MAJOR, R1, 4),
            Instruction::load_u32(MINOR, R1, 8),
        ];
        for device in &self.denied {
            // Linux's device numbers have 12 (major) and 20 (minor) bits, so each is a
            // positive i32 and compares equal to the zero-extended number loaded.
            let checks = [(TYPE, device.kind.bpf_type()), (MAJOR, device.major as i32), (MINOR, device.minor as i32)];
            for (at, &(register, value)) in checks.iter().enumerate() {
                // Past the checks after this one and the refusing pair, to the next device.
                let past = (checks.len() - 1 - at + 2) as i16;
                program.push(Instruction::jump_unless_equal(register, value, past));
            }
            program.push(Instruction::mov64(R0, DENY));
            program.push(Instruction::exit());
        }
        program.extend(allow_and_exit);
        program
    }

    /// cgroup v2: loads [`DeviceFilter::program`] (`BPF_PROG_LOAD`, license "GPL") and
    /// attaches it to the group at `group_dir` (`BPF_PROG_ATTACH`, `BPF_CGROUP_DEVICE`,
    /// `BPF_F_ALLOW_MULTI`, so that programs of the groups above it still run too). The
    /// program's descriptor is closed once attached: the attachment keeps the program, until
    /// the group is removed. Nothing is loaded for an empty filter.
    pub fn attach_v2(&self, group_dir: &Path) -> Result<(), DeviceError> {
        if self.is_empty() {
            return Ok(());
        }
        let group = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(group_dir)
            .map_err(|source| DeviceError::OpenGroup { group: group_dir.to_path_buf(), source })?;
        let program = load(&self.program(), group_dir)?;
        bpf::attach_device_program(&group, &program)
            .map_err(|source| DeviceError::Attach { group: group_dir.to_path_buf(), source })
    }
}

/// Loads `program` as a device program for the group at `group_dir` (named in errors); if
/// the kernel refuses it, loads it again with the verifier's log to say why.
fn load(program: &[Instruction], group_dir: &Path) -> Result<OwnedFd, DeviceError> {
    let encoded: Vec<[u8; 8]> = program.iter().map(Instruction::encode).collect();
    if let Ok(fd) = bpf::load_device_program(&encoded, None) {
        return Ok(fd);
    }
    let mut log = vec![0u8; bpf::LOG_SIZE];
    bpf::load_device_program(&encoded, Some(&mut log)).map_err(|source| DeviceError::Load {
        group: group_dir.to_path_buf(),
        source,
        verifier: verifier_reason(&log),
    })
}

/// The last line of the verifier's NUL-terminated `log` that says something, which is why it
/// refused: the statistics line it always ends with (`processed 1 insns…`) is passed over.
fn verifier_reason(log: &[u8]) -> Option<String> {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]);
    text.lines().rev().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("processed ")).map(String::from)
}

/// The return register.
const R0: u8 = 0;
/// The register holding the request when the program starts.
const R1: u8 = 1;
/// The register the device's type is read into.
const TYPE: u8 = 2;
/// The register the device's major number is read into.
const MAJOR: u8 = 3;
/// The register the device's minor number is read into.
const MINOR: u8 = 4;
/// The program's answer for a device that may be opened.
const ALLOW: i32 = 1;
/// The program's answer for a device that may not.
const DENY: i32 = 0;

#[cfg(test)]
mod tests {
    use super::*;

    fn char_device(major: u32, minor: u32) -> Device {
        Device { kind: DeviceKind::Char, major, minor }
    }

    #[test]
    fn an_empty_filter_only_allows() {
        let filter = DeviceFilter::default();
        assert!(filter.is_empty());
        assert_eq!(filter.program(), vec![Instruction::mov64(R0, ALLOW), Instruction::exit()]);
    }

    #[test]
    fn one_device_is_four_loads_five_instructions_and_the_allowing_pair() {
        let program = DeviceFilter::of_devices([char_device(195, 1)]).program();
        assert_eq!(program.len(), 4 + 5 + 2);
        assert_eq!(program[4], Instruction::jump_unless_equal(TYPE, 2, 4));
        assert_eq!(program[5], Instruction::jump_unless_equal(MAJOR, 195, 3));
        assert_eq!(program[6], Instruction::jump_unless_equal(MINOR, 1, 2));
        assert_eq!(&program[7..9], &[Instruction::mov64(R0, DENY), Instruction::exit()]);
        assert_eq!(&program[9..], &[Instruction::mov64(R0, ALLOW), Instruction::exit()]);
    }

    #[test]
    fn each_check_jumps_to_the_next_device_or_the_final_allow() {
        let devices =
            [char_device(195, 0), Device { kind: DeviceKind::Block, major: 8, minor: 16 }, char_device(195, 3)];
        let program = DeviceFilter::of_devices(devices).program();
        assert_eq!(program.len(), 4 + 3 * 5 + 2);
        let starts: Vec<usize> = (0..3).map(|d| 4 + 5 * d).collect();
        let allow = program.len() - 2;
        for (d, &start) in starts.iter().enumerate() {
            let next = starts.get(d + 1).copied().unwrap_or(allow);
            for (check, instruction) in program.iter().enumerate().skip(start).take(3) {
                assert_eq!(instruction.jump_target(check), Some(next), "check {check} of device {d}");
            }
            assert_eq!(program[start + 3], Instruction::mov64(R0, DENY));
            assert_eq!(program[start + 4].jump_target(start + 4), None);
        }
        assert_eq!(program[starts[1]].imm, 1, "the block device's type");
        assert_eq!(program[allow], Instruction::mov64(R0, ALLOW));
        assert_eq!(program.last(), Some(&Instruction::exit()));
    }

    #[test]
    fn a_device_file_is_read_with_its_numbers() {
        let null = Device::of_file(Path::new("/dev/null")).unwrap();
        assert_eq!(null, char_device(1, 3));
        assert_eq!(null.to_string(), "c 1:3");
    }

    #[test]
    fn files_that_are_not_devices_are_refused_and_missing_ones_kept_aside() {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let err = DeviceFilter::denying(std::slice::from_ref(&manifest)).unwrap_err();
        assert_eq!(err.to_string(), format!("{} is not a device file", manifest.display()));

        let gone = PathBuf::from("/dev/slurmlet-no-such-device");
        let filter = DeviceFilter::denying(&[gone.clone(), "/dev/null".into(), "/dev/null".into()]).unwrap();
        assert_eq!(filter.missing(), &[gone]);
        assert_eq!(filter.denied(), &[char_device(1, 3)], "once, however often it is named");
    }

    #[test]
    fn v1_rules_name_the_file_they_could_not_be_written_to() {
        let filter = DeviceFilter::of_devices([char_device(195, 2)]);
        let err = filter.apply_v1(Path::new("/nonexistent-group")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot deny c 195:2 in /nonexistent-group/devices.deny: No such file or directory"
        );
    }

    #[test]
    fn a_group_that_is_not_there_is_named() {
        let err =
            DeviceFilter::of_devices([char_device(195, 2)]).attach_v2(Path::new("/nonexistent-group")).unwrap_err();
        assert_eq!(err.to_string(), "cannot open cgroup /nonexistent-group: No such file or directory");
        assert_eq!(err.errno(), Some(libc::ENOENT));
    }

    #[test]
    fn a_program_the_verifier_refuses_is_reported_with_its_reason() {
        // `exit` with r0 never set: the verifier refuses to return an unread register.
        let err = load(&[Instruction::exit()], Path::new("/sys/fs/cgroup/g")).unwrap_err();
        if err.errno() == Some(libc::EPERM) {
            let test = "a_program_the_verifier_refuses_is_reported_with_its_reason";
            eprintln!("\n*** {test} SKIPPED, nothing checked: {err} ***\n");
            return;
        }
        let DeviceError::Load { verifier: Some(line), .. } = &err else { panic!("{err:?}") };
        assert!(line.contains("R0"), "{line}");
        let text = err.to_string();
        assert!(text.starts_with("cannot load the device filter of cgroup /sys/fs/cgroup/g: "), "{text}");
        assert!(text.ends_with(&format!(" (verifier: {line})")), "{text}");
    }

    #[test]
    fn refusals_say_what_is_missing() {
        let e = io::Error::from_raw_os_error(libc::EPERM);
        assert_eq!(refusal(&e), "needs root (CAP_BPF): Operation not permitted (errno 1)");
        assert_eq!(
            verifier_reason(b"0: (95) exit\nR0 !read_ok\nprocessed 1 insns (limit 1000000)\n\n\0garbage"),
            Some("R0 !read_ok".into())
        );
    }
}
