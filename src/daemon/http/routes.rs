//! Every endpoint the daemon serves, in one table: the router is built from it, and the
//! OpenAPI document the daemon serves ([`super::openapi`]) is checked against it.

use super::{
    batch_script, gpu_samples, gpus, handlers, interactive, queue, requeue, shares, slurmdb, steps, suspend, usage,
};
use crate::daemon::runtime::Daemon;
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::Router;
use std::sync::Arc;

/// What an endpoint does: each has one handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `GET /slurm/v0.0.43/ping`.
    Ping,
    /// `POST /slurm/v0.0.43/job/submit`.
    Submit,
    /// `GET /slurm/v0.0.43/jobs`.
    Jobs,
    /// `GET /slurm/v0.0.43/job/{job_id}`.
    Job,
    /// `DELETE /slurm/v0.0.43/job/{job_id}`.
    Cancel,
    /// `GET /slurm/v0.0.43/nodes`.
    Nodes,
    /// `GET /slurm/v0.0.43/partitions`.
    Partitions,
    /// `POST /slurmlet/v1/shutdown`.
    Shutdown,
    /// `POST /slurmlet/v1/job/test`.
    TestOnly,
    /// `POST /slurmlet/v1/jobs/query`.
    JobsQuery,
    /// `GET /slurmlet/v1/job/{job_id}/wait`.
    Wait,
    /// `POST /slurmlet/v1/allocation` (upgraded to a stream).
    Allocation,
    /// `POST /slurmlet/v1/job/{job_id}/steps` (upgraded to a stream).
    Step,
    /// `POST /slurm/v0.0.43/job/{job_id}`: slurmrestd's job update (hold, release, priority).
    Update,
    /// `GET /slurmdb/v0.0.43/jobs`.
    DbJobs,
    /// `GET /slurmdb/v0.0.43/job/{job_id}`.
    DbJob,
    /// `POST /slurmlet/v1/history`: sacct's query.
    History,
    /// `GET /slurmlet/v1/config`: what `scontrol show config` prints.
    Config,
    /// `POST /slurmlet/v1/token`: a REST token (`scontrol token`).
    Token,
    /// `POST /slurmlet/v1/job/{job_id}/requeue`: `scontrol requeue`.
    Requeue,
    /// `POST /slurmlet/v1/job/{job_id}/suspend`: `scontrol suspend`.
    Suspend,
    /// `POST /slurmlet/v1/job/{job_id}/resume`: `scontrol resume`.
    Resume,
    /// `GET /slurmlet/v1/steps`: the steps of the running jobs (`squeue -s`, `scontrol show
    /// step`).
    Steps,
    /// `GET /slurmlet/v1/job/{job_id}/script`: `scontrol write batch_script`.
    BatchScript,
    /// `GET /slurmlet/v1/gpus`: the node's GPUs and who holds them (`slurmlet gpus`).
    Gpus,
    /// `GET /slurmlet/v1/gpus/samples`: the GPU samples kept, for the board.
    GpuSamples,
    /// `POST /slurmlet/v1/gpus/{index}/resume`: a failed GPU put back in service.
    GpuResume,
    /// `GET /slurmlet/v1/job/{job_id}/gpu_samples`: one job's GPU use over its life.
    JobGpuSamples,
    /// `GET /slurmlet/v1/queue`: the running jobs and the pending ones in scheduling order.
    Queue,
    /// `GET /slurmlet/v1/usage`: each user's GPU-seconds and jobs over a window.
    Usage,
    /// `GET /slurmlet/v1/changes`: the change counter, waited on.
    Changes,
    /// `GET /slurm/v0.0.43/shares`: the fair-share tree (`sshare`).
    Shares,
    /// `GET /slurmlet/v1/priorities`: the pending jobs' priority factors (`sprio`).
    Priorities,
    /// `GET /slurmdb/v0.0.43/associations` (`sacctmgr show assoc`).
    DbAssociations,
    /// `GET /slurmdb/v0.0.43/users` (`sacctmgr show user`).
    DbUsers,
    /// `GET /slurmdb/v0.0.43/accounts` (`sacctmgr show account`).
    DbAccounts,
    /// `GET /slurmdb/v0.0.43/qos` (`sacctmgr show qos`).
    DbQos,
    /// `GET /slurm/v0.0.43/reservations`.
    Reservations,
    /// `GET /slurm/v0.0.43/reservation/{reservation_name}`.
    Reservation,
    /// `POST /slurm/v0.0.43/reservation`: create or update.
    ReservationPost,
    /// `DELETE /slurm/v0.0.43/reservation/{reservation_name}`.
    ReservationDelete,
    /// `POST /slurmlet/v1/reservation/create` (`scontrol create reservation`).
    ReservationCreate,
    /// `POST /slurmlet/v1/reservation/update` (`scontrol update reservation`).
    ReservationUpdate,
    /// `GET /openapi/v3` and its other names.
    OpenApi,
}

