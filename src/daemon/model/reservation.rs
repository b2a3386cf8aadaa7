//! An advance reservation (Slurm's `scontrol create reservation`): some of the node's CPUs
//! and GPUs set aside over a window of time for some users or accounts. Jobs that name it
//! (`--reservation`) run only on what it holds and only within its window; other jobs never
//! hold what it holds across its window.
//!
//! This is the record alone, with the rules that read nothing but it: who may use it, when
//! it is active, how a repeating one moves on, and how Slurm prints its flags and TRES.

use serde::{Deserialize, Serialize};

/// How many reservations the daemon keeps at once: each is read by every scheduling pass.
pub const MAX_RESERVATIONS: usize = 128;

/// The longest name, user or account list entry a reservation takes (bytes).
pub const MAX_NAME_LEN: usize = 128;

/// How many users or accounts one reservation lists at most.
pub const MAX_LIST_LEN: usize = 256;

/// A reservation flag the daemon implements, in the order Slurm prints them
/// (`reservation_flags_string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Flag {
    /// Maintenance: jobs kept off it wait with `ReqNodeNotAvail, Reserved for maintenance`,
    /// and it may overlap other reservations.
    Maint,
    /// It may overlap other reservations.
    Overlap,
    /// Made without regard to the jobs already running on what it holds.
    IgnoreJobs,
    /// Repeats every hour.
    Hourly,
    /// Repeats every day.
    Daily,
    /// Repeats on each weekday (Monday to Friday).
    Weekday,
    /// Repeats on each Saturday and Sunday.
    Weekend,
    /// Repeats every week.
    Weekly,
    /// It names its node (`Nodes=`).
    SpecNodes,
    /// It holds all of the node (`Nodes=ALL`).
    AllNodes,
    /// When it ends, the pending jobs that named it stay eligible (they are not held).
    NoHoldJobsAfterEnd,
}

/// Every flag, in Slurm's printing order.
pub const ALL_FLAGS: &[Flag] = &[
    Flag::Maint,
    Flag::Overlap,
    Flag::IgnoreJobs,
    Flag::Hourly,
    Flag::Daily,
    Flag::Weekday,
    Flag::Weekend,
    Flag::Weekly,
    Flag::SpecNodes,
    Flag::AllNodes,
    Flag::NoHoldJobsAfterEnd,
];

/// Flags Slurm has that the daemon does not implement: refused by name rather than taken and
/// ignored.
pub const UNSUPPORTED_FLAGS: &[&str] = &[
    "FLEX",
    "ANY_NODES",
    "STATIC",
    "PART_NODES",
    "TIME_FLOAT",
    "REPLACE",
    "REPLACE_DOWN",
    "PURGE_COMP",
    "MAGNETIC",
    "USER_DELETE",
    "FORCE_START",
    "SKIP",
    "DURATION_PLUS",
    "DURATION_MINUS",
];

impl Flag {
    /// Slurm's name.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Maint => "MAINT",
            Flag::Overlap => "OVERLAP",
            Flag::IgnoreJobs => "IGNORE_JOBS",
            Flag::Hourly => "HOURLY",
            Flag::Daily => "DAILY",
            Flag::Weekday => "WEEKDAY",
            Flag::Weekend => "WEEKEND",
            Flag::Weekly => "WEEKLY",
            Flag::SpecNodes => "SPEC_NODES",
            Flag::AllNodes => "ALL_NODES",
            Flag::NoHoldJobsAfterEnd => "NO_HOLD_JOBS_AFTER_END",
        }
    }

    /// The flag Slurm names `name` (any case; `IGNORE_JOB` and `SPEC_NODE` as Slurm's
    /// scontrol takes them too).
    pub fn from_name(name: &str) -> Option<Flag> {
        let upper = name.trim().to_ascii_uppercase();
        let upper = match upper.as_str() {
            "IGNORE_JOB" => "IGNORE_JOBS",
            "SPEC_NODE" => "SPEC_NODES",
            "NO_HOLD_JOBS" => "NO_HOLD_JOBS_AFTER_END",
            other => other,
        };
        ALL_FLAGS.iter().copied().find(|f| f.name() == upper)
    }

    /// Whether the flag makes the reservation repeat.
    pub fn repeats(self) -> bool {
        matches!(self, Flag::Hourly | Flag::Daily | Flag::Weekday | Flag::Weekend | Flag::Weekly)
    }
}

