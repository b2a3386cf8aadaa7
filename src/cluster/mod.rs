//! The move from one slurmlet machine to a real Slurm cluster: what each node has
//! ([`facts`], gathered on the node by [`probe`] and fetched through a [`transport`]), and
//! the files that make the cluster from the box's configuration ([`plan`]). Nothing here
//! schedules across machines: the cluster is Slurm's, and slurmlet plans it, sets it up and
//! talks to it.

pub mod plan;
