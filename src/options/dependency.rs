//! Job dependencies: `--dependency=afterok:20:21,afterany:23`, `after:5+10`, `singleton`,
//! `afterok:1?afternotok:2`.

use super::OptionError;
use nom::branch::alt;
use nom::bytes::complete::{take_till, take_while1};
use nom::character::complete::{alpha1, char, digit1};
use nom::combinator::{map, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

/// The condition of one dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DepKind {
    /// `after`: the job has started (or was cancelled), plus an optional delay.
    After,
    /// `afterany`: the job has ended, in any state (a bare job id means this).
    AfterAny,
    /// `afterburstbuffer`: the job has ended and its burst buffer stage-out is done.
    AfterBurstBuffer,
    /// `aftercorr`: the task with the same index in the other array ended successfully.
    AfterCorr,
    /// `afternotok`: the job has ended in a failed state.
    AfterNotOk,
    /// `afterok`: the job has ended with exit code 0.
    AfterOk,
    /// `singleton`: no other job of this name and user is running or suspended.
    Singleton,
}

/// The dependency types and the names Slurm reads and writes for them.
const KINDS: &[(&str, DepKind)] = &[
    ("after", DepKind::After),
    ("afterany", DepKind::AfterAny),
    ("afterburstbuffer", DepKind::AfterBurstBuffer),
    ("aftercorr", DepKind::AfterCorr),
    ("afternotok", DepKind::AfterNotOk),
    ("afterok", DepKind::AfterOk),
    ("singleton", DepKind::Singleton),
];

impl DepKind {
    /// Slurm's name for the type (`afterok`).
    pub fn as_str(self) -> &'static str {
        match self {
            DepKind::After => "after",
            DepKind::AfterAny => "afterany",
            DepKind::AfterBurstBuffer => "afterburstbuffer",
            DepKind::AfterCorr => "aftercorr",
            DepKind::AfterNotOk => "afternotok",
            DepKind::AfterOk => "afterok",
            DepKind::Singleton => "singleton",
        }
    }

    /// The type named `name`, in any case (`afterOK`).
    pub fn from_name(name: &str) -> Option<DepKind> {
        KINDS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, k)| *k)
    }
}

impl std::fmt::Display for DepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One dependency: a condition on one job (or, for `singleton`, on none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DepItem {
    /// The condition.
    pub kind: DepKind,
    /// The job waited for; `None` only for `singleton`.
    pub job_id: Option<u32>,
    /// One task of an array job (`123_4`); `None` is the job (or the whole array) itself.
    pub array_task: Option<u32>,
    /// `123_*`: every task of array 123, as Slurm writes a dependency on a whole array.
    pub whole_array: bool,
    /// `after:id+minutes`: the delay after the job started; only `after` has one.
    pub delay_minutes: Option<u32>,
}

impl DepItem {
    /// The item in Slurm's form: `afterok:12`, `after:12_3+10`, `singleton`.
    pub fn to_slurm_string(&self) -> String {
        let Some(job) = self.job_id else {
            return self.kind.as_str().to_string();
        };
        let mut s = format!("{}:{job}", self.kind);
        if let Some(task) = self.array_task {
            s.push_str(&format!("_{task}"));
        } else if self.whole_array {
            s.push_str("_*");
        }
        if let Some(delay) = self.delay_minutes {
            s.push_str(&format!("+{delay}"));
        }
        s
    }
}

/// A parsed `--dependency` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DependencySpec {
    /// The dependencies, one job each (`afterok:1:2` is two items), in the order written.
    pub items: Vec<DepItem>,
    /// `?`-separated: any one item suffices; otherwise (`,`) all must hold.
    pub any: bool,
}

impl DependencySpec {
    /// The canonical form squeue and scontrol show (without their `(unfulfilled)` state
    /// marks): one job per item, joined by `?` when any suffices, else by `,`:
    /// `afterok:20,afterok:21,afterany:23`.
    pub fn to_slurm_string(&self) -> String {
        let sep = if self.any { "?" } else { "," };
        self.items.iter().map(DepItem::to_slurm_string).collect::<Vec<_>>().join(sep)
    }
}

/// What follows `_` in a job reference, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RawTask<'a> {
    /// `_4`
    Index(&'a str),
    /// `_*` (Slurm's whole array)
    Star,
    /// `_[1-3]` (Slurm's task list)
    List(&'a str),
}

/// `jobid[_task][+minutes]`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RawJob<'a> {
    id: &'a str,
    task: Option<RawTask<'a>>,
    delay: Option<&'a str>,
}

