//! The range each numeric key of the configuration file must lie in, checked where the file
//! is read (`Config::resolve`), on the daemon's start and on each reload alike.
//!
//! Without them a value no machine could have went through and did its harm later:
//! `cpus = 4000000000` aborted the daemon on a 16 GB allocation, a
//! `job_acct_gather_frequency` near `u64::MAX` overflowed every supervisor's timer (each job
//! ended `NODE_FAIL`), a huge `gpu_sample_interval` ended the GPU watcher while the daemon ran
//! on, and `allowed_ram_space = -50` became a limit of 0 bytes. Each range is one no real
//! machine reaches, and small enough that what is computed from it (a [`Duration`] added to
//! an [`Instant`], MiB shifted into bytes, days into seconds) cannot overflow.
//!
//! [`Duration`]: std::time::Duration
//! [`Instant`]: std::time::Instant

use std::fmt::Display;
use thiserror::Error;

/// A value outside its key's range: `gpus = 4000000000 is out of range: 0 to 1024`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{key} = {value} is out of range: {min} to {max}{unit}")]
pub struct OutOfRange {
    /// The key as the file writes it (`cgroup.allowed_ram_space`).
    pub key: String,
    /// The value as read.
    pub value: String,
    /// The smallest value allowed.
    pub min: String,
    /// The largest value allowed.
    pub max: String,
    /// What the values count, after a space (` seconds`), or nothing.
    pub unit: &'static str,
}

/// The inclusive range of one key's values, and the unit they count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds<N> {
    /// The smallest value allowed.
    pub min: N,
    /// The largest value allowed.
    pub max: N,
    /// What the values count, after a space (` seconds`), or nothing.
    pub unit: &'static str,
}

impl<N: PartialOrd + Display + Copy> Bounds<N> {
    /// `value` of `key` when it lies in the range (a NaN never does), else the refusal that
    /// names them and the range.
    pub fn check(&self, key: &str, value: N) -> Result<N, OutOfRange> {
        if self.min <= value && value <= self.max {
            Ok(value)
        } else {
            Err(self.refusal(key, value))
        }
    }

    /// The refusal of `value` for `key`.
    pub fn refusal(&self, key: &str, value: impl Display) -> OutOfRange {
        OutOfRange {
            key: key.to_string(),
            value: value.to_string(),
            min: self.min.to_string(),
            max: self.max.to_string(),
            unit: self.unit,
        }
    }
}

impl Bounds<i64> {
    /// `value` of `key` (a TOML integer) as the type the daemon keeps it in, when it lies in
    /// the range; every range here fits the type it is read into.
    pub fn read<T: TryFrom<i64>>(&self, key: &str, value: i64) -> Result<T, OutOfRange> {
        T::try_from(self.check(key, value)?).map_err(|_| self.refusal(key, value))
    }

    /// [`Bounds::read`] of a key that may be absent.
    pub fn read_opt<T: TryFrom<i64>>(&self, key: &str, value: Option<i64>) -> Result<Option<T>, OutOfRange> {
        value.map(|v| self.read(key, v)).transpose()
    }
}

const fn ints(min: i64, max: i64, unit: &'static str) -> Bounds<i64> {
    Bounds { min, max, unit }
}

/// Seconds in a day: the longest interval between two looks of a periodic task (at the GPUs,
/// at a job's memory). Past it the look tells nothing, and `Instant::now()` plus it is far
/// from any overflow.
pub const DAY_SECS: i64 = 86_400;

/// `cpus`: at least one, at most Linux's largest `CONFIG_NR_CPUS` (8192, x86-64's MAXSMP).
/// The scheduler keeps the ids of the free CPUs in a list.
pub const CPUS: Bounds<i64> = ints(1, 8192, "");

/// `memory` and `def_mem_per_cpu`, MB: at most 4 PiB, the physical memory x86-64's
/// five-level paging addresses; in bytes that is 2^52, far inside a `u64` even with the
/// cgroup percentages applied.
pub const MEMORY_MB: Bounds<i64> = ints(1, 4 << 30, " MB");

/// `def_mem_per_cpu`, MB: as [`MEMORY_MB`], and 0 (nothing reserved) too.
pub const MEM_PER_CPU_MB: Bounds<i64> = ints(0, MEMORY_MB.max, " MB");

/// `gpus` (a count, or the length of a list), `limits.max_gpus_per_user`: a host holds at
/// most 16 GPUs today, 112 MIG instances of them; 1024 leaves room while the per-GPU tables
/// stay small.
pub const GPUS: Bounds<i64> = ints(0, 1024, "");

/// Each of `gpus.ids`: a device index below [`GPUS`]'s largest count.
pub const GPU_ID: Bounds<i64> = ints(0, GPUS.max - 1, "");

/// The most shards a GPU may be split into (a GPU's memory in MiB is counted in shards, so
/// more would give shares of less than a few MiB).
pub const MAX_SHARDS_PER_GPU: u32 = 1024;

/// `shards_per_gpu`: 0 (GPUs are given whole) to [`MAX_SHARDS_PER_GPU`].
pub const SHARDS_PER_GPU: Bounds<i64> = ints(0, MAX_SHARDS_PER_GPU as i64, "");

/// `gpu_sample_interval`, seconds: 0 turns the look off; at most a day ([`DAY_SECS`]).
pub const GPU_SAMPLE_INTERVAL: Bounds<i64> = ints(0, DAY_SECS, " seconds");

/// `job_acct_gather_frequency` (Slurm's `JobAcctGatherFrequency`), seconds: 0 turns the
/// looks off; at most a day ([`DAY_SECS`]): each supervisor adds it to `Instant::now()`.
pub const JOB_ACCT_GATHER_FREQUENCY: Bounds<i64> = ints(0, DAY_SECS, " seconds");

