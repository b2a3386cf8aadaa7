//! `scontrol update JobId=ID[,ID…] KEY=VALUE…`: changes jobs through slurmrestd's job update
//! (`POST /slurm/v0.0.43/job/{id}`), one job at a time.
//!
//! The keys are read as Slurm's scontrol reads them (any case, abbreviated as far as Slurm
//! allows, `KEY=VALUE` or `KEY VALUE`) and sent as `job_desc_msg` fields: `TimeLimit`
//! (`[+|-]TIME`), `Partition`, `Name`/`JobName`, `Comment`, `Dependency`, `Nice`, `Priority`, `NumCPUs`,
//! `CPUsPerTask`, `MinMemoryNode`, `MinMemoryCPU`, `Gres` and `TresPerNode`. Without a
//! `JobId`, `JobName=NAME` names every job of that name. A key slurmlet does not update is
//! refused as Slurm refuses unknown ones, before anything is sent.
//!
//! A new key: add a branch to `Update::key`.

use super::abbreviates;
use crate::api::client::Client;
use crate::api::client_error::ClientError;
use serde_json::{json, Map, Value};

/// Slurm's `NICE_OFFSET - 3`: the largest nice value, either way.
const NICE_MAX: i64 = 0x8000_0000 - 3;

/// A request that cannot be sent: what scontrol prints (already printed).
struct Aborted;

/// What the words ask for.
#[derive(Debug, Default, PartialEq)]
struct Update {
    /// `JobId=`.
    ids: Option<String>,
    /// `job_desc_msg` fields.
    body: Map<String, Value>,
    /// A `TimeLimit=+N` or `-N`: the sign and minutes, applied to the job's limit.
    time_step: Option<(char, u32)>,
}

/// Prints Slurm's `scontrol: error: …` unless quiet.
fn error(quiet: bool, text: &str) -> Aborted {
    if !quiet {
        crate::cli::error("scontrol", text);
    }
    Aborted
}

/// Prints Slurm's refusal of a key it cannot update.
fn unsupported(quiet: bool, word: &str) -> Aborted {
    if !quiet {
        eprintln!("Update of this parameter is not supported: {word}");
        eprintln!("Request aborted");
    }
    Aborted
}

/// A time limit in minutes (`None`: INFINITE), as Slurm's `time_str2mins` reads it.
fn minutes(text: &str) -> Option<Option<u32>> {
    let secs = crate::options::time::parse_time_secs(text, "TimeLimit").ok()?;
    Some(secs.map(|s| s.div_ceil(60).min(u32::MAX as u64 - 2) as u32))
}

/// A `NoVal` number as slurmrestd takes it.
fn number(n: u64) -> Value {
    json!({ "set": true, "infinite": false, "number": n })
}

