//! What the daemon found of the machine at its start: where its GPUs came from, the MPS
//! control program and how jobs are contained in cgroups. Found once, kept apart from the
//! configuration (which says what was asked for, and which a reload replaces), and passed
//! down to what needs it; nothing changes it afterwards.

use crate::stepd::containment::cgroup::setup::CgroupSetup;
use std::path::PathBuf;

/// The facts found at the daemon's start.
#[derive(Debug, Default)]
pub struct Machine {
    /// The [`GpuSource::name`](crate::gpu::GpuSource::name) of the source the GPUs came
    /// from (`configured`, `nvml`, `nvidia-smi`, …); `None` when none was found.
    pub gpu_source: Option<String>,
    /// The MPS control program (`nvidia-cuda-mps-control`) found on the daemon's `PATH` when
    /// `mps` is on; `None`: shard jobs run without MPS.
    pub mps_control: Option<PathBuf>,
    /// How jobs are contained in cgroups; `None`: they are held by their process groups only.
    pub cgroups: Option<CgroupSetup>,
}

impl Machine {
    /// Whether shard jobs run under the daemon's MPS servers.
    pub fn runs_mps(&self) -> bool {
        self.mps_control.is_some()
    }
}
