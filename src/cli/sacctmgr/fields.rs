//! sacctmgr's fields for associations, users, accounts and QOS: their headers, widths
//! (every one right-justified, as sacctmgr prints them) and each one's text for a record of
//! slurmrestd's v0.0.43 shapes.

use serde_json::Value;

/// A field: its header, its width, and its text for a row.
pub struct Field {
    /// The header, as sacctmgr prints it (and its `-P` name).
    pub name: &'static str,
    /// Names `format=` takes for it besides its header (lower case).
    pub aliases: &'static [&'static str],
    /// Its width.
    pub width: i32,
    /// Its text for a row; `None` prints blank.
    pub value: fn(&Row) -> Option<String>,
}

/// One printed row: the record it shows, and for a user's or account's row with its
/// associations (`-s`), the association.
pub struct Row<'a> {
    /// The association, user, account or QOS.
    pub record: &'a Value,
    /// The association of a `-s` row.
    pub assoc: Option<&'a Value>,
    /// The cluster's name.
    pub cluster: &'a str,
    /// Spaces before the account's name (`tree`).
    pub depth: usize,
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
}

fn count(v: &Value, pointer: &str) -> Option<String> {
    let n = v.pointer(pointer)?;
    if n.get("set").and_then(Value::as_bool) == Some(false) || n.get("infinite").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    n.get("number").or(Some(n)).and_then(Value::as_u64).map(|n| n.to_string())
}

fn assoc<'a>(row: &'a Row) -> &'a Value {
    row.assoc.unwrap_or(row.record)
}

