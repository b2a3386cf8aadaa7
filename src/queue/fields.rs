//! squeue's fields, in one table ([`FIELDS`]): for each, its `%` code, its `-O` names, its
//! header title, what `-S` makes of its letter, and how a job's value for it is written and
//! ordered (the functions the table names live in [`super::field_values`]).

pub use super::field_values::SortValue;
use super::field_values::{
    array_job_id, array_task_id, batch_host, big, id, job_id, job_id_order, memory, min_memory, num, number, or_na,
    or_null, priority_fraction, priority_order, reason, reason_list, text, time_left, time_left_order,
    time_limit_order, time_or_na,
};
use super::job::QueueJob;
use crate::format::Field;
use crate::options::time::{format_limit, push_elapsed};

pub use super::field_values::{elapsed, short_state, start_value};
use Sort::{By, ByName, Ignored, Refused, Vestigial};
use SortField::*;

/// One of squeue's fields.
pub struct QueueField {
    /// The `%` code: the letter of `-o` and `-S`, and what names the field in a query's codes
    /// and layouts.
    pub code: char,
    /// The `-O` names (lowercase).
    pub names: &'static [&'static str],
    /// The header title.
    pub title: &'static str,
    /// Whether only `-O` names the field: its code is slurmlet's own, and `-o` prints it
    /// without a title.
    pub long_only: bool,
    /// Appends a job's value.
    pub write: Writer,
    /// What `-S` makes of the field's letter.
    pub sort: Sort,
}

/// How a field's value is written: appended to a buffer, for a job at a UNIX time.
pub type Writer = fn(&mut String, &dyn QueueJob, u64);

/// How jobs are ordered by a field: the value compared, for a job at a UNIX time.
pub type Order = for<'a> fn(&'a dyn QueueJob, u64) -> SortValue<'a>;

/// What `-S` makes of a field's letter.
#[derive(Clone, Copy)]
pub enum Sort {
    /// squeue refuses the letter.
    Refused,
    /// squeue accepts the letter and orders nothing by it: Slurm's squeue does not sort by
    /// the field, or every slurmlet job has the same value in it.
    Ignored,
    /// The sort by generic resources Slurm no longer has: squeue says so and goes on.
    Vestigial,
    /// squeue orders by the letter: what is compared, and how.
    By(SortField, Order),
    /// squeue refuses the letter, and orders by the field's `-O` name spelled out (in any
    /// case): what is compared, and how.
    ByName(SortField, Order),
}

/// What jobs are compared on: one for each order, whichever fields order by it (`p` and `Q`
/// both order by the priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortField {
    /// The batch host.
    BatchHost,
    /// The cluster name.
    Cluster,
    /// The CPU count.
    Cpus,
    /// The node count.
    Nodes,
    /// The end time.
    EndTime,
    /// The group name.
    GroupName,
    /// The group id.
    GroupId,
    /// The job id (an array task by its array's id, then its task id).
    JobId,
    /// The job name.
    Name,
    /// The time limit (unlimited after every limit).
    TimeLimit,
    /// The time left (unlimited after every other).
    TimeLeft,
    /// The minimum memory.
    Memory,
    /// The time used.
    TimeUsed,
    /// The node list.
    NodeList,
    /// The priority.
    Priority,
    /// The partition.
    Partition,
    /// The (expected) start time; jobs without one come last either way.
    StartTime,
    /// The compact state (`CG`, `PD`, `R`, …), as text.
    StateCompact,
    /// The state (`COMPLETING`, `PENDING`, `RUNNING`, …), as text.
    State,
    /// The user name.
    UserName,
    /// The user id.
    UserId,
    /// The submit time.
    SubmitTime,
}

