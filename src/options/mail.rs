//! `--mail-type`: the job events a user asks to be told of, as Slurm spells them on the
//! command line (`BEGIN,END,TIME_LIMIT_80`) and as slurmrestd's `mail_type` flags do
//! (`["BEGIN", "END", "TIME=80%"]`). One set of bits serves both, the client's options and
//! the daemon's job.

use serde::{Deserialize, Serialize};

/// One event a job may notify of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailEvent {
    /// Its bit.
    bit: u16,
    /// The command line's word (`TIME_LIMIT_80`), which `print` uses too.
    word: &'static str,
    /// slurmrestd's flag name (`TIME=80%`).
    flag: &'static str,
}

/// The job started.
pub const BEGIN: MailEvent = MailEvent { bit: 1 << 0, word: "BEGIN", flag: "BEGIN" };
/// The job ended (completed or cancelled).
pub const END: MailEvent = MailEvent { bit: 1 << 1, word: "END", flag: "END" };
/// The job failed (failed, timed out, out of memory, node failure, preempted for good).
pub const FAIL: MailEvent = MailEvent { bit: 1 << 2, word: "FAIL", flag: "FAIL" };
/// The job was requeued.
pub const REQUEUE: MailEvent = MailEvent { bit: 1 << 3, word: "REQUEUE", flag: "REQUEUE" };
/// The job reached its time limit.
pub const TIME100: MailEvent = MailEvent { bit: 1 << 4, word: "TIME_LIMIT", flag: "TIME=100%" };
/// The job reached 90% of its time limit.
pub const TIME90: MailEvent = MailEvent { bit: 1 << 5, word: "TIME_LIMIT_90", flag: "TIME=90%" };
/// The job reached 80% of its time limit.
pub const TIME80: MailEvent = MailEvent { bit: 1 << 6, word: "TIME_LIMIT_80", flag: "TIME=80%" };
/// The job reached 50% of its time limit.
pub const TIME50: MailEvent = MailEvent { bit: 1 << 7, word: "TIME_LIMIT_50", flag: "TIME=50%" };
/// Burst buffer stage-out: accepted, never sent (no burst buffers here).
pub const STAGE_OUT: MailEvent = MailEvent { bit: 1 << 8, word: "STAGE_OUT", flag: "STAGE_OUT" };
/// Each task of an array notifies on its own, rather than the array as a whole.
pub const ARRAY_TASKS: MailEvent = MailEvent { bit: 1 << 9, word: "ARRAY_TASKS", flag: "ARRAY_TASKS" };
/// The job's dependency can never be satisfied.
pub const INVALID_DEPEND: MailEvent = MailEvent { bit: 1 << 10, word: "INVALID_DEPEND", flag: "INVALID_DEPENDENCY" };

/// Every event, in the order Slurm's `print_mail_type` lists them.
const ALL_EVENTS: [MailEvent; 11] =
    [ARRAY_TASKS, INVALID_DEPEND, BEGIN, END, FAIL, REQUEUE, STAGE_OUT, TIME50, TIME80, TIME90, TIME100];

/// The time-limit fractions, each with the percent of the limit at which it is sent.
pub const TIME_FRACTIONS: [(MailEvent, u64); 4] = [(TIME50, 50), (TIME80, 80), (TIME90, 90), (TIME100, 100)];

impl MailEvent {
    /// What Slurm's subject line calls it (`Began`, `Reached 80% of time limit`).
    pub fn subject_word(self) -> &'static str {
        match self.bit {
            b if b == INVALID_DEPEND.bit => "Invalid dependency",
            b if b == BEGIN.bit => "Began",
            b if b == END.bit => "Ended",
            b if b == FAIL.bit => "Failed",
            b if b == REQUEUE.bit => "Requeued",
            b if b == STAGE_OUT.bit => "StageOut/Teardown",
            b if b == TIME100.bit => "Reached time limit",
            b if b == TIME90.bit => "Reached 90% of time limit",
            b if b == TIME80.bit => "Reached 80% of time limit",
            b if b == TIME50.bit => "Reached 50% of time limit",
            _ => "unknown",
        }
    }

    /// The command line's word for it (`TIME_LIMIT_80`).
    pub fn word(self) -> &'static str {
        self.word
    }
}

/// A set of [`MailEvent`]s; empty is `NONE`. Stored as its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MailTypes(u16);

/// Why a `--mail-type` value was refused: no word in it is one Slurm knows (Slurm's own
/// refusal, `Invalid --mail-type specification`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMailType;

