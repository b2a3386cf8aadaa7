//! The job report's text, as Slurm prints it: the banner, the `format=` columns (`Cluster`
//! and `Account` by default), one column per size range, `Total Count` and `% of cluster`.
//!
//! A range shows its time as a share of the row's (with `-t percent`, its percentage of
//! it); `Total Count` the row's time against nothing (Slurm then divides by 1, so with
//! `-t percent` it prints the seconds times 100, `4061000.00%`); `% of cluster` the row's
//! percentage of the cluster's. `PrintJobCount` counts jobs instead.

use super::bins::Bin;
use super::lists::atoi;
use super::tally::{AcctRow, Sum, Tally};
use crate::cli::sacct::fields::Cell;
use crate::cli::sacct::print::{self, Layout};
use crate::cli::sreport::units::{abbrev, TimeFormat};

/// What a `format=` column of the job report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// The row's account.
    Account,
    /// The cluster.
    Cluster,
    /// Known to Slurm, but never filled by this report: blank.
    Blank,
}

/// (word, shortest start, what it shows, header, width), in the order Slurm tries them.
/// `Wckey` shows the row's name, as in Slurm.
const FIELDS: &[(&str, usize, Field, &str, i32)] = &[
    ("Account", 1, Field::Account, "Account", 9),
    ("Acct", 4, Field::Account, "Account", 9),
    ("Cluster", 2, Field::Cluster, "Cluster", 9),
    ("Duration", 1, Field::Blank, "Duration", 12),
    ("JobCount", 2, Field::Blank, "Job Count", 9),
    ("NodeCount", 2, Field::Blank, "Node Count", 9),
    ("TresCount", 5, Field::Blank, "TRES Count", 10),
    ("CpuCount", 2, Field::Blank, "TRES Count", 10),
    ("count", 2, Field::Blank, "TRES Count", 10),
    ("User", 1, Field::Blank, "User", 9),
    ("Wckey", 1, Field::Account, "Wckey", 9),
];

/// One `format=` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Col {
    field: Field,
    name: &'static str,
    width: i32,
}

/// The columns of `format=`'s names (each `name[%width]`); an unknown one is said as
/// Slurm says it and skipped, which makes `bad` true.
pub fn columns(names: &[String], bad: &mut bool) -> Vec<Col> {
    let mut out = Vec::new();
    for item in names {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n, atoi(w)),
            None => (item.as_str(), 0),
        };
        match FIELDS.iter().find(|(word, min, ..)| abbrev(name, word, *min)) {
            Some(&(_, _, field, header, w)) => {
                out.push(Col { field, name: header, width: if width != 0 { width } else { w } });
            }
            None => {
                eprintln!(" Unknown field '{name}'");
                *bad = true;
            }
        }
    }
    out
}

/// How the report is printed.
pub struct Look<'a> {
    /// The cluster's name.
    pub cluster: &'a str,
    /// The period, `[start, end)`.
    pub period: (u64, u64),
    /// `-t`.
    pub time: TimeFormat,
    /// `--tres` as given (`TRES type is …`), if it was.
    pub tres_text: Option<&'a str>,
    /// `PrintJobCount`.
    pub job_count: bool,
    /// `-p`/`-P`, or columns.
    pub layout: Layout,
    /// Not `-n`.
    pub header: bool,
}

/// The report's text.
pub fn render(look: &Look, cols: &[Col], bins: &[Bin], tally: &Tally) -> String {
    let mut out = String::new();
    if look.header {
        out.push_str(&banner(look));
        let mut names: Vec<(&str, i32)> = cols.iter().map(|c| (c.name, c.width)).collect();
        names.extend(bins.iter().map(|b| (b.name.as_str(), b.width)));
        names.push(("Total Count", 11));
        names.push(("% of cluster", 12));
        out.push_str(&print::header_of(&names, &look.layout));
    }
    let mut widths: Vec<i32> = cols.iter().map(|c| c.width).collect();
    widths.extend(bins.iter().map(|b| b.width));
    widths.extend([11, 12]);
    for row in &tally.rows {
        out.push_str(&print::row_of(&widths, &cells(look, cols, row, tally.cluster), &look.layout));
    }
    out
}