fn tres(v: &Value, pointer: &str) -> Option<String> {
    let list = v.pointer(pointer)?.as_array()?;
    let parts: Vec<String> = list
        .iter()
        .map(|t| {
            let (kind, name) = (t["type"].as_str().unwrap_or(""), t["name"].as_str().unwrap_or(""));
            let count = t["count"].as_u64().unwrap_or(0);
            let label = if name.is_empty() { kind.to_string() } else { format!("{kind}/{name}") };
            if kind == "mem" {
                format!(
                    "{label}={}",
                    if count % 1024 == 0 { format!("{}G", count / 1024) } else { format!("{count}M") }
                )
            } else {
                format!("{label}={count}")
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(","))
}

fn minutes(v: &Value, pointer: &str) -> Option<String> {
    count(v, pointer).and_then(|m| m.parse::<u64>().ok()).map(|m| crate::cli::sacct::fields::secs_text(m * 60))
}

const fn f(name: &'static str, width: i32, value: fn(&Row) -> Option<String>) -> Field {
    Field { name, aliases: &[], width, value }
}

const fn a(
    name: &'static str,
    aliases: &'static [&'static str],
    width: i32,
    value: fn(&Row) -> Option<String>,
) -> Field {
    Field { name, aliases, width, value }
}

fn blank(_: &Row) -> Option<String> {
    None
}

fn cluster(r: &Row) -> Option<String> {
    Some(r.cluster.to_string())
}

fn account(r: &Row) -> Option<String> {
    text(assoc(r), "/account").map(|a| format!("{}{a}", " ".repeat(r.depth)))
}

fn user(r: &Row) -> Option<String> {
    text(assoc(r), "/user")
}

fn share(r: &Row) -> Option<String> {
    assoc(r).get("shares_raw").and_then(Value::as_u64).map(|n| n.to_string())
}

fn qos_list(r: &Row) -> Option<String> {
    let list: Vec<&str> = assoc(r).get("qos")?.as_array()?.iter().filter_map(Value::as_str).collect();
    (!list.is_empty()).then(|| list.join(","))
}

/// Every association field (`show assoc`), in Slurm's default order first.
pub const ASSOC: &[Field] = &[
    f("Cluster", 10, cluster),
    a("Account", &["acct"], 10, account),
    f("User", 10, user),
    f("Partition", 10, |r| text(assoc(r), "/partition")),
    a("Share", &["fairshare", "shares"], 9, share),
    f("Priority", 10, |r| count(assoc(r), "/priority")),
    f("GrpJobs", 7, blank),
    f("GrpTRES", 13, blank),
    f("GrpSubmit", 9, blank),
    f("GrpWall", 11, blank),
    f("GrpTRESMins", 13, blank),
    f("MaxJobs", 7, blank),
    f("MaxTRES", 13, blank),
    f("MaxTRESPerNode", 14, blank),
    f("MaxSubmit", 9, blank),
    f("MaxWall", 11, blank),
    f("MaxTRESMins", 13, blank),
    f("QOS", 20, qos_list),
    a("Def QOS", &["defaultqos", "defqos"], 9, |r| text(assoc(r), "/default/qos")),
    f("GrpTRESRunMins", 13, blank),
    a("ParentName", &["parent"], 10, |r| text(assoc(r), "/parent_account")),
    a("ID", &["id"], 6, |r| assoc(r).get("id").and_then(Value::as_u64).map(|n| n.to_string())),
];

/// How many of [`ASSOC`] `show assoc` prints by default.
pub const ASSOC_DEFAULT: usize = 20;

/// The user fields (`show user`); with `-s`, [`USER_ASSOC`] follow.
pub const USER: &[Field] = &[
    f("User", 10, |r| text(r.record, "/name")),
    a("Def Acct", &["defaultaccount", "defacct"], 10, |r| text(r.record, "/default/account")),
    a("Admin", &["adminlevel"], 9, |r| {
        r.record.pointer("/administrator_level/0").and_then(Value::as_str).map(str::to_string)
    }),
];

/// The association fields of `show user -s` and `show account -s`.
pub const USER_ASSOC: &[Field] = &[
    f("Cluster", 10, cluster),
    f("Account", 10, account),
    f("Partition", 10, |r| text(assoc(r), "/partition")),
    a("Share", &["fairshare"], 9, share),
    f("Priority", 10, blank),
    f("MaxJobs", 7, blank),
    f("MaxNodes", 8, blank),
    f("MaxCPUs", 8, blank),
    f("MaxSubmit", 9, blank),
    f("MaxWall", 11, blank),
    f("MaxCPUMins", 11, blank),
    f("QOS", 20, qos_list),
    a("Def QOS", &["defaultqos"], 9, |r| text(assoc(r), "/default/qos")),
];

/// The account fields (`show account`).
pub const ACCOUNT: &[Field] = &[
    f("Account", 10, |r| text(r.record, "/name")),
    a("Descr", &["description"], 20, |r| text(r.record, "/description")),
    a("Org", &["organization"], 20, |r| text(r.record, "/organization")),
];

/// The association fields of `show account -s`.
pub const ACCOUNT_ASSOC: &[Field] = &[
    f("Cluster", 10, cluster),
    a("ParentName", &["parent"], 10, |r| text(assoc(r), "/parent_account")),
    f("User", 10, user),
    a("Share", &["fairshare"], 9, share),
    f("Priority", 10, blank),
    f("GrpJobs", 7, blank),
    f("GrpNodes", 8, blank),
    f("GrpCPUs", 8, blank),
    f("GrpMem", 7, blank),
    f("GrpSubmit", 9, blank),
    f("GrpWall", 11, blank),
    f("GrpCPUMins", 11, blank),
    f("MaxJobs", 7, blank),
    f("MaxNodes", 8, blank),
    f("MaxCPUs", 8, blank),
    f("MaxSubmit", 9, blank),
    f("MaxWall", 11, blank),
    f("MaxCPUMins", 11, blank),
    f("QOS", 20, qos_list),
    a("Def QOS", &["defaultqos"], 9, |r| text(assoc(r), "/default/qos")),
];

fn preempt_mode(r: &Row) -> Option<String> {
    let mode = r.record.pointer("/preempt/mode/0").and_then(Value::as_str)?;
    Some(if mode == "CLUSTER" { "cluster".into() } else { mode.to_string() })
}

/// The QOS fields (`show qos`).
pub const QOS: &[Field] = &[
    f("Name", 10, |r| text(r.record, "/name")),
    f("Priority", 10, |r| count(r.record, "/priority")),
    f("GraceTime", 10, |r| {
        r.record.pointer("/limits/grace_time").and_then(Value::as_u64).map(crate::cli::sacct::fields::secs_text)
    }),
    f("Preempt", 10, |r| {
        let list: Vec<&str> = r.record.pointer("/preempt/list")?.as_array()?.iter().filter_map(Value::as_str).collect();
        (!list.is_empty()).then(|| list.join(","))
    }),
    f("PreemptExemptTime", 19, blank),
    f("PreemptMode", 11, preempt_mode),
    f("Flags", 40, |r| {
        let flags = r.record.get("flags")?.as_array()?;
        flags.iter().any(|f| f == "DENY_LIMIT").then(|| "DenyOnLimit".to_string())
    }),
    f("UsageThres", 10, blank),
    f("UsageFactor", 11, |r| {
        let n = r.record.pointer("/usage_factor")?;
        n.get("number").or(Some(n)).and_then(Value::as_f64).map(|f| format!("{f:.6}"))
    }),
    f("GrpTRES", 13, |r| tres(r.record, "/limits/max/tres/total")),
    f("GrpTRESMins", 13, blank),
    f("GrpTRESRunMins", 13, blank),
    f("GrpJobs", 7, blank),
    f("GrpSubmit", 9, blank),
    f("GrpWall", 11, blank),
    f("MaxTRES", 13, blank),
    f("MaxTRESPerNode", 14, blank),
    f("MaxTRESMins", 13, blank),
    f("MaxWall", 11, |r| minutes(r.record, "/limits/max/wall_clock/per/job")),
    f("MaxTRESPU", 13, |r| tres(r.record, "/limits/max/tres/per/user")),
    f("MaxJobsPU", 9, |r| count(r.record, "/limits/max/jobs/active_jobs/per/user")),
    f("MaxSubmitPU", 11, |r| count(r.record, "/limits/max/jobs/per/user")),
    f("MaxTRESPA", 13, blank),
    f("MaxTRESRunMinsPA", 22, blank),
    f("MaxTRESRunMinsPU", 22, blank),
    f("MaxJobsPA", 9, blank),
    f("MaxSubmitPA", 11, blank),
    f("MinTRES", 13, blank),
];

impl Field {
    /// Whether `name` is its header or an alias (any case, blanks ignored).
    pub fn is_named(&self, name: &str) -> bool {
        let want = name.to_ascii_lowercase().replace(' ', "");
        self.name.to_ascii_lowercase().replace(' ', "") == want || self.aliases.contains(&want.as_str())
    }

    /// Whether `name` starts its header or an alias (any case), as sacctmgr takes a prefix.
    pub fn starts_with(&self, name: &str) -> bool {
        let want = name.to_ascii_lowercase().replace(' ', "");
        !want.is_empty()
            && (self.name.to_ascii_lowercase().replace(' ', "").starts_with(&want)
                || self.aliases.iter().any(|a| a.starts_with(&want)))
    }
}