/// Every field squeue knows, by `%` code.
pub static FIELDS: &[QueueField] = &[
    field('a', &["account"], "ACCOUNT", |o, j, _| or_null(o, j.account()), Refused),
    field('A', &[], "JOBID", |o, j, _| id(o, j.job_id()), Refused),
    field('b', &["tres-per-node"], "TRES_PER_NODE", |o, j, _| or_na(o, j.tres_per_node()), Vestigial),
    field('B', &["batchhost"], "EXEC_HOST", batch_host, By(BatchHost, |j, _| text(j.batch_host()))),
    field('c', &["mincpus"], "MIN_CPUS", |o, j, _| number(o, j.minimum_cpus_per_node()), Ignored),
    field('C', &["numcpus"], "CPUS", |o, j, _| number(o, j.cpus()), By(Cpus, |j, _| num(j.cpus()))),
    field('d', &[], "MIN_TMP_DISK", |o, _, _| o.push('0'), Ignored),
    field('D', &["numnodes"], "NODES", |o, j, _| id(o, j.node_count()), By(Nodes, |j, _| num(j.node_count()))),
    field('e', &["endtime"], "END_TIME", |o, j, _| time_or_na(o, j.end_time()), By(EndTime, |j, _| big(j.end_time()))),
    field('E', &["dependency"], "DEPENDENCY", |o, j, _| or_null(o, j.dependency()), Refused),
    field('f', &["features"], "FEATURES", |o, j, _| or_null(o, j.features()), Ignored),
    field('F', &["arrayjobid"], "ARRAY_JOB_ID", array_job_id, Refused),
    field(
        'g',
        &["groupname"],
        "GROUP",
        |o, j, _| o.push_str(&j.group_name()),
        By(GroupName, |j, _| SortValue::Text(j.group_name())),
    ),
    field('G', &["groupid"], "GROUP", |o, j, _| number(o, j.group_id()), By(GroupId, |j, _| num(j.group_id()))),
    field('h', &[], "OVER_SUBSCRIBE", |o, _, _| o.push_str("OK"), Ignored),
    field('H', &[], "SOCKETS_PER_NODE", |o, _, _| o.push('*'), Ignored),
    field('I', &[], "CORES_PER_SOCKET", |o, _, _| o.push('*'), Ignored),
    field('J', &[], "THREADS_PER_CORE", |o, _, _| o.push('*'), Ignored),
    field('i', &["jobid", "jobarrayid"], "JOBID", job_id, By(JobId, job_id_order)),
    field('j', &["name"], "NAME", |o, j, _| o.push_str(j.name()), By(Name, |j, _| text(j.name()))),
    field('k', &["comment"], "COMMENT", |o, j, _| or_null(o, j.comment()), Refused),
    field('K', &["arraytaskid"], "ARRAY_TASK_ID", array_task_id, Refused),
    field(
        'l',
        &["timelimit"],
        "TIME_LIMIT",
        |o, j, _| o.push_str(&format_limit(j.time_limit())),
        By(TimeLimit, time_limit_order),
    ),
    field('L', &["timeleft"], "TIME_LEFT", time_left, By(TimeLeft, time_left_order)),
    field('m', &["minmemory"], "MIN_MEMORY", min_memory, By(Memory, |j, _| big(memory(j).unwrap_or(0)))),
    field(
        'M',
        &["timeused"],
        "TIME",
        |o, j, now| push_elapsed(o, elapsed(j, now)),
        By(TimeUsed, |j, now| big(elapsed(j, now))),
    ),
    field('n', &["reqnodes"], "REQ_NODES", |o, j, _| or_null(o, j.required_nodes()), Ignored),
    field('N', &["nodelist"], "NODELIST", |o, j, _| o.push_str(j.nodes()), By(NodeList, |j, _| text(j.nodes()))),
    field('o', &["command"], "COMMAND", |o, j, _| or_null(o, j.command()), Refused),
    field('O', &[], "CONTIGUOUS", |o, j, _| o.push(if j.contiguous() { '1' } else { '0' }), Ignored),
    field('p', &[], "PRIORITY", priority_fraction, By(Priority, priority_order)),
    field(
        'P',
        &["partition"],
        "PARTITION",
        |o, j, _| o.push_str(j.partition()),
        By(Partition, |j, _| text(j.partition())),
    ),
    field('q', &["qos"], "QOS", |o, j, _| or_null(o, j.qos()), Refused),
    field(
        'Q',
        &["priority", "prioritylong"],
        "PRIORITY",
        |o, j, _| number(o, j.priority()),
        By(Priority, priority_order),
    ),
    field('r', &["reason"], "REASON", |o, j, _| o.push_str(reason(j)), Refused),
    field('R', &["reasonlist"], "NODELIST(REASON)", reason_list, Refused),
    field('S', &["starttime"], "START_TIME", |o, j, _| time_or_na(o, j.start_time()), By(StartTime, start_value)),
    field(
        't',
        &["statecompact"],
        "ST",
        |o, j, _| o.push_str(short_state(j.state())),
        By(StateCompact, |j, _| text(short_state(j.state()))),
    ),
    field('T', &["state"], "STATE", |o, j, _| o.push_str(j.state()), By(State, |j, _| text(j.state()))),
    field(
        'u',
        &["username"],
        "USER",
        |o, j, _| o.push_str(&j.user_name()),
        By(UserName, |j, _| SortValue::Text(j.user_name())),
    ),
    field('U', &["userid"], "UID", |o, j, _| number(o, j.user_id()), By(UserId, |j, _| num(j.user_id()))),
    field('v', &["reservation"], "RESERVATION", |o, j, _| or_null(o, j.reservation()), Ignored),
    field(
        'V',
        &["submittime"],
        "SUBMIT_TIME",
        |o, j, _| time_or_na(o, j.submit_time()),
        By(SubmitTime, |j, _| big(j.submit_time())),
    ),
    field('w', &["wckey"], "WCKEY", |o, j, _| or_null(o, j.wckey()), Refused),
    field('W', &[], "LICENSES", |o, _, _| o.push_str("(null)"), Refused),
    field('x', &["exclnodes"], "EXC_NODES", |o, j, _| or_null(o, j.excluded_nodes()), Refused),
    field('y', &["nice"], "NICE", |o, j, _| number(o, j.nice()), Refused),
    field('Y', &["schednodes"], "SCHEDNODES", |o, j, _| or_null(o, j.scheduled_nodes()), Refused),
    field('z', &[], "S:C:T", |o, _, _| o.push_str("*:*:*"), Ignored),
    field('Z', &["workdir"], "WORK_DIR", |o, j, _| o.push_str(j.current_working_directory()), Refused),
    long_only(field('1', &["stdout"], "STDOUT", |o, j, _| o.push_str(&j.stdout_expanded()), Refused)),
    long_only(field('2', &["stderr"], "STDERR", |o, j, _| o.push_str(&j.stderr_expanded()), Refused)),
    long_only(field('3', &["stdin"], "STDIN", |o, j, _| o.push_str(&j.stdin_expanded()), Refused)),
    long_only(field('4', &["cpus-per-task"], "CPUS_PER_TASK", |o, j, _| number(o, j.cpus_per_task()), Refused)),
    long_only(field('5', &["tres-per-job"], "TRES_PER_JOB", |o, j, _| or_na(o, j.tres_per_job()), Refused)),
    long_only(field('6', &["numtasks"], "NUM_TASKS", |o, j, _| number(o, j.tasks()), Refused)),
    long_only(field(
        '7',
        &["cluster"],
        "CLUSTER",
        |o, j, _| o.push_str(j.cluster()),
        ByName(Cluster, |j, _| text(j.cluster())),
    )),
];

