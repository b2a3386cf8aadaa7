//! `sacctmgr`: the accounts, users, associations and QOS, read from slurmrestd's
//! `GET /slurmdb/v0.0.43/{associations,users,accounts,qos}` (the daemon's, which serves the
//! configuration's, or a cluster's) and printed as Slurm's sacctmgr prints them: `show` (or
//! `list`) with `format=`, `where` clauses (`user=`, `account=`, `name=`, `cluster=`), `tree`,
//! `withassoc` (`-s`), `-n`, `-p`, `-P`. slurmlet keeps these in its configuration file:
//! `add`, `modify` and `delete` say so in one line and change nothing.

mod fields;

use crate::cli::sacct::fields::{Cell, Column};
use crate::cli::sacct::print::{self, Layout};
use fields::{Field, Row};
use serde_json::Value;
use std::ffi::OsString;

const CMD: &str = "sacctmgr";

/// What to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entity {
    Assoc,
    User,
    Account,
    Qos,
}

/// A `show` command line.
#[derive(Debug, Default)]
struct Show {
    header: bool,
    layout: Option<Layout>,
    with_assoc: bool,
    tree: bool,
    format: Option<String>,
    /// Filters by key (`user`, `account`, `name`, `cluster`), each a list of names.
    filters: Vec<(String, Vec<String>)>,
    names: Vec<String>,
}

