//! One load client: its own keep-alive connection, sending a fixed random mix of submits,
//! listings, single-job queries and cancels until the deadline, one request at a time.

use super::tally::{Kind, Tally};
use slurmlet::api::client::Client;
use slurmlet::api::types::{JobDescMsg, JobQuery, JobSubmitReq, DATA_PARSER};
use slurmlet::cli::squeue;
use slurmlet::queue;
use std::time::{Duration, Instant};

/// Held jobs a client keeps queued at most: past it, it cancels its oldest, so that the
/// queue stays bounded however long the load runs.
const MAX_HELD: usize = 20;

/// How many of its latest jobs a client looks up at most.
const RECENT: usize = 64;

/// What a client submits: held jobs (cancelled later), and now and then one that runs.
pub struct Jobs {
    /// A held job.
    pub held: JobSubmitReq,
    /// A job that runs `true`.
    pub runs: JobSubmitReq,
}

impl Jobs {
    /// Both kinds, from a description of a `true` job.
    pub fn from(desc: JobDescMsg) -> Jobs {
        let held = JobDescMsg { hold: Some(true), ..desc.clone() };
        Jobs {
            held: JobSubmitReq { script: None, job: Some(held) },
            runs: JobSubmitReq { script: None, job: Some(desc) },
        }
    }
}

/// The answer's errors, whatever else it holds (the rest is skipped, not built).
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Errors {
    errors: Vec<serde_json::Value>,
}

/// A small xorshift generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Runs one client on `client` until `deadline`; `seed` picks its mix. It looks up only
/// jobs it submitted less than `recent` ago: an older one may have ended and left the
/// daemon's memory (after MinJobAge), and would rightly be unknown.
pub fn run(client: &Client, jobs: &Jobs, seed: u64, deadline: Instant, recent: Duration) -> Tally {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut tally = Tally::default();
    let (mut held, mut mine) = (std::collections::VecDeque::new(), std::collections::VecDeque::new());
    let squeue = JobQuery {
        layout: Some(queue::layout_of(&slurmlet::format::parse(squeue::DEFAULT_FORMAT))),
        ..Default::default()
    };
    while Instant::now() < deadline {
        while mine.front().is_some_and(|(_, at): &(u32, Instant)| at.elapsed() >= recent) {
            mine.pop_front();
        }
        let roll = rng.below(1000);
        let kind = match roll {
            _ if held.len() >= MAX_HELD => Kind::Cancel,
            0..300 => Kind::Submit,
            300..650 if mine.is_empty() => Kind::Squeue,
            300..650 => Kind::Job,
            650..950 => Kind::Squeue,
            950..955 => Kind::Jobs,
            _ if held.is_empty() => Kind::Squeue,
            _ => Kind::Cancel,
        };
        let t = Instant::now();
        let error = match kind {
            Kind::Submit => {
                let runs = rng.below(10) == 0;
                match client.submit(if runs { &jobs.runs } else { &jobs.held }) {
                    Ok(r) if r.errors.is_empty() && r.job_id > 0 => {
                        if !runs {
                            held.push_back(r.job_id);
                        }
                        if mine.len() == RECENT {
                            mine.pop_front();
                        }
                        mine.push_back((r.job_id, Instant::now()));
                        None
                    }
                    Ok(r) => Some(format!("refused: {:?}", r.errors)),
                    Err(e) => Some(e.to_string()),
                }
            }
            Kind::Squeue => match client.post_for_bytes("/slurmlet/v1/jobs/query", &squeue) {
                Ok(r) if r.status == 200 => None,
                Ok(r) => Some(format!("HTTP {}", r.status)),
                Err(e) => Some(e.to_string()),
            },
            Kind::Jobs => errors_of(client.get::<Errors>(&format!("/slurm/{DATA_PARSER}/jobs"))),
            Kind::Job => {
                let id = mine[rng.below(mine.len() as u64) as usize].0;
                errors_of(client.get::<Errors>(&format!("/slurm/{DATA_PARSER}/job/{id}")))
            }
            Kind::Cancel => {
                let id = held.pop_front().expect("a held job to cancel");
                match client.cancel(&id.to_string(), None, slurmlet::api::types::SignalScope::Steps) {
                    Ok(r) if r.errors.is_empty() && r.status.iter().all(|s| s.error.code == 0) => None,
                    Ok(r) => Some(format!("job {id}: {:?} {:?}", r.errors, r.status)),
                    Err(e) => Some(e.to_string()),
                }
            }
        };
        tally.record(kind, t.elapsed().as_secs_f64() * 1e3, error);
    }
    tally
}

/// A failure's text, if the answer failed or carries errors.
fn errors_of(answer: Result<Errors, slurmlet::api::client_error::ClientError>) -> Option<String> {
    match answer {
        Ok(e) if e.errors.is_empty() => None,
        Ok(e) => Some(format!("{:?}", e.errors)),
        Err(e) => Some(e.to_string()),
    }
}
