//! Who makes a request, and what that caller may see and do: every permission check of the
//! daemon goes through here. The Unix socket learns the caller from the connection's
//! credentials (`SO_PEERCRED`), the TCP address from a signed token; both give this one type.

use crate::config::Config;
use crate::daemon::model::job::Job;

/// Who makes a request.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    /// The user the request acts as: owner of what it submits, and whose jobs it may manage.
    pub uid: u32,
    /// The primary group of the calling process (or of the token's user), which a job
    /// submitted through it runs with.
    pub gid: u32,
}

impl Caller {
    /// Whether the caller may act on `job` (cancel, signal, hold, release, update, start
    /// steps in it): its owner, or a privileged caller. Every such check goes through here;
    /// a refusal is logged, naming who asked for what.
    pub fn may_manage(&self, job: &Job, config: &Config, action: &str) -> bool {
        let allowed = self.privileged(config) || self.uid == job.uid;
        if !allowed {
            tracing::warn!(
                uid = self.uid,
                user = %crate::identity::user_name(self.uid),
                job = job.id,
                owner = %crate::identity::user_name(job.uid),
                "{action} refused: not the job's owner, root or an operator"
            );
        }
        allowed
    }

    /// Whether the caller may act on anyone's job, release an administrator's hold and set
    /// priorities: root and the configured operators.
    pub fn privileged(&self, config: &Config) -> bool {
        self.uid == 0 || config.operators.contains(&self.uid)
    }

    /// Whether the caller may see `job`: everyone may (as in Slurm), unless `private_data`
    /// hides other users' jobs from all but their owners and privileged callers.
    pub fn may_see(&self, job: &Job, config: &Config) -> bool {
        !config.private_jobs || self.uid == job.uid || self.privileged(config)
    }
}
