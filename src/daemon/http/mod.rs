//! The daemon's REST side: the listeners (the Unix socket, the TCP address) and the limits on
//! the connections they hold, who calls (peer credentials, tokens) and what they may do, request bodies and their decoding, the
//! routes and their handlers, the OpenAPI document, and the refusals in slurmrestd's form.

pub mod accept;
pub mod admission;
pub mod associations;
pub mod batch_script;
pub mod body;
pub mod changes;
pub mod gpu_samples;
pub mod gpus;
pub mod handlers;
pub mod interactive;
pub mod openapi;
pub mod params;
pub mod queue;
pub mod refusal;
pub mod request;
pub mod requeue;
pub mod reservations;
pub mod routes;
pub mod shares;
pub mod slurmdb;
pub mod steps;
pub mod submit_keys;
pub mod suspend;
pub mod tcp;
pub mod token;
pub mod update;
pub mod usage;
