//! The order squeue lists jobs in: `-S` read as squeue reads it, its default, and the
//! sort itself, for any [`QueueJob`].

use super::fields::{by_code, order_of, start_value, Order, Sort, SortField, SortValue, FIELDS};
use super::job::QueueJob;

/// squeue's sort order when `-S` (or `SQUEUE_SORT`) gives none: partition, state, then
/// priority, highest first.
pub const DEFAULT_SORT: &str = "P,t,-p";

/// The sort order of `--start` when none is given: expected start time.
pub const START_SORT: &str = "S";

/// One key of a sort order: a field and its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    /// What is compared.
    pub field: SortField,
    /// `-` before the letter: largest first.
    pub descending: bool,
}

/// What reading a `-S` specification found, in the order squeue reads it (from its end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortItem {
    /// A key that orders the jobs.
    Key(SortKey),
    /// `b`, the sort by generic resources Slurm no longer has: squeue says so and goes on.
    Vestigial(char),
    /// A letter squeue does not sort by: squeue stops with an error naming it. Nothing is
    /// read after it.
    Invalid(char),
}

/// Reads a `-S` specification as squeue does: one letter per key, each reversed when a `-`
/// comes right before it (`+`, `-` and `,` are otherwise skipped, so `ij` is two keys), and
/// the word `cluster` in any case. squeue reads it from its end and stops at the first letter
/// it does not know; the items come in that order.
pub fn read_sort(spec: &str) -> Vec<SortItem> {
    let b = spec.as_bytes();
    let mut items = Vec::new();
    let mut i = b.len();
    'reading: while i > 0 {
        i -= 1;
        if matches!(b[i], b',' | b'+' | b'-') {
            continue;
        }
        for (word, field) in sort_words() {
            let word_start = (i + 1).checked_sub(word.len());
            if let Some(start) = word_start.filter(|&s| b[s..=i].eq_ignore_ascii_case(word.as_bytes())) {
                let descending = start > 0 && b[start - 1] == b'-';
                items.push(SortItem::Key(SortKey { field, descending }));
                i = start;
                continue 'reading;
            }
        }
        let descending = i > 0 && b[i - 1] == b'-';
        // A key letter is ASCII; anything else is reported whole.
        let c = match spec.is_char_boundary(i) {
            true => spec[i..].chars().next().unwrap_or('?'),
            false => {
                let start = (0..i).rev().find(|&k| spec.is_char_boundary(k)).unwrap_or(0);
                spec[start..].chars().next().unwrap_or('?')
            }
        };
        match by_code(c).map_or(Sort::Refused, |f| f.sort) {
            Sort::By(field, _) => items.push(SortItem::Key(SortKey { field, descending })),
            Sort::Ignored => {}
            Sort::Vestigial => items.push(SortItem::Vestigial(c)),
            Sort::Refused | Sort::ByName(..) => {
                items.push(SortItem::Invalid(c));
                break;
            }
        }
    }
    items
}

/// The words `-S` orders by (`cluster`): the `-O` names of the fields that order only by
/// name.
fn sort_words() -> impl Iterator<Item = (&'static str, SortField)> {
    FIELDS.iter().filter_map(|f| match f.sort {
        Sort::ByName(field, _) => f.names.first().map(|&name| (name, field)),
        _ => None,
    })
}

/// The keys of a `-S` specification, most significant first, or the letter squeue refuses.
/// A field already compared on is dropped where it comes again, as it can no longer change
/// the order.
pub fn parse_sort(spec: &str) -> Result<Vec<SortKey>, char> {
    let mut keys = Vec::new();
    for item in read_sort(spec) {
        match item {
            SortItem::Key(k) => keys.push(k),
            SortItem::Vestigial(_) => {}
            SortItem::Invalid(c) => return Err(c),
        }
    }
    // Read from the end: the last key read is the most significant.
    keys.reverse();
    let mut seen: Vec<SortField> = Vec::new();
    keys.retain(|k| {
        let first = !seen.contains(&k.field);
        seen.push(k.field);
        first
    });
    Ok(keys)
}

