//! The device files that give a MIG instance: the NVIDIA driver guards each GPU instance and
//! each compute instance with a capability device, `/dev/nvidia-caps/nvidia-capN`, whose
//! minor N it lists in `/proc/driver/nvidia-caps/mig-minors` (`gpu0/gi1/access 12`,
//! `gpu0/gi1/ci0/access 13`). A job given a MIG instance needs its GPU's `/dev/nvidiaM` and
//! these two; a device filter that lets through only those confines the job to its instance,
//! as Slurm's gpu/nvml plugin confines it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the driver lists the capability minors.
pub const DEFAULT_DIR: &str = "/proc/driver/nvidia-caps";

/// Names a directory that stands for `/proc/driver/nvidia-caps`, for trying MIG on a machine
/// without it (the tests' stand-in driver files); read by the daemon only, from its own
/// environment.
pub const DIR_VARIABLE: &str = "SLURMLET_NVIDIA_CAPS";

/// The most of `mig-minors` read: a GPU has at most 7 instances of up to 7 compute
/// instances, a few thousand lines in all on an 8-GPU machine; past this the file is not
/// believed.
const MAX_BYTES: u64 = 1 << 20;

/// What the capability minors are keyed by: the GPU's minor (`/dev/nvidiaM`), its GPU
/// instance, and the compute instance within it (`None`: the GPU instance's own).
type Key = (u32, u32, Option<u32>);

/// The capability minors the driver lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigCaps {
    minors: HashMap<Key, u32>,
}

impl MigCaps {
    /// Reads `mig-minors` from the driver's directory ([`DIR_VARIABLE`], else
    /// `/proc/driver/nvidia-caps`); empty when it cannot be read.
    pub fn read() -> MigCaps {
        let dir = std::env::var_os(DIR_VARIABLE).map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from);
        MigCaps::read_from(&dir.join("mig-minors"))
    }

    /// Reads the file `path` (at most 1 MiB); empty when it cannot be read.
    pub fn read_from(path: &Path) -> MigCaps {
        let mut text = String::new();
        match std::fs::File::open(path).and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text)) {
            Ok(_) => MigCaps::parse(&text),
            Err(e) => {
                tracing::warn!("cannot read {}: {e}; MIG jobs get no capability device files", path.display());
                MigCaps::default()
            }
        }
    }

    /// Parses `gpuG/giI/access N` and `gpuG/giI/ciC/access N` lines; others (`config`,
    /// `monitor`) are skipped.
    pub fn parse(text: &str) -> MigCaps {
        let number = |word: &str, prefix: &str| word.strip_prefix(prefix)?.parse::<u32>().ok();
        let minors = text
            .lines()
            .filter_map(|line| {
                let (path, minor) = line.split_once(' ')?;
                let minor: u32 = minor.trim().parse().ok()?;
                let parts: Vec<&str> = path.split('/').collect();
                let key = match parts[..] {
                    [gpu, gi, "access"] => (number(gpu, "gpu")?, number(gi, "gi")?, None),
                    [gpu, gi, ci, "access"] => (number(gpu, "gpu")?, number(gi, "gi")?, Some(number(ci, "ci")?)),
                    _ => return None,
                };
                Some((key, minor))
            })
            .collect();
        MigCaps { minors }
    }

    /// The capability device files of compute instance `ci` of GPU instance `gi` on the GPU
    /// whose minor is `gpu`: its GPU instance's, then its own; `None` unless both are
    /// listed.
    pub fn device_files(&self, gpu: u32, gi: u32, ci: u32) -> Option<[PathBuf; 2]> {
        let file = |minor: &u32| PathBuf::from(format!("/dev/nvidia-caps/nvidia-cap{minor}"));
        Some([file(self.minors.get(&(gpu, gi, None))?), file(self.minors.get(&(gpu, gi, Some(ci)))?)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine's `mig-minors` as the driver writes it (first lines).
    const MINORS: &str = "config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\ngpu0/gi1/access 12\n\
                          gpu0/gi1/ci0/access 13\ngpu1/gi2/access 120\ngpu1/gi2/ci1/access 122\n";

    #[test]
    fn each_instance_has_its_gpu_instances_and_its_own_capability() {
        let caps = MigCaps::parse(MINORS);
        assert_eq!(
            caps.device_files(0, 1, 0),
            Some([PathBuf::from("/dev/nvidia-caps/nvidia-cap12"), PathBuf::from("/dev/nvidia-caps/nvidia-cap13")])
        );
        assert_eq!(
            caps.device_files(1, 2, 1),
            Some([PathBuf::from("/dev/nvidia-caps/nvidia-cap120"), PathBuf::from("/dev/nvidia-caps/nvidia-cap122")])
        );
        assert_eq!(caps.device_files(1, 2, 0), None, "a compute instance not listed");
        assert_eq!(caps.device_files(2, 0, 0), None);
    }

    #[test]
    fn lines_that_are_not_capabilities_are_skipped() {
        let caps = MigCaps::parse("gpu0/gi1/access x\ngpux/gi1/access 3\ngpu0/gi1/ci0/other 4\n\nrubbish\n");
        assert_eq!(caps, MigCaps::default());
    }

    #[test]
    fn a_file_that_cannot_be_read_gives_none() {
        assert_eq!(MigCaps::read_from(Path::new("/nonexistent/mig-minors")), MigCaps::default());
    }
}
