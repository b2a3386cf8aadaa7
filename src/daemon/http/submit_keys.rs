//! The field names of a submit body, read without building the body: a field the daemon
//! does not know is refused, never dropped, and finding them must not cost a second copy
//! of every value.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The names found at the top level of a `job_submit_req` that are not in `top_known`, and
/// those in its `job` object that are not in `job_known`, as `(path, name)` with path `""`
/// or `"job/"`. `Err` when the body is not JSON or not an object.
pub fn unknown_keys(
    body: &[u8],
    top_known: &[&str],
    job_known: &[&str],
) -> Result<Vec<(&'static str, String)>, serde_json::Error> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    Keys { known: top_known, nested: Some(("job", job_known)), at: "", found: &mut found }.deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

/// One object whose keys are checked; `nested` names a member object checked the same way.
struct Keys<'a> {
    known: &'a [&'a str],
    nested: Option<(&'a str, &'a [&'a str])>,
    at: &'static str,
    found: &'a mut Vec<(&'static str, String)>,
}

impl<'de> DeserializeSeed<'de> for Keys<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<Cow<str>>()? {
            match self.nested {
                Some((name, known)) if key == name => {
                    // A `job` that is not an object is the typed parse's to report.
                    let keys = Keys { known, nested: None, at: "job/", found: &mut *self.found };
                    map.next_value_seed(Optional(keys))?;
                }
                _ => {
                    if !self.known.contains(&key.as_ref()) {
                        self.found.push((self.at, key.into_owned()));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A member that is checked when it is an object, refused when it is an array (serde would
/// read a struct from it by position, with no names to check), and left to the typed parse
/// when it is anything else.
struct Optional<'a>(Keys<'a>);

impl<'de> DeserializeSeed<'de> for Optional<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Optional<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<(), M::Error> {
        self.0.visit_map(map)
    }
    fn visit_seq<S: serde::de::SeqAccess<'de>>(self, _: S) -> Result<(), S::Error> {
        Err(serde::de::Error::invalid_type(serde::de::Unexpected::Seq, &"a JSON object"))
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_at_both_levels_are_found_and_values_skipped() {
        let body = br#"{"script":"x","bogus":[1,{"a":2}],"job":{"name":"n","nodes":"1","weird\u0041":{"x":1}}}"#;
        let found = unknown_keys(body, &["script", "job"], &["name"]).unwrap();
        assert_eq!(
            found,
            vec![("", "bogus".to_string()), ("job/", "nodes".to_string()), ("job/", "weirdA".to_string())]
        );
    }

    #[test]
    fn a_job_that_is_null_or_a_scalar_is_left_to_the_typed_parse() {
        assert!(unknown_keys(br#"{"job":null}"#, &["job"], &[]).unwrap().is_empty());
        assert!(unknown_keys(br#"{"job":"x"}"#, &["job"], &[]).unwrap().is_empty());
    }

    #[test]
    fn a_job_that_is_an_array_is_refused() {
        let e = unknown_keys(br#"{"job":["acct",["argv"]]}"#, &["job"], &[]).unwrap_err();
        assert!(e.to_string().contains("invalid type: sequence, expected a JSON object"), "{e}");
    }

    #[test]
    fn bodies_that_are_not_json_objects_are_errors() {
        assert!(unknown_keys(b"[1]", &[], &[]).is_err());
        assert!(unknown_keys(b"{\"a\":", &[], &[]).is_err());
        assert!(unknown_keys(b"{} x", &[], &[]).is_err());
    }
}
