//! Reading a reservation request (`scontrol create|update reservation`, slurmrestd's
//! `v0.0.43_reservation_desc_msg`) into a [`Reservation`], with Slurm's refusals: a request
//! without users or accounts, times that do not make a window, a name taken, resources that
//! another reservation or a running job holds over the window. Nothing here reads the
//! daemon's state but what [`Setting`] hands it.

use crate::api::noval::NoVal;
use crate::api::reservations::ReservationDesc;
use crate::api::types::errno;
use crate::config::Config;
use crate::daemon::model::refusal::{Kind, Refusal};
use crate::daemon::model::reservation::{
    Access, Flag, Reservation, MAX_LIST_LEN, MAX_NAME_LEN, MAX_RESERVATIONS, UNSUPPORTED_FLAGS,
};

/// How far in the past a start may lie (Slurm's `MAX_RESV_DELAY`): it is taken as now.
const PAST_START_TOLERANCE: u64 = 600;

/// How long an unlimited reservation lasts (Slurm's `YEAR_SECONDS`).
const UNLIMITED_SECS: u64 = 365 * 86_400;

/// Where Slurm refuses a reservation request.
const SOURCE: &str = "slurm_create_reservation()";

/// What a running job holds until it is expected to end.
#[derive(Debug, Clone)]
pub struct Busy {
    /// Its GPUs, by device index.
    pub gpus: Vec<u32>,
    /// Its CPU count.
    pub cpus: u32,
    /// When it reaches its time limit (a year on for one without).
    pub until: u64,
    /// The reservation it runs in (empty: none): what it holds of that one is no conflict.
    pub reservation: String,
}

/// What a request is read against.
pub struct Setting<'a> {
    /// The node.
    pub config: &'a Config,
    /// The other reservations.
    pub others: Vec<&'a Reservation>,
    /// The running jobs.
    pub busy: Vec<Busy>,
    /// GPUs out of service.
    pub failed_gpus: Vec<u32>,
    /// Now.
    pub now: u64,
}

fn refusal(number: i32, error: &str, description: impl Into<String>) -> Refusal {
    let kind = match number {
        errno::ACCESS_DENIED => Kind::Forbidden,
        errno::RESERVATION_INVALID => Kind::NotFound,
        _ => Kind::Invalid,
    };
    Refusal::new(kind, number, error, SOURCE).saying(description)
}

fn invalid_time(description: impl Into<String>) -> Refusal {
    refusal(errno::INVALID_TIME_VALUE, "Invalid time specified", description)
}

fn malformed(description: impl Into<String>) -> Refusal {
    Refusal::new(Kind::Malformed, errno::BAD_REQUEST, "Unexpected message received", SOURCE).saying(description)
}

/// The reservation a create asks for; `next_id` names one that names itself not (Slurm's
/// `USER_ID` or `ACCOUNT_ID`, as `_generate_resv_name` makes them).
pub fn read_create(desc: &ReservationDesc, setting: &Setting, next_id: u32) -> Result<Reservation, Refusal> {
    check_known_keys(desc)?;
    if setting.others.len() >= MAX_RESERVATIONS {
        return Err(refusal(
            errno::ERROR,
            "Unspecified error",
            format!("there are {MAX_RESERVATIONS} reservations already, the most this daemon keeps"),
        ));
    }
    let mut r = Reservation {
        flags: read_flags(desc.flags.as_deref().unwrap_or_default(), &[])?,
        users: read_access("Users", desc.users.as_deref().unwrap_or_default(), &Access::default())?,
        accounts: read_access("Accounts", desc.accounts.as_deref().unwrap_or_default(), &Access::default())?,
        ..Default::default()
    };
    check_groups(desc)?;
    let Some(start) = desc.start_time.and_then(NoVal::get) else {
        return Err(invalid_time("StartTime must be given"));
    };
    r.start = start;
    r.end = read_end(desc, start)?.ok_or_else(|| invalid_time("Duration or EndTime must be given"))?;
    r.partition = read_partition(desc, setting.config)?.unwrap_or_default();
    let asked = read_asked(desc, &mut r, setting.config)?;
    r.comment = read_comment(desc)?.unwrap_or_default();
    r.name = match desc.name.as_deref().filter(|n| !n.is_empty()) {
        Some(n) => check_name(n)?,
        None => {
            // Slurm's `_generate_resv_name`: the first account, else the first user.
            let first = r.accounts.names.first().or(r.users.names.first()).map_or("resv", String::as_str);
            format!("{first}_{next_id}")
        }
    };
    if setting.others.iter().any(|o| o.name == r.name) {
        return Err(refusal(
            errno::RESERVATION_NAME_DUP,
            "Duplicate reservation name",
            format!("a reservation named {} exists", r.name),
        ));
    }
    settle(r, &asked, setting, None)
}

