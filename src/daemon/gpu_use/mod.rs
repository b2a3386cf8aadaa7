//! How the node's GPUs are used: the daemon looks at them every `gpu_sample_interval`
//! seconds (the runtime's GPU watch), finds which job and step each process on them belongs to
//! ([`owners`]), sums each step's GPU memory and SM utilisation for its accounting
//! ([`tally`]), and finds the processes that belong to no job and use more than
//! `foreign_gpu_memory` ([`foreign`]); the scheduler keeps new jobs off their GPUs while they
//! run (`foreign_gpu_processes = "avoid"`), and finds the shard jobs that hold more than
//! their share of their GPU's memory ([`share`]); each look also goes into the GPU samples
//! the daemon keeps for the board ([`sample_history`]).

pub mod foreign;
pub mod idle;
pub mod owners;
pub mod sample_history;
pub mod share;
pub mod tally;

pub use foreign::ForeignProcess;
pub use owners::{JobProcesses, Owner, RunningJob};
pub use sample_history::GpuHistory;
pub use share::ShareWatch;
pub use tally::GpuTally;
