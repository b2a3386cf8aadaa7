//! The accounts: a tree of accounts under `root`, each with its shares (`fairshare`) and
//! users, as Slurm's associations are, from `[accounts.NAME]` tables:
//!
//! ```toml
//! [accounts.physics]
//! fairshare = 2
//! users = ["alice", "bob"]         # each with 1 share, or { alice = 2, bob = 1 }
//! [accounts.theory]
//! parent = "physics"
//! users = ["carol"]
//! [users.alice]
//! default_account = "physics"      # needed where a user is in several accounts
//! ```
//!
//! The older form, a list of accounts per user (`alice = ["physics", "chem"]`, the default
//! first), still reads: each account then hangs under `root` with one share. A tree that
//! cannot be (a parent that is no account, a cycle, a user in several accounts with no
//! default) is refused naming the key.

use std::collections::{BTreeMap, BTreeSet};

/// The top of every tree.
pub const ROOT: &str = "root";

/// One account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Its parent: [`ROOT`] or another account.
    pub parent: String,
    /// Its shares among its siblings (Slurm's `Fairshare`, 1 by default).
    pub fairshare: u32,
    /// sacctmgr's `Descr` (the name when none is given).
    pub description: String,
    /// sacctmgr's `Org` (when none is given: its name under root, else its parent's).
    pub organization: String,
    /// The QOS its users' jobs may run in (`None`: its parent's; at the top, every QOS).
    pub qos: Option<Vec<String>>,
    /// The QOS of its users' jobs that name none (`None`: its parent's; at the top,
    /// `normal`).
    pub default_qos: Option<String>,
}

/// The tree of accounts and the users in each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountTree {
    /// The accounts by name ([`ROOT`] is not among them).
    pub accounts: BTreeMap<String, Account>,
    /// Each user's shares in each account they may charge, by (account, uid).
    pub users: BTreeMap<(String, u32), u32>,
    /// Each listed user's default account.
    pub defaults: BTreeMap<u32, String>,
    /// The QOS of each listed user's jobs that name none, where `[users.NAME]` gives one.
    pub default_qos: BTreeMap<u32, String>,
    /// The root association's QOS and default QOS (`[accounts.root]`, which takes only these),
    /// inherited by every account that names none.
    pub root: RootQos,
}

/// The root association's QOS settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootQos {
    /// The QOS every account offers that names none (`None`: every QOS).
    pub qos: Option<Vec<String>>,
    /// The default QOS of accounts and users that name none (`None`: `normal`).
    pub default_qos: Option<String>,
}

/// A `[users.NAME]` table.
#[derive(Debug, Clone, serde::Deserialize, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UserTable {
    /// The account of their jobs that name none.
    pub default_account: Option<String>,
    /// The QOS of their jobs that name none.
    pub default_qos: Option<String>,
    /// Where their jobs' notices are posted (see [`super::notify`]).
    pub webhook: Option<String>,
}

/// The most shares an account or a user may have (Slurm's are 32-bit).
const MAX_SHARES: i64 = u32::MAX as i64 - 1;

impl AccountTree {
    /// The accounts each listed user may charge, their default first.
    pub fn charges(&self) -> BTreeMap<u32, Vec<String>> {
        let mut by_uid: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for (account, uid) in self.users.keys() {
            by_uid.entry(*uid).or_default().push(account.clone());
        }
        for (uid, list) in by_uid.iter_mut() {
            if let Some(default) = self.defaults.get(uid) {
                list.retain(|a| a != default);
                list.insert(0, default.clone());
            }
        }
        by_uid
    }

    /// Reads the `accounts` table (either form) and the `users` tables; `Err` says what is
    /// wrong, naming the key.
    pub fn read(accounts: &toml::Table, users: &BTreeMap<String, UserTable>) -> Result<AccountTree, String> {
        let lists = accounts.values().filter(|v| v.is_array()).count();
        if lists > 0 && lists < accounts.len() {
            return Err("accounts: give either a list of accounts per user (alice = [\"physics\"]) or a table per \
                        account ([accounts.physics] with users = [...]), not both"
                .into());
        }
        let mut tree = if lists > 0 { Self::read_lists(accounts)? } else { Self::read_tables(accounts)? };
        tree.check_parents()?;
        tree.read_defaults(users)?;
        Ok(tree)
    }

