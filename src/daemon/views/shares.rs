//! `GET /slurm/v0.0.43/shares`: the fair-share tree as sshare shows it, walked depth first
//! from the root, each account's users (by name) before its sub-accounts (by name), as
//! Slurm sorts its associations. Under `private_data = ["usage"]` a caller who is not root
//! or an operator sees the accounts and their own users' rows only.

use crate::api::noval::NoVal;
use crate::api::types::{AssocShares, FairshareStanding, SharesMsg, LEVEL_FS_INFINITE};
use crate::daemon::scheduling::priority::Shares;

/// What the caller asked for: accounts and users (empty: all), and whose rows they may see.
#[derive(Debug, Default)]
pub struct SharesQuery {
    /// Accounts to show (and what hangs under them).
    pub accounts: Vec<String>,
    /// Users to show.
    pub users: Vec<u32>,
    /// The only user whose rows the caller may see, under private usage.
    pub only: Option<u32>,
}

/// The rows of `shares` the query keeps, in the tree's order.
pub fn rows(shares: &Shares, cluster: &str, query: &SharesQuery) -> SharesMsg {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); shares.tree.len()];
    for (i, a) in shares.tree.iter().enumerate() {
        if let Some(p) = a.parent {
            children[p].push(i);
        }
    }
    let name_of = |i: usize| match shares.tree[i].user {
        Some(uid) => crate::identity::user_name(uid),
        None => shares.tree[i].name.clone(),
    };
    for list in children.iter_mut() {
        list.sort_by_key(|&i| (shares.tree[i].user.is_none(), name_of(i)));
    }
    let mut order = Vec::with_capacity(shares.tree.len());
    let mut stack = vec![0usize];
    while let Some(at) = stack.pop() {
        if at < shares.tree.len() {
            order.push(at);
            stack.extend(children[at].iter().rev());
        }
    }
    let wanted_account = |i: usize| {
        query.accounts.is_empty() || {
            let (account, _) = &shares.names[i];
            query.accounts.iter().any(|a| a == account)
        }
    };
    let list: Vec<AssocShares> = order
        .into_iter()
        .filter(|&i| match shares.tree[i].user {
            Some(uid) => {
                wanted_account(i)
                    && (query.users.is_empty() || query.users.contains(&uid))
                    && query.only.is_none_or(|only| only == uid)
            }
            None => wanted_account(i),
        })
        .map(|i| row(shares, i, cluster, &name_of(i)))
        .collect();
    SharesMsg { total_shares: list.len() as i64, shares: list }
}

fn row(shares: &Shares, i: usize, cluster: &str, name: &str) -> AssocShares {
    let (a, s) = (&shares.tree[i], &shares.standings[i]);
    let root = a.parent.is_none();
    let level = if s.level_fs.is_infinite() { LEVEL_FS_INFINITE } else { s.level_fs };
    AssocShares {
        id: i as i64 + 1,
        cluster: cluster.to_string(),
        name: name.to_string(),
        parent: a.parent.map(|p| shares.tree[p].name.clone()).unwrap_or_default(),
        partition: String::new(),
        shares_normalized: NoVal::of(if root { 0.0 } else { s.norm_shares }),
        shares: if root { NoVal::unset() } else { NoVal::of(a.shares) },
        tres: Default::default(),
        effective_usage: NoVal::of(if root { 1.0 } else { s.effective_usage }),
        usage_normalized: if root { NoVal::unset() } else { NoVal::of(s.effective_usage) },
        usage: s.raw_usage.round() as i64,
        fairshare: FairshareStanding {
            factor: NoVal::of(s.factor),
            level: if root { NoVal::unset() } else { NoVal::of(level) },
        },
        kind: vec![if a.user.is_some() { "USER" } else { "ASSOCIATION" }.to_string()],
    }
}
