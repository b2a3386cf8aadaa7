//! Fair Tree, Slurm's default fair-share algorithm (`fair_tree.shtml`), over a tree of
//! accounts and users with shares and usage.
//!
//! At each level of the tree, every association gets its Level Fairshare
//! `LF = S / U`: `S` its shares over those of it and its siblings, `U` its usage over its
//! parent's (an association with shares and no usage has `LF = ∞`; one without shares has
//! 0). Siblings are sorted by `LF`, highest first, users before accounts on a tie, and the
//! tree is walked depth first in that order: the users met are ranked from the number of
//! users down, so that every user of an account that is ahead of its sibling ranks above
//! every user of the sibling. A user's fair-share factor is its rank over the number of
//! users. Users of equal `LF` share a rank, and an account tied with the sibling before it
//! starts out tied, as Slurm's code does (it never merges the children of tied accounts:
//! its count of them stops at the first account, which the sort puts after the users).

/// One association: an account (`user` is `None`) or a user in an account.
#[derive(Debug, Clone, PartialEq)]
pub struct Assoc {
    /// Its parent's index; `None` for the root, which is index 0.
    pub parent: Option<usize>,
    /// A user's uid; `None` for an account.
    pub user: Option<u32>,
    /// Its shares among its siblings (`RawShares`).
    pub shares: u32,
    /// A user's decayed usage (`RawUsage`); an account's is its children's, added up.
    pub usage: f64,
    /// Sorted before siblings of equal standing, so that the walk is the same every time.
    pub name: String,
}

/// Where an association stands, as `sshare -l` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Standing {
    /// Its usage: a user's own, an account's its users' added up.
    pub raw_usage: f64,
    /// Its shares over those of it and its siblings (`NormShares`).
    pub norm_shares: f64,
    /// Its usage over its parent's (`EffectvUsage`; 0 when the parent has none).
    pub effective_usage: f64,
    /// `S / U` (`LevelFS`): above 1 under-served, below 1 over-served.
    pub level_fs: f64,
    /// A user's fair-share factor, 0 to 1 (`FairShare`); 0 for an account.
    pub factor: f64,
}

/// The standing of every association of `tree` (index 0 its root), in its order.
pub fn standings(tree: &[Assoc]) -> Vec<Standing> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); tree.len()];
    for (i, a) in tree.iter().enumerate() {
        if let Some(p) = a.parent {
            children[p].push(i);
        }
    }
    let mut out = vec![Standing::default(); tree.len()];
    if tree.is_empty() {
        return out;
    }
    add_up_usage(tree, &children, 0, &mut out);
    for (i, a) in tree.iter().enumerate() {
        let Some(p) = a.parent else { continue };
        let level_shares: u64 = children[p].iter().map(|&c| tree[c].shares as u64).sum();
        let s = if level_shares == 0 { 0.0 } else { a.shares as f64 / level_shares as f64 };
        let parent_usage = out[p].raw_usage;
        let u = if parent_usage > 0.0 { out[i].raw_usage / parent_usage } else { 0.0 };
        out[i].norm_shares = s;
        out[i].effective_usage = u;
        // U may be 0: the result is infinity, a valid value; no shares rank lowest.
        out[i].level_fs = if s == 0.0 { 0.0 } else { s / u };
    }
    let users = tree.iter().filter(|a| a.user.is_some()).count() as u32;
    let mut ranks = Ranks { users, rank: users, rank_no_ties: users };
    ranks.walk(tree, &children, &children[0], false, &mut out);
    out
}

/// Adds up the usage below `at` into `out`, and returns it.
fn add_up_usage(tree: &[Assoc], children: &[Vec<usize>], at: usize, out: &mut [Standing]) -> f64 {
    let below: f64 = children[at].iter().map(|&c| add_up_usage(tree, children, c, out)).sum();
    let own = if tree[at].user.is_some() { tree[at].usage.max(0.0) } else { below };
    out[at].raw_usage = own;
    own
}

/// The ranking as the walk goes: the current rank, and what it would be without ties.
struct Ranks {
    users: u32,
    rank: u32,
    rank_no_ties: u32,
}