/// One method on one path.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    /// The HTTP method.
    pub method: &'static str,
    /// The path as the OpenAPI document writes it (served with and without a trailing `/`).
    pub path: &'static str,
    /// Its handler.
    pub op: Op,
}

const fn ep(method: &'static str, path: &'static str, op: Op) -> Endpoint {
    Endpoint { method, path, op }
}

/// Every endpoint the daemon serves.
pub const ENDPOINTS: &[Endpoint] = &[
    ep("GET", "/slurm/v0.0.43/ping", Op::Ping),
    ep("POST", "/slurm/v0.0.43/job/submit", Op::Submit),
    ep("GET", "/slurm/v0.0.43/jobs", Op::Jobs),
    ep("GET", "/slurm/v0.0.43/job/{job_id}", Op::Job),
    ep("DELETE", "/slurm/v0.0.43/job/{job_id}", Op::Cancel),
    ep("POST", "/slurm/v0.0.43/job/{job_id}", Op::Update),
    ep("GET", "/slurm/v0.0.43/nodes", Op::Nodes),
    ep("GET", "/slurm/v0.0.43/partitions", Op::Partitions),
    ep("GET", "/slurm/v0.0.43/shares", Op::Shares),
    ep("GET", "/slurm/v0.0.43/reservations", Op::Reservations),
    ep("GET", "/slurm/v0.0.43/reservation/{reservation_name}", Op::Reservation),
    ep("DELETE", "/slurm/v0.0.43/reservation/{reservation_name}", Op::ReservationDelete),
    ep("POST", "/slurm/v0.0.43/reservation", Op::ReservationPost),
    ep("GET", "/slurmdb/v0.0.43/jobs", Op::DbJobs),
    ep("GET", "/slurmdb/v0.0.43/job/{job_id}", Op::DbJob),
    ep("GET", "/slurmdb/v0.0.43/associations", Op::DbAssociations),
    ep("GET", "/slurmdb/v0.0.43/users", Op::DbUsers),
    ep("GET", "/slurmdb/v0.0.43/accounts", Op::DbAccounts),
    ep("GET", "/slurmdb/v0.0.43/qos", Op::DbQos),
    ep("POST", "/slurmlet/v1/history", Op::History),
    ep("GET", "/slurmlet/v1/config", Op::Config),
    ep("POST", "/slurmlet/v1/token", Op::Token),
    ep("POST", "/slurmlet/v1/shutdown", Op::Shutdown),
    ep("POST", "/slurmlet/v1/job/test", Op::TestOnly),
    ep("POST", "/slurmlet/v1/jobs/query", Op::JobsQuery),
    ep("GET", "/slurmlet/v1/job/{job_id}/wait", Op::Wait),
    ep("POST", "/slurmlet/v1/job/{job_id}/requeue", Op::Requeue),
    ep("POST", "/slurmlet/v1/allocation", Op::Allocation),
    ep("POST", "/slurmlet/v1/job/{job_id}/steps", Op::Step),
    ep("GET", "/slurmlet/v1/steps", Op::Steps),
    ep("POST", "/slurmlet/v1/job/{job_id}/suspend", Op::Suspend),
    ep("POST", "/slurmlet/v1/job/{job_id}/resume", Op::Resume),
    ep("GET", "/slurmlet/v1/job/{job_id}/script", Op::BatchScript),
    ep("GET", "/slurmlet/v1/gpus", Op::Gpus),
    ep("GET", "/slurmlet/v1/gpus/samples", Op::GpuSamples),
    ep("POST", "/slurmlet/v1/gpus/{index}/resume", Op::GpuResume),
    ep("GET", "/slurmlet/v1/job/{job_id}/gpu_samples", Op::JobGpuSamples),
    ep("GET", "/slurmlet/v1/queue", Op::Queue),
    ep("GET", "/slurmlet/v1/usage", Op::Usage),
    ep("GET", "/slurmlet/v1/changes", Op::Changes),
    ep("GET", "/slurmlet/v1/priorities", Op::Priorities),
    ep("POST", "/slurmlet/v1/reservation/create", Op::ReservationCreate),
    ep("POST", "/slurmlet/v1/reservation/update", Op::ReservationUpdate),
    ep("GET", "/openapi/v3", Op::OpenApi),
    ep("GET", "/openapi", Op::OpenApi),
    ep("GET", "/openapi.json", Op::OpenApi),
];