/// `existing` changed as an update asks.
pub fn read_update(existing: &Reservation, desc: &ReservationDesc, setting: &Setting) -> Result<Reservation, Refusal> {
    check_known_keys(desc)?;
    check_groups(desc)?;
    let mut r = existing.clone();
    if let Some(flags) = &desc.flags {
        r.flags = read_flags(flags, &existing.flags)?;
    }
    if let Some(users) = &desc.users {
        r.users = read_access("Users", users, &existing.users)?;
    }
    if let Some(accounts) = &desc.accounts {
        r.accounts = read_access("Accounts", accounts, &existing.accounts)?;
    }
    let start_given = desc.start_time.and_then(NoVal::get);
    if let Some(start) = start_given {
        if existing.start <= setting.now && start != existing.start {
            return Err(refusal(
                errno::RSV_ALREADY_STARTED,
                "Reservation already started",
                format!("reservation {} started at {}; its start no longer moves", existing.name, existing.start),
            ));
        }
        let length = r.duration();
        r.start = start;
        r.end = start.saturating_add(length);
    }
    if let Some(end) = read_end(desc, r.start)? {
        r.end = end;
    }
    if r.users.is_empty() && r.accounts.is_empty() {
        return Err(refusal(
            errno::RESERVATION_EMPTY,
            "Reservation request lacks users, groups or accounts",
            "the reservation would be left without users or accounts",
        ));
    }
    let resources_given = desc.tres.is_some()
        || desc.core_count.is_some_and(|c| c.set)
        || desc.gpu_indices.is_some()
        || desc.node_list.is_some()
        || desc.node_count.is_some_and(|c| c.set);
    if resources_given && !existing.whole_node {
        return Err(refusal(
            errno::CORE_RESERVATION_UPDATE,
            "Core-based reservation can not be updated",
            "Updating core/node TRES not supported for core-based reservations",
        ));
    }
    if let Some(p) = read_partition(desc, setting.config)? {
        r.partition = p;
    }
    let asked = if resources_given {
        read_asked(desc, &mut r, setting.config)?
    } else {
        // What it holds stays as it is, checked again over its new window.
        Asked {
            nodes: existing.has(Flag::SpecNodes),
            whole: existing.whole_node,
            core_count: (!existing.whole_node).then_some(existing.cpus),
            named: (!existing.whole_node && !existing.gpus.is_empty()).then(|| existing.gpus.clone()),
            ..Default::default()
        }
    };
    if let Some(c) = read_comment(desc)? {
        r.comment = c;
    }
    if let Some(n) = desc.name.as_deref().filter(|n| *n != existing.name && !n.is_empty()) {
        return Err(malformed(format!("a reservation cannot be renamed ({} to {n})", existing.name)));
    }
    settle(r, &asked, setting, Some(existing))
}

/// Checks the window and what `r` holds against the other reservations and the running jobs;
/// `before` is the reservation as it stood, for an update.
fn settle(
    mut r: Reservation,
    asked: &Asked,
    setting: &Setting,
    before: Option<&Reservation>,
) -> Result<Reservation, Refusal> {
    let now = setting.now;
    if before.is_none_or(|b| b.start != r.start) {
        if r.start.saturating_add(PAST_START_TOLERANCE) < now {
            return Err(invalid_time("StartTime is in the past"));
        }
        let length = r.duration();
        if r.start < now {
            r.start = now;
            r.end = now.saturating_add(length);
        }
    }
    if r.end <= r.start {
        return Err(invalid_time("the reservation would end before it starts"));
    }
    if r.users.is_empty() && r.accounts.is_empty() {
        return Err(refusal(
            errno::RESERVATION_EMPTY,
            "Reservation request lacks users, groups or accounts",
            "name the users (Users=) or accounts (Accounts=) that may use it",
        ));
    }
    place(&mut r, asked, setting)?;
    Ok(r)
}

