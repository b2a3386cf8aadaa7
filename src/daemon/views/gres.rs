//! The node's GPUs and shards in Slurm's GRES words: the node's `GresUsed`
//! (`gpu:a100:1(IDX:0),shard:a100:10(-/8,2/8,8/8,0/8)`), as slurmctld's `_node_gres_used`
//! writes it for GPUs with device files, and a job's `gres_detail` (`gpu:2(IDX:0-1)`,
//! `shard:2(2/8,0/8,0/8,0/8)`), as `gres_build_job_details` writes it.

use crate::daemon::scheduling::core::GpuHeld;
use crate::id_set::ranges;

/// The node's `GresUsed`, from what jobs hold of each of its GPUs (`held`: device index,
/// gres type (`None`: untyped), what is held): for each type, in the order of the GPUs'
/// indices, the GPUs held whole, `gpu:a100:2(IDX:0-1)` (`gpu:a100:0(IDX:N/A)` when none is);
/// where GPUs are split into `shards_per_gpu` shards, then for each type the shards given
/// and each of its GPUs' count of them in index order, `shard:a100:10(-/8,2/8,8/8,0/8)`, `-`
/// for a GPU held whole. Empty for a node without GPUs, which Slurm prints as `(null)`.
pub fn gres_used(held: &[(u32, Option<&str>, GpuHeld)], shards_per_gpu: u32) -> String {
    let mut held = held.to_vec();
    held.sort_by_key(|&(index, _, _)| index);
    let kinds = kinds_in_order(held.iter().map(|&(_, kind, _)| kind));
    let of_kind = |kind: Option<&str>| -> Vec<(u32, GpuHeld)> {
        held.iter().filter(|(_, k, _)| *k == kind).map(|&(i, _, h)| (i, h)).collect()
    };
    let typed = |name: &str, kind: Option<&str>| kind.map_or_else(|| name.to_string(), |t| format!("{name}:{t}"));
    let mut items = Vec::new();
    for &kind in &kinds {
        let whole: Vec<u32> = of_kind(kind).into_iter().filter(|(_, h)| *h == GpuHeld::Whole).map(|(i, _)| i).collect();
        let idx = if whole.is_empty() { "N/A".to_string() } else { ranges(&whole) };
        items.push(format!("{}:{}(IDX:{idx})", typed("gpu", kind), whole.len()));
    }
    if shards_per_gpu > 0 {
        for &kind in &kinds {
            let group = of_kind(kind);
            let given = group.iter().map(|(_, h)| if let GpuHeld::Shards(n) = h { *n } else { 0 }).sum::<u32>();
            let each: Vec<String> = group
                .iter()
                .map(|(_, h)| match h {
                    GpuHeld::Whole => format!("-/{shards_per_gpu}"),
                    GpuHeld::Shards(n) => format!("{n}/{shards_per_gpu}"),
                    GpuHeld::Free => format!("0/{shards_per_gpu}"),
                })
                .collect();
            items.push(format!("{}:{given}({})", typed("shard", kind), each.join(",")));
        }
    }
    items.join(",")
}

/// A job's `gres_detail` on its node, as `scontrol -d show job` prints it after `GRES=`:
/// `gpu:2(IDX:0-1)` for the GPUs `job_gpus` it holds whole. On a node whose GPUs (`node_gpus`:
/// device index and type) are typed, a job that named a type (`job_type`) has it,
/// `gpu:tesla_t4:1(IDX:2)`, and one that did not has every type of the node, those it got
/// none of with no index: `gpu:a100:1(IDX:0),gpu:tesla_t4:0(IDX:)`, as Slurm 26.05 prints
/// them. For a job given `shards` shards of its GPU, those over each of the node's GPUs in
/// index order, with `shards_per_gpu` shards each, untyped whatever it asked:
/// `shard:2(2/8,0/8,0/8,0/8)`. `None` for a job without either.
pub fn job_gres(
    node_gpus: &[(u32, Option<&str>)],
    job_gpus: &[u32],
    job_type: Option<&str>,
    shards: u32,
    shards_per_gpu: u32,
) -> Option<String> {
    let mut node_gpus = node_gpus.to_vec();
    node_gpus.sort_unstable();
    if shards > 0 {
        let each: Vec<String> = node_gpus
            .iter()
            .map(|(index, _)| format!("{}/{shards_per_gpu}", if job_gpus.contains(index) { shards } else { 0 }))
            .collect();
        return Some(format!("shard:{shards}({})", each.join(",")));
    }
    if job_gpus.is_empty() {
        return None;
    }
    let kinds = kinds_in_order(node_gpus.iter().map(|&(_, kind)| kind));
    let items: Vec<String> = kinds
        .into_iter()
        .filter(|&kind| job_type.is_none_or(|t| kind == Some(t)))
        .map(|kind| {
            let held: Vec<u32> =
                node_gpus.iter().filter(|&&(i, k)| k == kind && job_gpus.contains(&i)).map(|&(i, _)| i).collect();
            let name = kind.map_or_else(|| "gpu".to_string(), |t| format!("gpu:{t}"));
            format!("{name}:{}(IDX:{})", held.len(), ranges(&held))
        })
        .collect();
    Some(items.join(","))
}

