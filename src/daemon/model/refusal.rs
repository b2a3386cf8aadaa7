//! A request refused as Slurm refuses it: its error number (`ESLURM_*`, what clients branch
//! on), Slurm's text for it, what went wrong in this request's own terms, where Slurm
//! refuses it, and how the request was wrong, which the HTTP status says. The scheduler
//! refuses in these terms; `http/` turns a refusal into slurmrestd's error envelope.

use crate::api::types::ApiError;

/// How a request was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It cannot be read as the endpoint takes it (400).
    Malformed,
    /// It asks for what this node cannot give or the request cannot mean (422).
    Invalid,
    /// The caller may not do it (403).
    Forbidden,
    /// What it names does not exist (404).
    NotFound,
    /// The daemon failed at it: a store that could not keep it, a check that could not run
    /// (500).
    Failed,
}

impl Kind {
    /// The HTTP status a refusal of this kind is sent with.
    pub fn status(self) -> u16 {
        match self {
            Kind::Malformed => 400,
            Kind::Invalid => 422,
            Kind::Forbidden => 403,
            Kind::NotFound => 404,
            Kind::Failed => 500,
        }
    }
}

/// A refusal: Slurm's error, and what this request did wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// How the request was wrong.
    pub kind: Kind,
    /// Slurm's error number (`ESLURM_*`).
    pub number: i32,
    /// Slurm's text for `number`, as `slurm_strerror` gives it.
    pub error: String,
    /// What went wrong in this request's terms: the option, the value, the limit.
    pub description: String,
    /// The Slurm function that refuses it (`slurm_submit_batch_job()`, …).
    pub source: String,
}

impl Refusal {
    /// A refusal of `kind` whose description is Slurm's text itself.
    pub fn new(kind: Kind, number: i32, error: &str, source: &str) -> Refusal {
        Refusal { kind, number, error: error.into(), description: error.into(), source: source.into() }
    }

    /// This refusal saying more than Slurm's text: `description`.
    pub fn saying(self, description: impl Into<String>) -> Refusal {
        Refusal { description: description.into(), ..self }
    }

    /// The HTTP status it is sent with.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError { description: r.description, error_number: r.number, error: r.error, source: r.source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_becomes_slurms_error_with_its_own_description() {
        let r = Refusal::new(Kind::Invalid, 2000, "Invalid partition name specified", "slurm_submit_batch_job()")
            .saying("no partition 'x' here");
        assert_eq!(r.status(), 422);
        let e = ApiError::from(r);
        assert_eq!((e.error_number, e.error.as_str()), (2000, "Invalid partition name specified"));
        assert_eq!(e.description, "no partition 'x' here");
    }
}
