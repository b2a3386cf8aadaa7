//! GPUs in use outside the queue: the daemon looks at the processes on the GPUs every
//! `gpu_sample_interval` seconds ([`watch`]), finds those that belong to no job and use
//! more than `foreign_gpu_memory` ([`foreign`]), and hands them to the scheduler, which
//! keeps new jobs off their GPUs while they run (`foreign_gpu_processes = "avoid"`).

pub mod foreign;
pub mod process;
pub mod watch;

pub use foreign::{ForeignProcess, JobProcesses};