/// Who a list of users or accounts lets in: those it names, or (`Users=-bob`) all but them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Access {
    /// The names.
    pub names: Vec<String>,
    /// The names are the ones kept out.
    pub denied: bool,
}

impl Access {
    /// Whether the list says anything.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether `name` is let in by this list.
    pub fn admits(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name) != self.denied
    }

    /// The names as Slurm lists them: `alice`, or `-bob` for one kept out.
    pub fn entries(&self) -> Vec<String> {
        let sign = if self.denied { "-" } else { "" };
        self.names.iter().map(|n| format!("{sign}{n}")).collect()
    }

    /// As Slurm prints it: `alice,bob`, `-bob,-carol`, or `(null)`.
    pub fn shown(&self) -> String {
        if self.names.is_empty() {
            return "(null)".into();
        }
        self.entries().join(",")
    }
}

/// One reservation, as the daemon keeps it (stored as JSON; every field has a default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reservation {
    /// `ReservationName`.
    pub name: String,
    /// Its place in the order reservations were made (they are listed so, as Slurm's are).
    pub seq: u64,
    /// When its window opens (UNIX seconds).
    pub start: u64,
    /// When its window closes (UNIX seconds, exclusive).
    pub end: u64,
    /// `Users=`.
    pub users: Access,
    /// `Accounts=`.
    pub accounts: Access,
    /// Its flags, in Slurm's printing order.
    pub flags: Vec<Flag>,
    /// CPUs it holds (a count: which ones a job gets is decided when it starts).
    pub cpus: u32,
    /// The GPUs it holds, by device index, ascending.
    pub gpus: Vec<u32>,
    /// It holds the whole node (`Nodes=`, `NodeCnt=`, or no `CoreCnt=` or `TRES=` given).
    pub whole_node: bool,
    /// The CPUs it holds by id, for one that holds CPUs rather than the node (Slurm's
    /// `CoreIDs`).
    pub core_ids: Vec<u32>,
    /// `PartitionName=` (empty: none).
    pub partition: String,
    /// `Comment=`.
    pub comment: String,
}

impl Reservation {
    /// Whether it has `flag`.
    pub fn has(&self, flag: Flag) -> bool {
        self.flags.contains(&flag)
    }

    /// Whether its window is open at `now`.
    pub fn active(&self, now: u64) -> bool {
        self.start <= now && now < self.end
    }

    /// Whether its window overlaps `[from, to)`.
    pub fn overlaps(&self, from: u64, to: u64) -> bool {
        self.start < to && from < self.end
    }

    /// Whether user `user`, charging account `account`, may use it. A user admitted by name
    /// may use it with any account; one not named needs an admitted account. A reservation
    /// that lists only users kept out admits every other user.
    pub fn admits(&self, user: &str, account: &str) -> bool {
        // root may use any reservation.
        if user == "root" {
            return true;
        }
        let by_user = !self.users.is_empty() && !self.users.denied && self.users.admits(user);
        let by_account = !self.accounts.is_empty() && self.accounts.admits(account);
        let users_only_denied = self.users.denied && self.accounts.is_empty();
        if self.users.denied && !self.users.admits(user) {
            return false;
        }
        by_user || by_account || users_only_denied
    }

