//! `scontrol show ENTITY [ID]`: picks the entity the way Slurm's scontrol does (each name may
//! be abbreviated down to a minimum length, in any case; `ENTITY=ID` works too) and hands
//! over to its module.

use super::{abbreviates, hostnames, Flags};

/// An entity `show` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entity {
    /// `config`.
    Config,
    /// `hostnames`.
    Hostnames,
    /// `hostlist`.
    Hostlist,
    /// `hostlistsorted`.
    HostlistSorted,
    /// `job`, `jobs`, `jobid`.
    Jobs,
    /// `node`, `nodes`.
    Nodes,
    /// `partition`, `partitions`, `partitionname`.
    Partitions,
    /// `reservation(s)`: there are none here.
    Reservations,
    /// `step`, `steps`.
    Steps,
    /// An entity Slurm has and slurmlet does not (its full name).
    Unsupported(&'static str),
}

/// The entity `tag` names, tried in Slurm's order with Slurm's minimum lengths.
pub fn entity(tag: &str) -> Option<Entity> {
    const TABLE: &[(&str, usize, Entity)] = &[
        ("aliases", 1, Entity::Unsupported("aliases")),
        ("bbstat", 2, Entity::Unsupported("bbstat")),
        ("dwstat", 2, Entity::Unsupported("dwstat")),
        ("burstbuffer", 2, Entity::Unsupported("burstbuffer")),
        ("assoc_mgr", 2, Entity::Unsupported("assoc_mgr")),
        ("cache", 2, Entity::Unsupported("cache")),
        ("config", 1, Entity::Config),
        ("daemons", 1, Entity::Unsupported("daemons")),
        ("federations", 1, Entity::Unsupported("federations")),
        ("frontendname", 1, Entity::Unsupported("frontendname")),
        ("hostnames", 5, Entity::Hostnames),
        ("hostlist", 5, Entity::Hostlist),
        ("hostlistsorted", 9, Entity::HostlistSorted),
        ("jobs", 1, Entity::Jobs),
        ("jobid", 1, Entity::Jobs),
        ("licenses", 2, Entity::Unsupported("licenses")),
        ("nodes", 1, Entity::Nodes),
        ("partitions", 2, Entity::Partitions),
        ("partitionname", 2, Entity::Partitions),
        ("reservations", 1, Entity::Reservations),
        ("reservationname", 1, Entity::Reservations),
        ("slurmd", 2, Entity::Unsupported("slurmd")),
        ("steps", 2, Entity::Steps),
        ("topology", 1, Entity::Unsupported("topology")),
    ];
    TABLE.iter().find(|(word, min, _)| abbreviates(tag, word, *min)).map(|(_, _, e)| *e)
}

/// Runs `scontrol <keyword> WORDS…` for the `show` keyword `keyword`; `argv` is the whole
/// command line, for `--json`.
pub fn run(keyword: &str, words: &[String], flags: Flags, argv: &[String]) -> i32 {
    let complain = |text: String| {
        if !flags.quiet {
            eprintln!("{text}");
        }
        1
    };
    let Some(first) = words.first() else {
        return complain(format!("too few arguments for keyword:{keyword}"));
    };
    if words.len() > 2 {
        return complain(format!("too many arguments for keyword:{keyword}"));
    }
    let (tag, value) = match first.split_once('=') {
        Some((tag, value)) => (tag, Some(value)),
        None => (first.as_str(), words.get(1).map(String::as_str)),
    };
    match entity(tag) {
        Some(Entity::Config) => super::config::run(),
        Some(Entity::Hostnames) => hostnames::hostnames(value).emit(),
        Some(Entity::Hostlist) => hostnames::hostlist(value, false).emit(),
        Some(Entity::HostlistSorted) => hostnames::hostlist(value, true).emit(),
        Some(Entity::Jobs) => super::show_job::run(value, flags, argv),
        Some(Entity::Nodes) => super::show_node::run(value, flags, argv),
        Some(Entity::Partitions) => super::show_partition::run(value, flags, argv),
        Some(Entity::Steps) => super::show_step::run(value, flags, argv),
        Some(Entity::Reservations) => super::reservation::show(value, flags.one_liner, flags.json, flags.quiet),
        Some(Entity::Unsupported(name)) => {
            if !flags.quiet {
                crate::cli::error("scontrol", &format!("show {name}: not supported by slurmlet"));
            }
            1
        }
        None => complain(format!("invalid entity:{tag} for keyword:{keyword} ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_match_as_in_slurm() {
        assert_eq!(entity("job"), Some(Entity::Jobs));
        assert_eq!(entity("j"), Some(Entity::Jobs));
        assert_eq!(entity("JOBID"), Some(Entity::Jobs));
        assert_eq!(entity("nodes"), Some(Entity::Nodes));
        assert_eq!(entity("node"), Some(Entity::Nodes));
        assert_eq!(entity("partition"), Some(Entity::Partitions));
        assert_eq!(entity("pa"), Some(Entity::Partitions));
        assert_eq!(entity("p"), None, "too short to tell");
        assert_eq!(entity("c"), Some(Entity::Config), "cache needs two letters");
        assert_eq!(entity("config"), Some(Entity::Config));
        assert_eq!(entity("hostnames"), Some(Entity::Hostnames));
        assert_eq!(entity("hostn"), Some(Entity::Hostnames));
        assert_eq!(entity("host"), None);
        assert_eq!(entity("hostl"), Some(Entity::Hostlist));
        assert_eq!(entity("hostlist"), Some(Entity::Hostlist));
        assert_eq!(entity("hostlistsorted"), Some(Entity::HostlistSorted));
        assert_eq!(entity("hostlists"), Some(Entity::HostlistSorted));
        assert_eq!(entity("steps"), Some(Entity::Steps));
        assert_eq!(entity("step"), Some(Entity::Steps));
        assert_eq!(entity("st"), Some(Entity::Steps));
        assert_eq!(entity("res"), Some(Entity::Reservations));
        assert_eq!(entity("bogus"), None);
        assert_eq!(entity("jobsx"), None);
    }
}