/// A `--mail-type` value read: the events, and the words in it that name none (which
/// Slurm drops without a word; they are said here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedMailType {
    /// The events asked for.
    pub types: MailTypes,
    /// Words that name no event.
    pub unknown: Vec<String>,
}

impl MailTypes {
    /// No event.
    pub const NONE: MailTypes = MailTypes(0);

    /// Reads a command line value as Slurm's `parse_mail_type` does: comma-separated words,
    /// any case; `NONE` ends the list with nothing; `ALL` is BEGIN, END, FAIL, REQUEUE,
    /// STAGE_OUT and INVALID_DEPEND. A value with no known word is refused.
    pub fn parse(value: &str) -> Result<ParsedMailType, NoMailType> {
        let mut bits = 0u16;
        let mut unknown = Vec::new();
        for word in value.split(',').filter(|w| !w.is_empty()) {
            if word.eq_ignore_ascii_case("NONE") {
                return Ok(ParsedMailType { types: MailTypes::NONE, unknown });
            }
            if word.eq_ignore_ascii_case("ALL") {
                bits |= [BEGIN, END, FAIL, REQUEUE, STAGE_OUT, INVALID_DEPEND].iter().fold(0, |b, e| b | e.bit);
                continue;
            }
            match ALL_EVENTS.iter().find(|e| e.word.eq_ignore_ascii_case(word)) {
                Some(e) => bits |= e.bit,
                None => unknown.push(word.to_string()),
            }
        }
        if bits == 0 {
            return Err(NoMailType);
        }
        Ok(ParsedMailType { types: MailTypes(bits), unknown })
    }

    /// Reads slurmrestd's flags (`["BEGIN", "TIME=80%"]`); `Err` holds the first unknown.
    pub fn from_flags<S: AsRef<str>>(flags: &[S]) -> Result<MailTypes, String> {
        let mut bits = 0u16;
        for flag in flags {
            let flag = flag.as_ref();
            let event =
                ALL_EVENTS.iter().find(|e| e.flag.eq_ignore_ascii_case(flag) || e.word.eq_ignore_ascii_case(flag));
            bits |= event.ok_or_else(|| flag.to_string())?.bit;
        }
        Ok(MailTypes(bits))
    }

    /// slurmrestd's flags for these events.
    pub fn flags(self) -> Vec<String> {
        self.events().map(|e| e.flag.to_string()).collect()
    }

    /// As Slurm prints it (`BEGIN,END`, or `NONE`).
    pub fn print(self) -> String {
        if self.0 == 0 {
            return "NONE".into();
        }
        self.events().map(|e| e.word).collect::<Vec<_>>().join(",")
    }

    /// The events in the set, in Slurm's order.
    pub fn events(self) -> impl Iterator<Item = MailEvent> {
        ALL_EVENTS.into_iter().filter(move |e| self.has(*e))
    }

    /// Whether `event` is in the set.
    pub fn has(self, event: MailEvent) -> bool {
        self.0 & event.bit != 0
    }

    /// Whether the set is empty.
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read_in_any_case_and_all_is_slurms_six() {
        let p = MailTypes::parse("begin,End").unwrap();
        assert_eq!(p.types.print(), "BEGIN,END");
        assert!(p.unknown.is_empty());
        let all = MailTypes::parse("ALL").unwrap().types;
        assert_eq!(all.print(), "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT");
        assert_eq!(MailTypes::parse("TIME_LIMIT,ARRAY_TASKS").unwrap().types.print(), "ARRAY_TASKS,TIME_LIMIT");
    }

    #[test]
    fn none_empties_the_set_and_unknown_words_are_kept_to_be_said() {
        assert_eq!(MailTypes::parse("BEGIN,NONE,END").unwrap().types, MailTypes::NONE);
        let p = MailTypes::parse("END,FINISH").unwrap();
        assert_eq!(p.types.print(), "END");
        assert_eq!(p.unknown, ["FINISH"]);
        assert_eq!(MailTypes::parse("FINISH"), Err(NoMailType));
        assert_eq!(MailTypes::parse(""), Err(NoMailType));
    }

    #[test]
    fn rest_flags_round_trip() {
        let t = MailTypes::parse("BEGIN,TIME_LIMIT_80,INVALID_DEPEND").unwrap().types;
        assert_eq!(t.flags(), ["INVALID_DEPENDENCY", "BEGIN", "TIME=80%"]);
        assert_eq!(MailTypes::from_flags(&t.flags()), Ok(t));
        assert_eq!(MailTypes::from_flags(&["SOON"]), Err("SOON".to_string()));
        assert_eq!(TIME80.subject_word(), "Reached 80% of time limit");
    }
}