    /// The older form: `alice = ["physics", "chem"]`, the default first.
    fn read_lists(accounts: &toml::Table) -> Result<AccountTree, String> {
        let mut tree = AccountTree::default();
        for (name, list) in accounts {
            let uid = crate::identity::user_uid(name).ok_or_else(|| format!("accounts: no such user '{name}'"))?;
            let names: Vec<&str> = list.as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
            if names.is_empty()
                || names.len() != list.as_array().map_or(0, Vec::len)
                || names.iter().any(|a| !is_name(a))
            {
                return Err(format!("accounts.{name}: give one or more account names"));
            }
            for account in &names {
                tree.accounts.entry(account.to_string()).or_insert_with(|| Account::under(ROOT, account, 1));
                tree.users.insert((account.to_string(), uid), 1);
            }
            tree.defaults.insert(uid, names[0].to_string());
        }
        Ok(tree)
    }

    /// The tree form: `[accounts.NAME]` with `fairshare`, `parent`, `users`, `description`,
    /// `organization`.
    fn read_tables(accounts: &toml::Table) -> Result<AccountTree, String> {
        let mut tree = AccountTree::default();
        for (name, value) in accounts {
            let key = format!("accounts.{name}");
            if name == ROOT {
                tree.read_root(&key, value)?;
                continue;
            }
            if !is_name(name) {
                return Err(format!("{key}: '{name}' is no account name"));
            }
            let table = value.as_table().ok_or_else(|| format!("{key}: give a table (fairshare, parent, users)"))?;
            let mut account = Account::under(ROOT, name, 1);
            for (field, v) in table {
                let at = format!("{key}.{field}");
                match field.as_str() {
                    "fairshare" => account.fairshare = shares(&at, v)?,
                    "parent" => account.parent = text(&at, v)?,
                    "description" => account.description = text(&at, v)?,
                    "organization" => account.organization = text(&at, v)?,
                    "users" => tree.read_users(name, &at, v)?,
                    "qos" => account.qos = Some(names(&at, v)?),
                    "default_qos" => account.default_qos = Some(text(&at, v)?),
                    _ => {
                        return Err(format!(
                            "{at}: unknown key (known: fairshare, parent, users, description, organization, qos, \
                             default_qos)"
                        ))
                    }
                }
            }
            if !table.contains_key("organization") {
                account.organization = Account::under(&account.parent, name, 1).organization;
            }
            tree.accounts.insert(name.clone(), account);
        }
        Ok(tree)
    }

    /// `[accounts.root]`: the QOS the root association offers and its default QOS, which
    /// every account naming none inherits; root takes no other setting.
    fn read_root(&mut self, key: &str, value: &toml::Value) -> Result<(), String> {
        let table = value.as_table().ok_or_else(|| format!("{key}: give a table (qos, default_qos)"))?;
        for (field, v) in table {
            let at = format!("{key}.{field}");
            match field.as_str() {
                "qos" => self.root.qos = Some(names(&at, v)?),
                "default_qos" => self.root.default_qos = Some(text(&at, v)?),
                _ => {
                    return Err(format!(
                        "{at}: root is the tree's top, above every account; it takes only qos and default_qos"
                    ))
                }
            }
        }
        Ok(())
    }

    /// The QOS `account` offers: its own list, its parent's, …, root's; `None`: every QOS.
    pub fn offered_qos(&self, account: &str) -> Option<&Vec<String>> {
        self.ancestors(account)
            .find_map(|a| self.accounts.get(a).and_then(|x| x.qos.as_ref()))
            .or(self.root.qos.as_ref())
    }

    /// The default QOS of `account`'s users: its own, its parent's, …, root's.
    pub fn account_default_qos(&self, account: &str) -> Option<&String> {
        self.ancestors(account)
            .find_map(|a| self.accounts.get(a).and_then(|x| x.default_qos.as_ref()))
            .or(self.root.default_qos.as_ref())
    }

