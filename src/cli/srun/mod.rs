//! `srun`: the pieces of its client side of a job step.

pub mod exits;
pub mod io;
pub mod output;
pub mod signals;
pub mod state;
pub mod terminal;