const fn field(
    code: char,
    names: &'static [&'static str],
    title: &'static str,
    write: Writer,
    sort: Sort,
) -> QueueField {
    QueueField { code, names, title, long_only: false, write, sort }
}

const fn long_only(field: QueueField) -> QueueField {
    QueueField { long_only: true, ..field }
}

/// The field of `%` code `code`.
pub fn by_code(code: char) -> Option<&'static QueueField> {
    FIELDS.iter().find(|f| f.code == code)
}

/// The field of `-O` name `name` (lowercase).
pub fn by_name(name: &str) -> Option<&'static QueueField> {
    FIELDS.iter().find(|f| f.names.contains(&name))
}

/// The `%` code a format field stands for (`-O` names map to theirs; an unknown name to a
/// space, which no field has).
pub fn field_code(f: &Field) -> char {
    let mut chars = f.key.chars();
    match (chars.next(), chars.next()) {
        (Some(code), None) => code,
        _ => by_name(&f.key).map_or(' ', |field| field.code),
    }
}

/// The header title of a format field (empty for what no field is, and for a `%` code only
/// `-O` names).
pub fn header_title(f: &Field) -> &'static str {
    let mut chars = f.key.chars();
    let field = match (chars.next(), chars.next()) {
        (Some(code), None) => by_code(code).filter(|field| !field.long_only),
        _ => by_name(&f.key),
    };
    field.map_or("", |field| field.title)
}