/// One item as written: `word[:job[:job…]]` or a bare job reference.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RawItem<'a> {
    Named(&'a str, Option<Vec<RawJob<'a>>>),
    Bare(RawJob<'a>),
}

fn job(i: &str) -> IResult<&str, RawJob<'_>> {
    let task = alt((
        map(digit1, RawTask::Index),
        map(char('*'), |_| RawTask::Star),
        map(delimited(char('['), take_till(|c| c == ']'), char(']')), RawTask::List),
    ));
    map((digit1, opt(preceded(char('_'), task)), opt(preceded(char('+'), digit1))), |(id, task, delay)| RawJob {
        id,
        task,
        delay,
    })
    .parse(i)
}

fn item(i: &str) -> IResult<&str, RawItem<'_>> {
    alt((
        map((alpha1, opt(preceded(char(':'), separated_list1(char(':'), job)))), |(w, jobs)| RawItem::Named(w, jobs)),
        map(job, RawItem::Bare),
    ))
    .parse(i)
}

/// Text up to the next separator, for naming what could not be read.
fn token(i: &str) -> &str {
    take_while1::<_, _, nom::error::Error<&str>>(|c| c != ',' && c != '?').parse(i).map(|(_, t)| t).unwrap_or(i)
}

/// Parses Slurm's `--dependency` list. Items are `after:id[+min][:id[+min]…]`,
/// `afterany:id[:id…]`, `afterburstbuffer:…`, `aftercorr:…`, `afternotok:…`, `afterok:…`
/// (type names in any case), `singleton`, or a bare job id (which means `afterany`). A job id
/// is `jobid`, `jobid_taskindex` (one task of an array) or `jobid_*` (every task of it). Items are separated by `,` (all
/// must hold) or `?` (any one suffices), not both. Each job becomes its own item, so
/// `afterok:1:2` gives two. An empty value (or `0`, as scontrol takes it) is no dependency.
///
/// What Slurm refuses, and what slurmlet does not take, is
/// [`OptionError::InvalidDependency`] with the reason in `why`: an unknown type, job id 0, a
/// delay other than on `after` (or of 0 minutes), mixed separators, a
/// task list `id_[1-3]`, and anything that is not the grammar above.
pub fn parse_dependency(text: &str) -> Result<DependencySpec, OptionError> {
    let fail = |why: String| OptionError::InvalidDependency { value: text.to_string(), why };
    let t = text.trim();
    let mut spec = DependencySpec::default();
    if t.is_empty() || t == "0" {
        return Ok(spec);
    }
    let mut rest = t;
    let mut sep: Option<char> = None;
    loop {
        let unreadable = || fail(format!("cannot read '{}' as a dependency", token(rest)));
        let (after, raw) = item(rest).map_err(|_| unreadable())?;
        let next = after.chars().next();
        if next.is_some_and(|c| c != ',' && c != '?') {
            return Err(unreadable());
        }
        push_item(&mut spec.items, raw).map_err(fail)?;
        let Some(c) = next else { break };
        match sep {
            Some(s) if s != c => {
                return Err(fail("',' (all must hold) and '?' (any one suffices) cannot be mixed in one list".into()))
            }
            _ => sep = Some(c),
        }
        rest = &after[1..];
        if rest.is_empty() {
            return Err(fail(format!("nothing follows the last '{c}'")));
        }
    }
    spec.any = sep == Some('?');
    Ok(spec)
}