/// The clap definition, for completions and the man page (the command line itself is read
/// word by word, as sacctmgr reads it).
#[derive(Debug, clap::Parser)]
#[command(name = "sacctmgr", about = "view the accounts, users, associations and QOS", disable_version_flag = true)]
pub struct SacctmgrArgs {
    /// Do not print a header
    #[arg(short = 'n', long = "noheader")]
    pub noheader: bool,
    /// '|' delimited output with a trailing '|'
    #[arg(short = 'p', long = "parsable")]
    pub parsable: bool,
    /// '|' delimited output without a trailing '|'
    #[arg(short = 'P', long = "parsable2")]
    pub parsable2: bool,
    /// Show the associations of users and accounts
    #[arg(short = 's', long = "associations")]
    pub associations: bool,
    /// Commit changes without asking (changes are made in the configuration file)
    #[arg(short = 'i', long = "immediate")]
    pub immediate: bool,
    #[command(flatten)]
    pub version: crate::cli::VersionFlag,
    /// show|list ENTITY, then where KEY=VALUE…, format=…, tree or withassoc
    #[arg(value_name = "COMMAND", trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Runs sacctmgr.
pub fn run(args: Vec<OsString>) -> i32 {
    let words: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let mut show = Show { header: true, ..Default::default() };
    let mut rest = Vec::new();
    for w in &words {
        match w.as_str() {
            "-n" | "--noheader" => show.header = false,
            "-p" | "--parsable" => show.layout = Some(Layout::Parsable { delimiter: "|".into(), trailing: true }),
            "-P" | "--parsable2" => show.layout = Some(Layout::Parsable { delimiter: "|".into(), trailing: false }),
            "-s" | "--associations" => show.with_assoc = true,
            "-i" | "--immediate" | "-Q" | "--quiet" | "-r" | "--readonly" | "-v" | "--verbose" => {}
            "-V" | "--version" => {
                println!("{}", crate::api::release::version_line());
                return 0;
            }
            "-h" | "--help" | "--usage" => {
                print!("{USAGE}");
                return 0;
            }
            s if s.starts_with('-') && rest.is_empty() => {
                eprintln!("{CMD}: invalid option -- '{}'", s.trim_start_matches('-'));
                eprintln!("Try \"sacctmgr --help\" for more information");
                return 1;
            }
            _ => rest.push(w.clone()),
        }
    }
    let Some(command) = rest.first().map(|c| c.to_ascii_lowercase()) else {
        print!("{USAGE}");
        return 1;
    };
    match command.as_str() {
        "show" | "list" => {}
        "add" | "create" | "modify" | "update" | "delete" | "remove" | "archive" | "load" => {
            let (path, _) = crate::config::target::client_config();
            eprintln!(
                "{CMD}: slurmlet keeps accounts, users and QOS in its configuration file ({}): change its \
                 [accounts.NAME], [users.NAME] and [qos.NAME] tables there, then run `scontrol reconfigure`; nothing \
                 was changed",
                path.display()
            );
            return 1;
        }
        other => {
            eprintln!("{CMD}: error: Invalid command: {other}");
            return 1;
        }
    }
    let Some(entity) = rest.get(1).and_then(|e| entity(e)) else {
        let what = rest.get(1).cloned().unwrap_or_default();
        eprintln!("{CMD}: error: No valid entity in list command");
        eprintln!("Input line must include \"Account\", \"Association\", \"QOS\" or \"User\" (not \"{what}\")");
        return 1;
    };
    for spec in &rest[2..] {
        let lower = spec.to_ascii_lowercase();
        match lower.as_str() {
            "where" | "set" => {}
            "tree" => show.tree = true,
            "withassoc" | "withassocs" => show.with_assoc = true,
            _ => match spec.split_once('=') {
                Some((k, v)) if k.eq_ignore_ascii_case("format") => show.format = Some(v.to_string()),
                Some((k, v)) => show.filters.push((k.to_ascii_lowercase(), list(v))),
                None => show.names.extend(list(spec)),
            },
        }
    }
    let client = match super::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match print_show(&client, entity, &show) {
        Ok(out) => {
            super::format::emit_text(&out);
            0
        }
        Err(e) => {
            super::error(CMD, &e);
            1
        }
    }
}

fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

fn entity(word: &str) -> Option<Entity> {
    match word.to_ascii_lowercase().as_str() {
        "association" | "associations" | "assoc" | "assocs" => Some(Entity::Assoc),
        "user" | "users" => Some(Entity::User),
        "account" | "accounts" | "acct" | "accts" => Some(Entity::Account),
        "qos" => Some(Entity::Qos),
        _ => None,
    }
}

/// Whether `value` passes the filter of `keys` in `show` (none given: it does).
fn passes(show: &Show, keys: &[&str], value: &str) -> bool {
    show.filters.iter().filter(|(k, _)| keys.contains(&k.as_str())).all(|(_, names)| names.iter().any(|n| n == value))
}

/// The columns `show` asks for, from `fields` (`default` of them without `format=`).
fn columns<'a>(fields: &'a [&'a Field], default: usize, show: &Show) -> Result<Vec<(Column, &'a Field)>, String> {
    let Some(format) = &show.format else {
        return Ok(fields.iter().take(default).map(|f| (Column { name: f.name, width: f.width }, *f)).collect());
    };
    let mut out = Vec::new();
    for item in list(format) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n.to_string(), w.trim().parse::<i32>().ok()),
            None => (item.clone(), None),
        };
        let field = fields
            .iter()
            .copied()
            .find(|f| f.is_named(&name))
            .or_else(|| fields.iter().copied().find(|f| f.starts_with(&name)))
            .ok_or_else(|| format!("Unknown field '{name}'"))?;
        out.push((Column { name: field.name, width: width.unwrap_or(field.width) }, field));
    }
    Ok(out)
}

fn print_rows(cols: &[(Column, &Field)], rows: &[Row], show: &Show, tree_account: bool) -> String {
    let layout = show.layout.clone().unwrap_or(Layout::Fixed);
    let columns: Vec<Column> = cols
        .iter()
        .map(|(c, f)| if tree_account && f.name == "Account" { Column { name: c.name, width: -20 } } else { *c })
        .collect();
    let mut out = String::new();
    if show.header {
        out.push_str(&print::header(&columns, &layout));
    }
    for row in rows {
        let cells: Vec<Cell> = cols.iter().map(|(_, f)| Cell::Text((f.value)(row))).collect();
        out.push_str(&print::row(&columns, &cells, &layout));
    }
    out
}

fn get(client: &crate::api::client::Client, what: &str) -> Result<Vec<Value>, String> {
    let reply: Value = client.get(&format!("/slurmdb/v0.0.43/{what}")).map_err(|e| e.to_string())?;
    Ok(reply.get(what).and_then(Value::as_array).cloned().unwrap_or_default())
}

fn cluster_of(reply: &[Value]) -> String {
    reply.iter().find_map(|r| r.get("cluster").and_then(Value::as_str)).unwrap_or_default().to_string()
}