impl Update {
    /// Reads the words; Slurm's messages on the way.
    fn parse(words: &[String], quiet: bool) -> Result<Update, Aborted> {
        let mut update = Update::default();
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            let (mut tag, val) = match word.split_once('=') {
                Some((tag, val)) => (tag, val),
                None if abbreviates(word, "Nice", 2) => {
                    update.body.insert("nice".into(), json!(100));
                    i += 1;
                    continue;
                }
                None if i + 1 < words.len() => {
                    i += 1;
                    (word.as_str(), words[i].as_str())
                }
                None => {
                    if !quiet {
                        eprintln!("Invalid input: {word}");
                        eprintln!("Request aborted");
                    }
                    return Err(Aborted);
                }
            };
            let mut sign = None;
            if let Some(t) = tag.strip_suffix(['+', '-']) {
                sign = tag.chars().last();
                tag = t;
            }
            update.key(tag, val, sign, word, quiet)?;
            i += 1;
        }
        Ok(update)
    }

    /// One `TAG=VAL` (`sign`: the `+` or `-` of `TAG+=VAL`).
    fn key(&mut self, tag: &str, val: &str, sign: Option<char>, word: &str, quiet: bool) -> Result<(), Aborted> {
        let is = |name: &str, min: usize| abbreviates(tag, name, min);
        let mut field = |name: &str, value: Value| {
            self.body.insert(name.into(), value);
        };
        if is("JobId", 3) {
            self.ids = Some(val.to_string());
        } else if is("TimeLimit", 5) {
            let (sign, val) = match (sign, val.strip_prefix(['+', '-'])) {
                (Some(_), Some(_)) => return Err(error(quiet, "Invalid syntax, variations of +=- are not accepted.")),
                (None, Some(rest)) => (val.chars().next(), rest),
                (sign, None) => (sign, val),
            };
            let Some(limit) = minutes(val) else { return Err(error(quiet, "Invalid TimeLimit value")) };
            match (sign, limit) {
                (None, Some(m)) => field("time_limit", number(m.into())),
                (None, None) => field("time_limit", json!({ "set": true, "infinite": true })),
                (Some(s), Some(m)) => self.time_step = Some((s, m)),
                (Some(_), None) => return Err(error(quiet, "Invalid TimeLimit value")),
            }
            return Ok(());
        } else if is("Partition", 2) {
            field("partition", json!(val));
        } else if is("Name", 2) || is("JobName", 4) {
            field("name", json!(val));
        } else if is("Comment", 3) {
            field("comment", json!(val));
        } else if is("Dependency", 3) {
            field("dependency", json!(val));
        } else if is("Nice", 2) {
            // strtoll: what is not a number is 0.
            let nice: i64 = val.trim().parse().unwrap_or(0);
            if nice.abs() > NICE_MAX {
                return Err(error(quiet, &format!("Nice value out of range (+/- {NICE_MAX}). Value ignored")));
            }
            field("nice", json!(nice));
        } else if is("Priority", 2) {
            let Ok(p) = val.parse::<u32>() else { return Err(error(quiet, &format!("Invalid Priority value: {val}"))) };
            field("priority", number(p.into()));
        } else if is("CPUsPerTask", 9) {
            let Ok(n) = val.parse::<u16>() else {
                return Err(error(quiet, &format!("Invalid CPUsPerTask value: {val}")));
            };
            field("cpus_per_task", json!(n));
        } else if is("NumCPUs", 6) {
            let (min, max) = val.split_once('-').unwrap_or((val, ""));
            let min = min.parse::<u32>().ok().filter(|&m| m > 0);
            let max_ok = max.is_empty() || max.parse::<u32>().is_ok_and(|m| min.is_some_and(|min| m >= min));
            match min {
                Some(min) if max_ok => field("minimum_cpus", json!(min)),
                _ => return Err(error(quiet, &format!("Invalid NumCPUs value: {val}"))),
            }
        } else if is("MinMemoryNode", 10) || is("MinMemoryCPU", 10) {
            let (name, key) = if is("MinMemoryCPU", 10) {
                ("MinMemoryCPU", "memory_per_cpu")
            } else {
                ("MinMemoryNode", "memory_per_node")
            };
            let Ok(mb) = val.parse::<u64>() else { return Err(error(quiet, &format!("Invalid {name} value: {val}"))) };
            field(key, number(mb));
        } else if is("TresPerNode", 8) || is("Gres", 2) {
            let tres = if is("Gres", 2) {
                // As Slurm's gres_prepend_tres_type.
                let items = val.split(',').filter(|s| !s.is_empty());
                items.map(|s| if s.starts_with("gres/") { s.to_string() } else { format!("gres/{s}") }).collect()
            } else {
                val.to_string()
            };
            let tres = match self.body.get("tres_per_node").and_then(Value::as_str) {
                Some(old) => format!("{old},{tres}"),
                None => tres,
            };
            self.body.insert("tres_per_node".into(), json!(tres));
        } else {
            return Err(unsupported(quiet, word));
        }
        if sign.is_some() {
            return Err(error(quiet, &format!("Option {tag} does not accept [+|-]= syntax")));
        }
        Ok(())
    }

    /// Whether anything is to change.
    fn changes(&self) -> bool {
        !self.body.is_empty() || self.time_step.is_some()
    }
}

/// Slurm's `_is_job_id`: ids separated by commas.
fn job_ids(text: &str) -> Option<Vec<&str>> {
    let ids: Vec<&str> = text.split(',').filter(|s| !s.is_empty()).collect();
    (!ids.is_empty() && ids.iter().all(|id| id.bytes().all(|b| b.is_ascii_digit()))).then_some(ids)
}

/// The ids of the jobs named `name`.
fn ids_of_name(client: &Client, name: &str, quiet: bool) -> Result<Result<String, Aborted>, ClientError> {
    let ids: Vec<String> =
        client.jobs()?.jobs.iter().filter(|j| j.name == name).map(|j| j.job_id.to_string()).collect();
    Ok(if ids.is_empty() { Err(error(quiet, &format!("No jobs with name '{name}'"))) } else { Ok(ids.join(",")) })
}

/// The time limit after `TimeLimit=+M` or `-M`, from the job's current one.
fn stepped_limit(
    client: &Client,
    id: &str,
    (sign, by): (char, u32),
    quiet: bool,
) -> Result<Result<u32, Aborted>, ClientError> {
    let resp = client.job(id)?;
    let Some(job) = resp.jobs.first() else {
        let text = resp.errors.first().map_or("Invalid job id specified", |e| e.error.as_str());
        if !quiet {
            eprintln!("{text} for job {id}");
        }
        return Ok(Err(Aborted));
    };
    let Some(now) = job.time_limit.get().filter(|_| !job.time_limit.infinite) else {
        return Ok(Err(error(quiet, "Cannot increment/decrement TimeLimit when set to UNLIMITED.")));
    };
    Ok(match sign {
        '+' => Ok(now.saturating_add(by)),
        _ if by > now => {
            Err(error(quiet, &format!("TimeLimit decrement larger than current time limit ({by} > {now})")))
        }
        _ => Ok(now - by),
    })
}