/// How jobs are ordered by `field`.
pub fn order_of(field: SortField) -> Order {
    FIELDS
        .iter()
        .find_map(|f| match f.sort {
            By(by, order) | ByName(by, order) if by == field => Some(order),
            _ => None,
        })
        .expect("every sort field orders some field of the table")
}

/// The value of `-o` code `code` for `job` at UNIX time `now` (empty for unknown codes).
pub fn value(code: char, job: &dyn QueueJob, now: u64) -> String {
    let mut out = String::new();
    write_value(&mut out, code, job, now);
    out
}

/// Appends the value of `-o` code `code` for `job` at UNIX time `now` to `out` (nothing for
/// unknown codes).
pub fn write_value(out: &mut String, code: char, job: &dyn QueueJob, now: u64) {
    if let Some(field) = by_code(code) {
        (field.write)(out, job, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_squeues_codes_each_once_and_each_long_name_once() {
        let codes: String = FIELDS.iter().map(|f| f.code).collect();
        assert_eq!(codes, "aAbBcCdDeEfFgGhHIJijkKlLmMnNoOpPqQrRStTuUvVwWxyYzZ1234567");
        let names: Vec<&str> = FIELDS.iter().flat_map(|f| f.names.iter().copied()).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "-O {name} names two fields");
            assert_eq!(name.to_ascii_lowercase(), *name, "-O names are looked up in lowercase");
        }
        assert_eq!(by_name("prioritylong").map(|f| f.code), Some('Q'));
        assert!(by_code(' ').is_none() && by_name("bogus").is_none());
    }

    #[test]
    fn every_sort_field_orders_some_field() {
        for field in [
            BatchHost,
            Cluster,
            Cpus,
            Nodes,
            EndTime,
            GroupName,
            GroupId,
            JobId,
            Name,
            TimeLimit,
            TimeLeft,
            Memory,
            TimeUsed,
            NodeList,
            Priority,
            Partition,
            StartTime,
            StateCompact,
            State,
            UserName,
            UserId,
            SubmitTime,
        ] {
            let _ = order_of(field);
        }
    }

    #[test]
    fn titles_come_by_code_or_long_name_and_codes_only_long_names_have_none() {
        let title = |key: &str| header_title(&Field::new(key, 0, false));
        assert_eq!(title("R"), "NODELIST(REASON)");
        assert_eq!(title("reasonlist"), "NODELIST(REASON)");
        assert_eq!(title("stdout"), "STDOUT");
        assert_eq!(title("1"), "");
        assert_eq!(title("X"), "");
        assert_eq!(field_code(&Field::new("cluster", 0, false)), '7');
        assert_eq!(field_code(&Field::new("X", 0, false)), 'X');
        assert_eq!(field_code(&Field::new("bogus", 0, false)), ' ');
    }
}
