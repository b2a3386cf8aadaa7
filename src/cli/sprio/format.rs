//! sprio's format letters (`-o "%.15i %9r %.10Y …"`) and how each prints a job, the weights
//! row (`-w`) or the header, as Slurm's sprio prints them: a `.` before the width right-
//! justifies, every field is cut to its width, weighted factors print as whole numbers
//! (`%.0f`), normalised ones with seven decimals.

use crate::api::types::{JobPriority, PriorityWeights};

/// One field of a format: its letter, width, justification and the text after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The letter (`i`, `Y`, …).
    pub letter: char,
    /// Its width; 0: as wide as its text.
    pub width: usize,
    /// Right-justified (`%.10Y`).
    pub right: bool,
    /// What follows it up to the next `%`.
    pub suffix: String,
}

/// The letters sprio knows, for the error of any other.
pub const LETTERS: &str = "aAbBcfFijJnNopPrSqQsuyYtT";

/// A format: the text before its first field, and the fields. `Err` names a letter sprio
/// does not know.
pub fn parse(format: &str) -> Result<(String, Vec<Field>), char> {
    let mut parts = format.split('%');
    let prefix = parts.next().unwrap_or_default().to_string();
    let mut fields = Vec::new();
    for token in parts {
        let (right, rest) = match token.strip_prefix('.') {
            Some(rest) => (true, rest),
            None => (false, token),
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let width = rest[..digits].parse().unwrap_or(0);
        let mut chars = rest[digits..].chars();
        let Some(letter) = chars.next() else { continue };
        if !LETTERS.contains(letter) {
            return Err(letter);
        }
        fields.push(Field { letter, width, right, suffix: chars.collect() });
    }
    Ok((prefix, fields))
}

/// What a line shows.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    /// The names of the fields.
    Header,
    /// The weights (`-w`).
    Weights,
    /// A job.
    Job(&'a JobPriority),
}

/// `text` in a field of `width`, cut to it, as sprio's `_print_str` writes it.
fn fit(text: &str, width: usize, right: bool) -> String {
    if width == 0 {
        return text.to_string();
    }
    let cut: String = text.chars().take(width).collect();
    if right {
        format!("{cut:>width$}")
    } else {
        format!("{cut:<width$}")
    }
}

/// A weighted factor as sprio prints it: `%.0f`.
fn whole(n: f64) -> String {
    format!("{n:.0}")
}

/// The weighted factors of a job, and its priority from them, as sprio adds them up.
pub struct Weighted {
    pub age: f64,
    pub fairshare: f64,
    pub job_size: f64,
    pub partition: f64,
    pub qos: f64,
    pub tres: Vec<(String, f64)>,
}

impl Weighted {
    /// `job`'s factors times `w`.
    pub fn of(job: &JobPriority, w: &PriorityWeights) -> Weighted {
        Weighted {
            age: job.age * w.age as f64,
            fairshare: job.fairshare * w.fairshare as f64,
            job_size: job.job_size * w.job_size as f64,
            partition: job.partition_factor * w.partition as f64,
            qos: job.qos_factor * w.qos as f64,
            tres: job
                .tres
                .iter()
                .map(|t| {
                    let weight = w.tres.iter().find(|x| x.name == t.name).map_or(0.0, |x| x.value);
                    (t.name.to_ascii_lowercase(), t.value * weight)
                })
                .collect(),
        }
    }

    /// The priority these add up to (with the site factor and less the nice value), at
    /// least 1.
    pub fn priority(&self, job: &JobPriority) -> f64 {
        let sum = self.age
            + self.fairshare
            + self.job_size
            + self.partition
            + self.qos
            + self.tres.iter().map(|(_, v)| v).sum::<f64>()
            + job.site as f64
            - job.nice as f64;
        sum.max(1.0)
    }
}

/// The text of `field` on `line`.
pub fn cell(field: &Field, line: Line, w: &PriorityWeights) -> String {
    let (width, right) = (field.width, field.right);
    let text = match line {
        Line::Header => header(field.letter).to_string(),
        Line::Weights => weight(field.letter, w),
        Line::Job(job) => value(field.letter, job, w),
    };
    fit(&text, width, right) + &field.suffix
}

fn header(letter: char) -> &'static str {
    match letter {
        'a' | 'A' => "AGE",
        'b' | 'B' => "ASSOC",
        'c' => "CLUSTER",
        'f' | 'F' => "FAIRSHARE",
        'i' => "JOBID",
        'j' | 'J' => "JOBSIZE",
        'n' => "QOSNAME",
        'N' => "NICE",
        'o' => "ACCOUNT",
        'p' | 'P' | 'r' => "PARTITION",
        'S' => "SITE",
        'q' | 'Q' => "QOS",
        's' => "SLUID",
        'u' => "USER",
        'y' | 'Y' => "PRIORITY",
        _ => "TRES",
    }
}

