//! What `squeue`, `scontrol show` and their slurmrestd counterparts read of the live state:
//! jobs, steps, the node and partitions in slurmrestd's shapes, the queue's rows, a job's
//! batch script, and the node's GPUs with who holds each.

pub mod batch_script;
pub mod gpu_list;
pub mod gres;
pub mod info;
pub mod jobs_reply;
pub mod listing;
pub mod step_list;
pub mod step_stats;