/// The GPU types of `kinds` (`None`: untyped), each once, in the order they come: the
/// order of the groups in Slurm's GRES strings.
fn kinds_in_order<'a>(kinds: impl Iterator<Item = Option<&'a str>>) -> Vec<Option<&'a str>> {
    let mut out = Vec::new();
    for kind in kinds {
        if !out.contains(&kind) {
            out.push(kind);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use GpuHeld::{Free, Shards, Whole};

    fn on<'a>(kind: Option<&'a str>, held: &[GpuHeld]) -> Vec<(u32, Option<&'a str>, GpuHeld)> {
        held.iter().enumerate().map(|(i, h)| (i as u32, kind, *h)).collect()
    }

    #[test]
    fn gres_used_counts_the_gpus_held_whole_with_their_indices() {
        assert_eq!(gres_used(&on(Some("a100"), &[Free, Free]), 0), "gpu:a100:0(IDX:N/A)");
        assert_eq!(gres_used(&on(Some("a100"), &[Whole, Whole]), 0), "gpu:a100:2(IDX:0-1)");
        assert_eq!(gres_used(&on(None, &[Whole, Whole, Free, Whole]), 0), "gpu:3(IDX:0-1,3)");
        assert_eq!(gres_used(&on(None, &[Free]), 0), "gpu:0(IDX:N/A)");
        assert_eq!(gres_used(&[], 0), "");
    }

    #[test]
    fn gres_used_adds_each_gpus_shards_where_gpus_are_split() {
        assert_eq!(
            gres_used(&on(None, &[Whole, Shards(2), Shards(8), Free]), 8),
            "gpu:1(IDX:0),shard:10(-/8,2/8,8/8,0/8)"
        );
        assert_eq!(gres_used(&on(None, &[Free; 4]), 8), "gpu:0(IDX:N/A),shard:0(0/8,0/8,0/8,0/8)");
        let a100 = Some("a100");
        assert_eq!(gres_used(&[(1, a100, Shards(3)), (0, a100, Whole)], 4), "gpu:a100:1(IDX:0),shard:a100:3(-/4,3/4)");
    }

    #[test]
    fn gres_used_has_a_group_for_each_type() {
        let (a100, t4) = (Some("a100"), Some("tesla_t4"));
        let held = [(2, t4, Whole), (0, a100, Free), (1, a100, Whole)];
        assert_eq!(gres_used(&held, 0), "gpu:a100:1(IDX:1),gpu:tesla_t4:1(IDX:2)");
        let held = [(0, a100, Shards(3)), (1, a100, Whole), (2, t4, Free)];
        assert_eq!(
            gres_used(&held, 4),
            "gpu:a100:1(IDX:1),gpu:tesla_t4:0(IDX:N/A),shard:a100:3(3/4,-/4),shard:tesla_t4:0(0/4)"
        );
    }

    #[test]
    fn job_gres_names_whole_gpus_by_index_and_shards_over_every_gpu() {
        let untyped = |indices: &[u32]| indices.iter().map(|&i| (i, None)).collect::<Vec<_>>();
        assert_eq!(job_gres(&untyped(&[0, 1, 2]), &[0, 1], None, 0, 0).as_deref(), Some("gpu:2(IDX:0-1)"));
        assert_eq!(job_gres(&untyped(&[0, 1, 2, 3]), &[0], None, 2, 8).as_deref(), Some("shard:2(2/8,0/8,0/8,0/8)"));
        assert_eq!(job_gres(&untyped(&[3, 0, 2, 1]), &[2], None, 5, 8).as_deref(), Some("shard:5(0/8,0/8,5/8,0/8)"));
        assert_eq!(job_gres(&untyped(&[0, 1]), &[], None, 0, 8), None);
    }

    #[test]
    fn job_gres_on_gpus_of_two_types_is_as_slurm_prints_it() {
        let node = [(2, Some("t4")), (0, Some("a100")), (1, Some("a100"))];
        assert_eq!(job_gres(&node, &[2], Some("t4"), 0, 0).as_deref(), Some("gpu:t4:1(IDX:2)"));
        assert_eq!(job_gres(&node, &[1], Some("a100"), 0, 0).as_deref(), Some("gpu:a100:1(IDX:1)"));
        assert_eq!(job_gres(&node, &[0], None, 0, 0).as_deref(), Some("gpu:a100:1(IDX:0),gpu:t4:0(IDX:)"));
        assert_eq!(job_gres(&node, &[0, 1, 2], None, 0, 0).as_deref(), Some("gpu:a100:2(IDX:0-1),gpu:t4:1(IDX:2)"));
        assert_eq!(job_gres(&node, &[2], Some("t4"), 3, 8).as_deref(), Some("shard:3(0/8,0/8,3/8)"));
    }
}
