//! `sprio`: the factors of pending jobs' priorities, from the daemon's
//! `GET /slurmlet/v1/priorities`, printed as Slurm's sprio prints them (see [`mod@format`]).
//! slurmrestd has no call for sprio: against a cluster profile it says so.

pub mod format;
mod options;

use crate::api::types::{JobPriority, PriorityWeights};
use format::{cell, Line, Weighted};
pub use options::SprioArgs;
use std::ffi::OsString;

const CMD: &str = "sprio";

/// Runs sprio.
pub fn run(args: Vec<OsString>) -> i32 {
    let plan = match options::plan(args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.priorities() {
        Ok(reply) => reply,
        Err(e) => {
            super::error(CMD, &e.to_string());
            return 1;
        }
    };
    if !reply.weights.multifactor {
        eprintln!(
            "You are not running a supported priority plugin\n(priority/basic).\nOnly 'priority/multifactor' is supported."
        );
        eprintln!("{CMD}: the daemon orders its queue first come, first served: set a priority_weight_* key in its configuration to compute priorities");
        return 1;
    }
    let w = &reply.weights;
    let (prefix, fields) = match format::parse(&plan.format(w)) {
        Ok(f) => f,
        Err(letter) => {
            super::error(CMD, &format!("Invalid job format specification: {letter}"));
            return 1;
        }
    };
    let line =
        |l: Line| -> String { format!("{prefix}{}\n", fields.iter().map(|f| cell(f, l, w)).collect::<String>()) };
    let mut out = String::new();
    if plan.header {
        out.push_str(&line(Line::Header));
    }
    if plan.weights {
        out.push_str(&line(Line::Weights));
        super::format::emit_text(&out);
        return 0;
    }
    if !plan.jobs.is_empty() && reply.jobs.is_empty() {
        println!("Unable to find jobs matching user/id(s) specified");
        return 0;
    }
    let mut jobs: Vec<&JobPriority> = reply.jobs.iter().filter(|j| plan.wants(j)).collect();
    sort(&mut jobs, &plan.sort, w);
    for job in jobs {
        out.push_str(&line(Line::Job(job)));
    }
    super::format::emit_text(&out);
    0
}

/// Sorts `jobs` by the `-S` letters (`-` before one: descending), the first letter first.
fn sort(jobs: &mut [&JobPriority], spec: &str, w: &PriorityWeights) {
    let keys: Vec<(char, bool)> = {
        let mut keys = Vec::new();
        let mut descending = false;
        for c in spec.chars() {
            match c {
                '-' => descending = true,
                '+' | ',' => descending = false,
                c => {
                    keys.push((c, descending));
                    descending = false;
                }
            }
        }
        keys
    };
    jobs.sort_by(|a, b| {
        for &(key, descending) in &keys {
            let ord = compare(key, a, b, w);
            let ord = if descending { ord.reverse() } else { ord };
            if ord != std::cmp::Ordering::Equal {
                return ord;
            }
        }
        std::cmp::Ordering::Equal
    });
}

fn compare(key: char, a: &JobPriority, b: &JobPriority, w: &PriorityWeights) -> std::cmp::Ordering {
    let (wa, wb) = (Weighted::of(a, w), Weighted::of(b, w));
    let num = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
    let tres = |x: &Weighted| x.tres.iter().map(|(_, v)| v).sum::<f64>();
    match key {
        'i' => a.job_id.cmp(&b.job_id),
        'N' => a.nice.cmp(&b.nice),
        'n' => a.qos.cmp(&b.qos),
        'o' => a.account.cmp(&b.account),
        'r' => a.partition.cmp(&b.partition),
        'u' => a.user_name.cmp(&b.user_name),
        'A' | 'a' => num(wa.age, wb.age),
        'F' | 'f' => num(wa.fairshare, wb.fairshare),
        'J' | 'j' => num(wa.job_size, wb.job_size),
        'P' | 'p' => num(wa.partition, wb.partition),
        'Q' | 'q' => num(wa.qos, wb.qos),
        'T' | 't' => num(tres(&wa), tres(&wb)),
        'Y' | 'y' => num(wa.priority(a), wb.priority(b)),
        _ => std::cmp::Ordering::Equal,
    }
}
