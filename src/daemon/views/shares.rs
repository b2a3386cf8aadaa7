//! `GET /slurm/v0.0.43/shares`: the fair-share tree as sshare shows it, walked depth first
//! from the root, each account's users (by name) before its sub-accounts (by name), as
//! Slurm sorts its associations. Under `private_data = ["usage"]` a caller who is not root
//! or an operator sees the accounts and their own users' rows only.

use crate::api::noval::NoVal;
use crate::api::types::{AssocShares, FairshareStanding, SharesMsg, SharesTres, TresCount, LEVEL_FS_INFINITE};
use crate::config::priority::Tres;
use crate::daemon::model::job::Job;
use crate::daemon::scheduling::priority::Shares;

/// The TRES sshare's `TRESRunMins` lists, in the order Slurm's are (those slurmlet does not
/// count stay 0).
pub const TRES: [&str; 11] =
    ["cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu", "gres/gpumem", "gres/gpuutil"];

/// What each association's running jobs hold times the seconds left to their time limits
/// (jobs without one count none), added up the tree: by the tree's index, in [`TRES`]'s order.
pub fn run_seconds(shares: &Shares, running: &[(&Job, f64)], shards_per_gpu: u32, now: u64) -> Vec<[u64; 11]> {
    let mut out = vec![[0u64; 11]; shares.tree.len()];
    for (job, billing) in running {
        let Some(left) = job.limit_end(now).map(|end| end.saturating_sub(now)) else { continue };
        let Some(mut at) = shares.index_of(&job.account, job.uid) else { continue };
        let gpus = crate::daemon::scheduling::priority::billing::amount(&job.req, Tres::Gpu, shards_per_gpu);
        let mut held = [0u64; 11];
        held[0] = job.req.cpus as u64 * left;
        held[1] = job.req.mem_mb * left;
        held[3] = left;
        held[4] = (billing * left as f64) as u64;
        held[8] = (gpus * left as f64) as u64;
        loop {
            for (sum, add) in out[at].iter_mut().zip(held) {
                *sum = sum.saturating_add(add);
            }
            match shares.tree[at].parent {
                Some(p) => at = p,
                None => break,
            }
        }
    }
    out
}

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

/// The rows of `shares` the query keeps, in the tree's order, with their running jobs'
/// TRES-seconds (`run`, see [`run_seconds`]).
pub fn rows(shares: &Shares, run: &[[u64; 11]], cluster: &str, query: &SharesQuery) -> SharesMsg {
    let wanted_account = |i: usize| {
        query.accounts.is_empty() || {
            let (account, _) = &shares.names[i];
            query.accounts.iter().any(|a| a == account)
        }
    };
    let list: Vec<AssocShares> = shares
        .listing_order()
        .into_iter()
        .filter(|(i, _)| match shares.tree[*i].user {
            Some(uid) => {
                wanted_account(*i)
                    && (query.users.is_empty() || query.users.contains(&uid))
                    && query.only.is_none_or(|only| only == uid)
            }
            None => wanted_account(*i),
        })
        .map(|(i, name)| row(shares, i, run.get(i), cluster, &name))
        .collect();
    SharesMsg { total_shares: list.len() as i64, shares: list }
}

fn row(shares: &Shares, i: usize, run: Option<&[u64; 11]>, cluster: &str, name: &str) -> AssocShares {
    let (a, s) = (&shares.tree[i], &shares.standings[i]);
    let root = a.parent.is_none();
    // Slurm's NormUsage: the usage over the whole tree's.
    let total = shares.standings.first().map_or(0.0, |r| r.raw_usage);
    let normalized = if total > 0.0 { s.raw_usage / total } else { 0.0 };
    let run_seconds = TRES
        .iter()
        .zip(run.copied().unwrap_or_default())
        .map(|(name, secs)| TresCount { name: name.to_string(), value: NoVal::of(secs) })
        .collect();
    let level = if s.level_fs.is_infinite() { LEVEL_FS_INFINITE } else { s.level_fs };
    AssocShares {
        id: i as i64 + 1,
        cluster: cluster.to_string(),
        name: name.to_string(),
        parent: a.parent.map(|p| shares.tree[p].name.clone()).unwrap_or_default(),
        partition: String::new(),
        shares_normalized: NoVal::of(if root { 0.0 } else { s.norm_shares }),
        shares: if root { NoVal::unset() } else { NoVal::of(a.shares) },
        tres: SharesTres { run_seconds, ..Default::default() },
        effective_usage: NoVal::of(if root { 1.0 } else { s.effective_usage }),
        usage_normalized: if root { NoVal::unset() } else { NoVal::of(normalized) },
        // Slurm's RawUsage is its usage cut to a whole number.
        usage: s.raw_usage as i64,
        fairshare: FairshareStanding {
            factor: NoVal::of(s.factor),
            level: if root { NoVal::unset() } else { NoVal::of(level) },
        },
        kind: vec![if a.user.is_some() { "USER" } else { "ASSOCIATION" }.to_string()],
    }
}