impl Ranks {
    fn walk(
        &mut self,
        tree: &[Assoc],
        children: &[Vec<usize>],
        siblings: &[usize],
        tied_before: bool,
        out: &mut [Standing],
    ) {
        let mut order = siblings.to_vec();
        order.sort_by(|&a, &b| {
            out[b]
                .level_fs
                .partial_cmp(&out[a].level_fs)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| tree[b].user.is_some().cmp(&tree[a].user.is_some()))
                .then_with(|| tree[a].name.cmp(&tree[b].name))
        });
        let mut previous: Option<f64> = None;
        for (i, &at) in order.iter().enumerate() {
            let level_fs = out[at].level_fs;
            let tied = if i == 0 && tied_before { true } else { previous == Some(level_fs) };
            if tree[at].user.is_some() {
                if !tied {
                    self.rank = self.rank_no_ties;
                }
                out[at].factor = if self.users == 0 { 0.0 } else { self.rank as f64 / self.users as f64 };
                self.rank_no_ties = self.rank_no_ties.saturating_sub(1);
            } else {
                self.walk(tree, children, &children[at], tied, out);
            }
            previous = Some(level_fs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(parent: usize, name: &str, shares: u32) -> Assoc {
        Assoc { parent: Some(parent), user: None, shares, usage: 0.0, name: name.into() }
    }

    fn user(parent: usize, uid: u32, shares: u32, usage: f64) -> Assoc {
        Assoc { parent: Some(parent), user: Some(uid), shares, usage, name: format!("u{uid}") }
    }

    fn root() -> Assoc {
        Assoc { parent: None, user: None, shares: 1, usage: 0.0, name: "root".into() }
    }

    /// fair_tree.shtml's figure: accounts A and B under root with equal shares; A has used
    /// less than B, so every user of A ranks above every user of B, whatever the users'
    /// own standing in B.
    #[test]
    fn every_user_of_an_under_served_account_ranks_above_the_other_accounts_users() {
        let tree = vec![
            root(),
            account(0, "a", 1),    // 1
            account(0, "b", 1),    // 2
            user(1, 10, 1, 30.0),  // 3: A's heavy user
            user(1, 11, 1, 10.0),  // 4
            user(2, 20, 1, 1.0),   // 5: B's light user
            user(2, 21, 1, 100.0), // 6
        ];
        let s = standings(&tree);
        // By hand: root usage 141; A 40 (U = 40/141), B 101; S = 0.5 each.
        assert!((s[1].level_fs - 0.5 / (40.0 / 141.0)).abs() < 1e-12);
        assert!((s[2].level_fs - 0.5 / (101.0 / 141.0)).abs() < 1e-12);
        // Within A: u11 (10/40) before u10 (30/40); within B: u20 before u21.
        // Ranks 4, 3 for A's users; 2, 1 for B's; 4 users.
        assert_eq!([s[4].factor, s[3].factor, s[5].factor, s[6].factor], [1.0, 0.75, 0.5, 0.25]);
        assert_eq!(s[0].raw_usage, 141.0);
        assert!((s[3].effective_usage - 0.75).abs() < 1e-12);
    }

    /// A user without usage has LF = ∞; users of equal LF share the higher rank.
    #[test]
    fn users_with_no_usage_rank_first_and_ties_share_a_rank() {
        let tree = vec![root(), account(0, "lab", 1), user(1, 1, 1, 0.0), user(1, 2, 1, 0.0), user(1, 3, 1, 50.0)];
        let s = standings(&tree);
        assert!(s[2].level_fs.is_infinite());
        assert_eq!([s[2].factor, s[3].factor, s[4].factor], [1.0, 1.0, 1.0 / 3.0]);
    }

    /// With no usage anywhere every user is tied at the top: fair-share changes nothing
    /// until something has run.
    #[test]
    fn no_usage_anywhere_ties_every_user_at_one() {
        let tree = vec![root(), account(0, "a", 3), account(0, "b", 1), user(1, 1, 1, 0.0), user(2, 2, 1, 0.0)];
        let s = standings(&tree);
        assert_eq!([s[3].factor, s[4].factor], [1.0, 1.0]);
    }

    /// Shares count: two users with usage in the ratio of their shares stand level.
    #[test]
    fn usage_in_proportion_to_shares_is_level() {
        let tree = vec![root(), account(0, "lab", 1), user(1, 1, 2, 20.0), user(1, 2, 1, 10.0), user(1, 3, 0, 0.0)];
        let s = standings(&tree);
        assert!((s[2].level_fs - s[3].level_fs).abs() < 1e-12, "{s:?}");
        assert_eq!([s[2].factor, s[3].factor], [1.0, 1.0]);
        // A user with no shares ranks last (LF 0).
        assert_eq!(s[4].level_fs, 0.0);
        assert_eq!(s[4].factor, 1.0 / 3.0);
    }

    /// A user tied with a sibling account gets the rank of the account's first user, as
    /// Slurm's tie rule 3 says.
    #[test]
    fn a_user_tied_with_an_account_shares_its_first_users_rank() {
        let tree = vec![
            root(),
            user(0, 1, 1, 0.0),
            account(0, "a", 1),
            user(2, 2, 1, 0.0),
            user(2, 3, 1, 5.0),
            user(0, 4, 1, 9.0),
        ];
        let s = standings(&tree);
        // Root's children: u1 (∞), a (∞, usage 5 of 14 → LF = (1/3)/(5/14) ≈ 0.93) — not tied.
        // So: u1 rank 4; a: u2 (∞) rank 3, u3 rank 2; u4 LF (1/3)/(9/14) ≈ 0.52 rank 1.
        assert_eq!([s[1].factor, s[3].factor, s[4].factor, s[5].factor], [1.0, 0.75, 0.5, 0.25]);
        // With no usage under the account and u1 none either, they tie: u1 and u2 rank 4.
        let tree = vec![root(), user(0, 1, 1, 0.0), account(0, "a", 1), user(2, 2, 1, 0.0), user(0, 4, 1, 9.0)];
        let s = standings(&tree);
        assert_eq!([s[1].factor, s[3].factor, s[4].factor], [1.0, 1.0, 1.0 / 3.0]);
    }
}
