//! The words of `scontrol create reservation …` and `scontrol update ReservationName=… …`
//! read into slurmrestd's reservation description, with the keys, abbreviations and error
//! texts of Slurm's scontrol (`_parse_res_options`, `parse_resv_flags`,
//! `validate_resv_create_desc`).

use super::abbreviates;
use crate::api::noval::NoVal;
use crate::api::reservations::{ReservationDesc, Tres};

/// Which command the words are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `scontrol create reservation`.
    Create,
    /// `scontrol update ReservationName=…`.
    Update,
}

impl Mode {
    /// What Slurm appends to each error.
    fn tail(self) -> &'static str {
        match self {
            Mode::Create => "No reservation created.",
            Mode::Update => "No reservation update.",
        }
    }
}

/// Keys Slurm takes that this cluster does not: refused by name.
const NOT_SUPPORTED: &[(&str, usize)] = &[
    ("Groups", 1),
    ("QOS", 1),
    ("AllowedPartitions", 2),
    ("BurstBuffer", 2),
    ("Features", 2),
    ("Licenses", 2),
    ("MaxStartDelay", 2),
    ("TRESPerNode", 4),
    ("Skip", 2),
];

/// What the words ask for.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The description sent.
    pub desc: ReservationDesc,
    /// `Duration+=N` or `Duration-=N` of an update: minutes to add to the reservation's
    /// duration as it stands.
    pub duration_change: Option<i64>,
}

/// Reads `words` (`KEY=VALUE`, `KEY+=VALUE`, `KEY-=VALUE`; bare `res…` words skipped) at
/// `now`. `Err`: the error line to print (without `scontrol: error: `).
pub fn parse(words: &[String], mode: Mode, now: u64) -> Result<ReservationDesc, String> {
    parse_all(words, mode, now).map(|p| p.desc)
}

/// [`parse`], with what an update asks of the duration as it stands.
pub fn parse_all(words: &[String], mode: Mode, now: u64) -> Result<Parsed, String> {
    let tail = mode.tail();
    let mut d = ReservationDesc::default();
    let mut duration_change = None;
    let mut duration_given = false;
    for word in words {
        let Some((key, value)) = word.split_once('=') else {
            if abbreviates(word, "reservation", 3) {
                continue;
            }
            if abbreviates(word, "Skip", 2) {
                return Err(format!("Skip is not supported by this cluster.  {tail}"));
            }
            return Err(format!("Misformatted parameter '{word}', most options have a parameter after '='.  {tail}"));
        };
        let (key, sign) = match key.as_bytes().last() {
            Some(b'+') => (&key[..key.len() - 1], Some('+')),
            Some(b'-') => (&key[..key.len() - 1], Some('-')),
            _ => (key, None),
        };
        let signed = |v: &str| -> Vec<String> {
            v.split(',').filter(|x| !x.is_empty()).map(|x| sign.map_or(x.to_string(), |s| format!("{s}{x}"))).collect()
        };
        let once = |given: bool| if given { Err(format!("Parameter {word} specified more than once")) } else { Ok(()) };
        if abbreviates(key, "Accounts", 1) {
            once(d.accounts.is_some())?;
            d.accounts = Some(signed(value));
            continue;
        }
        if abbreviates(key, "Users", 1) {
            once(d.users.is_some())?;
            d.users = Some(signed(value));
            continue;
        }
        if abbreviates(key, "Flags", 2) {
            d.flags = Some(parse_flags(value, sign).ok_or_else(|| format!("Error parsing flags {value}.  {tail}"))?);
            continue;
        }
        if abbreviates(key, "Nodes", 5) && sign.is_none() {
            d.node_list = Some(value.split(',').map(str::to_string).collect());
            continue;
        }
        if sign.is_some() && (abbreviates(key, "TRES", 1) && key.len() <= 4 || abbreviates(key, "TRESPerNode", 4)) {
            return Err(format!("Parameter {word} specified a plus or minus.  This is not allowed."));
        }
        if let (Some(sign), true) = (sign, abbreviates(key, "Duration", 1) && mode == Mode::Update) {
            let minutes = parse_duration(value)
                .and_then(NoVal::get)
                .ok_or_else(|| format!("Invalid duration {word}.  {tail}"))?;
            duration_change = Some(if sign == '-' { -(minutes as i64) } else { minutes as i64 });
            continue;
        }
        if sign.is_some() {
            return Err(format!("The +=/-= notation is not supported when updating {key}.  {tail}"));
        }
        read_plain(key, value, word, tail, now, &mut d, &mut duration_given)?;
    }
    if mode == Mode::Create {
        validate_create(&d, duration_given)?;
    }
    Ok(Parsed { desc: d, duration_change })
}

