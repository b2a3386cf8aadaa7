//! Output file name patterns: `%j %J %x %u %N %n %s %t %A %a %%` with optional zero padding (`%4j`).

/// The values a file name pattern can refer to.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PatternContext {
    /// `%j`: job id (for array tasks, the task's own id).
    pub job_id: u32,
    /// `%x`: job name.
    pub job_name: String,
    /// `%u`: user name.
    pub user: String,
    /// `%N`: node name.
    pub node: String,
    /// `%A`: array master job id (the job id when not an array).
    pub array_job_id: u32,
    /// `%a`: array task id, if any.
    pub array_task_id: Option<u32>,
    /// `%s`: step id (`batch` for the batch step).
    pub step: String,
    /// `%t`: task id.
    pub task_id: u32,
    /// `%n`: node id relative to the job.
    pub node_id: u32,
}

/// The largest zero-padding width Slurm honours (`%20j` pads to 10).
pub const MAX_WIDTH: usize = 10;

/// Slurm's batch step id: `%J` is then just the job id.
const BATCH_STEP: &str = "batch";

/// Expands a file name pattern as Slurm's `fname_create` does:
///
/// * `%j` job id, `%J` job id plus `.step` (just the job id for the batch step), `%A` array
///   master job id, `%a` array task id (4294967294 when not an array task), `%s` step id
///   (`batch` for the batch step), `%t` task id, `%n` node id, `%N` node name, `%u` user
///   name, `%x` job name, `%%` a `%`;
/// * a number after `%` zero-pads numeric values (`%4j` → `0042`), at most to
///   [`MAX_WIDTH`] digits; it is ignored for names;
/// * unknown codes are kept as written (`%q`, `%4q`, a trailing `%`);
/// * a pattern containing a backslash is taken literally: no substitution at all, and the
///   backslashes are removed (`\\` stands for one backslash).
pub fn expand(pattern: &str, ctx: &PatternContext) -> String {
    if pattern.contains('\\') {
        return unescape(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut width = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            width.push(*d);
            chars.next();
        }
        let w: usize = width.parse::<usize>().unwrap_or(if width.is_empty() { 0 } else { MAX_WIDTH }).min(MAX_WIDTH);
        let num = |n: u64| format!("{n:0w$}");
        match chars.next() {
            Some('%') => out.push('%'),
            Some('j') => out.push_str(&num(ctx.job_id as u64)),
            Some('J') => {
                out.push_str(&num(ctx.job_id as u64));
                if !ctx.step.is_empty() && ctx.step != BATCH_STEP {
                    out.push('.');
                    out.push_str(&ctx.step);
                }
            }
            Some('A') => out.push_str(&num(ctx.array_job_id as u64)),
            Some('a') => out.push_str(&num(ctx.array_task_id.unwrap_or(4294967294) as u64)),
            Some('x') => out.push_str(&ctx.job_name),
            Some('u') => out.push_str(&ctx.user),
            Some('N') => out.push_str(&ctx.node),
            Some('n') => out.push_str(&num(ctx.node_id as u64)),
            Some('t') => out.push_str(&num(ctx.task_id as u64)),
            Some('s') => match ctx.step.parse::<u64>() {
                Ok(n) => out.push_str(&num(n)),
                Err(_) => out.push_str(&ctx.step),
            },
            Some(other) => {
                out.push('%');
                out.push_str(&width);
                out.push(other);
            }
            None => {
                out.push('%');
                out.push_str(&width);
            }
        }
    }
    out
}

/// Removes the backslashes of an escaped pattern (`\\` is one backslash).
fn unescape(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> PatternContext {
        PatternContext {
            job_id: 42,
            job_name: "train".into(),
            user: "alice".into(),
            node: "gpu12".into(),
            array_job_id: 42,
            array_task_id: None,
            step: "batch".into(),
            task_id: 0,
            node_id: 0,
        }
    }

    #[test]
    fn every_code() {
        let c = ctx();
        assert_eq!(expand("slurm-%j.out", &c), "slurm-42.out");
        assert_eq!(expand("%J", &c), "42");
        assert_eq!(expand("%x", &c), "train");
        assert_eq!(expand("%u", &c), "alice");
        assert_eq!(expand("%N", &c), "gpu12");
        assert_eq!(expand("%n", &c), "0");
        assert_eq!(expand("%s", &c), "batch");
        assert_eq!(expand("%t", &c), "0");
        assert_eq!(expand("%A", &c), "42");
        assert_eq!(expand("%a", &c), "4294967294");
        assert_eq!(expand("100%%", &c), "100%");
        assert_eq!(expand("%%j", &c), "%j");
        assert_eq!(expand("logs/%x-%j.log", &c), "logs/train-42.log");
        assert_eq!(expand("%N_%j.out", &c), "gpu12_42.out");
        assert_eq!(expand("%s.e%j", &c), "batch.e42");
        assert_eq!(expand("%x.o%j", &c), "train.o42");
        assert_eq!(expand("", &c), "");
        assert_eq!(expand("plain.txt", &c), "plain.txt");
    }

    #[test]
    fn array_and_steps() {
        let c = PatternContext { job_id: 43, array_job_id: 40, array_task_id: Some(3), step: "2".into(), ..ctx() };
        assert_eq!(expand("%A_%a", &c), "40_3");
        assert_eq!(expand("%J", &c), "43.2");
        assert_eq!(expand("%3s", &c), "002");
        assert_eq!(expand("%j", &c), "43");
    }

    #[test]
    fn zero_padding() {
        let c = ctx();
        assert_eq!(expand("%4j", &c), "0042");
        assert_eq!(expand("%1j", &c), "42");
        assert_eq!(expand("%0j", &c), "42");
        assert_eq!(expand("%10j", &c), "0000000042");
        assert_eq!(expand("%20j", &c), "0000000042");
        assert_eq!(expand("%99999999999999999999j", &c), "0000000042");
        assert_eq!(expand("%3t-%2n", &c), "000-00");
        assert_eq!(expand("%5A", &c), "00042");
        // names ignore the width
        assert_eq!(expand("%8x", &c), "train");
        assert_eq!(expand("%8N", &c), "gpu12");
        assert_eq!(expand("%8u", &c), "alice");
        assert_eq!(expand("%8s", &c), "batch");
    }

    #[test]
    fn unknown_codes_kept() {
        let c = ctx();
        assert_eq!(expand("%q", &c), "%q");
        assert_eq!(expand("%4q", &c), "%4q");
        assert_eq!(expand("end%", &c), "end%");
        assert_eq!(expand("end%4", &c), "end%4");
        assert_eq!(expand("%é", &c), "%é");
    }

    #[test]
    fn backslash_disables_substitution() {
        let c = ctx();
        assert_eq!(expand(r"\%j.out", &c), "%j.out");
        assert_eq!(expand(r"out-%j\.log", &c), "out-%j.log");
        assert_eq!(expand(r"a\\b%j", &c), r"a\b%j");
        assert_eq!(expand(r"x\", &c), "x");
    }
}
