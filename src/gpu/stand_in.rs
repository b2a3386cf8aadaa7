//! `SLURMLET_GPUS=N`: N stand-in GPUs on a machine that has none, for trying things out.

use super::{Gpu, GpuError, GpuSource};

/// The variable that asks for stand-in GPUs.
pub const VARIABLE: &str = "SLURMLET_GPUS";

/// `count` stand-in NVIDIA GPUs, indices 0..count.
#[derive(Debug, Clone, Default)]
pub struct StandIn {
    count: u32,
}

impl StandIn {
    /// As many as `SLURMLET_GPUS` says (none when it is unset or not a number).
    pub fn from_env() -> StandIn {
        StandIn::new(std::env::var(VARIABLE).ok().and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// `count` of them.
    pub fn new(count: u32) -> StandIn {
        StandIn { count }
    }
}

impl GpuSource for StandIn {
    fn name(&self) -> &str {
        VARIABLE
    }

    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        Ok((0..self.count).map(Gpu::nvidia).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stands_in_that_many() {
        assert_eq!(StandIn::new(2).discover().unwrap(), vec![Gpu::nvidia(0), Gpu::nvidia(1)]);
        assert!(StandIn::new(0).discover().unwrap().is_empty());
    }
}
