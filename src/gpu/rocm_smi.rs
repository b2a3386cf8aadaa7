//! `rocm-smi --json`: AMD's tool lists the GPUs its driver (`amdgpu`, `/dev/kfd`) sees, with
//! model, PCI bus id and unique id. Programs are shown their AMD GPUs through
//! `ROCR_VISIBLE_DEVICES`.

use super::{gres_type_of_model, Gpu, GpuError, GpuSource, Vendor};

/// The arguments that make `rocm-smi` list each GPU as a JSON object `cardN`.
pub const QUERY: [&str; 4] = ["--showproductname", "--showbus", "--showuniqueid", "--json"];

/// Runs `rocm-smi` (looked up in `PATH`).
#[derive(Debug, Clone)]
pub struct RocmSmi {
    program: String,
}

impl Default for RocmSmi {
    fn default() -> RocmSmi {
        RocmSmi { program: "rocm-smi".into() }
    }
}

impl GpuSource for RocmSmi {
    fn name(&self) -> &str {
        &self.program
    }

    fn discover(&self) -> Result<Vec<Gpu>, GpuError> {
        Ok(parse_rocm_smi(&super::tool::output_of(&self.program, &QUERY)?))
    }
}

/// Parses `rocm-smi --json`'s object of `cardN` objects into GPUs indexed by N, in index
/// order; keys are matched without regard to case (`Card series` and `Card Series` differ
/// between ROCm releases). Text that is not such an object lists none.
pub fn parse_rocm_smi(text: &str) -> Vec<Gpu> {
    let Ok(serde_json::Value::Object(cards)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let mut gpus: Vec<Gpu> = cards
        .iter()
        .filter_map(|(key, card)| {
            let index: u32 = key.strip_prefix("card")?.parse().ok()?;
            let field = |name: &str| {
                card.as_object()?
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .and_then(|(_, v)| v.as_str())
                    .map(str::trim)
                    .filter(|v| !v.is_empty() && *v != "N/A")
                    .map(String::from)
            };
            let model = field("Card series").or_else(|| field("Card model"));
            Some(Gpu {
                uuid: field("Unique ID").map(|id| format!("GPU-{}", id.trim_start_matches("0x"))),
                gres_type: model.as_deref().map(gres_type_of_model),
                model,
                pci_bus_id: field("PCI Bus"),
                vendor: Vendor::Amd,
                ..Gpu::nvidia(index)
            })
        })
        .collect();
    gpus.sort_by_key(|g| g.index);
    gpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rocm_smi_json() {
        let text = r#"{"card1": {"PCI Bus": "0000:C2:00.0", "Unique ID": "0x2b", "Card Series": "AMD Instinct MI210"},
                       "card0": {"PCI Bus": "0000:C1:00.0", "Unique ID": "0x18f68e602b8a790f", "Card series": "AMD Instinct MI210",
                                 "Card model": "0x0c34"},
                       "system": {"Driver version": "6.7.0"}}"#;
        let gpus = parse_rocm_smi(text);
        assert_eq!(gpus.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(gpus[0].vendor, Vendor::Amd);
        assert_eq!(gpus[0].model.as_deref(), Some("AMD Instinct MI210"));
        assert_eq!(gpus[0].gres_type.as_deref(), Some("amd_instinct_mi210"));
        assert_eq!(gpus[0].uuid.as_deref(), Some("GPU-18f68e602b8a790f"));
        assert_eq!(gpus[1].pci_bus_id.as_deref(), Some("0000:C2:00.0"));
        assert!(parse_rocm_smi("WARNING: No AMD GPUs specified").is_empty());
    }
}