/// The lines above the columns.
fn banner(look: &Look) -> String {
    let line = "-".repeat(80);
    let t = crate::cli::sacct::time::time_str;
    let (start, end) = look.period;
    let mut out = format!("{line}\nJob Sizes {} - {} ({} secs)\n", t(start), t(end - 1), end - start);
    if let Some(tres) = look.tres_text {
        out.push_str(&format!("TRES type is {tres}\n"));
    }
    if look.job_count {
        out.push_str("Units are in number of jobs ran\n");
    } else {
        out.push_str(&format!("Time reported in {}\n", look.time.words()));
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// One row's cells.
fn cells(look: &Look, cols: &[Col], row: &AcctRow, cluster: Sum) -> Vec<Cell> {
    let text = |s: String| Cell::Text(Some(s));
    let mut out: Vec<Cell> = cols
        .iter()
        .map(|c| match c.field {
            Field::Account => text(row.account.clone()),
            Field::Cluster => text(look.cluster.to_string()),
            Field::Blank => Cell::Text(None),
        })
        .collect();
    for sum in &row.bins {
        out.push(match look.job_count {
            true => Cell::Number(Some(sum.jobs)),
            false => text(look.time.show(sum.secs, row.total.secs)),
        });
    }
    let (mine, all) = match look.job_count {
        true => (row.total.jobs, cluster.jobs),
        false => (row.total.secs, cluster.secs),
    };
    out.push(text(match look.job_count {
        true => mine.to_string(),
        false => look.time.show(mine, 0),
    }));
    out.push(text(TimeFormat::Percent.show(mine, all)));
    out
}

#[cfg(test)]
mod tests {
    use super::super::bins::bins;
    use super::*;

    fn look(time: TimeFormat, job_count: bool, layout: Layout) -> Look<'static> {
        // 2026-11-26T00:00:00Z .. a day later.
        Look {
            cluster: "ci26",
            period: (1_795_651_200, 1_795_737_600),
            time,
            tres_text: None,
            job_count,
            layout,
            header: true,
        }
    }

    fn tally() -> Tally {
        let row = |account: &str, jobs: u64, secs: u64| AcctRow {
            account: account.into(),
            bins: vec![Sum { jobs, secs }, Sum::default()],
            total: Sum { jobs, secs },
        };
        Tally { rows: vec![row("chem", 2, 13200), row("physics", 3, 9410)], cluster: Sum { jobs: 5, secs: 22610 } }
    }

    fn rendered(l: &Look, format: &str) -> String {
        let names: Vec<String> = format.split(',').map(String::from).collect();
        let cols = columns(&names, &mut false);
        let unit = if l.tres_text.is_some() { "TRES" } else { "CPUs" };
        render(l, &cols, &bins(&["50".to_string()], false, unit, 13), &tally())
    }

    #[test]
    fn rows_show_time_per_range_the_total_and_the_share_of_the_cluster() {
        let text = rendered(&look(TimeFormat::Mins, false, Layout::Fixed), "cl,a");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "Time reported in Minutes");
        assert_eq!(lines[4], "  Cluster   Account     0-49 CPUs    >= 50 CPUs Total Count % of cluster ");
        assert_eq!(lines[6], "     ci26      chem           220             0         220       58.38% ");
        assert_eq!(lines[7], "     ci26   physics           157             0         157       41.62% ");
    }

    #[test]
    fn percent_divides_the_total_by_one_as_slurm_does() {
        let text = rendered(
            &look(TimeFormat::Percent, false, Layout::Parsable { delimiter: "|".into(), trailing: false }),
            "a",
        );
        assert!(
            text.ends_with("chem|100.00%|0.00%|1320000.00%|58.38%\nphysics|100.00%|0.00%|941000.00%|41.62%\n"),
            "{text}"
        );
    }

    #[test]
    fn print_job_count_counts_jobs() {
        let mut l = look(TimeFormat::Mins, true, Layout::Parsable { delimiter: "|".into(), trailing: true });
        l.tres_text = Some("gres/gpu");
        let text = rendered(&l, "a");
        assert!(text.contains("\nTRES type is gres/gpu\nUnits are in number of jobs ran\n"), "{text}");
        assert!(text.contains("Account|0-49 TRES|>= 50 TRES|Total Count|% of cluster|\n"), "{text}");
        assert!(text.ends_with("chem|2|0|2|40.00%|\nphysics|3|0|3|60.00%|\n"), "{text}");
    }

    #[test]
    fn format_names_match_as_slurm_matches_them() {
        let names: Vec<String> = ["co", "cl%-12", "wc", "x", "u"].iter().map(|s| s.to_string()).collect();
        let mut bad = false;
        let cols = columns(&names, &mut bad);
        let got: Vec<(&str, i32)> = cols.iter().map(|c| (c.name, c.width)).collect();
        assert_eq!(got, [("TRES Count", 10), ("Cluster", -12), ("Wckey", 9), ("User", 9)]);
        assert!(bad);
    }
}