/// Whether `a` and `b` may hold the same resources at once.
fn may_share(a: &Reservation, b: &Reservation) -> bool {
    [Flag::Maint, Flag::Overlap].iter().any(|f| a.has(*f) || b.has(*f))
}

/// What of the node a request asks for, before it is placed.
#[derive(Debug, Default)]
struct Asked {
    /// `Nodes=` names the node (or `ALL`).
    nodes: bool,
    /// The whole node (`Nodes=`, `NodeCnt=`, `TRES=node=1`, or nothing else asked).
    whole: bool,
    /// CPUs asked for by `CoreCnt=`.
    core_count: Option<u32>,
    /// CPUs asked for by `TRES=cpu=N`.
    tres_cpus: Option<u32>,
    /// GPUs asked for by `TRES=gres/gpu=N`.
    gpus: Option<u32>,
    /// GPUs named (slurmlet's `gpu_indices`).
    named: Option<Vec<u32>>,
}

fn busy(description: String) -> Refusal {
    refusal(errno::NODES_BUSY, "Requested nodes are busy", description)
}

fn invalid_tres(description: String) -> Refusal {
    refusal(errno::INVALID_TRES, "Invalid Trackable RESource (TRES) specification", description)
}

/// Places `r` on the node over its window: the whole node, or CPUs (by id) and GPUs that no
/// other reservation holds over the window and (unless `IGNORE_JOBS`) no running job holds
/// past its start. Slurm's refusals: a node named that another reservation holds overlaps
/// it; CPUs or GPUs taken, or more than the node has, are busy.
fn place(r: &mut Reservation, asked: &Asked, setting: &Setting) -> Result<(), Refusal> {
    let config = setting.config;
    let overlapping: Vec<&Reservation> = setting
        .others
        .iter()
        .copied()
        .filter(|o| o.name != r.name && o.overlaps(r.start, r.end) && !may_share(o, r))
        .collect();
    let jobs: Vec<&Busy> = if r.has(Flag::IgnoreJobs) {
        Vec::new()
    } else {
        setting.busy.iter().filter(|b| b.until > r.start && b.reservation != r.name).collect()
    };
    let reserved_cpus: Vec<u32> = overlapping.iter().flat_map(|o| o.core_ids.iter().copied()).collect();
    let whole_taken = overlapping.iter().any(|o| o.whole_node);
    if asked.whole {
        r.whole_node = true;
        r.cpus = config.cpus;
        r.gpus = config.gpus.iter().map(|g| g.index).collect();
        r.core_ids.clear();
        if let Some(o) = overlapping.first() {
            let why = format!("reservation {} holds part of the node over that time", o.name);
            return Err(if asked.nodes {
                refusal(errno::RESERVATION_OVERLAP, "Requested reservation overlaps with another reservation", why)
            } else {
                busy(why)
            });
        }
        if !jobs.is_empty() {
            return Err(busy(
                "running jobs hold part of the node past its start (Flags=IGNORE_JOBS reserves it anyway)".into(),
            ));
        }
        return Ok(());
    }
    r.whole_node = false;
    if whole_taken {
        let by = overlapping.iter().find(|o| o.whole_node).map_or("", |o| o.name.as_str());
        return Err(busy(format!("reservation {by} holds the whole node over that time")));
    }
    let all_gpus: Vec<u32> = config.gpus.iter().map(|g| g.index).collect();
    let taken_gpu = |g: u32| overlapping.iter().any(|o| o.gpus.contains(&g));
    let busy_gpu = |g: u32| jobs.iter().any(|b| b.gpus.contains(&g));
    r.gpus = match (&asked.named, asked.gpus) {
        (Some(named), _) => {
            for &g in named {
                if !all_gpus.contains(&g) {
                    return Err(invalid_tres(format!("the node has no GPU {g}")));
                }
                if taken_gpu(g) {
                    return Err(busy(format!("GPU {g} is reserved by another reservation over that time")));
                }
                if busy_gpu(g) {
                    return Err(busy(format!(
                        "a running job holds GPU {g} past the start (Flags=IGNORE_JOBS reserves it anyway)"
                    )));
                }
            }
            named.clone()
        }
        (None, Some(count)) => {
            let free: Vec<u32> = all_gpus
                .iter()
                .copied()
                .filter(|g| !setting.failed_gpus.contains(g) && !taken_gpu(*g) && !busy_gpu(*g))
                .take(count as usize)
                .collect();
            if free.len() < count as usize {
                return Err(busy(format!(
                    "{count} GPUs asked for; {} of the node's {} are in service and free of other reservations and running jobs over that time",
                    free.len(),
                    all_gpus.len()
                )));
            }
            free
        }
        (None, None) => Vec::new(),
    };
    // A reservation of GPUs alone holds every CPU of the node too, as Slurm's does.
    let cpus = asked.core_count.or(asked.tres_cpus).unwrap_or(config.cpus);
    let free_cpus: Vec<u32> = (0..config.cpus).filter(|c| !reserved_cpus.contains(c)).collect();
    let held_by_jobs: u32 = jobs.iter().map(|b| b.cpus).sum();
    if cpus as usize > free_cpus.len() || cpus + held_by_jobs > free_cpus.len() as u32 {
        return Err(busy(format!(
            "{cpus} CPUs asked for; {} of the node's {} are free of other reservations, and running jobs hold {held_by_jobs} past the start",
            free_cpus.len(),
            config.cpus
        )));
    }
    r.cpus = cpus;
    r.core_ids = free_cpus.into_iter().take(cpus as usize).collect();
    Ok(())
}

