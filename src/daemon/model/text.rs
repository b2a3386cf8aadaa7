//! Shared, immutable strings for the text fields of job records.
//!
//! A long queue repeats the same few values in every job: the partition, the working
//! directory, the output pattern, the submit host, the pending reason. Each [`Text`] with the
//! same contents points at one shared copy, so 100,000 jobs hold a handful of strings
//! instead of several hundred thousand small allocations, and a job record is smaller.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

/// An immutable string shared with every other [`Text`] of the same contents. It is one
/// pointer wide (the shared copy holds the string's own header), so a job's fifteen text
/// fields take 120 bytes.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<String>);

/// The strings in use: one copy of each distinct value except the empty one.
fn interner() -> &'static Mutex<HashSet<Text>> {
    static INTERNER: OnceLock<Mutex<HashSet<Text>>> = OnceLock::new();
    INTERNER.get_or_init(|| Mutex::new(HashSet::new()))
}

/// The empty text, the most common value of all. It is kept apart from the others: a
/// lookup would compare against an empty `String`'s dangling pointer, which costs some
/// processors a slow masked-load assist on every comparison.
fn empty() -> &'static Text {
    static EMPTY: OnceLock<Text> = OnceLock::new();
    EMPTY.get_or_init(|| Text(Arc::new(String::new())))
}

impl Text {
    /// The shared copy of `s`.
    pub fn new(s: &str) -> Text {
        if s.is_empty() {
            return empty().clone();
        }
        let mut set = interner().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(shared) = set.get(s) {
            return shared.clone();
        }
        let shared = Text(Arc::new(s.to_string()));
        set.insert(shared.clone());
        shared
    }

    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Forgets the strings no job uses any more (called after finished jobs are purged).
    pub fn forget_unused() {
        let mut set = interner().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        set.retain(|t| Arc::strong_count(&t.0) > 1);
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::new("")
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::new(&s)
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::new(s)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.0.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.0.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == *other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_str(TextVisitor)
    }
}

/// Interns the string in place, without a copy of its own first.
struct TextVisitor;

impl serde::de::Visitor<'_> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
        Ok(Text::new(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_copy() {
        let a = Text::new("/work/shared-text-test");
        let b = Text::from(String::from("/work/shared-text-test"));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(std::mem::size_of::<Text>(), std::mem::size_of::<usize>());
        assert_eq!(a, "/work/shared-text-test");
        assert_eq!(a.len(), 22);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"/work/shared-text-test\"");
        let c: Text = serde_json::from_str(&json).unwrap();
        assert!(Arc::ptr_eq(&a.0, &c.0));
    }

    #[test]
    fn unused_texts_are_forgotten() {
        let probe = |s: &str| interner().lock().unwrap().get(s).is_some();
        let t = Text::new("only-here-once");
        Text::forget_unused();
        assert!(probe("only-here-once"), "still in use");
        drop(t);
        Text::forget_unused();
        assert!(!probe("only-here-once"));
        assert!(Arc::ptr_eq(&Text::new("").0, &Text::default().0), "one empty text");
    }
}
