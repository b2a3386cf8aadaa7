//! The client's calls about sharing the machine: sprio's priority factors (slurmlet's own
//! call) and sshare's fair-share tree (slurmrestd's).

use crate::api::client::Client;
use crate::api::client_error::ClientError;

impl Client {
    /// `GET /slurmlet/v1/priorities`: the pending jobs' priority factors (`sprio`; slurmrestd
    /// has no call for them).
    pub fn priorities(&self) -> Result<crate::api::types::PrioritiesResponse, ClientError> {
        self.slurmlet_only("sprio")?;
        self.get("/slurmlet/v1/priorities")
    }

    /// `GET /slurm/v0.0.43/shares`: the fair-share tree (`sshare`), kept to `accounts` and
    /// `users` when given; a real slurmrestd answers it too.
    pub fn shares(
        &self,
        accounts: &[String],
        users: &[String],
    ) -> Result<crate::api::types::SharesResponse, ClientError> {
        let mut query = Vec::new();
        if !accounts.is_empty() {
            query.push(format!("accounts={}", crate::api::url::percent_encode(&accounts.join(","))));
        }
        if !users.is_empty() {
            query.push(format!("users={}", crate::api::url::percent_encode(&users.join(","))));
        }
        let q = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        self.get(&format!("/slurm/v0.0.43/shares{q}"))
    }
}