/// `gpu_history_resolution`, seconds: at least 1 (a step of the samples), at most a day.
pub const GPU_HISTORY_RESOLUTION: Bounds<i64> = ints(1, DAY_SECS, " seconds");

/// `gpu_history_days`: 0 keeps none; at most ten years.
pub const GPU_HISTORY_DAYS: Bounds<i64> = ints(0, 3650, " days");

/// `history_days`: 0 keeps every job; at most a hundred years.
pub const HISTORY_DAYS: Bounds<i64> = ints(0, 36_500, " days");

/// `foreign_gpu_memory`, MiB: at most 1 TiB, more than any GPU has (the largest have under
/// 300 GB); shifted into bytes it stays far inside a `u64`.
pub const FOREIGN_GPU_MEMORY_MIB: Bounds<i64> = ints(0, 1 << 20, " MiB");

/// `kill_wait`, seconds: Slurm's `KillWait` "may not exceed 65533" (slurm.conf(5)).
pub const KILL_WAIT: Bounds<i64> = ints(0, 65_533, " seconds");

/// `min_job_age`, seconds: at most a year; a finished job shown longer is what sacct is for,
/// and each one is held in the daemon's memory meanwhile.
pub const MIN_JOB_AGE: Bounds<i64> = ints(0, 365 * DAY_SECS, " seconds");

/// `max_array_size`: Slurm's `MaxArraySize` "may not exceed 4000001" (slurm.conf(5)).
pub const MAX_ARRAY_SIZE: Bounds<i64> = ints(0, crate::options::array::MAX_ARRAY_SIZE_LIMIT as i64, "");

/// `limits.max_running_jobs_per_user`, `limits.max_submitted_jobs_per_user`: at most Slurm's
/// largest job id (`MaxJobId`, 67,108,863): no user holds more jobs than there are ids.
pub const JOBS_PER_USER: Bounds<i64> = ints(0, 67_108_863, " jobs");

/// `cgroup.allowed_ram_space` (cgroup.conf's `AllowedRAMSpace`), percent of what a job was
/// given. Slurm takes any number and floors the limit at `MinRAMSpace` (30 MiB); slurmlet has
/// no floor, so a limit of nothing (0 or less: every job killed at its start) is refused. At
/// most ten times the job's share: past that, the limit no longer limits.
pub const ALLOWED_RAM_SPACE: Bounds<f64> = Bounds { min: 1.0, max: 1000.0, unit: " percent" };

/// `cgroup.allowed_swap_space` (cgroup.conf's `AllowedSwapSpace`), percent above the memory
/// limit: 0 (Slurm's default) to ten times it, as [`ALLOWED_RAM_SPACE`].
pub const ALLOWED_SWAP_SPACE: Bounds<f64> = Bounds { min: 0.0, max: 1000.0, unit: " percent" };

/// The port of `listen`: port 0 would have the kernel choose one nobody knows.
pub const PORT: Bounds<u16> = Bounds { min: 1, max: u16::MAX, unit: "" };

/// A partition's `max_time` and `default_time`, minutes: the longest time limit a job may
/// have ([`crate::options::time::MAX_MINUTES`]); `UNLIMITED` stays allowed.
pub const PARTITION_MINUTES: Bounds<u64> = Bounds { min: 0, max: crate::options::time::MAX_MINUTES, unit: " minutes" };

/// `requeue_delay`, seconds: at most a day ([`DAY_SECS`]).
pub const REQUEUE_DELAY: Bounds<i64> = ints(0, DAY_SECS, " seconds");

/// A partition's `priority_job_factor`: Slurm's `PriorityJobFactor` is 16-bit.
pub const PRIORITY_JOB_FACTOR: Bounds<i64> = ints(0, u16::MAX as i64, "");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_in_range_is_kept_and_one_outside_is_refused_naming_key_value_and_range() {
        assert_eq!(KILL_WAIT.read::<u32>("kill_wait", 65_533), Ok(65_533));
        assert_eq!(
            KILL_WAIT.read::<u32>("kill_wait", 65_534).unwrap_err().to_string(),
            "kill_wait = 65534 is out of range: 0 to 65533 seconds"
        );
        assert_eq!(
            GPUS.read::<u32>("gpus", -1).unwrap_err().to_string(),
            "gpus = -1 is out of range: 0 to 1024",
            "a negative integer is refused the same way"
        );
    }

    #[test]
    fn a_nan_or_an_infinite_percentage_is_refused() {
        for bad in [f64::NAN, f64::INFINITY, -50.0, 0.0] {
            let e = ALLOWED_RAM_SPACE.check("cgroup.allowed_ram_space", bad).unwrap_err();
            assert!(e.to_string().ends_with("is out of range: 1 to 1000 percent"), "{e}");
        }
        assert_eq!(ALLOWED_RAM_SPACE.check("x", 101.5), Ok(101.5));
    }

    #[test]
    fn every_integer_range_fits_the_type_it_is_read_into() {
        for (bounds, max) in [
            (CPUS, u32::MAX as i64),
            (GPUS, u32::MAX as i64),
            (GPU_ID, u32::MAX as i64),
            (SHARDS_PER_GPU, u32::MAX as i64),
            (KILL_WAIT, u32::MAX as i64),
            (MIN_JOB_AGE, u32::MAX as i64),
            (MAX_ARRAY_SIZE, u32::MAX as i64),
            (JOBS_PER_USER, u32::MAX as i64),
            (GPU_HISTORY_DAYS, u32::MAX as i64),
            (HISTORY_DAYS, u32::MAX as i64),
        ] {
            assert!(bounds.min >= 0 && bounds.max <= max, "{bounds:?}");
        }
    }
}