    /// An account's `users`: a list of names (one share each) or a table of shares.
    fn read_users(&mut self, account: &str, key: &str, value: &toml::Value) -> Result<(), String> {
        let named: Vec<(String, u32)> = match value {
            toml::Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().map(|n| (n.to_string(), 1)).ok_or_else(|| format!("{key}: give user names")))
                .collect::<Result<_, _>>()?,
            toml::Value::Table(t) => t
                .iter()
                .map(|(n, v)| Ok((n.clone(), shares(&format!("{key}.{n}"), v)?)))
                .collect::<Result<_, String>>()?,
            _ => return Err(format!("{key}: give a list of user names, or a table of their shares")),
        };
        for (name, shares) in named {
            let uid = crate::identity::user_uid(&name).ok_or_else(|| format!("{key}: no such user '{name}'"))?;
            self.users.insert((account.to_string(), uid), shares);
        }
        Ok(())
    }

    /// Every parent is an account or root, and no chain of parents comes back on itself.
    fn check_parents(&self) -> Result<(), String> {
        for (name, account) in &self.accounts {
            if account.parent != ROOT && !self.accounts.contains_key(&account.parent) {
                return Err(format!("accounts.{name}.parent: '{}' is no account", account.parent));
            }
            let mut chain = vec![name.as_str()];
            let mut at = account.parent.as_str();
            while at != ROOT {
                chain.push(at);
                if at == name {
                    return Err(format!("accounts.{name}.parent: a cycle, {}", chain.join(" → ")));
                }
                at = self.accounts[at].parent.as_str();
                if chain.len() > self.accounts.len() + 1 {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Each user's default account: the one of `[users.NAME]`, else the only one they are in.
    fn read_defaults(&mut self, users: &BTreeMap<String, UserTable>) -> Result<(), String> {
        for (name, table) in users {
            let uid = crate::identity::user_uid(name).ok_or_else(|| format!("users.{name}: no such user '{name}'"))?;
            if let Some(qos) = &table.default_qos {
                self.default_qos.insert(uid, qos.clone());
            }
            if let Some(default) = &table.default_account {
                if !self.users.contains_key(&(default.clone(), uid)) {
                    return Err(format!(
                        "users.{name}.default_account: '{default}' is not among the accounts that list {name}"
                    ));
                }
                self.defaults.insert(uid, default.clone());
            }
        }
        let mut in_accounts: BTreeMap<u32, BTreeSet<&str>> = BTreeMap::new();
        for (account, uid) in self.users.keys() {
            in_accounts.entry(*uid).or_default().insert(account);
        }
        for (uid, accounts) in in_accounts {
            if self.defaults.contains_key(&uid) {
                continue;
            }
            if accounts.len() > 1 {
                let name = crate::identity::user_name(uid);
                let list: Vec<&str> = accounts.into_iter().collect();
                return Err(format!(
                    "users.{name}: {name} is in accounts {}: give [users.{name}] default_account",
                    list.join(", ")
                ));
            }
            let only = accounts.into_iter().next().expect("a user listed is in an account");
            self.defaults.insert(uid, only.to_string());
        }
        Ok(())
    }

    /// The accounts from `account` up to (not including) root, nearest first.
    pub fn ancestors<'a>(&'a self, account: &'a str) -> impl Iterator<Item = &'a str> {
        std::iter::successors(Some(account), |a| self.accounts.get(*a).map(|x| x.parent.as_str()))
            .take_while(|a| *a != ROOT)
            .take(self.accounts.len() + 1)
    }
}

impl Account {
    fn under(parent: &str, name: &str, fairshare: u32) -> Account {
        Account {
            parent: parent.into(),
            fairshare,
            description: name.into(),
            // sacctmgr's default: "Parent/Account Name", the account's own under root.
            organization: if parent == ROOT { name.into() } else { parent.into() },
            qos: None,
            default_qos: None,
        }
    }
}

/// Why a job may not run in the QOS it asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QosRefused {
    /// No QOS has that name.
    Unknown(String),
    /// It exists, but the account does not offer it; the ones it offers.
    NotOffered(String, Vec<String>),
}

impl AccountTree {
    /// The QOS a job of `uid` charged to `account` runs in: the one it `asked` for, when
    /// the account offers it, else the user's or the account's default, else `normal`.
    pub fn qos_for(
        &self,
        qos: &super::qos::QosList,
        uid: u32,
        account: &str,
        asked: Option<&str>,
    ) -> Result<String, QosRefused> {
        let offered = self.offered_qos(account);
        let offers = |name: &str| offered.is_none_or(|list| list.iter().any(|q| q == name));
        match asked.filter(|a| !a.is_empty()) {
            Some(name) if qos.get(name).is_none() => Err(QosRefused::Unknown(name.to_string())),
            Some(name) if !offers(name) => {
                Err(QosRefused::NotOffered(name.to_string(), offered.cloned().unwrap_or_default()))
            }
            Some(name) => Ok(name.to_string()),
            None => {
                let default = self.default_qos.get(&uid).or_else(|| self.account_default_qos(account));
                Ok(match (default, offered) {
                    (Some(d), _) => d.clone(),
                    (None, Some(list)) if !list.iter().any(|q| q == super::qos::NORMAL) => {
                        list.first().cloned().unwrap_or_else(|| super::qos::NORMAL.into())
                    }
                    _ => super::qos::NORMAL.into(),
                })
            }
        }
    }

    /// Every QOS the accounts and users name exists in `qos`; `Err` names the key.
    pub fn check_qos(&self, qos: &super::qos::QosList) -> Result<(), String> {
        for (name, a) in &self.accounts {
            for q in a.qos.iter().flatten() {
                if qos.get(q).is_none() {
                    return Err(format!("accounts.{name}.qos: '{q}' is no QOS"));
                }
            }
            if let Some(q) = a.default_qos.as_ref().filter(|q| qos.get(q).is_none()) {
                return Err(format!("accounts.{name}.default_qos: '{q}' is no QOS"));
            }
        }
        for q in self.root.qos.iter().flatten().chain(self.root.default_qos.iter()) {
            if qos.get(q).is_none() {
                return Err(format!("accounts.root: '{q}' is no QOS"));
            }
        }
        for (uid, q) in &self.default_qos {
            if qos.get(q).is_none() {
                return Err(format!("users.{}.default_qos: '{q}' is no QOS", crate::identity::user_name(*uid)));
            }
        }
        Ok(())
    }
}

fn names(key: &str, value: &toml::Value) -> Result<Vec<String>, String> {
    value
        .as_array()
        .and_then(|list| list.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
        .ok_or_else(|| format!("{key}: give a list of names"))
}

fn is_name(name: &str) -> bool {
    !name.is_empty() && !name.contains([',', ' ', '\'', '"', '='])
}

fn text(key: &str, value: &toml::Value) -> Result<String, String> {
    value.as_str().map(str::to_string).ok_or_else(|| format!("{key}: give a string"))
}

fn shares(key: &str, value: &toml::Value) -> Result<u32, String> {
    let n = value.as_integer().ok_or_else(|| format!("{key}: give a whole number of shares"))?;
    if !(0..=MAX_SHARES).contains(&n) {
        return Err(format!("{key} = {n} is out of range: 0 to {MAX_SHARES}"));
    }
    Ok(n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<AccountTree, String> {
        #[derive(serde::Deserialize)]
        struct File {
            accounts: toml::Table,
            #[serde(default)]
            users: BTreeMap<String, UserTable>,
        }
        let f: File = toml::from_str(text).expect("valid TOML");
        AccountTree::read(&f.accounts, &f.users)
    }

    #[test]
    fn a_tree_reads_with_shares_parents_and_defaults() {
        let t = read(
            "[accounts.physics]\nfairshare = 2\nusers = [\"root\"]\n\
             [accounts.theory]\nparent = \"physics\"\nusers = { root = 3 }\n\
             [users.root]\ndefault_account = \"theory\"",
        )
        .unwrap();
        assert_eq!(t.accounts["physics"].fairshare, 2);
        assert_eq!(t.accounts["theory"].parent, "physics");
        assert_eq!(t.users[&("theory".to_string(), 0)], 3);
        assert_eq!(t.charges()[&0], ["theory", "physics"]);
        assert_eq!(t.ancestors("theory").collect::<Vec<_>>(), ["theory", "physics"]);
    }

    #[test]
    fn the_older_form_still_reads() {
        let t = read("[accounts]\nroot = [\"chem\", \"physics\"]").unwrap();
        assert_eq!(t.charges()[&0], ["chem", "physics"]);
        assert_eq!(t.accounts["physics"], Account::under(ROOT, "physics", 1));
    }

    #[test]
    fn trees_that_cannot_be_are_refused_naming_the_key() {
        for (text, says) in [
            ("[accounts.a]\nparent = \"b\"\n[accounts.b]\nparent = \"a\"", "accounts.a.parent: a cycle, a → b → a"),
            ("[accounts.a]\nparent = \"a\"", "accounts.a.parent: a cycle"),
            ("[accounts.a]\nparent = \"nowhere\"", "accounts.a.parent: 'nowhere' is no account"),
            ("[accounts.a]\nfairshare = -1", "accounts.a.fairshare = -1 is out of range"),
            ("[accounts.root]\nfairshare = 1", "accounts.root.fairshare: root is the tree's top"),
            ("[accounts.a]\nshares = 1", "accounts.a.shares: unknown key"),
            ("[accounts.a]\nusers = [\"no-such-user-here\"]", "no such user 'no-such-user-here'"),
            ("[accounts.a]\nusers = [\"root\"]\n[accounts.b]\nusers = [\"root\"]", "give [users.root] default_account"),
            ("[accounts]\nroot = [\"a\"]\n[accounts.b]\nfairshare = 1", "not both"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
