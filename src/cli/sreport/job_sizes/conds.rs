//! The conditions of `job SizesByAccount`, matched as Slurm's job reports match them (each
//! by its shortest unique start, in Slurm's order). They differ from the other reports':
//! a word without `=` is a cluster (unless it is `all_clusters`, `AcctAsParent`,
//! `PrintJobCount` or `FlatView`), and the job filters of sacct's query are there
//! (`users=`, `partitions=`, `gid=`, `wckeys=`, `jobs=`, `nodes=`). An unknown condition
//! is said as Slurm says it (the report still runs, and the exit status is 1).

use super::lists::{add_names, add_users, job_ids};
use crate::cli::sreport::args::condition;
use crate::cli::sreport::units::abbrev;

/// What the report's conditions ask for.
#[derive(Debug, Default)]
pub struct JobConds {
    /// `start=`.
    pub start: Option<u64>,
    /// `end=`.
    pub end: Option<u64>,
    /// `clusters=`, or words without `=`.
    pub clusters: Vec<String>,
    /// `accounts=`: the accounts to report (with `AcctAsParent`, whose sub-accounts to
    /// report; with `FlatView`, whose jobs to count).
    pub accounts: Vec<String>,
    /// `users=`: only these users' jobs.
    pub users: Vec<u32>,
    /// `gid=`: only jobs of these (numeric) groups.
    pub gids: Vec<String>,
    /// `partitions=`.
    pub partitions: Vec<String>,
    /// `wckeys=`.
    pub wckeys: Vec<String>,
    /// `jobs=`.
    pub jobs: Vec<u32>,
    /// `nodes=`: only jobs that ran on these nodes (a host list).
    pub nodes: Option<String>,
    /// `format=`.
    pub format: Vec<String>,
    /// `grouping=`'s sizes.
    pub grouping: Vec<String>,
    /// `grouping=individual`.
    pub individual: bool,
    /// `FlatView`: one row per account jobs were charged to.
    pub flat_view: bool,
    /// `AcctAsParent`: one row per sub-account of the accounts named (of root by default).
    pub acct_as_parent: bool,
    /// `PrintJobCount`: numbers of jobs rather than time.
    pub job_count: bool,
    /// A condition was not understood: the exit status will be 1.
    pub bad: bool,
}

/// Reads the conditions; `time` reads a `start=`/`end=` value. `Err`: the exit status,
/// after the message.
pub fn read(words: &[String], time: impl Fn(&str) -> Result<u64, i32>) -> Result<JobConds, i32> {
    let mut c = JobConds::default();
    for w in words {
        if !w.contains('=') {
            bare(&mut c, w);
        } else if !keyed(&mut c, w, &time)? {
            break;
        }
    }
    if c.individual && !c.grouping.is_empty() {
        // Slurm's own sreport crashes on this mix (its columns and ranges disagree).
        eprintln!("sreport: error: grouping=individual can not be combined with grouping sizes");
        return Err(1);
    }
    Ok(c)
}

/// A word without `=`: a flag, else a cluster.
fn bare(c: &mut JobConds, w: &str) {
    if abbrev(w, "all_clusters", 1) {
        // Every cluster: slurmlet's history has this one cluster's jobs.
    } else if abbrev(w, "AcctAsParent", 2) {
        c.acct_as_parent = true;
    } else if abbrev(w, "PrintJobCount", 2) {
        c.job_count = true;
    } else if abbrev(w, "FlatView", 2) {
        c.flat_view = true;
    } else {
        add_names(&mut c.clusters, w);
    }
}

