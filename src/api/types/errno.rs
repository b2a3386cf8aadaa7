//! Slurm error numbers used in `errors[].error_number`.

/// `ESLURM_INVALID_PARTITION_NAME`
pub const INVALID_PARTITION_NAME: i32 = 2000;
/// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`
pub const REQUESTED_NODE_CONFIG_UNAVAILABLE: i32 = 2014;
/// `ESLURM_INVALID_JOB_ID`
pub const INVALID_JOB_ID: i32 = 2017;
/// `ESLURM_ALREADY_DONE`
pub const ALREADY_DONE: i32 = 2021;
/// `ESLURM_ACCESS_DENIED`
pub const ACCESS_DENIED: i32 = 2002;
/// `ESLURM_JOB_SCRIPT_MISSING` ("Job script not specified"): the script asked for of a
/// job that has none (an interactive allocation).
pub const JOB_SCRIPT_MISSING: i32 = 2009;
/// `ESLURM_USER_ID_MISSING` ("Invalid user id"): what Slurm answers a user who changes
/// another user's job or asks for another user's token.
pub const USER_ID_MISSING: i32 = 2010;
/// `ESLURM_JOB_HELD`
pub const JOB_HELD: i32 = 2042;
/// `ESLURM_JOB_NOT_PENDING`
pub const JOB_NOT_PENDING: i32 = 2073;
/// `ESLURM_JOB_FINISHED`
pub const JOB_FINISHED: i32 = 2084;
/// `SLURM_PROTOCOL_AUTHENTICATION_ERROR`: a REST request whose token is refused.
pub const AUTHENTICATION: i32 = 1007;
/// ESLURM_ACCOUNTING_POLICY: the job breaks a limit.
pub const ACCOUNTING_POLICY: i32 = 2050;
/// ESLURM_INVALID_ACCOUNT.
pub const INVALID_ACCOUNT: i32 = 2045;
/// `ESLURM_INVALID_TIME_LIMIT`
pub const INVALID_TIME_LIMIT: i32 = 2051;
/// `ESLURM_INVALID_GRES`
pub const INVALID_GRES: i32 = 2072;
/// `ESLURM_PATHNAME_TOO_LONG`, also Slurm's answer to a batch script over its
/// `max_script_size`.
pub const PATHNAME_TOO_LONG: i32 = 2012;
/// `ESLURM_DEPENDENCY`: "Job dependency problem".
pub const INVALID_DEPENDENCY: i32 = 2038;
/// `ESLURM_CIRCULAR_DEPENDENCY`: "Circular job dependency".
pub const CIRCULAR_DEPENDENCY: i32 = 2071;
/// `ESLURM_TRANSITION_STATE_NO_UPDATE`: "Job can not be altered now, try again later".
pub const TRANSITION_STATE_NO_UPDATE: i32 = 2020;
/// `ESLURM_JOB_PENDING`: "Job is pending execution".
pub const JOB_PENDING: i32 = 2024;
/// `ESLURM_BATCH_ONLY`: "Only batch jobs are accepted or processed".
pub const BATCH_ONLY: i32 = 2039;
/// `ESLURM_JOB_NOT_RUNNING`: "Job is not running".
pub const JOB_NOT_RUNNING: i32 = 2085;
/// `ESLURM_JOB_NOT_SUSPENDED`: "Job is not suspended".
pub const JOB_NOT_SUSPENDED: i32 = 2087;
/// ESLURM_INVALID_ARRAY: "Invalid job array specification".
pub const INVALID_ARRAY: i32 = 2081;
/// ESLURM_JOB_NOT_FINISHED: "Job is not finished" (a requeue of a job that may not be).
pub const JOB_NOT_FINISHED: i32 = 2088;
/// ESLURM_DISABLED: "Requested operation is presently disabled" (requeue of a
/// `--no-requeue` job).
pub const DISABLED: i32 = 2037;
/// `ESLURM_PATHNAME_TOO_LONG`-like: a job's output path cannot be used.
pub const INVALID_OUTPUT_PATH: i32 = 9001;
/// A field slurmlet does not know.
pub const UNKNOWN_FIELD: i32 = 9002;
/// The request body could not be parsed.
pub const BAD_REQUEST: i32 = 9003;
/// Generic error.
pub const ERROR: i32 = 1;
/// `SLURMCTLD_COMMUNICATIONS_BACKOFF` ("Rate limit exceeded, please retry momentarily"):
/// a connection past the daemon's limits, refused at once.
pub const BACKOFF: i32 = 1804;
/// `ESLURM_REST_INVALID_QUERY`: the request cannot be served as asked (no such path, a
/// method the path does not take).
pub const INVALID_QUERY: i32 = 9000;
/// `ESLURM_DATA_UNKNOWN_MIME_TYPE`: a body in a media type other than JSON.
pub const DATA_UNKNOWN_MIME_TYPE: i32 = 9204;
/// `ESLURM_DATA_TOO_LARGE`: a body over the size the daemon reads.
pub const DATA_TOO_LARGE: i32 = 9205;
/// `ESLURM_DATA_FLAGS_INVALID`: a flag the parser does not know.
pub const DATA_FLAGS_INVALID: i32 = 9207;
/// `ESLURM_USER_ID_UNKNOWN`: "Unable to resolve user ID to user name" (a user the
/// accounting query names that nobody knows).
pub const USER_ID_UNKNOWN: i32 = 2166;
/// `ESLURM_INVALID_NODE_COUNT`: "Node count specification invalid".
pub const INVALID_NODE_COUNT: i32 = 2006;
/// `ESLURM_NODES_BUSY`: "Requested nodes are busy" (a reservation over what running jobs
/// hold).
pub const NODES_BUSY: i32 = 2016;
/// `ESLURM_INVALID_NODE_NAME`: "Invalid node name specified".
pub const INVALID_NODE_NAME: i32 = 2018;
/// `ESLURM_RESERVATION_ACCESS`: "Access denied to requested reservation".
pub const RESERVATION_ACCESS: i32 = 2052;
/// `ESLURM_RESERVATION_INVALID`: "Requested reservation is invalid".
pub const RESERVATION_INVALID: i32 = 2053;
/// `ESLURM_INVALID_TIME_VALUE`: "Invalid time specified".
pub const INVALID_TIME_VALUE: i32 = 2054;
/// `ESLURM_RESERVATION_BUSY`: "Requested reservation is in use".
pub const RESERVATION_BUSY: i32 = 2055;
/// `ESLURM_RESERVATION_OVERLAP`: "Requested reservation overlaps with another reservation".
pub const RESERVATION_OVERLAP: i32 = 2058;
/// `ESLURM_RESERVATION_EMPTY`: "Reservation request lacks users, groups or accounts".
pub const RESERVATION_EMPTY: i32 = 2080;
/// `ESLURM_RESERVATION_NAME_DUP`: "Duplicate reservation name".
pub const RESERVATION_NAME_DUP: i32 = 2082;
/// `ESLURM_INVALID_CPU_COUNT`: "CPU count specification invalid".
pub const INVALID_CPU_COUNT: i32 = 2069;
/// `ESLURM_INVALID_TRES`: "Invalid Trackable RESource (TRES) specification".
pub const INVALID_TRES: i32 = 2116;
/// `ESLURM_NOT_SUPPORTED`: "Requested operation not supported on this system".
pub const NOT_SUPPORTED: i32 = 2036;
/// `ESLURM_RSV_ALREADY_STARTED`: "Reservation already started".
pub const RSV_ALREADY_STARTED: i32 = 2104;
/// `ESLURM_CORE_RESERVATION_UPDATE`: "Core-based reservation can not be updated".
pub const CORE_RESERVATION_UPDATE: i32 = 2109;
