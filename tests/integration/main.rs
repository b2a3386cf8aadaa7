//! The integration tests, one binary linked once against the crate: a module per subject
//! (`cargo test --test integration steps::` runs one of them), with the shared helpers in
//! `common`. They run at once on the harness's threads, in one process: none may change what
//! the process holds for all of them (its environment, working directory, umask or signal
//! dispositions; a child's are set on its `Command`), and the descriptor limit is only raised,
//! through `common::connections::room_for`.
//!
//! `tests/real_slurm.rs` stays a binary of its own: CI runs it alone, against a real Slurm.

mod common;
mod remote_suite;
mod torture;

mod activity;
mod array_steps;
mod arrays;
mod bench_smoke;
mod board;
mod cgroup_config;
mod cgroup_devices;
mod cgroup_group;
mod cgroup_jobs;
mod cluster_pending;
mod cluster_plan;
mod completions;
mod completions_remote;
mod config_bounds;
mod connection_limits;
mod cpu_ids;
mod crash_torture;
mod dependencies;
mod doc_links;
mod fair_share;
mod file_size;
mod generated_files;
mod gpu_accounting;
mod gpu_amd;
mod gpu_busy;
mod gpu_detection;
mod gpu_health;
mod gpu_nvml;
mod gpu_views;
mod hold;
mod hostile_input;
mod hostile_users;
mod hostlists;
mod idle_gpus;
mod install_links;
mod layering;
mod mps;
mod notifications;
mod openapi;
mod option_table;
mod optional_values;
mod panic_abort;
mod parity;
mod parity_third;
mod pty;
mod qos_preemption;
mod queue;
mod real_slurm_priority;
mod real_slurm_reservations;
mod real_slurm_sreport;
mod recovery;
mod reference_parsing;
mod remote;
mod remote_ours;
mod request_limits;
mod reservations;
mod sacct;
mod sbatch_input;
mod sbatch_options;
mod scheduling;
mod scontrol_show;
mod scontrol_write;
mod seed_script_options;
mod seed_scripts;
mod seff;
mod shard_memory;
mod shards;
mod signals_env;
mod sstat;
mod step_views;
mod steps;
mod store_upgrade;
mod submitit;
mod supervisors;
mod suspend;
mod system_mode;
mod tokens;
mod update;
mod views;