/// One `KEY=VALUE` word without `+`/`-`, of the keys that take a single value.
fn read_plain(
    key: &str,
    value: &str,
    word: &str,
    tail: &str,
    now: u64,
    d: &mut ReservationDesc,
    duration_given: &mut bool,
) -> Result<(), String> {
    if abbreviates(key, "ReservationName", 1) {
        d.name = Some(value.to_string());
    } else if abbreviates(key, "StartTime", 2) {
        let t = crate::options::begin::parse_begin(value, now)
            .map_err(|_| format!("Invalid start time {word}.  {tail}"))?;
        d.start_time = Some(NoVal::of(t));
    } else if abbreviates(key, "EndTime", 1) {
        let t =
            crate::options::begin::parse_begin(value, now).map_err(|_| format!("Invalid end time {word}.  {tail}"))?;
        d.end_time = Some(NoVal::of(t));
    } else if abbreviates(key, "Duration", 1) {
        d.duration = Some(parse_duration(value).ok_or_else(|| format!("Invalid duration {word}.  {tail}"))?);
        *duration_given = true;
    } else if abbreviates(key, "NodeCnt", 5) || abbreviates(key, "NodeCount", 5) {
        if value.contains(',') {
            return Err("Using a comma separated array for NodeCnt is no longer valid.".into());
        }
        let n = value.trim().parse::<u32>().map_err(|_| format!("\"{value}\" is not a valid node count"))?;
        d.node_count = Some(NoVal::of(n));
    } else if ["CoreCnt", "CoreCount", "CPUCnt", "CPUCount"].iter().any(|k| abbreviates(key, k, 5)) {
        if value.contains(',') {
            return Err("Using a comma separated array for CoreCnt is no longer valid.".into());
        }
        d.core_count = Some(NoVal::of(leading_number(value)));
    } else if abbreviates(key, "PartitionName", 1) {
        d.partition = Some(value.to_string());
    } else if abbreviates(key, "Comment", 3) {
        d.comment = Some(value.to_string());
    } else if abbreviates(key, "TRES", 1) && key.len() <= 4 {
        if d.tres.is_some() {
            return Err(format!("Parameter {word} specified more than once"));
        }
        d.tres = Some(parse_tres(value).ok_or_else(|| format!("Invalid TRES {value}.  {tail}"))?);
    } else if key.eq_ignore_ascii_case("GPUs") {
        let well_formed = !value.is_empty() && value.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '-');
        let ids = crate::id_set::parse_ranges(value);
        if !well_formed || ids.is_empty() {
            return Err(format!("Invalid GPU list {word}.  {tail}"));
        }
        d.gpu_indices = Some(ids);
    } else if let Some((k, _)) = NOT_SUPPORTED.iter().find(|(k, min)| abbreviates(key, k, *min)) {
        return Err(format!("{k}= is not supported by this cluster.  {tail}"));
    } else {
        return Err(format!("Unknown parameter {word}.  {tail}"));
    }
    Ok(())
}

