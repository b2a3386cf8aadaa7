//! The node's GPUs in Slurm's GRES words: which indices are given out (`IDX:0-1,3`) and
//! the node's `GresUsed` (`gpu:a100:2(IDX:0-1)`), as slurmctld's `_node_gres_used` writes
//! them for GPUs with device files.

use std::collections::BTreeSet;

/// GPU indices in Slurm's range form (`0-1,3`), as `bit_fmt` writes a bitmap: ascending, runs
/// of two or more joined with `-`. `indices` must be ascending.
pub fn idx_list(indices: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { indices[i].to_string() } else { format!("{}-{}", indices[i], indices[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// The node's `GresUsed` for GPUs of gres type `gres_type` (`None`: untyped) of which
/// `allocated` are given to jobs: `gpu:a100:2(IDX:0-1)`, `gpu:a100:0(IDX:N/A)` when none is;
/// empty for a node without GPUs (`has_gpus` false), which Slurm prints as `(null)`.
pub fn gres_used(has_gpus: bool, gres_type: Option<&str>, allocated: &BTreeSet<u32>) -> String {
    if !has_gpus {
        return String::new();
    }
    let typed = gres_type.map_or_else(String::new, |t| format!(":{t}"));
    let indices: Vec<u32> = allocated.iter().copied().collect();
    let idx = if indices.is_empty() { "N/A".to_string() } else { idx_list(&indices) };
    format!("gpu{typed}:{}(IDX:{idx})", indices.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_written_as_ranges() {
        assert_eq!(idx_list(&[]), "");
        assert_eq!(idx_list(&[3]), "3");
        assert_eq!(idx_list(&[0, 1]), "0-1");
        assert_eq!(idx_list(&[0, 1, 3]), "0-1,3");
        assert_eq!(idx_list(&[0, 2, 4, 5, 6, 9]), "0,2,4-6,9");
    }

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