/// The weights row's text of a letter.
fn weight(letter: char, w: &PriorityWeights) -> String {
    match letter {
        'a' | 'A' => whole(w.age as f64),
        'b' | 'B' => whole(0.0),
        'f' | 'F' => whole(w.fairshare as f64),
        'j' | 'J' => whole(w.job_size as f64),
        'p' | 'P' => whole(w.partition as f64),
        'q' | 'Q' => whole(w.qos as f64),
        'S' => whole(1.0),
        'i' => "Weights".into(),
        'T' => w.tres.iter().map(|t| format!("{}={}", t.name, t.value)).collect::<Vec<_>>().join(","),
        _ => String::new(),
    }
}

/// A job's text of a letter.
fn value(letter: char, job: &JobPriority, w: &PriorityWeights) -> String {
    let weighted = Weighted::of(job, w);
    let norm = |n: f64| format!("{n:.7}");
    match letter {
        'a' => norm(if w.age > 0 { job.age } else { 0.0 }),
        'A' => whole(weighted.age),
        'b' => norm(0.0),
        'B' => whole(0.0),
        'c' => String::new(),
        'f' => norm(if w.fairshare > 0 { job.fairshare } else { 0.0 }),
        'F' => whole(weighted.fairshare),
        'i' => job.job_id.to_string(),
        'j' => norm(if w.job_size > 0 { job.job_size } else { 0.0 }),
        'J' => whole(weighted.job_size),
        'n' => job.qos.clone(),
        'N' => whole(job.nice as f64),
        'o' => job.account.clone(),
        'p' => norm(if w.partition > 0 { job.partition_factor } else { 0.0 }),
        'P' => whole(weighted.partition),
        'r' => job.partition.clone(),
        'S' => whole(job.site as f64),
        'q' => norm(if w.qos > 0 { job.qos_factor } else { 0.0 }),
        'Q' => whole(weighted.qos),
        's' => String::new(),
        'u' => job.user_name.clone(),
        'y' => format!("{:16.14}", weighted.priority(job) / u32::MAX as f64),
        'Y' => format!("{}", weighted.priority(job) as i64),
        't' => tres_list(job, w, |t, v| {
            format!("{t}={:.2}", v / w.tres.iter().find(|x| x.name.eq_ignore_ascii_case(t)).map_or(1.0, |x| x.value))
        }),
        _ => tres_list(job, w, |t, v| format!("{t}={v:.0}")),
    }
}

/// The non-zero weighted TRES factors, each written by `show`.
fn tres_list(job: &JobPriority, w: &PriorityWeights, show: impl Fn(&str, f64) -> String) -> String {
    Weighted::of(job, w).tres.iter().filter(|(_, v)| *v != 0.0).map(|(t, v)| show(t, *v)).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::types::TresValue;

    fn weights() -> PriorityWeights {
        PriorityWeights {
            age: 1000,
            fairshare: 10_000,
            job_size: 100,
            partition: 1000,
            multifactor: true,
            ..Default::default()
        }
    }

    fn job() -> JobPriority {
        JobPriority {
            job_id: 42,
            user_name: "alice".into(),
            account: "physics".into(),
            partition: "gpu".into(),
            age: 0.25,
            fairshare: 0.5,
            job_size: 0.75,
            partition_factor: 1.0,
            ..Default::default()
        }
    }

    #[test]
    fn the_default_format_reads_and_prints_as_sprio_does() {
        let (prefix, fields) = parse("%.15i %9r %.10Y %.10S %.10A %.10F").unwrap();
        assert_eq!(prefix, "");
        let line: String = fields.iter().map(|f| cell(f, Line::Job(&job()), &weights())).collect();
        assert_eq!(line, "             42 gpu             6325          0        250       5000");
        let header: String = fields.iter().map(|f| cell(f, Line::Header, &weights())).collect();
        assert_eq!(header, "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE");
        let w: String = fields.iter().map(|f| cell(f, Line::Weights, &weights())).collect();
        assert_eq!(w, "        Weights                               1       1000      10000");
    }

    #[test]
    fn normalised_factors_have_seven_decimals_and_fields_are_cut() {
        let (_, fields) = parse("%10a %.3u %10y").unwrap();
        let line: String = fields.iter().map(|f| cell(f, Line::Job(&job()), &weights())).collect();
        assert_eq!(line, "0.2500000  ali 0.00000147");
        assert_eq!(parse("%Z"), Err('Z'));
    }

    #[test]
    fn tres_factors_print_weighted_and_normalised() {
        let w = PriorityWeights { tres: vec![TresValue { name: "GRES/gpu".into(), value: 3000.0 }], ..weights() };
        let j = JobPriority { tres: vec![TresValue { name: "GRES/gpu".into(), value: 0.25 }], ..job() };
        assert_eq!(value('T', &j, &w), "gres/gpu=750");
        assert_eq!(value('t', &j, &w), "gres/gpu=0.25");
        assert_eq!(weight('T', &w), "GRES/gpu=3000");
    }
}
