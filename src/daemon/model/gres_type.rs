//! The type of a GPU as a job names it (`--gres=gpu:tesla_t4:1`): kept inline, so that what
//! a job asks for stays a plain value the scheduler copies freely, and bounded, so that a
//! request cannot make the daemon keep a long text for it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest type name kept, in bytes. NVML's longest model names make types of some 25
/// bytes (`nvidia_h100_80gb_hbm3`, `nvidia_a100-sxm4-40gb`); a name longer than this is no
/// GPU's and is refused where a job asks for it.
pub const MAX_GRES_TYPE: usize = 63;

/// A GPU type name (`nvidia_a100-sxm4-40gb`, `tesla_t4`), at most [`MAX_GRES_TYPE`] bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct GresType {
    len: u8,
    bytes: [u8; MAX_GRES_TYPE],
}

impl GresType {
    /// `name` as a type; `None` when it is empty or longer than [`MAX_GRES_TYPE`] bytes.
    pub fn new(name: &str) -> Option<GresType> {
        if name.is_empty() || name.len() > MAX_GRES_TYPE {
            return None;
        }
        let mut bytes = [0; MAX_GRES_TYPE];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Some(GresType { len: name.len() as u8, bytes })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        // Built from a whole `&str` only, so the bytes are UTF-8 up to `len`.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or_default()
    }
}

impl std::fmt::Debug for GresType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for GresType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GresType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GresType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<GresType, D::Error> {
        let name = String::deserialize(deserializer)?;
        GresType::new(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("a GPU type of 1 to {MAX_GRES_TYPE} bytes: {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_is_kept_whole_or_refused() {
        let t4 = GresType::new("tesla_t4").unwrap();
        assert_eq!((t4.as_str(), t4.to_string()), ("tesla_t4", "tesla_t4".to_string()));
        assert_eq!(GresType::new("tesla_t4"), Some(t4));
        assert_ne!(GresType::new("tesla_t4x"), Some(t4));
        assert!(GresType::new("").is_none());
        assert!(GresType::new(&"x".repeat(MAX_GRES_TYPE)).is_some());
        assert!(GresType::new(&"x".repeat(MAX_GRES_TYPE + 1)).is_none());
        assert_eq!(GresType::new("é").unwrap().as_str(), "é");
    }

    #[test]
    fn a_type_is_stored_as_its_name() {
        let t4 = GresType::new("tesla_t4").unwrap();
        assert_eq!(serde_json::to_string(&t4).unwrap(), "\"tesla_t4\"");
        assert_eq!(serde_json::from_str::<GresType>("\"tesla_t4\"").unwrap(), t4);
        assert!(serde_json::from_str::<GresType>(&format!("\"{}\"", "x".repeat(100))).is_err());
    }
}