/// The keys of [`DEFAULT_SORT`].
pub fn default_sort() -> Vec<SortKey> {
    parse_sort(DEFAULT_SORT).expect("the default sort is valid")
}

/// How many distinct texts of a column are looked for one by one before a table is kept.
const FEW_TEXTS: usize = 8;

/// One column of the sort rows: a key's direction, and the distinct texts met in it.
struct Column<'a> {
    descending: bool,
    /// Distinct texts in the order first met; a cell holds its index until they are ranked.
    texts: Vec<std::borrow::Cow<'a, str>>,
    /// The index of each text, once there are more than [`FEW_TEXTS`]; most columns
    /// (partitions, states, users) have a few, and a look along them beats hashing.
    index: std::collections::HashMap<std::borrow::Cow<'a, str>, usize>,
}

impl<'a> Column<'a> {
    fn new(descending: bool) -> Self {
        Column { descending, texts: Vec::new(), index: std::collections::HashMap::new() }
    }

    /// Reversing the bits of a number reverses its order, without overflow.
    fn direct(&self, n: i64) -> i64 {
        if self.descending {
            !n
        } else {
            n
        }
    }

    /// The cell of `value`: a number that orders as the key does (a text's index for now).
    fn cell(&mut self, value: SortValue<'a>) -> i64 {
        match value {
            SortValue::Number(n) => self.direct(n),
            SortValue::Start(Some(t)) => self.direct(t),
            SortValue::Start(None) => i64::MAX,
            SortValue::Text(t) => {
                let texts = &mut self.texts;
                let k = match texts.iter().take(FEW_TEXTS).position(|s| *s == t) {
                    Some(k) => k,
                    None if texts.len() < FEW_TEXTS => {
                        texts.push(t);
                        texts.len() - 1
                    }
                    None => *self.index.entry(t.clone()).or_insert_with(|| {
                        texts.push(t);
                        texts.len() - 1
                    }),
                };
                k as i64
            }
        }
    }

    /// The rank of each text index among the column's texts (compared as bytes, as Slurm's
    /// `strcmp`), in the key's direction; `None` when the column holds no text.
    fn ranks(&self) -> Option<Vec<i64>> {
        if self.texts.is_empty() {
            return None;
        }
        let mut by_text: Vec<usize> = (0..self.texts.len()).collect();
        by_text.sort_unstable_by(|&a, &b| self.texts[a].as_bytes().cmp(self.texts[b].as_bytes()));
        let mut rank = vec![0i64; self.texts.len()];
        for (r, &k) in by_text.iter().enumerate() {
            rank[k] = self.direct(r as i64);
        }
        Some(rank)
    }
}

