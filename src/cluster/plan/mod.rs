//! The plan: the files a Slurm cluster is brought up from (`slurm.conf`, `gres.conf`,
//! `cgroup.conf`, `slurmdbd.conf`, the `sacctmgr` commands, the systemd drop-ins), made
//! from the box's configuration and what each node has, and the report of every check.

pub mod sacctmgr;
