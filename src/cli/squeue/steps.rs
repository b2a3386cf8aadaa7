//! `squeue -s/--steps[=STEP_LIST]`: the steps of the running jobs, one a line, as Slurm's
//! squeue prints them (`print_steps_array`): its own default format, its own `-o` codes and
//! `-O` names, sorted by partition and step id unless `-S` says otherwise. A step of an array
//! task is named `A_T.S`.

use super::{parse_job_ids, split_list, SqueueArgs, CMD};
use crate::api::acct::StepId;
use crate::api::step_info::StepInfo;
use crate::cli::format::{self, Field, Token};
use crate::options::time::{format_elapsed, format_limit};

/// The default `-s` format.
pub const STEP_FORMAT: &str = "%.15i %.8j %.9P %.8u %.9M %N";

/// The default `-s` sort: partition, then step id.
const STEP_SORT: &str = "P,i";

/// A column of the step view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    StepId,
    Name,
    Partition,
    User,
    Uid,
    TimeUsed,
    TimeLimit,
    Nodes,
    Start,
    Tasks,
    TresPerNode,
    Cpus,
    JobId,
    ArrayJobId,
    ArrayTaskId,
    State,
}

/// Every column: its `-O` name, its `-o` code (if it has one) and its header, as Slurm's
/// `fmt_data_step` and `_print_step_*` name them.
const COLUMNS: &[(&str, Option<char>, &str, Column)] = &[
    ("StepId", Some('i'), "STEPID", Column::StepId),
    ("StepName", Some('j'), "NAME", Column::Name),
    ("Partition", Some('P'), "PARTITION", Column::Partition),
    ("UserName", Some('u'), "USER", Column::User),
    ("UserId", Some('U'), "UID", Column::Uid),
    ("TimeUsed", Some('M'), "TIME", Column::TimeUsed),
    ("TimeLimit", Some('l'), "TIME_LIMIT", Column::TimeLimit),
    ("Nodes", Some('N'), "NODELIST", Column::Nodes),
    ("StartTime", Some('S'), "START_TIME", Column::Start),
    ("NumTasks", Some('A'), "TASKS", Column::Tasks),
    // Slurm's header for it says TRES_PER_JOB.
    ("tres-per-node", Some('b'), "TRES_PER_JOB", Column::TresPerNode),
    ("NumCPUs", None, "NUM_CPUS", Column::Cpus),
    ("JobId", None, "JOB_ID", Column::JobId),
    ("ArrayJobId", None, "ARRAY_JOB_ID", Column::ArrayJobId),
    ("ArrayTaskId", None, "ARRAY_TASK_ID", Column::ArrayTaskId),
    ("StepState", None, "STATE", Column::State),
];

/// The column a format field names.
fn column(f: &Field) -> Option<(&'static str, Column)> {
    let mut chars = f.key.chars();
    let found = match (chars.next(), chars.next()) {
        (Some(c), None) => COLUMNS.iter().find(|(_, code, _, _)| *code == Some(c)),
        _ => COLUMNS.iter().find(|(name, _, _, _)| name.eq_ignore_ascii_case(&f.key)),
    };
    found.map(|&(_, _, title, col)| (title, col))
}

/// One entry of a step list: `J.S` or `A_T.S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepSelection {
    /// The job (or array) id.
    pub job: u32,
    /// The array task.
    pub task: Option<u32>,
    /// The step.
    pub step: StepId,
}

impl StepSelection {
    /// Whether it names `s`.
    pub fn selects(&self, s: &StepInfo) -> bool {
        self.step == s.step && s.of_job(self.job, self.task)
    }
}

/// Parses a step list (`5.0,7_2.batch`) as Slurm's squeue reads `-s`; the error is Slurm's.
pub fn parse_step_list(list: &str) -> Result<Vec<StepSelection>, String> {
    list.split(',').filter(|w| !w.is_empty()).map(parse_step).collect()
}

fn parse_step(word: &str) -> Result<StepSelection, String> {
    let Some((job_text, rest)) = word.split_once('.') else {
        return Err(format!("Invalid job_step id: {word}.??"));
    };
    let step_text = rest.split('.').next().unwrap_or(rest);
    let bad = || format!("Invalid job_step id: {job_text}.{step_text}");
    let (job, task) = match job_text.split_once('_') {
        Some((job, task)) => (job, Some(task.parse::<u32>().map_err(|_| bad())?)),
        None => (job_text, None),
    };
    let job = job.parse::<u32>().ok().filter(|&j| j > 0).ok_or_else(bad)?;
    let step = match step_text {
        s if s.eq_ignore_ascii_case("batch") => StepId::Batch,
        s if s.eq_ignore_ascii_case("extern") => StepId::Extern,
        s if s.eq_ignore_ascii_case("interactive") => StepId::Interactive,
        s => StepId::Number(s.parse().map_err(|_| bad())?),
    };
    Ok(StepSelection { job, task, step })
}

