//! Which row a job falls under, as Slurm's job report decides it from the associations.
//!
//! Slurm makes a row for each account of the associations it asks for (every one, the
//! `accounts=` named, or with `AcctAsParent` the sub-accounts of those named, of root by
//! default), and a job goes to the first of them, in the order of their paths from root,
//! whose path its own association's path contains: the highest of them at or above the
//! job's account. So with no `accounts=` every job is under `root`. Jobs under none are not
//! counted. With `FlatView` there is no tree: each job is under its own account.

use std::collections::HashMap;

/// The root account.
pub const ROOT: &str = "root";

/// How jobs are put into rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rows {
    /// Each job under the account it was charged to.
    Flat,
    /// Each job under the highest of `groups` on its account's path to root.
    Tree {
        /// The accounts that have rows.
        groups: Vec<String>,
        /// Each account's parent (root has none; an account missing here is under root).
        parents: HashMap<String, String>,
    },
}

impl Rows {
    /// The tree rows of the accounts the conditions ask for: `named` (`accounts=`, lower
    /// case), or with `as_parent` their sub-accounts. `parents` maps each account to its
    /// parent (needed only when accounts are named or `as_parent`).
    pub fn tree(named: &[String], as_parent: bool, parents: HashMap<String, String>) -> Rows {
        let root = [ROOT.to_string()];
        let known = || std::iter::once(ROOT).chain(parents.keys().map(String::as_str));
        let is_named = |a: &str, list: &[String]| list.iter().any(|n| n.eq_ignore_ascii_case(a));
        let groups: Vec<String> = if as_parent {
            let of = if named.is_empty() { &root[..] } else { named };
            parents.iter().filter(|(_, p)| is_named(p, of)).map(|(a, _)| a.clone()).collect()
        } else if named.is_empty() {
            root.to_vec()
        } else {
            known().filter(|a| is_named(a, named)).map(str::to_string).collect()
        };
        Rows::Tree { groups, parents }
    }

    /// The row a job charged to `account` falls under, if any.
    pub fn row_of(&self, account: &str) -> Option<String> {
        match self {
            Rows::Flat => Some(account.to_string()),
            Rows::Tree { groups, parents } => {
                let path = path_to_root(account, parents);
                path.iter().rev().find_map(|a| groups.iter().find(|g| g.eq_ignore_ascii_case(a)).cloned())
            }
        }
    }
}

/// `account`, its parent, …, root.
fn path_to_root<'a>(account: &'a str, parents: &'a HashMap<String, String>) -> Vec<&'a str> {
    let mut path = vec![account];
    let mut at = account;
    while !at.eq_ignore_ascii_case(ROOT) {
        let up = parents.get(at).map_or(ROOT, String::as_str);
        if path.contains(&up) {
            break;
        }
        path.push(up);
        at = up;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root ─ physics ─ theory; root ─ chem.
    fn parents() -> HashMap<String, String> {
        [("physics", "root"), ("theory", "physics"), ("chem", "root")]
            .into_iter()
            .map(|(a, p)| (a.to_string(), p.to_string()))
            .collect()
    }

    fn named(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn with_no_accounts_every_job_is_under_root() {
        let rows = Rows::tree(&[], false, HashMap::new());
        assert_eq!(rows.row_of("physics").as_deref(), Some("root"));
        assert_eq!(rows.row_of("anything").as_deref(), Some("root"));
    }

    #[test]
    fn a_named_account_takes_the_jobs_of_its_sub_accounts() {
        let rows = Rows::tree(&named(&["physics", "theory", "nosuch"]), false, parents());
        assert_eq!(rows.row_of("theory").as_deref(), Some("physics"));
        assert_eq!(rows.row_of("physics").as_deref(), Some("physics"));
        assert_eq!(rows.row_of("chem"), None);
        let rows = Rows::tree(&named(&["root", "physics"]), false, parents());
        assert_eq!(rows.row_of("theory").as_deref(), Some("root"));
    }

    #[test]
    fn acct_as_parent_makes_rows_of_the_sub_accounts() {
        let rows = Rows::tree(&[], true, parents());
        assert_eq!(rows.row_of("theory").as_deref(), Some("physics"));
        assert_eq!(rows.row_of("chem").as_deref(), Some("chem"));
        assert_eq!(rows.row_of("root"), None);
        let rows = Rows::tree(&named(&["physics"]), true, parents());
        assert_eq!(rows.row_of("theory").as_deref(), Some("theory"));
        assert_eq!(rows.row_of("physics"), None);
    }

    #[test]
    fn flat_view_keeps_each_jobs_account() {
        assert_eq!(Rows::Flat.row_of("theory").as_deref(), Some("theory"));
    }
}
