//! A job step's supervisor (`slurmlet stepd-step STEPDIR`): starts the step's tasks and
//! relays their I/O, exits and signals over the client's stream connection.

pub mod spec;

pub use spec::{StepInput, StepSpec};