/// What `-s` lists: the step list, `-j`, `-u`/`--me` and `-p`.
#[derive(Debug, Default)]
pub struct StepFilter {
    /// `-s STEP_LIST`.
    pub steps: Option<Vec<StepSelection>>,
    /// `-j`: jobs `(id, task)`.
    pub jobs: Option<Vec<(u32, Option<u32>)>>,
    /// `-u`, `--me`.
    pub users: Option<Vec<u32>>,
    /// `-p`.
    pub partitions: Option<Vec<String>>,
}

impl StepFilter {
    /// Whether `s` is listed (Slurm's `_filter_step`).
    pub fn keeps(&self, s: &StepInfo) -> bool {
        self.steps.as_ref().is_none_or(|l| l.iter().any(|sel| sel.selects(s)))
            && self.jobs.as_ref().is_none_or(|l| l.iter().any(|&(j, t)| s.of_job(j, t)))
            && self.users.as_ref().is_none_or(|l| l.contains(&s.user_id))
            && self.partitions.as_ref().is_none_or(|l| l.contains(&s.partition))
    }
}

/// Sorts `steps` by `spec` (`-S`: `P,i`, `-M`, …) as Slurm's `sort_step_list` does: the last
/// key first, each sort keeping the order of what it finds equal. Keys it does not know are
/// passed over.
pub fn sort_steps(steps: &mut [StepInfo], spec: &str, now: u64) {
    let keys: Vec<char> = spec.chars().collect();
    for i in (0..keys.len()).rev() {
        let key = keys[i];
        let reverse = i > 0 && keys[i - 1] == '-';
        let ordering = |a: &StepInfo, b: &StepInfo| match key {
            'i' => (a.job_id, a.step.raw()).cmp(&(b.job_id, b.step.raw())),
            'N' => a.nodes.cmp(&b.nodes),
            'P' => a.partition.cmp(&b.partition),
            'l' => a.time_limit.unwrap_or(u32::MAX).cmp(&b.time_limit.unwrap_or(u32::MAX)),
            'S' => a.start_time.cmp(&b.start_time),
            'M' => a.run_time(now).cmp(&b.run_time(now)),
            'u' => a.user_name.cmp(&b.user_name),
            'U' => a.user_id.cmp(&b.user_id),
            _ => std::cmp::Ordering::Equal,
        };
        if reverse {
            steps.sort_by(|a, b| ordering(b, a));
        } else {
            steps.sort_by(ordering);
        }
    }
}

/// A parsed step format, and the errors Slurm reports about its fields (printed, not fatal).
#[derive(Debug)]
pub struct StepFormat {
    /// The fields and text, those Slurm does not know left out (`-O`) or printed as written
    /// (`-o`).
    pub tokens: Vec<Token>,
    /// `Invalid job step format specification: …` for each field it does not know.
    pub errors: Vec<String>,
}

/// The step format `-o`/`-O` give, else [`STEP_FORMAT`] (`SQUEUE_FORMAT` does not apply).
pub fn step_format(args: &SqueueArgs) -> StepFormat {
    let invalid = |what: &str| format!("Invalid job step format specification: {what}");
    let mut errors = Vec::new();
    if let Some(long) = &args.format_long {
        let names = long.split(',').map(str::trim).filter(|s| !s.is_empty());
        let mut tokens = Vec::new();
        for (token, name) in format::parse_long(long, 20).into_iter().zip(names) {
            match &token {
                Token::Field(f) if column(f).is_none() => errors.push(invalid(name.split(':').next().unwrap_or(name))),
                _ => tokens.push(token),
            }
        }
        return StepFormat { tokens, errors };
    }
    let text = args.format.as_deref().unwrap_or(STEP_FORMAT);
    let tokens = format::parse(text)
        .into_iter()
        .map(|t| match t {
            Token::Field(f) if column(&f).is_none() => {
                errors.push(invalid(&f.key));
                let width = if f.width > 0 { f.width.to_string() } else { String::new() };
                Token::Literal(format!("%{}{width}{}", if f.right { "." } else { "" }, f.key))
            }
            t => t,
        })
        .collect();
    StepFormat { tokens, errors }
}

/// The header line of `tokens` (`START_TIME` is always left-justified, as in Slurm).
pub fn header(tokens: &[Token]) -> String {
    let tokens: Vec<Token> = tokens
        .iter()
        .map(|t| match t {
            Token::Field(f) if column(f).map(|(_, c)| c) == Some(Column::Start) => {
                Token::Field(Field { right: false, ..f.clone() })
            }
            t => t.clone(),
        })
        .collect();
    format::render(&tokens, |f| column(f).map_or("", |(title, _)| title))
}