/// Sorts `jobs` by `keys` (most significant first) at UNIX time `now`, as squeue does.
///
/// Jobs equal on every key keep the order squeue gives them before sorting by the keys: the
/// latest started first (jobs started in the same second by id); then those with no start
/// time, the latest submitted first, an array's tasks together in task order. That last is
/// what Slurm's start-time comparison (which calls an unstarted job greater than any other,
/// itself included) makes of the controller's list under glibc's merge sort, as Slurm
/// 26.05's squeue prints it (`32, 31_0, 31_1, 31_2, 30`).
///
/// Each job is read once, into a row of numbers (text by its rank among the column's), so a
/// long queue sorts on integers.
pub fn sort_jobs<J: QueueJob>(jobs: &mut [J], keys: &[SortKey], now: u64) {
    // One row per job: a number per key, then the start time (latest first), and the job's
    // place among those started at the same time or among the unstarted.
    let width = keys.len() + 3;
    let mut columns: Vec<Column> = keys.iter().map(|k| Column::new(k.descending)).collect();
    columns.push(Column::new(true));
    let orders: Vec<Order> = keys.iter().map(|k| order_of(k.field)).collect();
    let mut rows: Vec<i64> = Vec::with_capacity(jobs.len() * width);
    for job in jobs.iter() {
        for (order, column) in orders.iter().zip(columns.iter_mut()) {
            rows.push(column.cell(order(job, now)));
        }
        let start = start_value(job, now);
        let unstarted = matches!(start, SortValue::Start(None));
        rows.push(columns[keys.len()].cell(start));
        let (unit, task) = match job.array_task_id() {
            Some(task) if unstarted && job.array_job_id() != 0 => (job.array_job_id(), task),
            _ => (job.job_id(), 0),
        };
        rows.push(if unstarted { -i64::from(unit) } else { i64::from(unit) });
        rows.push(task.into());
    }
    for (c, column) in columns.iter().enumerate() {
        if let Some(rank) = column.ranks() {
            for row in rows.chunks_exact_mut(width) {
                row[c] = rank[row[c] as usize];
            }
        }
    }
    // The job (or array task) id, last, tells any two jobs apart.
    permute(jobs, sorted_order(&rows, width));
}

/// The order of the rows of `rows` (`width` numbers each), compared column by column. A
/// column every row has the same value in decides nothing and is left out (in a usual queue,
/// the partition, state and priority); up to four columns left are sorted as contiguous
/// fixed-size keys, which a long queue sorts several times faster than rows compared through
/// slices.
fn sorted_order(rows: &[i64], width: usize) -> Vec<u32> {
    let n = rows.len() / width.max(1);
    let varying: Vec<usize> = (0..width).filter(|&c| rows.chunks_exact(width).any(|r| r[c] != rows[c])).collect();
    fn fixed<const N: usize>(rows: &[i64], width: usize, cols: &[usize]) -> Vec<u32> {
        let mut keyed: Vec<([i64; N], u32)> =
            rows.chunks_exact(width).zip(0u32..).map(|(r, i)| (std::array::from_fn(|k| r[cols[k]]), i)).collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    }
    match varying.len() {
        0 => (0..n as u32).collect(),
        1 => fixed::<1>(rows, width, &varying),
        2 => fixed::<2>(rows, width, &varying),
        3 => fixed::<3>(rows, width, &varying),
        4 => fixed::<4>(rows, width, &varying),
        _ => {
            let row = |i: u32| &rows[i as usize * width..(i as usize + 1) * width];
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.sort_unstable_by(|&a, &b| row(a).cmp(row(b)));
            order
        }
    }
}

