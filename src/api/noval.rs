//! slurmrestd's `{set, infinite, number}` wrapper for optional numbers.

use serde::{Deserialize, Deserializer, Serialize};

/// A number that may be unset or infinite, as slurmrestd's `*_no_val_struct` types.
///
/// On input it also accepts a bare number or a numeric string, as slurmrestd does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct NoVal<T> {
    /// Whether `number` carries a value.
    pub set: bool,
    /// Whether the value is infinite (unlimited).
    pub infinite: bool,
    /// The value; meaningful only when `set` is true.
    pub number: T,
}

impl<T: Default> NoVal<T> {
    /// A set value.
    pub fn of(number: T) -> Self {
        Self { set: true, infinite: false, number }
    }
    /// No value.
    pub fn unset() -> Self {
        Self { set: false, infinite: false, number: T::default() }
    }
    /// The infinite value.
    pub fn infinite() -> Self {
        Self { set: false, infinite: true, number: T::default() }
    }
    /// `Some(number)` when set and finite.
    pub fn get(self) -> Option<T> {
        (self.set && !self.infinite).then_some(self.number)
    }
    /// `None` → unset, `Some(n)` → set.
    pub fn from_option(value: Option<T>) -> Self {
        value.map(Self::of).unwrap_or_else(Self::unset)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NoValInput<T> {
    Number(T),
    Text(String),
    /// An array, refused: serde would read the struct from it by position. (Its items are
    /// only skipped.)
    Array(#[allow(dead_code)] Vec<serde::de::IgnoredAny>),
    Struct {
        #[serde(default)]
        set: Option<bool>,
        #[serde(default)]
        infinite: bool,
        #[serde(default)]
        number: Option<T>,
    },
}

impl<'de, T> Deserialize<'de> for NoVal<T>
where
    T: Deserialize<'de> + Default + std::str::FromStr,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match NoValInput::<T>::deserialize(deserializer)? {
            NoValInput::Number(n) => Ok(NoVal::of(n)),
            NoValInput::Text(s) => {
                let s = s.trim();
                if s.eq_ignore_ascii_case("infinite") || s.eq_ignore_ascii_case("unlimited") {
                    return Ok(NoVal::infinite());
                }
                s.parse::<T>()
                    .map(NoVal::of)
                    .map_err(|_| serde::de::Error::custom(format!("expected a number, got \"{s}\"")))
            }
            NoValInput::Array(_) => Err(serde::de::Error::custom(
                "expected a number, a string or {\"set\", \"infinite\", \"number\"}, got an array",
            )),
            NoValInput::Struct { set, infinite, number } => Ok(NoVal {
                set: set.unwrap_or(number.is_some()) && !infinite,
                infinite,
                number: number.unwrap_or_default(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_bare_numbers_strings_and_structs() {
        let a: NoVal<u32> = serde_json::from_str("10").unwrap();
        assert_eq!(a.get(), Some(10));
        let b: NoVal<u32> = serde_json::from_str("\"12\"").unwrap();
        assert_eq!(b.get(), Some(12));
        let c: NoVal<u32> = serde_json::from_str(r#"{"set":true,"infinite":false,"number":5}"#).unwrap();
        assert_eq!(c.get(), Some(5));
        let d: NoVal<u32> = serde_json::from_str(r#"{"infinite":true}"#).unwrap();
        assert!(d.infinite && d.get().is_none());
        assert!(serde_json::from_str::<NoVal<u32>>("\"abc\"").is_err());
        for array in ["[]", "[true, false, 5]", "[5]"] {
            assert!(serde_json::from_str::<NoVal<u32>>(array).is_err(), "{array}");
        }
    }

    #[test]
    fn serializes_as_the_wrapper() {
        let v = serde_json::to_string(&NoVal::of(3u32)).unwrap();
        assert_eq!(v, r#"{"set":true,"infinite":false,"number":3}"#);
    }
}