/// Reads what the request asks of the node: `Nodes=` (this node or `ALL`), `NodeCnt=`,
/// `CoreCnt=`, `TRES=cpu=N,gres/gpu=N,node=1`, slurmlet's `gpu_indices`.
fn read_asked(desc: &ReservationDesc, r: &mut Reservation, config: &Config) -> Result<Asked, Refusal> {
    let mut asked = Asked::default();
    r.flags.retain(|f| !matches!(f, Flag::SpecNodes | Flag::AllNodes));
    for node in desc.node_list.iter().flatten().flat_map(|n| n.split(',')).filter(|n| !n.is_empty()) {
        if node.eq_ignore_ascii_case("ALL") {
            r.flags.extend([Flag::SpecNodes, Flag::AllNodes]);
        } else if node == config.node_name {
            r.flags.push(Flag::SpecNodes);
        } else {
            return Err(refusal(
                errno::INVALID_NODE_NAME,
                "Invalid node name specified",
                format!("this cluster has one node, {}; there is no node {node}", config.node_name),
            ));
        }
        asked.nodes = true;
    }
    r.flags.sort();
    r.flags.dedup();
    let mut node_count = desc.node_count.and_then(NoVal::get);
    for t in desc.tres.iter().flatten() {
        let count = u32::try_from(t.count).ok().filter(|c| *c > 0);
        let bad = || {
            invalid_tres(format!("TRES {}{}{}={}", t.kind, if t.name.is_empty() { "" } else { "/" }, t.name, t.count))
        };
        match (t.kind.to_ascii_lowercase().as_str(), t.name.to_ascii_lowercase().as_str()) {
            ("cpu", "") => asked.tres_cpus = Some(count.ok_or_else(bad)?),
            ("node", "") => node_count = Some(count.ok_or_else(bad)?),
            ("gres", "gpu") => asked.gpus = Some(count.ok_or_else(bad)?),
            _ => return Err(bad()),
        }
    }
    if let Some(n) = node_count.filter(|n| *n > 1) {
        return Err(refusal(
            errno::INVALID_NODE_COUNT,
            "Node count specification invalid",
            format!("NodeCnt={n}: this cluster has one node"),
        ));
    }
    asked.core_count = desc.core_count.and_then(NoVal::get).filter(|c| *c > 0);
    if asked.core_count.is_some() && asked.tres_cpus.is_some() {
        return Err(refusal(
            errno::INVALID_CPU_COUNT,
            "CPU count specification invalid",
            "TRES=cpu=<num> and CoreCnt=<num> are mutually exclusive",
        ));
    }
    if let Some(c) = asked.core_count.filter(|c| *c > config.cpus) {
        return Err(busy(format!("CoreCnt={c}: the node has {} CPUs", config.cpus)));
    }
    if let Some(c) = asked.tres_cpus.filter(|c| *c > config.cpus) {
        return Err(busy(format!("TRES=cpu={c}: the node has {} CPUs", config.cpus)));
    }
    asked.named = desc.gpu_indices.clone().map(|mut g| {
        g.sort_unstable();
        g.dedup();
        g
    });
    if let (Some(named), Some(count)) = (&asked.named, asked.gpus) {
        if named.len() != count as usize {
            return Err(invalid_tres(format!("TRES asks for {count} GPUs and {} are named", named.len())));
        }
    }
    let by_cpus_or_gpus =
        asked.core_count.is_some() || asked.tres_cpus.is_some() || asked.gpus.is_some() || asked.named.is_some();
    asked.whole = !by_cpus_or_gpus;
    // A reservation is made in a partition, the default one unless one is given (Slurm's
    // note when it fails says so), but for one of the node named whole.
    if asked.nodes && asked.whole && desc.partition.is_none() {
        r.partition.clear();
    } else if r.partition.is_empty() {
        r.partition = config.partitions.iter().find(|p| p.default).map(|p| p.name.clone()).unwrap_or_default();
    }
    Ok(asked)
}

