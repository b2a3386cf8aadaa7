//! What `squeue`, `scontrol show` and their slurmrestd counterparts read of the live state:
//! jobs, steps, the node and partitions in slurmrestd's shapes, the queue's rows, a job's
//! batch script, and the node's GPUs with who holds each; and for the board, the GPU samples
//! kept, the queue in scheduling order and each user's usage; sprio's factors and sshare's
//! fair-share tree.

pub mod associations;
pub mod batch_script;
pub mod gpu_list;
pub mod gpu_samples;
pub mod gres;
pub mod info;
pub mod jobs_reply;
pub mod listing;
pub mod priorities;
pub mod queue;
pub mod reservations;
pub mod shares;
pub mod step_list;
pub mod step_stats;
pub mod usage;
