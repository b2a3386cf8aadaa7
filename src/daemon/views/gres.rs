//! The node's GPUs in Slurm's GRES words: the node's `GresUsed` (`gpu:a100:2(IDX:0-1)`), as
//! slurmctld's `_node_gres_used` writes it for GPUs with device files.

use crate::id_set::ranges;
use std::collections::BTreeSet;

/// The node's `GresUsed` for GPUs of gres type `gres_type` (`None`: untyped) of which
/// `allocated` are given to jobs: `gpu:a100:2(IDX:0-1)`, `gpu:a100:0(IDX:N/A)` when none is;
/// empty for a node without GPUs (`has_gpus` false), which Slurm prints as `(null)`.
pub fn gres_used(has_gpus: bool, gres_type: Option<&str>, allocated: &BTreeSet<u32>) -> String {
    if !has_gpus {
        return String::new();
    }
    let typed = gres_type.map_or_else(String::new, |t| format!(":{t}"));
    let indices: Vec<u32> = allocated.iter().copied().collect();
    let idx = if indices.is_empty() { "N/A".to_string() } else { ranges(&indices) };
    format!("gpu{typed}:{}(IDX:{idx})", indices.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_used_counts_the_given_gpus_with_their_indices() {
        let set = |v: &[u32]| v.iter().copied().collect::<BTreeSet<u32>>();
        assert_eq!(gres_used(true, Some("a100"), &set(&[])), "gpu:a100:0(IDX:N/A)");
        assert_eq!(gres_used(true, Some("a100"), &set(&[0, 1])), "gpu:a100:2(IDX:0-1)");
        assert_eq!(gres_used(true, None, &set(&[0, 1, 3])), "gpu:3(IDX:0-1,3)");
        assert_eq!(gres_used(true, None, &set(&[])), "gpu:0(IDX:N/A)");
        assert_eq!(gres_used(false, None, &set(&[])), "");
    }
}
