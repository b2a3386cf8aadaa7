//! slurmlet: Slurm's client commands and a single-machine GPU scheduler in one binary.

pub mod api;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod daemon;
pub mod format;
pub mod fs_at;
pub mod gpu;
pub mod id_set;
pub mod identity;
pub mod lock;
pub mod options;
pub mod path_looks;
pub mod paths;
pub mod program;
pub mod queue;
pub mod stepd;
pub mod sys;
