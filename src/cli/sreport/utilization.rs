//! `cluster utilization`: per TRES, what was allocated, down, planned down, idle and
//! planned over the period, and what was reported in all (the cluster's count times the
//! period). slurmlet records no down or reserved time: those are 0, and idle is what was
//! not allocated.

use super::fields::{Col, Field};
use super::reports;
use super::Ctx;
use crate::api::acct::HistoryReply;
use crate::cli::sacct::fields::Cell;

/// One TRES's totals, seconds.
struct Totals {
    alloc: u64,
    idle: u64,
    reported: u64,
    count: u64,
}

fn totals(ctx: &Ctx, history: &HistoryReply) -> Vec<Totals> {
    let now = history.now.max(crate::sys::now());
    let used =
        super::usage::sum(super::usage::user_usage(&history.jobs, &ctx.kinds, ctx.period, now).iter(), ctx.kinds.len());
    ctx.kinds
        .iter()
        .zip(used)
        .map(|(kind, alloc)| {
            let count = ctx.capacity.count(*kind);
            let reported = (count * ctx.seconds()).max(alloc);
            Totals { alloc, idle: reported - alloc, reported, count }
        })
        .collect()
}

/// The report's text.
pub fn render(ctx: &mut Ctx, cols: &mut [Col], history: &HistoryReply) -> String {
    let rows = if ctx.cluster_wanted() { totals(ctx, history) } else { Vec::new() };
    let mut out = String::new();
    if ctx.header {
        out.push_str(&reports::banner(ctx, &format!("Cluster Utilization {}", ctx.span())));
    }
    for c in cols.iter_mut().filter(|c| c.field.is_usage()) {
        let max = rows.iter().map(|t| value(c.field, t)).max().unwrap_or(0);
        c.width = ctx.time.usage_width(max);
    }
    if ctx.header {
        out.push_str(&reports::header(ctx, cols));
    }
    for (kind, t) in ctx.kinds.iter().zip(&rows) {
        let cells = cols
            .iter()
            .map(|c| match c.field {
                Field::Cluster => Cell::Text(Some(ctx.cluster.clone())),
                Field::TresName => Cell::Text(Some(kind.name().into())),
                Field::TresCount => Cell::Text(Some(t.count.to_string())),
                Field::Reported => Cell::Text(Some(ctx.time.show(t.reported, t.count * ctx.seconds()))),
                f if f.is_usage() => Cell::Text(Some(ctx.time.show(value(f, t), t.reported))),
                _ => Cell::Text(None),
            })
            .collect();
        out.push_str(&reports::line(ctx, cols, cells));
    }
    out
}

/// The seconds field `f` shows.
fn value(f: Field, t: &Totals) -> u64 {
    match f {
        Field::Allocated | Field::Used => t.alloc,
        Field::Idle => t.idle,
        Field::Reported => t.reported,
        _ => 0,
    }
}
