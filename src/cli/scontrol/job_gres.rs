//! The totals of a job's GRES detail, for `scontrol -d show job`'s `JOB_GRES=` line.

/// A job's `gres_detail` without what is in brackets: `gpu:a100:1(IDX:0),gpu:t4:0(IDX:)`
/// totals `gpu:a100:1,gpu:t4:0`, `shard:2(2/8,0/8)` totals `shard:2`.
pub fn gres_totals(detail: &str) -> String {
    let mut depth = 0u32;
    detail
        .chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_gres_totals_each_group() {
        assert_eq!(gres_totals("gpu:a100:1(IDX:0),gpu:t4:0(IDX:)"), "gpu:a100:1,gpu:t4:0");
        assert_eq!(gres_totals("shard:2(2/8,0/8,0/8)"), "shard:2");
        assert_eq!(gres_totals("gpu:2(IDX:0-1)"), "gpu:2");
        assert_eq!(gres_totals(""), "");
    }
}
