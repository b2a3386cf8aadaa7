//! The control program, found on the daemon's `PATH` at its start, and what `scontrol show
//! config` says of it.

use crate::config::Config;
use std::path::{Path, PathBuf};

/// At the daemon's start: with `mps = true`, looks for the control program on the daemon's
/// `PATH`. Says in one warning line when it is not there (shard jobs then run without MPS),
/// and names each GPU whose memory is unknown (its shard jobs get no memory limit).
pub fn find(config: &Config) -> Option<PathBuf> {
    if !config.mps {
        return None;
    }
    let found = super::find_control(std::env::var_os("PATH").as_deref());
    match &found {
        None => tracing::warn!(
            "mps = true, but {} is not on the daemon's PATH: shard jobs run without MPS",
            super::CONTROL_PROGRAM
        ),
        Some(program) => {
            tracing::info!("shard jobs run under MPS servers started with {}", program.display());
            for gpu in config.gpus.iter().filter(|g| g.memory_mb.is_none()) {
                tracing::warn!(
                    "the memory of GPU {} is unknown: its shard jobs get no CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                    gpu.index
                );
            }
        }
    }
    found
}

/// What `scontrol show config` says of MPS (`SLURMLET_MPS`): the control program servers
/// are started with (`found`), or why shard jobs run without MPS; nothing when MPS is not
/// asked for.
pub fn describe(config: &Config, found: Option<&Path>) -> String {
    match (found, config.mps) {
        (_, false) => String::new(),
        (Some(program), true) => program.display().to_string(),
        (None, true) => {
            format!("none: {} is not on the daemon's PATH; shard jobs run without MPS", super::CONTROL_PROGRAM)
        }
    }
}
