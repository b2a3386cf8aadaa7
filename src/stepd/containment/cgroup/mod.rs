//! Containment in cgroups: what the machine offers ([`hierarchy`]), and, on top of it, the
//! job and step groups that confine a job to its CPUs, memory and GPUs.

pub mod contain;
pub mod delegation;
pub mod devices;
pub mod group;
pub mod hierarchy;
pub mod plan;
pub mod settings;
pub mod setup;