/// Puts `items` in `order` (`order[k]` is the index of the item that goes to place `k`), in
/// place, following each cycle of the permutation.
fn permute<J>(items: &mut [J], mut order: Vec<u32>) {
    for start in 0..order.len() {
        let mut place = start;
        // Each cycle is walked once: a visited place points to itself.
        while order[place] as usize != start {
            let from = order[place] as usize;
            items.swap(place, from);
            order[place] = place as u32;
            place = from;
        }
        order[place] = place as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::JobInfo;

    fn job(id: u32, state: &str) -> JobInfo {
        JobInfo { job_id: id, partition: "gpu".into(), job_state: vec![state.into()], ..Default::default() }
    }

    fn ids(jobs: &[JobInfo]) -> Vec<u32> {
        jobs.iter().map(|j| j.job_id).collect()
    }

    fn sorted(mut jobs: Vec<JobInfo>, spec: &str) -> Vec<u32> {
        sort_jobs(&mut jobs, &parse_sort(spec).unwrap(), NOW);
        ids(&jobs)
    }

    const NOW: u64 = 1_000_000;

    fn key(field: SortField, descending: bool) -> SortKey {
        SortKey { field, descending }
    }

    #[test]
    fn sort_specifications_are_read_as_squeue_reads_them() {
        use SortField::*;
        assert_eq!(
            parse_sort("P,t,-p").unwrap(),
            vec![key(Partition, false), key(StateCompact, false), key(Priority, true)]
        );
        assert_eq!(parse_sort("+j").unwrap(), vec![key(Name, false)]);
        assert_eq!(parse_sort("-j").unwrap(), vec![key(Name, true)]);
        // One letter per key, commas or not; a '-' reverses only the letter right after it.
        assert_eq!(parse_sort("-ij").unwrap(), vec![key(JobId, true), key(Name, false)]);
        assert_eq!(parse_sort("-,i").unwrap(), vec![key(JobId, false)]);
        assert_eq!(parse_sort("t,-i").unwrap(), vec![key(StateCompact, false), key(JobId, true)]);
        // p and Q are both the priority; a field that comes again changes nothing.
        assert_eq!(parse_sort("-p,Q,i,p").unwrap(), vec![key(Priority, true), key(JobId, false)]);
        // The word cluster, in any case, with its own '-'.
        assert_eq!(parse_sort("-Cluster,i").unwrap(), vec![key(Cluster, true), key(JobId, false)]);
        assert_eq!(parse_sort("icluster").unwrap(), vec![key(JobId, false), key(Cluster, false)]);
        // Letters squeue accepts without sorting by them, and an empty order.
        assert_eq!(parse_sort("c,f,h,n,O,d,H,I,J,v,z").unwrap(), vec![]);
        assert_eq!(parse_sort("").unwrap(), vec![]);
        assert_eq!(parse_sort(",+-").unwrap(), vec![]);
        assert_eq!(default_sort(), parse_sort(DEFAULT_SORT).unwrap());
    }

    #[test]
    fn a_bad_sort_letter_is_named_as_squeue_names_it() {
        assert_eq!(parse_sort("x").unwrap_err(), 'x');
        assert_eq!(parse_sort("i,a").unwrap_err(), 'a');
        // Read from the end: the last bad letter is the one named, and -O names are letters.
        assert_eq!(parse_sort("JobID").unwrap_err(), 'o');
        // ... and one whose letters all are keys is read as those keys.
        assert_eq!(parse_sort("TimeLimit").unwrap().len(), 6);
        assert_eq!(parse_sort("i,é").unwrap_err(), 'é');
        assert_eq!(parse_sort("7").unwrap_err(), '7');
        // `b` (the old sort by generic resources) is only remarked upon.
        assert_eq!(read_sort("i,b"), vec![SortItem::Vestigial('b'), SortItem::Key(key(SortField::JobId, false))]);
        assert_eq!(parse_sort("i,b").unwrap(), vec![key(SortField::JobId, false)]);
        // Nothing is read past the bad letter.
        assert_eq!(read_sort("b,x,i"), vec![SortItem::Key(key(SortField::JobId, false)), SortItem::Invalid('x')]);
    }

    #[test]
    fn sort_spec_parsing_never_panics() {
        let words = ["cluster", "-CLUSTER", "xcluster", "clusterx", "cluste", "-luster", "\u{e9}cluster"];
        for spec in
            crate::options::test_support::short_strings(",+-ibclr\u{e9}", 4).into_iter().chain(words.map(String::from))
        {
            let _ = read_sort(&spec);
            let _ = parse_sort(&spec);
        }
    }

    #[test]
    fn the_default_order_is_partition_then_state_text_then_priority_highest_first() {
        let mut jobs =
            vec![job(1, "RUNNING"), job(2, "PENDING"), job(3, "PENDING"), job(4, "PENDING"), job(5, "PENDING")];
        jobs[0].partition = "debug".into();
        jobs[2].priority = crate::api::noval::NoVal::of(5);
        jobs[3].job_state = vec!["RUNNING".into(), "COMPLETING".into()];
        // CG sorts before PD, and PD before R, as their text does in Slurm; unstarted jobs
        // otherwise equal come latest first.
        assert_eq!(sorted(jobs, DEFAULT_SORT), vec![1, 4, 3, 5, 2]);
    }

    #[test]
    fn numbers_and_times_sort_by_value_not_by_text() {
        let mut jobs: Vec<JobInfo> = (1..=4).map(|i| job(i, "PENDING")).collect();
        let limits = [Some(90), None, Some(5), Some(600)];
        for (j, l) in jobs.iter_mut().zip(limits) {
            j.time_limit = l.map_or_else(crate::api::noval::NoVal::infinite, crate::api::noval::NoVal::of);
        }
        // 5:00 < 1:30:00 < 10:00:00 < UNLIMITED, though "10:00:00" < "1:30:00" < "5:00" as text.
        assert_eq!(sorted(jobs.clone(), "l"), vec![3, 1, 4, 2]);
        assert_eq!(sorted(jobs.clone(), "-l"), vec![2, 4, 1, 3]);
        // Ids: 9 before 10.
        let mut jobs = vec![job(10, "PENDING"), job(9, "PENDING"), job(100, "PENDING")];
        assert_eq!(sorted(jobs.clone(), "i"), vec![9, 10, 100]);
        assert_eq!(sorted(jobs.clone(), "-i"), vec![100, 10, 9]);
        // Priorities and CPUs.
        for (j, p) in jobs.iter_mut().zip([3, 20, 100]) {
            j.priority = crate::api::noval::NoVal::of(p);
            j.cpus = crate::api::noval::NoVal::of(p);
        }
        assert_eq!(sorted(jobs.clone(), "-p"), vec![100, 9, 10]);
        assert_eq!(sorted(jobs.clone(), "Q"), vec![10, 9, 100]);
        assert_eq!(sorted(jobs, "C"), vec![10, 9, 100]);
    }

    #[test]
    fn times_used_left_and_started() {
        let mut jobs: Vec<JobInfo> = (1..=3).map(|i| job(i, "RUNNING")).collect();
        jobs[0].start_time = crate::api::noval::NoVal::of(NOW - 50);
        jobs[1].start_time = crate::api::noval::NoVal::of(NOW - 700);
        jobs[2].job_state = vec!["PENDING".into()];
        for j in jobs.iter_mut() {
            j.time_limit = crate::api::noval::NoVal::of(10);
        }
        assert_eq!(sorted(jobs.clone(), "M"), vec![3, 1, 2]);
        // Time left: 600 - 700 < 600 - 50 < 600.
        assert_eq!(sorted(jobs.clone(), "L"), vec![2, 1, 3]);
        // A job that has not started comes after the started ones, either way.
        assert_eq!(sorted(jobs.clone(), "S"), vec![2, 1, 3]);
        assert_eq!(sorted(jobs.clone(), "-S"), vec![1, 2, 3]);
        // Ties keep squeue's order: the latest started first, the others last by id.
        assert_eq!(sorted(jobs, ""), vec![1, 2, 3]);
    }

    #[test]
    fn keys_break_ties_in_order() {
        let mut jobs: Vec<JobInfo> = (1..=4).map(|i| job(i, "PENDING")).collect();
        jobs[1].job_state = vec!["RUNNING".into()];
        jobs[3].job_state = vec!["RUNNING".into()];
        for (j, n) in jobs.iter_mut().zip(["b", "a", "a", "B"]) {
            j.name = n.into();
        }
        assert_eq!(sorted(jobs.clone(), "t,-i"), vec![3, 1, 4, 2]);
        assert_eq!(sorted(jobs.clone(), "-t,i"), vec![2, 4, 1, 3]);
        // Names compare as bytes: upper case first; the two unstarted "a" latest first.
        assert_eq!(sorted(jobs.clone(), "j"), vec![4, 3, 2, 1]);
        assert_eq!(sorted(jobs.clone(), "-j"), vec![1, 3, 2, 4]);
        assert_eq!(sorted(jobs, "j,-i"), vec![4, 3, 2, 1]);
    }

    #[test]
    fn array_tasks_sort_by_their_array_then_task() {
        let mut jobs = vec![job(20, "PENDING"), job(11, "PENDING"), job(12, "PENDING"), job(15, "PENDING")];
        // 11 and 12 are tasks 5 and 2 of array 10; 20 is task 1 of array 10 as well.
        for (j, task) in jobs.iter_mut().zip([1, 5, 2]) {
            j.array_job_id = crate::api::noval::NoVal::of(10);
            j.array_task_id = crate::api::noval::NoVal::of(task);
        }
        assert_eq!(sorted(jobs, "i"), vec![20, 12, 11, 15]);
    }

    #[test]
    fn unstarted_jobs_come_latest_first_with_an_arrays_tasks_together() {
        // As Slurm 26.05 lists held jobs 29, 30, array 31 (tasks 0-2) and 32.
        let mut jobs: Vec<JobInfo> = [29, 30, 31, 35, 36, 32].into_iter().map(|i| job(i, "PENDING")).collect();
        for (j, task) in jobs[2..5].iter_mut().zip([0, 1, 2]) {
            j.array_job_id = crate::api::noval::NoVal::of(31);
            j.array_task_id = crate::api::noval::NoVal::of(task);
        }
        assert_eq!(sorted(jobs, DEFAULT_SORT), vec![32, 31, 35, 36, 30, 29]);
        // Started ones: the latest first, then by id (Slurm: 19_3, 19_1, 19_2, 18, 19_0, 16, 17).
        let mut done: Vec<JobInfo> = [16, 17, 18, 19, 20, 21, 22].into_iter().map(|i| job(i, "COMPLETED")).collect();
        for (j, start) in done.iter_mut().zip([12, 12, 15, 21, 15, 18, 18]) {
            j.start_time = crate::api::noval::NoVal::of(NOW - 100 + start);
        }
        assert_eq!(sorted(done, DEFAULT_SORT), vec![19, 21, 22, 18, 20, 16, 17]);
    }

    #[test]
    fn rows_sort_the_same_whichever_columns_vary() {
        // Width 6: constant columns are left out; the order is the rows' own.
        let rows: Vec<i64> =
            [[1, 5, 0, 9, 3, 0], [1, 5, 0, 9, 1, 0], [1, 4, 0, 9, 2, 0], [1, 5, 0, 8, 7, 0], [1, 4, 0, 9, 1, 0]]
                .concat();
        let by_slices = |width: usize, rows: &[i64]| {
            let mut order: Vec<u32> = (0..(rows.len() / width) as u32).collect();
            order.sort_by(|&a, &b| rows[a as usize * width..][..width].cmp(&rows[b as usize * width..][..width]));
            order
        };
        assert_eq!(sorted_order(&rows, 6), by_slices(6, &rows));
        assert_eq!(sorted_order(&rows, 6), vec![4, 2, 3, 1, 0]);
        // Five varying columns go the general way.
        let wide: Vec<i64> = [[3, 1, 2, 5, 4], [1, 2, 3, 4, 5], [1, 2, 3, 4, 4]].concat();
        assert_eq!(sorted_order(&wide, 5), vec![2, 1, 0]);
        assert_eq!(sorted_order(&[7, 7, 7], 1), vec![0, 1, 2]);
    }

    #[test]
    fn a_permutation_is_applied_in_place() {
        for order in [vec![2, 0, 1], vec![0, 1, 2], vec![1, 0, 3, 2], vec![3, 2, 1, 0], vec![]] {
            let mut items: Vec<u32> = (0..order.len() as u32).map(|i| i * 10).collect();
            let want: Vec<u32> = order.iter().map(|&i| i * 10).collect();
            permute(&mut items, order);
            assert_eq!(items, want);
        }
    }
}