    /// Its flags' names, in Slurm's printing order.
    pub fn flag_names(&self) -> Vec<&'static str> {
        ALL_FLAGS.iter().filter(|f| self.has(**f)).map(|f| f.name()).collect()
    }

    /// The flags as Slurm prints them (`MAINT,IGNORE_JOBS,DAILY`), `(null)` for none.
    pub fn flags_shown(&self) -> String {
        let shown = self.flag_names();
        if shown.is_empty() {
            "(null)".into()
        } else {
            shown.join(",")
        }
    }

    /// Its TRES as Slurm prints them: `cpu=4,gres/gpu=2`; one of the whole node counts its
    /// CPUs only, as Slurm's does.
    pub fn tres(&self) -> String {
        let mut out = format!("cpu={}", self.cpus);
        if !self.gpus.is_empty() && !self.whole_node {
            out.push_str(&format!(",gres/gpu={}", self.gpus.len()));
        }
        out
    }

    /// How long one window lasts, in seconds.
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// How far its window moves on when it closes, if it repeats: the next window of an
    /// `HOURLY`, `DAILY` or `WEEKLY` one starts an hour, a day or a week later; a `WEEKDAY`
    /// one skips to Monday after a Friday, a `WEEKEND` one to Saturday after a Sunday
    /// (`weekday_of_start`: 0 = Sunday … 6 = Saturday, in local time).
    pub fn repeat_step(&self, weekday_of_start: u32) -> Option<u64> {
        const HOUR: u64 = 3600;
        const DAY: u64 = 86_400;
        if self.has(Flag::Hourly) {
            Some(HOUR)
        } else if self.has(Flag::Daily) {
            Some(DAY)
        } else if self.has(Flag::Weekly) {
            Some(7 * DAY)
        } else if self.has(Flag::Weekday) {
            Some(match weekday_of_start {
                5 => 3 * DAY,
                6 => 2 * DAY,
                _ => DAY,
            })
        } else if self.has(Flag::Weekend) {
            Some(match weekday_of_start {
                6 => DAY,
                0 => 6 * DAY,
                d => (6 - d as u64) * DAY,
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resv(users: &[&str], denied: bool, accounts: &[&str]) -> Reservation {
        Reservation {
            users: Access { names: users.iter().map(|s| s.to_string()).collect(), denied },
            accounts: Access { names: accounts.iter().map(|s| s.to_string()).collect(), denied: false },
            ..Default::default()
        }
    }

    #[test]
    fn users_and_accounts_admit_as_slurm_reads_them() {
        let r = resv(&["alice"], false, &["physics"]);
        assert!(r.admits("alice", "chem"));
        assert!(r.admits("bob", "physics"));
        assert!(!r.admits("bob", "chem"));
        let denied = resv(&["bob"], true, &[]);
        assert!(denied.admits("alice", "chem"));
        assert!(!denied.admits("bob", "chem"));
        let denied_with_account = resv(&["bob"], true, &["physics"]);
        assert!(!denied_with_account.admits("bob", "physics"));
        assert!(denied_with_account.admits("alice", "physics"));
        assert!(!denied_with_account.admits("alice", "chem"));
    }

    #[test]
    fn flags_print_in_slurms_order() {
        let r = Reservation { flags: vec![Flag::Daily, Flag::Maint, Flag::IgnoreJobs], ..Default::default() };
        assert_eq!(r.flags_shown(), "MAINT,IGNORE_JOBS,DAILY");
        assert_eq!(Reservation::default().flags_shown(), "(null)");
        assert_eq!(Flag::from_name("ignore_job"), Some(Flag::IgnoreJobs));
        assert_eq!(Flag::from_name("FLEX"), None);
    }

    #[test]
    fn repeating_windows_move_on_as_their_flag_says() {
        let with = |f| Reservation { flags: vec![f], ..Default::default() };
        assert_eq!(with(Flag::Daily).repeat_step(3), Some(86_400));
        assert_eq!(with(Flag::Weekly).repeat_step(3), Some(7 * 86_400));
        assert_eq!(with(Flag::Weekday).repeat_step(5), Some(3 * 86_400), "Friday to Monday");
        assert_eq!(with(Flag::Weekday).repeat_step(2), Some(86_400));
        assert_eq!(with(Flag::Weekend).repeat_step(6), Some(86_400), "Saturday to Sunday");
        assert_eq!(with(Flag::Weekend).repeat_step(0), Some(6 * 86_400), "Sunday to Saturday");
        assert_eq!(with(Flag::Maint).repeat_step(0), None);
    }
}
