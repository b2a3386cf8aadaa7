//! Multifactor priority and fair-share: the factors of a job's priority
//! ([`multifactor`]), what a job's hold of the node costs ([`billing`]), the usage that
//! decays ([`usage`]) and when it is forgotten ([`reset`]), and where each user stands in
//! the tree of accounts ([`fair_tree`]). [`Priorities`] is the scheduler's part that holds
//! them between passes.

pub mod billing;
pub mod fair_tree;
pub mod multifactor;
pub mod reset;
pub mod usage;

use crate::config::accounts::{AccountTree, ROOT};
use std::collections::{BTreeSet, HashMap};

/// An association: an account and a user in it.
pub type AssocKey = (String, u32);

/// The fair-share tree as of a moment: its associations, where each stands, and which is
/// which.
#[derive(Debug, Default)]
pub struct Shares {
    /// Root first, then the accounts by name, then the users.
    pub tree: Vec<fair_tree::Assoc>,
    /// Each association's standing, in the tree's order.
    pub standings: Vec<fair_tree::Standing>,
    /// Each association's account (an account's own name) and user.
    pub names: Vec<(String, Option<u32>)>,
    users: HashMap<AssocKey, usize>,
}

impl Shares {
    /// The tree of `accounts` with the users and accounts `seen` besides (those of jobs,
    /// hung under root with one share where the file does not place them) and root's own user
    /// association under the root account, as Slurm's trees have, each user's usage from
    /// `usage`.
    pub fn of(accounts: &AccountTree, seen: &BTreeSet<AssocKey>, usage: &HashMap<AssocKey, f64>) -> Shares {
        let mut shares = Shares::default();
        shares.push(None, None, 1, 0.0, ROOT.to_string());
        let mut account_names: BTreeSet<&str> = accounts.accounts.keys().map(String::as_str).collect();
        account_names.extend(seen.iter().chain(usage.keys()).map(|(a, _)| a.as_str()));
        let mut at: HashMap<&str, usize> = HashMap::from([(ROOT, 0)]);
        for name in &account_names {
            let shares_of = accounts.accounts.get(*name).map_or(1, |a| a.fairshare);
            at.insert(name, shares.tree.len());
            shares.push(None, None, shares_of, 0.0, name.to_string());
        }
        for (i, name) in account_names.iter().enumerate() {
            let parent = accounts.accounts.get(*name).map_or(ROOT, |a| a.parent.as_str());
            shares.tree[i + 1].parent = Some(at.get(parent).copied().unwrap_or(0));
        }
        // As Slurm's, root has a user association of its own under the root account.
        let mut users: BTreeSet<(&str, u32)> = BTreeSet::from([(ROOT, 0)]);
        users.extend(accounts.users.keys().map(|(a, u)| (a.as_str(), *u)));
        users.extend(seen.iter().chain(usage.keys()).map(|(a, u)| (a.as_str(), *u)));
        for (account, uid) in users {
            let key = (account.to_string(), uid);
            let user_shares = accounts.users.get(&key).copied().unwrap_or(1);
            let used = usage.get(&key).copied().unwrap_or(0.0);
            shares.users.insert(key, shares.tree.len());
            shares.push(Some(at[account]), Some(uid), user_shares, used, format!("{account}/{uid}"));
        }
        shares.standings = fair_tree::standings(&shares.tree);
        shares.names = shares
            .tree
            .iter()
            .map(|a| match a.user {
                Some(uid) => (shares.tree[a.parent.unwrap_or(0)].name.clone(), Some(uid)),
                None => (a.name.clone(), None),
            })
            .collect();
        shares
    }

    fn push(&mut self, parent: Option<usize>, user: Option<u32>, shares: u32, usage: f64, name: String) {
        self.tree.push(fair_tree::Assoc { parent, user, shares, usage, name });
    }

    /// The fair-share factor of `uid` in `account` (0 for an association the tree lacks).
    pub fn factor(&self, account: &str, uid: u32) -> f64 {
        self.users.get(&(account.to_string(), uid)).map_or(0.0, |&i| self.standings[i].factor)
    }

    /// Where `uid`'s association in `account` is in the tree.
    pub fn index_of(&self, account: &str, uid: u32) -> Option<usize> {
        self.users.get(&(account.to_string(), uid)).copied()
    }

    /// The associations in the order sshare and sacctmgr list them: depth first from the
    /// root, an account's users (by name) before its sub-accounts (by name); with each
    /// association's printed name (a user's looked up once).
    pub fn listing_order(&self) -> Vec<(usize, String)> {
        let names: Vec<String> =
            self.tree.iter().map(|a| a.user.map_or_else(|| a.name.clone(), crate::identity::user_name)).collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.tree.len()];
        for (i, a) in self.tree.iter().enumerate() {
            if let Some(p) = a.parent {
                children[p].push(i);
            }
        }
        for list in children.iter_mut() {
            list.sort_by(|&a, &b| {
                (self.tree[a].user.is_none(), &names[a]).cmp(&(self.tree[b].user.is_none(), &names[b]))
            });
        }
        let mut order = Vec::with_capacity(self.tree.len());
        let mut stack = vec![0usize];
        while let Some(at) = stack.pop() {
            if at < self.tree.len() {
                order.push((at, names[at].clone()));
                stack.extend(children[at].iter().rev());
            }
        }
        order
    }

    /// Every user's factor, by association.
    pub fn factors(&self) -> HashMap<AssocKey, f64> {
        self.users.iter().map(|(k, &i)| (k.clone(), self.standings[i].factor)).collect()
    }
}

/// What the scheduler keeps of priorities between passes.
#[derive(Debug, Default)]
pub struct Priorities {
    /// The usage of ended jobs.
    pub ledger: usage::UsageLedger,
    /// The associations of the jobs seen since the start (each ranks in the tree).
    pub seen: BTreeSet<AssocKey>,
    /// The fair-share factors the queue's priorities were last computed with.
    pub factors: HashMap<AssocKey, f64>,
    /// When every queued job's priority was last computed (`None`: never, or the settings
    /// changed since).
    pub computed_at: Option<u64>,
}

impl Priorities {
    /// Whether every queued job's priority is due again at `now`: never computed, the
    /// calculation period is over, or the fair-share factors moved.
    pub fn due(&self, now: u64, calc_period: u64, factors: &HashMap<AssocKey, f64>) -> bool {
        self.computed_at.is_none_or(|at| now >= at.saturating_add(calc_period)) || *factors != self.factors
    }
}
