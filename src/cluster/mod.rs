//! The move from one slurmlet machine to a real Slurm cluster: what each node has
//! ([`facts`], found on the node by [`probe`] and fetched through a [`transport`] by
//! [`gather`]), and the files that make the cluster from the box's configuration
//! ([`plan`]). Nothing here schedules across machines: the cluster is Slurm's, and slurmlet
//! plans it and talks to it.

pub mod apply;
pub mod facts;
pub mod gather;
pub mod node_check;
pub mod plan;
pub mod probe;
pub mod resubmit;
pub mod shell;
pub mod status;
pub mod transport;