/// The end a request gives: `EndTime`, else `StartTime` (`start`) plus `Duration`.
fn read_end(desc: &ReservationDesc, start: u64) -> Result<Option<u64>, Refusal> {
    if let Some(end) = desc.end_time.filter(|e| e.set || e.infinite) {
        return Ok(Some(end.get().unwrap_or(start.saturating_add(UNLIMITED_SECS))));
    }
    match desc.duration.filter(|d| d.set || d.infinite) {
        Some(d) if d.infinite => Ok(Some(start.saturating_add(UNLIMITED_SECS))),
        Some(d) => {
            if d.number == 0 {
                return Err(invalid_time("Duration must be at least a minute"));
            }
            Ok(Some(start.saturating_add(d.number as u64 * 60)))
        }
        None => Ok(None),
    }
}

/// Flags of a create (`current` empty) or an update: `NO_FLAG` takes one away.
fn read_flags(names: &[String], current: &[Flag]) -> Result<Vec<Flag>, Refusal> {
    let mut flags = current.to_vec();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
        let upper = name.to_ascii_uppercase();
        if let Some(f) = Flag::from_name(&upper) {
            flags.push(f);
        } else if let Some(f) = upper.strip_prefix("NO_").and_then(Flag::from_name) {
            flags.retain(|x| *x != f);
        } else if UNSUPPORTED_FLAGS.contains(&upper.as_str()) || upper.starts_with("NO_") {
            return Err(refusal(
                errno::ERROR,
                "Invalid flag",
                format!("reservation flag {upper} is not supported by this cluster"),
            ));
        } else {
            return Err(refusal(errno::ERROR, "Invalid flag", format!("unknown reservation flag {name}")));
        }
    }
    flags.sort();
    flags.dedup();
    if flags.iter().filter(|f| f.repeats()).count() > 1 {
        return Err(refusal(
            errno::NOT_SUPPORTED,
            "Requested operation not supported on this system",
            "Reservation has multiple reoccurring flags. Please specify only one reoccurring flag".to_string(),
        ));
    }
    Ok(flags)
}