/// Slurm's `validate_resv_create_desc`, as far as it applies here.
fn validate_create(d: &ReservationDesc, duration_given: bool) -> Result<(), String> {
    let start = d.start_time.and_then(NoVal::get);
    let end = d.end_time.and_then(NoVal::get);
    let Some(start) = start else { return Err("A start time must be given.  No reservation created.".into()) };
    if end.is_none() && !duration_given {
        return Err("An end time or duration must be given.  No reservation created.".into());
    }
    if let (Some(end), Some(minutes)) = (end, d.duration.and_then(NoVal::get)) {
        if start + minutes as u64 * 60 != end {
            return Err("StartTime + Duration does not equal EndTime.  No reservation created.".into());
        }
    }
    if end.is_some_and(|e| start > e) {
        return Err("Start time cannot be after end time.  No reservation created.".into());
    }
    let resources = d.core_count.is_some_and(|c| c.number != 0)
        || d.node_count.is_some_and(|c| c.number != 0)
        || d.node_list.as_ref().is_some_and(|n| !n.iter().all(String::is_empty))
        || d.tres.as_ref().is_some_and(|t| !t.is_empty())
        || d.gpu_indices.is_some();
    if !resources && d.partition.is_none() {
        return Err("CoreCnt, Nodes, NodeCnt, TRES or Watts must be specified.  No reservation created.".into());
    }
    let empty = |l: &Option<Vec<String>>| l.as_ref().is_none_or(|l| l.is_empty());
    if empty(&d.users) && empty(&d.accounts) {
        return Err(
            "Either Users/Groups, AllowedPartitions, QOS and/or Accounts must be specified.  No reservation created."
                .into(),
        );
    }
    Ok(())
}

/// `Duration=`: Slurm's `time_str2mins` (`minutes`, `M:S`, `H:M:S`, `D-H[:M[:S]]`, or
/// `UNLIMITED`/`INFINITE`).
fn parse_duration(value: &str) -> Option<NoVal<u32>> {
    if value.eq_ignore_ascii_case("unlimited") || value.eq_ignore_ascii_case("infinite") {
        return Some(NoVal::infinite());
    }
    if value.trim() == "0" {
        return Some(NoVal::of(0));
    }
    match crate::options::time::parse_time_limit(value).ok()? {
        Some(minutes) => Some(NoVal::of(minutes)),
        None => Some(NoVal::infinite()),
    }
}

