//! The client's calls for advance reservations: slurmrestd's, and the daemon's create-only
//! and update-only forms that `scontrol create` and `scontrol update` use.

use super::{Client, ClientError};
use crate::api::reservations::{ReservationDesc, ReservationModResponse, ReservationsResponse};
use crate::api::types::{Envelope, DATA_PARSER};

impl Client {
    /// `GET /slurm/v0.0.43/reservations`, or `/reservation/{name}` for one.
    pub fn reservations(&self, name: Option<&str>) -> Result<ReservationsResponse, ClientError> {
        match name {
            Some(n) => self.get(&format!("/slurm/{DATA_PARSER}/reservation/{}", crate::api::url::percent_encode(n))),
            None => self.get(&format!("/slurm/{DATA_PARSER}/reservations")),
        }
    }

    /// Creates a reservation (`create`) or updates one: on the daemon through its create-only
    /// and update-only calls, on a cluster through slurmrestd's `POST /reservation`.
    pub fn post_reservation(
        &self,
        desc: &ReservationDesc,
        create: bool,
    ) -> Result<ReservationModResponse, ClientError> {
        if self.profile.is_some() {
            return self.post(&format!("/slurm/{DATA_PARSER}/reservation"), desc);
        }
        self.post(if create { "/slurmlet/v1/reservation/create" } else { "/slurmlet/v1/reservation/update" }, desc)
    }

    /// `DELETE /slurm/v0.0.43/reservation/{name}`.
    pub fn delete_reservation(&self, name: &str) -> Result<Envelope, ClientError> {
        self.delete(&format!("/slurm/{DATA_PARSER}/reservation/{}", crate::api::url::percent_encode(name)))
    }
}