/// A `Users=` or `Accounts=` list of a create (`current` empty) or an update: `name` sets,
/// `+name` adds, `-name` removes in an update; in a create `-name` keeps `name` out.
fn read_access(key: &str, entries: &[String], current: &Access) -> Result<Access, Refusal> {
    let entries: Vec<&str> =
        entries.iter().flat_map(|e| e.split(',')).map(str::trim).filter(|e| !e.is_empty()).collect();
    if entries.len() > MAX_LIST_LEN {
        return Err(malformed(format!("{key} lists {} names; at most {MAX_LIST_LEN}", entries.len())));
    }
    let mut out = current.clone();
    let relative = !current.is_empty() && entries.iter().all(|e| e.starts_with('+') || e.starts_with('-'));
    if !relative {
        out = Access::default();
        let denied = entries.iter().filter(|e| e.starts_with('-')).count();
        if denied != 0 && denied != entries.len() {
            return Err(malformed(format!(
                "{key}: either name those let in, or (each with a leading -) those kept out, not both"
            )));
        }
        out.denied = denied != 0;
    }
    for e in entries {
        let (sign, name) = match e.as_bytes()[0] {
            b'+' | b'-' => (Some(e.as_bytes()[0]), &e[1..]),
            _ => (None, e),
        };
        let name = check_entry(key, name, current.is_empty())?;
        match (relative, sign) {
            (true, Some(b'+')) => {
                if !out.names.contains(&name) {
                    out.names.push(name)
                }
            }
            (true, _) => out.names.retain(|n| *n != name),
            (false, _) => {
                if !out.names.contains(&name) {
                    out.names.push(name)
                }
            }
        }
    }
    Ok(out)
}

/// A user or account name, checked to exist.
fn check_entry(key: &str, name: &str, creating: bool) -> Result<String, Refusal> {
    if name.is_empty() || name.len() > MAX_NAME_LEN || name.chars().any(|c| c.is_control() || c == ' ') {
        return Err(malformed(format!("{key}: '{}' is no name", name.escape_debug())));
    }
    if key == "Users" && crate::identity::user_uid(name).is_none() {
        // Slurm's create says no more than this; its update says `Invalid user id`.
        let (number, error) =
            if creating { (errno::ERROR, "Unspecified error") } else { (errno::USER_ID_MISSING, "Invalid user id") };
        return Err(refusal(number, error, format!("no user is named {name}")));
    }
    Ok(name.to_string())
}

fn check_groups(desc: &ReservationDesc) -> Result<(), Refusal> {
    if desc.groups.as_ref().is_some_and(|g| !g.is_empty()) {
        return Err(malformed("Groups= is not supported by this cluster; name the users or accounts"));
    }
    Ok(())
}

fn check_known_keys(desc: &ReservationDesc) -> Result<(), Refusal> {
    const TAKEN_EMPTY: &[&str] = &["burst_buffer", "features", "licenses", "max_start_delay", "purge_completed"];
    let unknown: Vec<&str> = desc
        .unknown
        .iter()
        .filter(|(k, v)| !(TAKEN_EMPTY.contains(&k.as_str()) && (v.is_null() || v.as_str() == Some(""))))
        .map(|(k, _)| k.as_str())
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(malformed(format!("reservation keys not supported by this cluster: {}", unknown.join(", "))))
    }
}

fn check_name(name: &str) -> Result<String, Refusal> {
    let bad = name.len() > MAX_NAME_LEN || name.chars().any(|c| c.is_control() || c.is_whitespace() || c == ',');
    if bad {
        return Err(malformed(format!("'{}' is no reservation name", name.escape_debug())));
    }
    Ok(name.to_string())
}

fn read_partition(desc: &ReservationDesc, config: &Config) -> Result<Option<String>, Refusal> {
    match desc.partition.as_deref() {
        None => Ok(None),
        Some("") => Ok(Some(String::new())),
        Some(p) if config.partitions.iter().any(|x| x.name == p) => Ok(Some(p.to_string())),
        Some(p) => Err(refusal(
            errno::INVALID_PARTITION_NAME,
            "Invalid partition name specified",
            format!("there is no partition {p}"),
        )),
    }
}

fn read_comment(desc: &ReservationDesc) -> Result<Option<String>, Refusal> {
    match desc.comment.as_deref() {
        Some(c) if c.len() > 1024 => Err(malformed("Comment is longer than 1024 bytes")),
        other => Ok(other.map(str::to_string)),
    }
}