/// The line of step `s` at UNIX time `now`.
pub fn line(tokens: &[Token], s: &StepInfo, now: u64) -> String {
    format::render(tokens, |f| column(f).map_or_else(String::new, |(_, c)| value(c, s, now)))
}

fn or_null(text: &str) -> String {
    if text.is_empty() {
        "(null)".into()
    } else {
        text.into()
    }
}

fn value(column: Column, s: &StepInfo, now: u64) -> String {
    match column {
        Column::StepId => s.display_id(),
        Column::Name => s.name.clone(),
        Column::Partition => s.partition.clone(),
        Column::User => s.user_name.clone(),
        Column::Uid => s.user_id.to_string(),
        Column::TimeUsed => format_elapsed(s.run_time(now)),
        Column::TimeLimit => format_limit(s.time_limit),
        Column::Nodes => s.nodes.clone(),
        Column::Start if s.start_time > 0 => crate::sys::format_local_time(s.start_time),
        Column::Start => "N/A".into(),
        Column::Tasks => s.tasks.to_string(),
        Column::TresPerNode => or_null(&s.tres_per_node),
        Column::Cpus => s.cpus.to_string(),
        Column::JobId => s.job_id.to_string(),
        Column::ArrayJobId => s.array_job_id.to_string(),
        Column::ArrayTaskId => s.array_task_id.map_or_else(|| "N/A".into(), |t| t.to_string()),
        Column::State => s.state.clone(),
    }
}