/// Checks one written item and appends its dependencies, or says what is wrong with it.
fn push_item(out: &mut Vec<DepItem>, raw: RawItem<'_>) -> Result<(), String> {
    let (kind, jobs) = match raw {
        RawItem::Bare(j) => (DepKind::AfterAny, vec![j]),
        RawItem::Named(word, jobs) => {
            let kind = DepKind::from_name(word).ok_or_else(|| {
                let names: Vec<&str> = KINDS.iter().map(|(n, _)| *n).collect();
                format!("unknown dependency type '{word}' (expected one of {})", names.join(", "))
            })?;
            match (kind, jobs) {
                (DepKind::Singleton, None) => {
                    out.push(DepItem { kind, job_id: None, array_task: None, whole_array: false, delay_minutes: None });
                    return Ok(());
                }
                (DepKind::Singleton, Some(_)) => return Err("singleton takes no job ids".into()),
                (_, None) => return Err(format!("{kind} needs a job id ({kind}:jobid)")),
                (_, Some(jobs)) => (kind, jobs),
            }
        }
    };
    for j in jobs {
        let job_id = match j.id.parse::<u32>() {
            Ok(0) => return Err("job id 0 is not a job".into()),
            Ok(n) => n,
            Err(_) => return Err(format!("job id {} is too large", j.id)),
        };
        let whole_array = j.task == Some(RawTask::Star);
        let array_task = match j.task {
            None | Some(RawTask::Star) => None,
            Some(RawTask::Index(t)) => {
                Some(t.parse::<u32>().map_err(|_| format!("array task {job_id}_{t} is too large"))?)
            }
            Some(RawTask::List(l)) => {
                return Err(format!(
                    "task lists ({job_id}_[{l}]) are not taken here; list the tasks one by one \
                     ({job_id}_1:{job_id}_2)"
                ))
            }
        };
        let delay_minutes = match j.delay {
            None => None,
            Some(_) if kind != DepKind::After => {
                return Err(format!("only after: takes a delay (+minutes), not {kind}"));
            }
            Some(d) => match d.parse::<u32>() {
                Ok(0) => return Err("a delay (+minutes) must be at least 1 minute".into()),
                Ok(n) => Some(n),
                Err(_) => return Err(format!("the delay +{d} is too large")),
            },
        };
        out.push(DepItem { kind, job_id: Some(job_id), array_task, whole_array, delay_minutes });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::test_support::short_strings;
    use DepKind::*;

    fn on(kind: DepKind, job: u32) -> DepItem {
        DepItem { kind, job_id: Some(job), array_task: None, whole_array: false, delay_minutes: None }
    }

    fn task(kind: DepKind, job: u32, t: u32) -> DepItem {
        DepItem { array_task: Some(t), ..on(kind, job) }
    }

    fn delayed(job: u32, minutes: u32) -> DepItem {
        DepItem { delay_minutes: Some(minutes), ..on(After, job) }
    }

    const SINGLETON: DepItem =
        DepItem { kind: Singleton, job_id: None, array_task: None, whole_array: false, delay_minutes: None };

    #[test]
    fn slurm_forms() {
        let cases: Vec<(&str, Vec<DepItem>, bool, &str)> = vec![
            ("afterok:12", vec![on(AfterOk, 12)], false, "afterok:12"),
            ("after:5", vec![on(After, 5)], false, "after:5"),
            ("after:5+10", vec![delayed(5, 10)], false, "after:5+10"),
            (
                "after:5+10:6:7+1",
                vec![delayed(5, 10), on(After, 6), delayed(7, 1)],
                false,
                "after:5+10,after:6,after:7+1",
            ),
            ("afterany:3", vec![on(AfterAny, 3)], false, "afterany:3"),
            ("afterburstbuffer:3", vec![on(AfterBurstBuffer, 3)], false, "afterburstbuffer:3"),
            ("aftercorr:3", vec![on(AfterCorr, 3)], false, "aftercorr:3"),
            ("afternotok:3", vec![on(AfterNotOk, 3)], false, "afternotok:3"),
            ("singleton", vec![SINGLETON], false, "singleton"),
            ("SINGLETON", vec![SINGLETON], false, "singleton"),
            ("AfterOK:4", vec![on(AfterOk, 4)], false, "afterok:4"),
            ("afterok:1:2", vec![on(AfterOk, 1), on(AfterOk, 2)], false, "afterok:1,afterok:2"),
            (
                "afterok:20:21,afterany:23",
                vec![on(AfterOk, 20), on(AfterOk, 21), on(AfterAny, 23)],
                false,
                "afterok:20,afterok:21,afterany:23",
            ),
            (
                "afterok:20:21?afterany:23",
                vec![on(AfterOk, 20), on(AfterOk, 21), on(AfterAny, 23)],
                true,
                "afterok:20?afterok:21?afterany:23",
            ),
            ("afterok:12_4", vec![task(AfterOk, 12, 4)], false, "afterok:12_4"),
            ("afterok:12_*", vec![DepItem { whole_array: true, ..on(AfterOk, 12) }], false, "afterok:12_*"),
            ("afterok:12_0:12_1", vec![task(AfterOk, 12, 0), task(AfterOk, 12, 1)], false, "afterok:12_0,afterok:12_1"),
            ("after:12_3+2", vec![DepItem { delay_minutes: Some(2), ..task(After, 12, 3) }], false, "after:12_3+2"),
            ("singleton,afterok:9", vec![SINGLETON, on(AfterOk, 9)], false, "singleton,afterok:9"),
            ("afterok:9?singleton", vec![on(AfterOk, 9), SINGLETON], true, "afterok:9?singleton"),
            // a bare job id is afterany
            ("123", vec![on(AfterAny, 123)], false, "afterany:123"),
            ("123,456", vec![on(AfterAny, 123), on(AfterAny, 456)], false, "afterany:123,afterany:456"),
            ("123_2", vec![task(AfterAny, 123, 2)], false, "afterany:123_2"),
            ("7,afterok:8", vec![on(AfterAny, 7), on(AfterOk, 8)], false, "afterany:7,afterok:8"),
            (" afterok:1 ", vec![on(AfterOk, 1)], false, "afterok:1"),
            ("afterok:4294967295", vec![on(AfterOk, u32::MAX)], false, "afterok:4294967295"),
            // no dependency
            ("", vec![], false, ""),
            ("0", vec![], false, ""),
        ];
        for (text, items, any, canonical) in cases {
            let got = parse_dependency(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
            assert_eq!(got, DependencySpec { items, any }, "{text:?}");
            assert_eq!(got.to_slurm_string(), canonical, "{text:?}");
            assert_eq!(parse_dependency(canonical).unwrap(), got, "{canonical:?} does not read back");
        }
    }

    #[test]
    fn bad_dependencies() {
        let cases: &[(&str, &str)] = &[
            ("afterok", "needs a job id"),
            ("afterok:", "cannot read"),
            ("afterok:x", "cannot read"),
            ("afterok:1:", "cannot read"),
            ("afterok::1", "cannot read"),
            ("afterok:-1", "cannot read"),
            ("afterok:+1", "cannot read"),
            ("afterok:0", "job id 0"),
            ("0,afterok:1", "job id 0"),
            ("afterok:99999999999", "too large"),
            ("afterok:1_99999999999", "too large"),
            ("afterok:1_", "cannot read"),
            ("afterok:1_x", "cannot read"),
            ("afterok:12_[1-3]", "task lists"),
            ("afterok:12_[1-3", "cannot read"),
            ("afterok:5+10", "only after"),
            ("afterany:5+1", "only after"),
            ("after:5+0", "at least 1"),
            ("after:5+", "cannot read"),
            ("after:5+x", "cannot read"),
            ("after:5+99999999999", "too large"),
            ("after:5-10", "cannot read"),
            ("afterfoo:1", "unknown dependency type 'afterfoo'"),
            ("expand:1", "unknown dependency type"),
            ("foo", "unknown dependency type"),
            ("singleton:1", "takes no job ids"),
            ("singletons", "unknown dependency type"),
            ("afterok:1,afterany:2?afterok:3", "cannot be mixed"),
            ("1?2,3", "cannot be mixed"),
            ("afterok:1,", "nothing follows"),
            ("afterok:1?", "nothing follows"),
            (",afterok:1", "cannot read"),
            ("afterok:1,,afterok:2", "cannot read"),
            ("afterok:1 afterok:2", "cannot read"),
            ("afterok:1;afterok:2", "cannot read"),
            ("afterok:1(unfulfilled)", "cannot read"),
            ("afterok 1", "cannot read"),
            ("afterok:１", "cannot read"),
            ("?", "cannot read"),
            (",", "cannot read"),
            ("00", "job id 0"),
        ];
        for (text, why) in cases {
            match parse_dependency(text) {
                Err(e @ OptionError::InvalidDependency { .. }) => {
                    assert_eq!(e.to_string(), "Job dependency problem");
                    let OptionError::InvalidDependency { value, why: got } = &e else { unreachable!() };
                    assert_eq!(value, text);
                    assert!(got.contains(why), "{text:?}: {got}");
                    assert_eq!(e.explanation(), Some(got.as_str()));
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn kind_names() {
        for (name, kind) in KINDS {
            assert_eq!(kind.as_str(), *name);
            assert_eq!(kind.to_string(), *name);
            assert_eq!(DepKind::from_name(&name.to_uppercase()), Some(*kind));
        }
        assert_eq!(DepKind::from_name("afterburst"), None);
        let no_job = DepItem { kind: AfterOk, job_id: None, array_task: None, whole_array: false, delay_minutes: None };
        assert_eq!(no_job.to_slurm_string(), "afterok");
        assert_eq!(DependencySpec::default().to_slurm_string(), "");
    }

    #[test]
    fn no_input_panics() {
        for s in short_strings("0a1:_*+,?[] é", 4) {
            let _ = parse_dependency(&s);
        }
        for s in short_strings("after:1_+,?", 5) {
            if let Ok(spec) = parse_dependency(&s) {
                assert_eq!(parse_dependency(&spec.to_slurm_string()), Ok(spec), "{s:?}");
            }
        }
    }
}