fn handler(method: MethodFilter, op: Op) -> MethodRouter<Arc<Daemon>> {
    match op {
        Op::Ping => on(method, handlers::ping),
        Op::Submit => on(method, handlers::submit),
        Op::Jobs => on(method, handlers::jobs),
        Op::Job => on(method, handlers::job),
        Op::Cancel => on(method, handlers::cancel),
        Op::Nodes => on(method, handlers::nodes),
        Op::Partitions => on(method, handlers::partitions),
        Op::Shutdown => on(method, handlers::shutdown),
        Op::TestOnly => on(method, handlers::test_only),
        Op::JobsQuery => on(method, handlers::jobs_query),
        Op::Wait => on(method, handlers::wait),
        Op::Allocation => on(method, interactive::allocation),
        Op::Step => on(method, interactive::step),
        Op::Update => on(method, super::update::update),
        Op::DbJobs => on(method, slurmdb::jobs),
        Op::DbJob => on(method, slurmdb::job),
        Op::History => on(method, slurmdb::history),
        Op::Config => on(method, handlers::config),
        Op::Token => on(method, super::token::token),
        Op::Requeue => on(method, requeue::handler),
        Op::Suspend => on(method, suspend::suspend),
        Op::Resume => on(method, suspend::resume),
        Op::Steps => on(method, steps::handler),
        Op::BatchScript => on(method, batch_script::handler),
        Op::Gpus => on(method, gpus::handler),
        Op::GpuSamples => on(method, gpu_samples::handler),
        Op::GpuResume => on(method, gpus::resume),
        Op::JobGpuSamples => on(method, gpu_samples::job_handler),
        Op::Queue => on(method, queue::handler),
        Op::Usage => on(method, usage::handler),
        Op::Changes => on(method, super::changes::handler),
        Op::Shares => on(method, shares::shares),
        Op::Priorities => on(method, shares::priorities),
        Op::DbAssociations => on(method, super::associations::associations),
        Op::DbUsers => on(method, super::associations::users),
        Op::DbAccounts => on(method, super::associations::accounts),
        Op::DbQos => on(method, super::associations::qos),
        Op::Reservations => on(method, super::reservations::list),
        Op::Reservation => on(method, super::reservations::one),
        Op::ReservationPost => on(method, super::reservations::upsert),
        Op::ReservationDelete => on(method, super::reservations::delete),
        Op::ReservationCreate => on(method, super::reservations::create),
        Op::ReservationUpdate => on(method, super::reservations::update),
        Op::OpenApi => on(method, super::openapi::document),
    }
}

fn filter(method: &str) -> MethodFilter {
    match method {
        "GET" => MethodFilter::GET,
        "POST" => MethodFilter::POST,
        "DELETE" => MethodFilter::DELETE,
        "PUT" => MethodFilter::PUT,
        "PATCH" => MethodFilter::PATCH,
        other => panic!("no endpoint takes {other}"),
    }
}

/// The router with every endpoint of [`ENDPOINTS`], with and without a trailing slash; any
/// other path or method gets slurmrestd's error envelope.
pub fn router(daemon: Arc<Daemon>) -> Router {
    let mut r = Router::new();
    for e in ENDPOINTS {
        let path = e.path.trim_end_matches('/');
        for p in [path.to_string(), format!("{path}/")] {
            r = r.route(&p, handler(filter(e.method), e.op));
        }
    }
    r.fallback(super::refusal::unknown_path)
        .method_not_allowed_fallback(super::refusal::method_not_allowed)
        // The guard reads every body, up to its own limit, before the handlers see it.
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(daemon.clone(), super::refusal::guard))
        .with_state(daemon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_endpoint_is_listed_once_and_slurm_paths_speak_the_data_parser() {
        let mut seen = std::collections::HashSet::new();
        for e in ENDPOINTS {
            assert!(seen.insert((e.method, e.path.trim_end_matches('/'))), "{} {} twice", e.method, e.path);
            filter(e.method);
            if let Some(rest) = e.path.strip_prefix("/slurm/").or(e.path.strip_prefix("/slurmdb/")) {
                assert!(rest.starts_with(&format!("{}/", crate::api::types::DATA_PARSER)), "{}", e.path);
            }
        }
    }
}