/// A `key=value` word; `Ok(false)`: reading stops here (a second `nodes=`, as in Slurm).
fn keyed(c: &mut JobConds, w: &str, time: &impl Fn(&str) -> Result<u64, i32>) -> Result<bool, i32> {
    let value = w.split_once('=').map_or("", |(_, v)| v);
    let is = |name: &str, min: usize| condition(w, name, min).is_some();
    if is("Clusters", 1) {
        add_names(&mut c.clusters, value);
    } else if is("Accounts", 2) || is("Acct", 4) {
        add_names(&mut c.accounts, value);
    } else if is("Associations", 2) {
        eprintln!("sreport: error: {w}: association ids are not supported by slurmlet's sreport");
        return Err(1);
    } else if is("End", 1) {
        c.end = Some(time(value)?);
    } else if is("Format", 2) {
        add_names(&mut c.format, value);
    } else if is("Gid", 2) {
        add_names(&mut c.gids, value);
    } else if is("grouping", 2) {
        if value.get(..1).is_some_and(|v| v.eq_ignore_ascii_case("i")) {
            c.individual = true;
        } else {
            add_names(&mut c.grouping, value);
        }
    } else if is("Jobs", 1) {
        c.jobs.extend(job_ids(value));
    } else if is("Nodes", 1) {
        if let Some(before) = &c.nodes {
            eprintln!("sreport: error: You already specified nodes '{before}'  combine your request into 1 nodes=.");
            c.bad = true;
            return Ok(false);
        }
        c.nodes = Some(value.to_string());
    } else if is("Partitions", 2) {
        add_names(&mut c.partitions, value);
    } else if is("Start", 1) {
        c.start = Some(time(value)?);
    } else if is("Users", 1) {
        match add_users(&mut c.users, value) {
            Ok(0) => c.bad = true,
            Ok(_) => {}
            Err(e) => eprintln!("sreport: error: Invalid user id: {}", e.0),
        }
    } else if is("Wckeys", 2) {
        add_names(&mut c.wckeys, value);
    } else {
        eprintln!(" Unknown condition: {w}\nUse keyword set to modify value");
        c.bad = true;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conds(line: &str) -> Result<JobConds, i32> {
        let words: Vec<String> = line.split(' ').filter(|w| !w.is_empty()).map(String::from).collect();
        read(&words, |v| v.parse::<u64>().map_err(|_| 1))
    }

    #[test]
    fn words_without_a_value_are_flags_or_clusters() {
        let c = conds("flat ac pr ci26 all").unwrap();
        assert!(c.flat_view && c.acct_as_parent && c.job_count);
        assert_eq!(c.clusters, ["ci26"]);
        let c = conds("p").unwrap();
        assert!(!c.job_count);
        assert_eq!(c.clusters, ["p"]);
    }

    #[test]
    fn keys_match_from_their_shortest_start() {
        let c = conds("s=5 e=9 acc=Physics acct=chem gr=1,2 fo=a u=root pa=gpu gid=0 j=3,").unwrap();
        assert_eq!((c.start, c.end), (Some(5), Some(9)));
        assert_eq!(c.accounts, ["physics", "chem"]);
        assert_eq!(c.grouping, ["1", "2"]);
        assert_eq!(c.format, ["a"]);
        assert_eq!(c.users, [0]);
        assert_eq!(c.jobs, [3]);
        assert_eq!((c.partitions, c.gids), (vec!["gpu".to_string()], vec!["0".to_string()]));
        assert!(!c.bad);
        assert!(conds("w=k").unwrap().bad);
        assert!(conds("a=x").unwrap().bad);
        assert!(conds("g=x").unwrap().bad);
        assert_eq!(conds("wc=k").unwrap().wckeys, ["k"]);
    }

    #[test]
    fn grouping_individual_needs_only_its_first_letter() {
        assert!(conds("grouping=I").unwrap().individual);
        assert_eq!(conds("grouping=individual grouping=5").err(), Some(1));
    }

    #[test]
    fn a_second_nodes_ends_the_conditions() {
        let c = conds("nodes=a nodes=b users=root").unwrap();
        assert_eq!(c.nodes.as_deref(), Some("a"));
        assert!(c.bad && c.users.is_empty());
    }

    #[test]
    fn association_ids_are_refused() {
        assert_eq!(conds("associations=3").err(), Some(1));
    }
}
