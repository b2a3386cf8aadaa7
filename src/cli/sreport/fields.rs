//! The fields of `format=`: their names as Slurm matches them, headers and widths.

use super::units::{abbrev, TimeFormat};

/// What a field shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Account,
    Allocated,
    Cluster,
    Down,
    Idle,
    Login,
    OverComm,
    Planned,
    PlannedDown,
    Proper,
    Reported,
    TresCount,
    TresName,
    Used,
    Energy,
}

/// A field with its header and width (negative: left-justified).
#[derive(Debug, Clone, Copy)]
pub struct Col {
    /// What it shows.
    pub field: Field,
    /// Its header.
    pub name: &'static str,
    /// Its width.
    pub width: i32,
}

impl Field {
    /// Whether it holds an amount of TRES-seconds (its width follows the largest).
    pub fn is_usage(self) -> bool {
        !matches!(
            self,
            Field::Account | Field::Cluster | Field::Login | Field::Proper | Field::TresCount | Field::TresName
        )
    }
}

/// (word, shortest start, field, header, width, width with percentages), in Slurm's order.
const TABLE: &[(&str, usize, Field, &str, i32, i32)] = &[
    ("Accounts", 2, Field::Account, "Account", 15, 15),
    ("allocated", 2, Field::Allocated, "Allocated", 12, 20),
    ("Cluster", 2, Field::Cluster, "Cluster", 9, 9),
    ("down", 1, Field::Down, "Down", 10, 18),
    ("idle", 1, Field::Idle, "Idle", 12, 20),
    ("Login", 1, Field::Login, "Login", 9, 9),
    ("overcommitted", 1, Field::OverComm, "Over Comm", 9, 18),
    ("planned", 2, Field::Planned, "Planned", 9, 18),
    ("reserved", 3, Field::Planned, "Planned", 9, 18),
    ("PlannedDown", 2, Field::PlannedDown, "PLND Down", 10, 18),
    ("PLNDDown", 2, Field::PlannedDown, "PLND Down", 10, 18),
    ("Proper", 2, Field::Proper, "Proper Name", 15, 15),
    ("reported", 3, Field::Reported, "Reported", 12, 20),
    ("TresCount", 5, Field::TresCount, "TRES Count", 10, 10),
    ("cpucount", 2, Field::TresCount, "TRES Count", 10, 10),
    ("count", 2, Field::TresCount, "TRES Count", 10, 10),
    ("TresName", 5, Field::TresName, "TRES Name", 14, 14),
    ("Used", 1, Field::Used, "Used", 10, 18),
    ("Energy", 1, Field::Energy, "Energy", 10, 18),
];

/// The fields of a comma separated `format=` list (`name%width` sets a width). A name
/// Slurm knows but slurmlet cannot show (QOS, WCKey) is an error; an unknown one is said
/// as Slurm says it (` Unknown field 'x'`) and skipped, which makes the exit status 1.
pub fn parse(list: &str, time: TimeFormat, bad: &mut bool) -> Result<Vec<Col>, String> {
    let mut out = Vec::new();
    for item in list.split(',').filter(|s| !s.is_empty()) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n, w.parse::<i32>().ok().filter(|w| *w != 0)),
            None => (item, None),
        };
        if abbrev(name, "QOS", 1) || abbrev(name, "QOSID", 4) || abbrev(name, "WCKey", 2) {
            return Err(format!("format={name}: slurmlet keeps no QOS or WCKey usage for sreport"));
        }
        match TABLE.iter().find(|(w, min, ..)| abbrev(name, w, *min)) {
            Some(&(_, _, field, header, plain, per)) => {
                let w = if time.with_percent() { per } else { plain };
                out.push(Col { field, name: header, width: width.unwrap_or(w) });
            }
            None => {
                eprintln!(" Unknown field '{name}'");
                *bad = true;
            }
        }
    }
    Ok(out)
}
