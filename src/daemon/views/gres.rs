//! The node's GPUs and shards in Slurm's GRES words: the node's `GresUsed`
//! (`gpu:a100:1(IDX:0),shard:a100:10(-/8,2/8,8/8,0/8)`), as slurmctld's `_node_gres_used`
//! writes it for GPUs with device files, and a job's `gres_detail` (`gpu:2(IDX:0-1)`,
//! `shard:2(2/8,0/8,0/8,0/8)`), as `gres_build_job_details` writes it.

use crate::daemon::scheduling::core::GpuHeld;
use crate::id_set::ranges;

/// The node's `GresUsed`, from what jobs hold of each of its GPUs (`held`, by device index)
/// of gres type `gres_type` (`None`: untyped): the GPUs held whole, `gpu:a100:2(IDX:0-1)`
/// (`gpu:a100:0(IDX:N/A)` when none is); where GPUs are split into `shards_per_gpu` shards,
/// then the shards given and each GPU's count of them in index order,
/// `shard:a100:10(-/8,2/8,8/8,0/8)`, `-` for a GPU held whole. Empty for a node without GPUs,
/// which Slurm prints as `(null)`.
pub fn gres_used(gres_type: Option<&str>, held: &[(u32, GpuHeld)], shards_per_gpu: u32) -> String {
    if held.is_empty() {
        return String::new();
    }
    let mut held = held.to_vec();
    held.sort_by_key(|&(index, _)| index);
    let typed = gres_type.map_or_else(String::new, |t| format!(":{t}"));
    let whole: Vec<u32> = held.iter().filter(|(_, h)| *h == GpuHeld::Whole).map(|&(index, _)| index).collect();
    let idx = if whole.is_empty() { "N/A".to_string() } else { ranges(&whole) };
    let mut used = format!("gpu{typed}:{}(IDX:{idx})", whole.len());
    if shards_per_gpu > 0 {
        let given = held.iter().map(|(_, h)| if let GpuHeld::Shards(n) = h { *n } else { 0 }).sum::<u32>();
        let each: Vec<String> = held
            .iter()
            .map(|(_, h)| match h {
                GpuHeld::Whole => format!("-/{shards_per_gpu}"),
                GpuHeld::Shards(n) => format!("{n}/{shards_per_gpu}"),
                GpuHeld::Free => format!("0/{shards_per_gpu}"),
            })
            .collect();
        used.push_str(&format!(",shard{typed}:{given}({})", each.join(",")));
    }
    used
}

/// A job's `gres_detail` on its node, as `scontrol -d show job` prints it after `GRES=`:
/// `gpu:2(IDX:0-1)` for the GPUs `job_gpus` it holds whole; for a job given `shards` shards
/// of its GPU, those over each of the node's GPUs (`node_gpus`) in index order, with
/// `shards_per_gpu` shards each: `shard:2(2/8,0/8,0/8,0/8)`. `None` for a job without either.
pub fn job_gres(node_gpus: &[u32], job_gpus: &[u32], shards: u32, shards_per_gpu: u32) -> Option<String> {
    if shards > 0 {
        let mut node_gpus = node_gpus.to_vec();
        node_gpus.sort_unstable();
        let each: Vec<String> = node_gpus
            .iter()
            .map(|index| format!("{}/{shards_per_gpu}", if job_gpus.contains(index) { shards } else { 0 }))
            .collect();
        return Some(format!("shard:{shards}({})", each.join(",")));
    }
    (!job_gpus.is_empty()).then(|| format!("gpu:{}(IDX:{})", job_gpus.len(), ranges(job_gpus)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use GpuHeld::{Free, Shards, Whole};

    fn on(held: &[GpuHeld]) -> Vec<(u32, GpuHeld)> {
        held.iter().enumerate().map(|(i, h)| (i as u32, *h)).collect()
    }

    #[test]
    fn gres_used_counts_the_gpus_held_whole_with_their_indices() {
        assert_eq!(gres_used(Some("a100"), &on(&[Free, Free]), 0), "gpu:a100:0(IDX:N/A)");
        assert_eq!(gres_used(Some("a100"), &on(&[Whole, Whole]), 0), "gpu:a100:2(IDX:0-1)");
        assert_eq!(gres_used(None, &on(&[Whole, Whole, Free, Whole]), 0), "gpu:3(IDX:0-1,3)");
        assert_eq!(gres_used(None, &on(&[Free]), 0), "gpu:0(IDX:N/A)");
        assert_eq!(gres_used(None, &[], 0), "");
    }

    #[test]
    fn gres_used_adds_each_gpus_shards_where_gpus_are_split() {
        assert_eq!(
            gres_used(None, &on(&[Whole, Shards(2), Shards(8), Free]), 8),
            "gpu:1(IDX:0),shard:10(-/8,2/8,8/8,0/8)"
        );
        assert_eq!(gres_used(None, &on(&[Free; 4]), 8), "gpu:0(IDX:N/A),shard:0(0/8,0/8,0/8,0/8)");
        assert_eq!(
            gres_used(Some("a100"), &[(1, Shards(3)), (0, Whole)], 4),
            "gpu:a100:1(IDX:0),shard:a100:3(-/4,3/4)"
        );
    }

    #[test]
    fn job_gres_names_whole_gpus_by_index_and_shards_over_every_gpu() {
        assert_eq!(job_gres(&[0, 1, 2], &[0, 1], 0, 0).as_deref(), Some("gpu:2(IDX:0-1)"));
        assert_eq!(job_gres(&[0, 1, 2, 3], &[0], 2, 8).as_deref(), Some("shard:2(2/8,0/8,0/8,0/8)"));
        assert_eq!(job_gres(&[3, 0, 2, 1], &[2], 5, 8).as_deref(), Some("shard:5(0/8,0/8,5/8,0/8)"));
        assert_eq!(job_gres(&[0, 1], &[], 0, 8), None);
    }
}
