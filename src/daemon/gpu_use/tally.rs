//! A step's GPU use over the looks at the GPUs: its peak and its average ([`GpuTally`]).

use crate::api::acct::GpuUse;

/// The sums of a step's GPU memory and SM utilisation at each look, kept to give their peak
/// and their average.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuTally {
    looks: u64,
    mem_sum: u128,
    mem_max: u64,
    util_sum: u64,
    util_max: u32,
}

impl GpuTally {
    /// Counts one look, at which the step's processes held `memory` bytes and kept the SMs
    /// `util` percent busy (both summed over its processes).
    pub fn add(&mut self, memory: u64, util: u32) {
        self.looks += 1;
        self.mem_sum += memory as u128;
        self.mem_max = self.mem_max.max(memory);
        self.util_sum += util as u64;
        self.util_max = self.util_max.max(util);
    }

    /// The peak and average so far; `None` before the first look.
    pub fn figures(&self) -> Option<GpuUse> {
        (self.looks > 0).then(|| GpuUse {
            mem_max: self.mem_max,
            mem_ave: (self.mem_sum / self.looks as u128) as u64,
            util_max: self.util_max,
            util_ave: (self.util_sum / self.looks) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_and_averages() {
        let mut t = GpuTally::default();
        assert_eq!(t.figures(), None);
        t.add(4 << 30, 90);
        t.add(2 << 30, 30);
        t.add(0, 0);
        assert_eq!(t.figures(), Some(GpuUse { mem_max: 4 << 30, mem_ave: 2 << 30, util_max: 90, util_ave: 40 }));
    }
}