/// Runs `squeue -s`: `users` are the uids `-u`/`--me` name (`bad_user` the first name that
/// is none); `argv` is the command line, which `--json` prints in its `meta`.
pub fn run(args: &SqueueArgs, users: Option<Vec<u32>>, bad_user: Option<&str>, argv: &[String]) -> i32 {
    let list = args.steps.as_deref().filter(|l| !l.is_empty()).or(args.operand.as_deref());
    let steps = match list.map(parse_step_list).transpose() {
        Ok(s) => s,
        Err(e) => {
            crate::cli::error(CMD, &e);
            return 1;
        }
    };
    let jobs = match args.jobs.as_deref().map(parse_job_ids).transpose() {
        Ok(j) => j.map(|(ids, tasks)| {
            ids.into_iter().map(|j| (j, None)).chain(tasks.into_iter().map(|[a, t]| (a, Some(t)))).collect()
        }),
        Err(bad) => {
            crate::cli::error(CMD, &format!("Invalid job id: {bad}"));
            return 1;
        }
    };
    let format = step_format(args);
    for e in &format.errors {
        crate::cli::error(CMD, e);
    }
    let filter = StepFilter { steps, jobs, users, partitions: split_list(args.partition.as_deref()) };
    let client = match crate::cli::connect(CMD) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reply = match client.steps("squeue --steps") {
        Ok(r) => r,
        Err(e) => {
            crate::cli::error(CMD, &e.to_string());
            return 1;
        }
    };
    if let Some(e) = reply.errors.first() {
        eprintln!("slurm_get_job_steps error: {}", e.error);
        return 1;
    }
    let now = crate::sys::now();
    let mut steps: Vec<StepInfo> = reply.steps.into_iter().filter(|s| filter.keeps(s)).collect();
    if args.json {
        // The steps in the daemon's order, whatever -S says, as squeue --json lists jobs.
        if let Some(name) = bad_user {
            eprintln!("{CMD}: error: Invalid user: {name}\n");
            steps.clear();
        }
        let mut doc = crate::api::step_list::StepList::of(&steps, reply.meta, now);
        crate::cli::scontrol::json::stamp(&mut doc.meta, argv);
        crate::cli::scontrol::json::print(&doc);
        return 0;
    }
    let sort = args.sort.clone().or_else(|| std::env::var("SQUEUE_SORT").ok());
    sort_steps(&mut steps, sort.as_deref().unwrap_or(STEP_SORT), now);
    if args.long {
        format::emit(&format::date_line(now));
    }
    if let Some(name) = bad_user {
        eprintln!("{CMD}: error: Invalid user: {name}\n");
    }
    if !args.noheader {
        format::emit(&header(&format.tokens));
    }
    if bad_user.is_some() {
        return 0;
    }
    let mut text = String::new();
    for s in &steps {
        text.push_str(&line(&format.tokens, s, now));
        text.push('\n');
    }
    format::emit_text(&text);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_795_311_682;

    fn step(job: u32, array: u32, task: Option<u32>, step: StepId, name: &str) -> StepInfo {
        StepInfo {
            job_id: job,
            array_job_id: array,
            array_task_id: task,
            step,
            name: name.into(),
            partition: "gpu".into(),
            user_id: 2001,
            user_name: "alice".into(),
            nodes: "node1".into(),
            state: "RUNNING".into(),
            start_time: NOW - 16,
            tasks: 1,
            ..Default::default()
        }
    }

    fn sample() -> Vec<StepInfo> {
        vec![
            step(23, 23, Some(2), StepId::Batch, "batch"),
            step(23, 23, Some(2), StepId::Number(0), "sleep"),
            step(28, 23, Some(1), StepId::Batch, "batch"),
            step(28, 23, Some(1), StepId::Number(0), "sleep"),
        ]
    }

    fn args(extra: &[&str]) -> SqueueArgs {
        use clap::Parser;
        SqueueArgs::try_parse_from([&["squeue", "-s"], extra].concat()).unwrap()
    }

    fn lines(format: &StepFormat, steps: &[StepInfo]) -> Vec<String> {
        std::iter::once(header(&format.tokens)).chain(steps.iter().map(|s| line(&format.tokens, s, NOW))).collect()
    }

    #[test]
    fn the_default_view_as_slurm_prints_an_arrays_steps() {
        let mut steps = sample();
        sort_steps(&mut steps, STEP_SORT, NOW);
        assert_eq!(
            lines(&step_format(&args(&[])), &steps),
            [
                "         STEPID     NAME PARTITION     USER      TIME NODELIST",
                "         23_2.0    sleep       gpu    alice      0:16 node1",
                "     23_2.batch    batch       gpu    alice      0:16 node1",
                "         23_1.0    sleep       gpu    alice      0:16 node1",
                "     23_1.batch    batch       gpu    alice      0:16 node1",
            ]
        );
        sort_steps(&mut steps, "-i", NOW);
        let ids: Vec<String> = steps.iter().map(StepInfo::display_id).collect();
        assert_eq!(ids, ["23_1.batch", "23_1.0", "23_2.batch", "23_2.0"]);
    }

    #[test]
    fn formats_by_code_and_by_name_and_the_fields_slurm_does_not_know() {
        let steps = &sample()[..2];
        let f = step_format(&args(&["-o", "%i|%t|%j|%l|%A|%b|%U"]));
        assert_eq!(f.errors, ["Invalid job step format specification: t"]);
        assert_eq!(
            lines(&f, steps),
            [
                "STEPID|%t|NAME|TIME_LIMIT|TASKS|TRES_PER_JOB|UID",
                "23_2.batch|%t|batch|UNLIMITED|1|(null)|2001",
                "23_2.0|%t|sleep|UNLIMITED|1|(null)|2001",
            ]
        );
        let f = step_format(&args(&["-O", "StepId:12,Name,ArrayJobId:.14,ArrayTaskId:5,JobId:4"]));
        assert_eq!(f.errors, ["Invalid job step format specification: Name"]);
        assert_eq!(
            lines(&f, &steps[..1]),
            ["STEPID        ARRAY_JOB_IDARRAYJOB_", "23_2.batch              232    23  "]
        );
        let f = step_format(&args(&["-o", "%.12S|"]));
        assert_eq!(header(&f.tokens), "START_TIME  |");
    }

    #[test]
    fn step_lists_as_slurm_reads_them() {
        let sel = |job, task, step| StepSelection { job, task, step };
        assert_eq!(
            parse_step_list("23_1.0,28.batch,5.3.1").unwrap(),
            [sel(23, Some(1), StepId::Number(0)), sel(28, None, StepId::Batch), sel(5, None, StepId::Number(3))]
        );
        assert_eq!(parse_step_list("23").unwrap_err(), "Invalid job_step id: 23.??");
        assert_eq!(parse_step_list("=23.0").unwrap_err(), "Invalid job_step id: =23.0");
        assert_eq!(parse_step_list("0.0").unwrap_err(), "Invalid job_step id: 0.0");
        assert_eq!(parse_step_list("5.x").unwrap_err(), "Invalid job_step id: 5.x");
        let steps = sample();
        let picked = |list: &str| {
            let filter = StepFilter { steps: Some(parse_step_list(list).unwrap()), ..Default::default() };
            steps.iter().filter(|s| filter.keeps(s)).map(StepInfo::display_id).collect::<Vec<_>>()
        };
        assert_eq!(picked("23_1.0"), ["23_1.0"]);
        assert_eq!(picked("28.0"), ["23_1.0"]);
        assert_eq!(picked("23.0"), ["23_2.0", "23_1.0"]);
        assert_eq!(picked("23_2.batch,99.0"), ["23_2.batch"]);
        let filter = StepFilter { jobs: Some(vec![(23, Some(1))]), users: Some(vec![2001]), ..Default::default() };
        let kept: Vec<String> = steps.iter().filter(|s| filter.keeps(s)).map(StepInfo::display_id).collect();
        assert_eq!(kept, ["23_1.batch", "23_1.0"]);
        let filter = StepFilter { partitions: Some(vec!["debug".into()]), ..Default::default() };
        assert!(!steps.iter().any(|s| filter.keeps(s)));
    }
}