fn print_show(client: &crate::api::client::Client, entity: Entity, show: &Show) -> Result<String, String> {
    let assocs = get(client, "associations")?;
    let cluster = cluster_of(&assocs);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    match entity {
        Entity::Assoc => {
            let all: Vec<&Field> = fields::ASSOC.iter().collect();
            let cols = columns(&all, fields::ASSOC_DEFAULT, show)?;
            let mut depth: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
            let mut rows = Vec::new();
            for a in &assocs {
                let (account, user, parent) = (s(a, "account"), s(a, "user"), s(a, "parent_account"));
                let d = if user.is_empty() {
                    let d = depth.get(&parent).map_or(0, |d| d + 1);
                    depth.insert(account.clone(), d);
                    d
                } else {
                    depth.get(&account).map_or(0, |d| d + 1)
                };
                let wanted = passes(show, &["user", "users"], &user)
                    && passes(show, &["account", "accounts", "acct"], &account)
                    && passes(show, &["cluster", "clusters"], &cluster)
                    && (show.names.is_empty() || show.names.contains(&account) || show.names.contains(&user));
                if wanted {
                    rows.push(Row { record: a, assoc: None, cluster: &cluster, depth: if show.tree { d } else { 0 } });
                }
            }
            Ok(print_rows(&cols, &rows, show, show.tree))
        }
        Entity::User | Entity::Account => {
            let (what, base, extra) = match entity {
                Entity::User => ("users", fields::USER, fields::USER_ASSOC),
                _ => ("accounts", fields::ACCOUNT, fields::ACCOUNT_ASSOC),
            };
            let records = get(client, what)?;
            let all: Vec<&Field> = base.iter().chain(extra.iter()).collect();
            let default = if show.with_assoc { all.len() } else { base.len() };
            let cols = columns(&all, default, show)?;
            let keys: &[&str] = if entity == Entity::User {
                &["user", "users", "name", "names"]
            } else {
                &["account", "accounts", "name", "names"]
            };
            let mut rows = Vec::new();
            for r in &records {
                let name = s(r, "name");
                if !passes(show, keys, &name) || !(show.names.is_empty() || show.names.contains(&name)) {
                    continue;
                }
                if !show.with_assoc {
                    rows.push(Row { record: r, assoc: None, cluster: &cluster, depth: 0 });
                    continue;
                }
                for a in &assocs {
                    let mine = if entity == Entity::User { s(a, "user") == name } else { s(a, "account") == name };
                    if mine {
                        rows.push(Row { record: r, assoc: Some(a), cluster: &cluster, depth: 0 });
                    }
                }
            }
            Ok(print_rows(&cols, &rows, show, false))
        }
        Entity::Qos => {
            let records = get(client, "qos")?;
            let all: Vec<&Field> = fields::QOS.iter().collect();
            let cols = columns(&all, all.len(), show)?;
            let rows: Vec<Row> = records
                .iter()
                .filter(|q| {
                    let name = s(q, "name");
                    passes(show, &["name", "names", "qos"], &name)
                        && (show.names.is_empty() || show.names.contains(&name))
                })
                .map(|q| Row { record: q, assoc: None, cluster: &cluster, depth: 0 })
                .collect();
            Ok(print_rows(&cols, &rows, show, false))
        }
    }
}

const USAGE: &str = "sacctmgr [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -h or --help: equivalent to \"help\" command
     -i or --immediate: commit changes immediately
     -n or --noheader: no header will be added to the beginning of output
     -p or --parsable: output will be '|' delimited with a '|' at the end
     -P or --parsable2: output will be '|' delimited without a '|' at the end
     -s or --associations: show associations of users and accounts
     -V or --version: print version

  <COMMAND> may be:
     list or show ENTITY [where SPECS] [format=FIELDS] [tree] [withassoc]
        ENTITY: account, association, qos, user
        SPECS: account=, user=, name=, cluster=

  slurmlet keeps accounts, users and QOS in its configuration file: add, modify and delete
  are made there ([accounts.NAME], [users.NAME], [qos.NAME]), then `scontrol reconfigure`.
";
