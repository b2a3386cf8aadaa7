//! MPS (NVIDIA's Multi-Process Service) for shard jobs. With `mps = true` and
//! `nvidia-cuda-mps-control` on the daemon's `PATH` at its start, the shard jobs on a GPU run
//! under an MPS control daemon that this daemon starts for that GPU and the jobs' owner before
//! the first of them starts, and quits once the owner's last shard job there has ended. A
//! GPU's server serves one owner at a time: the scheduler keeps other users' shard jobs off
//! a GPU whose shards serve another user. Each job is told where its server is and what
//! share of the GPU it has (`CUDA_MPS_*`).
//!
//! The parts, one job each: [`place`] (where a server keeps its pipes and logs, and the
//! record the daemon keeps of it, by which a restarted daemon finds it again), [`control`]
//! (running the control program: starting a server, telling it to quit), [`env`](mod@env) (the
//! variables of a job under a server), [`servers`] (which server runs on each GPU, for
//! whom, and when one is started or quit) and [`found`] (the control program found at
//! start). The daemon's side (servers taken up at start, idle servers quit) is the runtime's.

pub mod control;
pub mod env;
pub mod found;
pub mod place;
pub mod servers;

pub use control::{find_control, Control, CONTROL_PROGRAM};
pub use env::job_vars;
pub use servers::{Servers, Tenant};
