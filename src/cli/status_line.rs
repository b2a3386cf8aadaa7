//! The line a command waiting on a job shows on a terminal (srun and salloc while their
//! allocation pends, `sbatch --wait` until its job ends): an indicatif spinner, the job's id,
//! its state, how long it has been in it and its pending reason. Nothing is shown when
//! standard error is not a terminal, so piped and logged output stays as it was.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A job's status line; [`StatusLine::finish`] takes it off the terminal.
pub struct StatusLine {
    bar: Option<indicatif::ProgressBar>,
    job_id: u32,
    state: String,
    reason: String,
    /// When the job entered its state, as far as this command knows.
    since: Instant,
}

/// The line's text: `job 12 PENDING 0:05 (Resources)`, `job 12 RUNNING 1:02:03`.
pub fn text(job_id: u32, state: &str, elapsed: u64, reason: &str) -> String {
    let time = crate::options::time::format_elapsed(elapsed);
    match reason {
        "" | "None" => format!("job {job_id} {state} {time}"),
        reason => format!("job {job_id} {state} {time} ({reason})"),
    }
}

impl StatusLine {
    /// Shows job `job_id` in `state` for `reason`, on standard error when it is a terminal.
    pub fn start(job_id: u32, state: &str, reason: &str) -> StatusLine {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        let line =
            StatusLine { bar, job_id, state: state.to_string(), reason: reason.to_string(), since: Instant::now() };
        line.refresh();
        line
    }

    /// Whether the line is on a terminal (else updating it is no use).
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// The job is now in `state` for `reason`; `elapsed`, when known, is how long it has been
    /// in it (else: since this command saw it enter it).
    pub fn set(&mut self, state: &str, reason: &str, elapsed: Option<u64>) {
        if let Some(secs) = elapsed {
            self.since = Instant::now().checked_sub(Duration::from_secs(secs)).unwrap_or_else(Instant::now);
        } else if state != self.state {
            self.since = Instant::now();
        }
        self.state = state.to_string();
        self.reason = reason.to_string();
        self.refresh();
    }

    /// Writes the line again (the time in the state moves on).
    pub fn refresh(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(text(self.job_id, &self.state, self.since.elapsed().as_secs(), &self.reason));
        }
    }

    /// Takes the line off the terminal.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn the_line_says_the_job_its_state_time_and_reason() {
        assert_eq!(text(12, "PENDING", 5, "Resources"), "job 12 PENDING 0:05 (Resources)");
        assert_eq!(text(12, "RUNNING", 3723, "None"), "job 12 RUNNING 1:02:03");
        assert_eq!(text(3, "RUNNING", 0, ""), "job 3 RUNNING 0:00");
    }
}
