//! Who makes a request (the peer's uid and gid from the socket's credentials), and what
//! that caller may see and do: every permission check of the daemon goes through here.

use crate::config::Config;
use crate::daemon::scheduling::job::Job;

/// Who makes a request.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    /// uid.
    pub uid: u32,
    /// gid.
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
