//! Output file name patterns: `%j %J %x %u %N %n %s %t %A %a %%` with optional zero padding (`%4j`).

/// The values a file name pattern can refer to.
#[derive(Debug, Clone, Default)]
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

/// Expands a pattern. Unknown `%` codes are kept as they are, as Slurm does.
pub fn expand(pattern: &str, ctx: &PatternContext) -> String {
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
        let w: usize = width.parse().unwrap_or(0);
        let num = |n: u64| format!("{n:0w$}");
        match chars.next() {
            Some('%') => out.push('%'),
            Some('j') | Some('J') => out.push_str(&num(ctx.job_id as u64)),
            Some('A') => out.push_str(&num(ctx.array_job_id as u64)),
            Some('a') => out.push_str(&num(ctx.array_task_id.unwrap_or(4294967294) as u64)),
            Some('x') => out.push_str(&ctx.job_name),
            Some('u') => out.push_str(&ctx.user),
            Some('N') => out.push_str(&ctx.node),
            Some('n') => out.push_str(&num(ctx.node_id as u64)),
            Some('t') => out.push_str(&num(ctx.task_id as u64)),
            Some('s') => out.push_str(&ctx.step),
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
