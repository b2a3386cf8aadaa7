//! The numbers the board's calls take in their query (`?since=…`, `?pending=…`), and the
//! refusal of one that is no number.

use crate::api::types::{errno, ApiError};
use std::str::FromStr;

/// The value of the query parameter `name` among `params` (the last one given), parsed;
/// `Ok(None)` when it is not given, the refusal when it is no number of its kind.
pub fn number<T: FromStr>(params: &[(String, String)], name: &str) -> Result<Option<T>, ApiError> {
    let Some((_, text)) = params.iter().rev().find(|(key, _)| key == name) else { return Ok(None) };
    text.trim().parse().map(Some).map_err(|_| ApiError {
        description: format!("Unable to parse {name}={text}: a whole number is expected"),
        error_number: errno::BAD_REQUEST,
        error: "Invalid query parameter".into(),
        source: name.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_is_parsed_or_refused() {
        let params = vec![("since".to_string(), "12".to_string()), ("pending".to_string(), "x".to_string())];
        assert_eq!(number::<i64>(&params, "since").unwrap(), Some(12));
        assert_eq!(number::<u32>(&params, "days").unwrap(), None);
        let e = number::<u32>(&params, "pending").unwrap_err();
        assert_eq!((e.error_number, e.source.as_str()), (errno::BAD_REQUEST, "pending"));
        assert!(number::<u32>(&[("pending".into(), "-1".into())], "pending").is_err());
    }
}