/// The number a value starts with, as `slurm_atoul` reads it (0 for none).
fn leading_number(value: &str) -> u32 {
    let digits: String = value.trim().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

/// `TRES=cpu=2,gres/gpu=2` (or `gres/gpu:2`).
fn parse_tres(value: &str) -> Option<Vec<Tres>> {
    let mut out = Vec::new();
    for item in value.split(',').filter(|i| !i.is_empty()) {
        let (name, count) = item.split_once('=').or_else(|| item.rsplit_once(':'))?;
        let count: i64 = count.trim().parse().ok()?;
        let (kind, name) = match name.split_once('/') {
            Some((k, n)) => (k.to_ascii_lowercase(), n.to_string()),
            None => (name.to_ascii_lowercase(), String::new()),
        };
        out.push(Tres { kind, name, count });
    }
    Some(out)
}

/// Slurm's flag words, with the shortest abbreviation each takes (`parse_resv_flags`).
const FLAG_WORDS: &[(&str, usize, &str)] = &[
    ("Maintenance", 3, "MAINT"),
    ("Overlap", 1, "OVERLAP"),
    ("Flex", 1, "FLEX"),
    ("Ignore_Jobs", 1, "IGNORE_JOBS"),
    ("Hourly", 1, "HOURLY"),
    ("Daily", 1, "DAILY"),
    ("Weekday", 1, "WEEKDAY"),
    ("Weekend", 1, "WEEKEND"),
    ("Weekly", 1, "WEEKLY"),
    ("Any_Nodes", 1, "ANY_NODES"),
    ("Static_Alloc", 1, "STATIC"),
    ("Part_Nodes", 2, "PART_NODES"),
    ("Magnetic", 3, "MAGNETIC"),
    ("Purge_Comp", 2, "PURGE_COMP"),
    ("Time_Float", 1, "TIME_FLOAT"),
    ("Replace", 1, "REPLACE"),
    ("Replace_Down", 8, "REPLACE_DOWN"),
    ("No_Hold_Jobs_After_End", 1, "NO_HOLD_JOBS_AFTER_END"),
    ("User_Delete", 1, "USER_DELETE"),
    ("Force_Start", 1, "FORCE_START"),
];

/// `Flags=MAINT,IGNORE_JOBS` (`Flags-=X` or `-X`: take X away, sent as `NO_X`). `None`:
/// a word Slurm does not know.
fn parse_flags(value: &str, sign: Option<char>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for word in value.split(',').filter(|w| !w.is_empty()) {
        let (remove, word) = match word.strip_prefix('-') {
            Some(w) => (true, w),
            None => (sign == Some('-'), word.strip_prefix('+').unwrap_or(word)),
        };
        let word = word.split('=').next().unwrap_or(word);
        // Slurm tries them in this order, so `R` is `Replace`, not `Replace_Down`.
        let (_, _, name) = FLAG_WORDS.iter().find(|(w, min, _)| abbreviates(word, w, *min))?;
        out.push(if remove { format!("NO_{name}") } else { name.to_string() });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_create_reads_slurms_keys_and_abbreviations() {
        let d = parse(
            &words("reservation ReservationName=demo StartTime=now+60 Duration=30 Users=alice,bob TRES=gres/gpu=2 Flags=maint,ign"),
            Mode::Create,
            1000,
        )
        .unwrap();
        assert_eq!(d.name.as_deref(), Some("demo"));
        assert_eq!(d.start_time, Some(NoVal::of(1060)));
        assert_eq!(d.duration, Some(NoVal::of(30)));
        assert_eq!(d.users, Some(vec!["alice".to_string(), "bob".to_string()]));
        assert_eq!(d.flags, Some(vec!["MAINT".to_string(), "IGNORE_JOBS".to_string()]));
        assert_eq!(d.tres, Some(vec![Tres { kind: "gres".into(), name: "gpu".into(), count: 2 }]));
        let d =
            parse(&words("res StartTime=now EndTime=now+3600 Accounts=physics CoreCnt=2"), Mode::Create, 0).unwrap();
        assert_eq!((d.end_time, d.core_count), (Some(NoVal::of(3600)), Some(NoVal::of(2))));
    }

    #[test]
    fn a_create_is_refused_with_slurms_texts() {
        let err = |s: &str| parse(&words(s), Mode::Create, 0).unwrap_err();
        assert_eq!(err("res Duration=5 Users=a CoreCnt=1"), "A start time must be given.  No reservation created.");
        assert_eq!(
            err("res StartTime=now Users=a CoreCnt=1"),
            "An end time or duration must be given.  No reservation created."
        );
        assert_eq!(
            err("res StartTime=now Duration=5 Users=a"),
            "CoreCnt, Nodes, NodeCnt, TRES or Watts must be specified.  No reservation created."
        );
        assert_eq!(
            err("res StartTime=now Duration=5 CoreCnt=1"),
            "Either Users/Groups, AllowedPartitions, QOS and/or Accounts must be specified.  No reservation created."
        );
        assert_eq!(err("res StartTime=now Duration=soon"), "Invalid duration Duration=soon.  No reservation created.");
        assert_eq!(err("res StartTime=never"), "Invalid start time StartTime=never.  No reservation created.");
        assert_eq!(err("res Bogus=1"), "Unknown parameter Bogus=1.  No reservation created.");
        assert_eq!(err("res Flags=Wobbly"), "Error parsing flags Wobbly.  No reservation created.");
        assert_eq!(err("res Users=a Users=b"), "Parameter Users=b specified more than once");
        assert_eq!(
            err("res Comment+=x"),
            "The +=/-= notation is not supported when updating Comment.  No reservation created."
        );
        assert_eq!(err("res Groups=wheel"), "Groups= is not supported by this cluster.  No reservation created.");
    }

    #[test]
    fn an_update_carries_additions_and_removals() {
        let d = parse(&words("ReservationName=demo Users+=carol Flags-=MAINT Duration=1-00:00:00"), Mode::Update, 0)
            .unwrap();
        assert_eq!(d.users, Some(vec!["+carol".to_string()]));
        assert_eq!(d.flags, Some(vec!["NO_MAINT".to_string()]));
        assert_eq!(d.duration, Some(NoVal::of(1440)));
        assert_eq!(
            parse(&words("ReservationName=demo Duration=UNLIMITED"), Mode::Update, 0).unwrap().duration,
            Some(NoVal::infinite())
        );
        let p = parse_all(&words("ReservationName=demo Duration+=30"), Mode::Update, 0).unwrap();
        assert_eq!((p.desc.duration, p.duration_change), (None, Some(30)));
        let p = parse_all(&words("ReservationName=demo Duration-=1:00:00"), Mode::Update, 0).unwrap();
        assert_eq!(p.duration_change, Some(-60));
    }
}