/// Runs `scontrol <tag> WORDS…`.
pub fn run(tag: &str, words: &[String], quiet: bool) -> i32 {
    if words.is_empty() {
        eprintln!("too few arguments for {tag} keyword");
        return 1;
    }
    let key_of = |w: &String| w.split_once('=').map_or(w.as_str(), |(k, _)| k.trim_end_matches(['+', '-'])).to_string();
    let keys: Vec<String> = words.iter().map(key_of).collect();
    if keys.iter().any(|k| abbreviates(k, "NodeName", 3)) && !keys.iter().any(|k| abbreviates(k, "JobId", 3)) {
        return super::update_node::run(words);
    }
    let job = keys.iter().any(|k| abbreviates(k, "JobId", 3) || abbreviates(k, "JobNAME", 3));
    if !job && keys.iter().any(|k| abbreviates(k, "ReservationName", 3)) {
        return super::reservation::update(words);
    }
    if !job {
        let other = ["PartitionName", "StepId", "SlurmctldDebug"];
        if let Some(what) = other.iter().find(|o| keys.iter().any(|k| abbreviates(k, o, 3))) {
            crate::cli::error("scontrol", &format!("updating a {what} is not supported here; only jobs are updated"));
        } else {
            eprintln!("No valid entity in update command");
            eprintln!("Input line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"");
        }
        return 1;
    }
    let Ok(mut update) = Update::parse(words, quiet) else { return 1 };
    if !update.changes() {
        eprintln!("No changes specified");
        return 1;
    }
    match send(&mut update, quiet) {
        Ok(code) => code,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            1
        }
    }
}

/// Sends the update to each job; the exit code.
fn send(update: &mut Update, quiet: bool) -> Result<i32, ClientError> {
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let ids = match (&update.ids, update.body.get("name").and_then(Value::as_str)) {
        (Some(ids), _) => ids.clone(),
        (None, Some(name)) => match ids_of_name(&client, name, quiet)? {
            Ok(ids) => ids,
            Err(Aborted) => return Ok(1),
        },
        (None, None) => {
            error(quiet, "No job ID specified");
            return Ok(1);
        }
    };
    let Some(ids) = job_ids(&ids) else {
        if !quiet {
            eprintln!("Invalid job id specified for job {ids}");
        }
        return Ok(1);
    };
    let mut code = 0;
    for id in ids {
        let mut body = update.body.clone();
        if let Some(step) = update.time_step {
            match stepped_limit(&client, id, step, quiet)? {
                Ok(m) => drop(body.insert("time_limit".into(), number(m.into()))),
                Err(Aborted) => return Ok(1),
            }
        }
        let resp = client.update_job(id, &Value::Object(body))?;
        if let Some(e) = resp.errors.first() {
            code = 1;
            if !quiet {
                eprintln!("{} for job {id}", e.error);
            }
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Option<Update> {
        Update::parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>(), true).ok()
    }

    #[test]
    fn keys_become_job_description_fields() {
        let u = parse(&["JobId=27", "TimeLimit=00:20:00", "part=long", "Name=x", "numcpus=2", "Gres=gpu:1"]).unwrap();
        assert_eq!(u.ids.as_deref(), Some("27"));
        assert_eq!(u.body["time_limit"], number(20));
        assert_eq!(u.body["partition"], "long");
        assert_eq!(u.body["name"], "x");
        assert_eq!(u.body["minimum_cpus"], 2);
        assert_eq!(u.body["tres_per_node"], "gres/gpu:1");
        let u = parse(&["jobid", "5", "TimeLimit=UNLIMITED", "MinMemoryCPU=100", "Nice"]).unwrap();
        assert_eq!(u.ids.as_deref(), Some("5"));
        assert_eq!(u.body["time_limit"], json!({ "set": true, "infinite": true }));
        assert_eq!(u.body["memory_per_cpu"], number(100));
        assert_eq!(u.body["nice"], 100);
        assert_eq!(parse(&["JobId=5", "TimeLimit+=10"]).unwrap().time_step, Some(('+', 10)));
        assert_eq!(parse(&["JobId=5", "TimeLimit=-1:00:00"]).unwrap().time_step, Some(('-', 60)));
        assert_eq!(parse(&["JobId=5", "JobName=y"]).unwrap().body["name"], "y");
    }

    #[test]
    fn bad_values_and_unknown_keys_abort_the_request() {
        assert!(parse(&["JobId=5", "TimeLimit=soon"]).is_none());
        assert!(parse(&["JobId=5", "NumCPUs=0"]).is_none());
        assert!(parse(&["JobId=5", "NumCPUs=4-2"]).is_none());
        assert!(parse(&["JobId=5", "Bogus=1"]).is_none());
        assert!(parse(&["JobId=5", "Partition+=x"]).is_none());
        assert!(parse(&["JobId=5", "Nice=99999999999"]).is_none());
        assert!(parse(&["JobId=5", "TimeLimit"]).is_none(), "a key without its value");
        assert_eq!(job_ids("3,4"), Some(vec!["3", "4"]));
        assert_eq!(job_ids("x"), None);
    }
}
