//! GPUs the configuration lists (`gpus = 4`, `gpus = { ids = [0, 2] }`): the machine is not
//! asked.

use super::{Gpu, GpuError, GpuSource};

/// The configured device indices, taken as NVIDIA GPUs.
#[derive(Debug, Clone)]
pub struct Configured {
    indices: Vec<u32>,
}

impl Configured {
    /// The source's name, as `scontrol show config` gives it (`SLURMLET_GPU_SOURCE`).
    pub const NAME: &'static str = "configured";
}

impl Configured {
    /// The GPUs with these indices.
    pub fn new(indices: Vec<u32>) -> Configured {
        Configured { indices }
    }
}

impl GpuSource for Configured {
    fn name(&self) -> &str {
        Configured::NAME
    }

    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        Ok(self.indices.iter().map(|&i| Gpu::nvidia(i)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_configured_indices_in_order() {
        let gpus = Configured::new(vec![0, 2]).discover().unwrap();
        assert_eq!(gpus, vec![Gpu::nvidia(0), Gpu::nvidia(2)]);
    }
}
