//! The reports: the rows each prints and in which order, as Slurm's sreport prints them
//! from rolled-up usage (here, from the jobs of the period).

use super::fields::{Col, Field};
use super::usage::{sum, AssocUse, TresKind};
use super::Ctx;
use crate::cli::sacct::fields::{Cell, Column};
use crate::cli::sacct::print;

/// The values of one row, by field.
#[derive(Default)]
pub struct RowData<'a> {
    account: Option<&'a str>,
    login: Option<&'a str>,
    tres: Option<TresKind>,
    used: u64,
    total: u64,
}

/// The `Usage reported in …` banner of a report titled `title`.
pub fn banner(ctx: &Ctx, title: &str) -> String {
    let line = "-".repeat(80);
    let unit = match ctx.time {
        super::units::TimeFormat::Percent => ctx.time.words().to_string(),
        t => format!("{} {}", if ctx.tres_given { "TRES" } else { "CPU" }, t.words()),
    };
    format!("{line}\n{title}\nUsage reported in {unit}\n{line}\n")
}

/// The column header line(s).
pub fn header(ctx: &Ctx, cols: &[Col]) -> String {
    let columns: Vec<Column> = cols.iter().map(|c| Column { name: c.name, width: c.width }).collect();
    print::header(&columns, &ctx.layout)
}

/// One printed row.
pub fn line(ctx: &Ctx, cols: &[Col], cells: Vec<Cell>) -> String {
    let columns: Vec<Column> = cols.iter().map(|c| Column { name: c.name, width: c.width }).collect();
    print::row(&columns, &cells, &ctx.layout)
}

fn text(s: Option<&str>) -> Cell {
    Cell::Text(s.map(str::to_string))
}

/// The cells of an association or user row.
fn assoc_cells(ctx: &Ctx, cols: &[Col], r: &RowData) -> Vec<Cell> {
    cols.iter()
        .map(|c| match c.field {
            Field::Cluster => text(Some(&ctx.cluster)),
            Field::Account => text(r.account),
            Field::Login => text(r.login),
            Field::Proper => text(r.login.and_then(super::gecos).as_deref()),
            Field::Used => text(Some(&ctx.time.show(r.used, r.total))),
            Field::Energy => text(Some(&ctx.time.show(0, 0))),
            Field::TresName => text(r.tres.map(TresKind::name)),
            _ => text(None),
        })
        .collect()
}

/// Sets the width of the usage columns from the largest value they will hold.
pub fn widen(ctx: &Ctx, cols: &mut [Col], max: u64) {
    for c in cols.iter_mut().filter(|c| c.field.is_usage()) {
        c.width = ctx.time.usage_width(if c.field == Field::Energy { 0 } else { max });
    }
}

/// The rows of an association list: each association once per TRES.
pub fn assoc_rows(ctx: &Ctx, cols: &[Col], rows: &[AssocUse], out: &mut String) {
    for r in rows {
        for (i, kind) in ctx.kinds.iter().enumerate() {
            let data = RowData {
                account: Some(&r.account),
                login: r.user.as_deref(),
                tres: Some(*kind),
                used: r.secs[i],
                total: ctx.capacity.count(*kind) * ctx.seconds(),
            };
            out.push_str(&line(ctx, cols, assoc_cells(ctx, cols, &data)));
        }
    }
}

/// `cluster AccountUtilizationByUser`'s rows: `root` with everything (unless accounts or
/// users were named), each account with the sum of its users, then its users, accounts
/// and users in alphabetical order.
pub fn account_tree(ctx: &Ctx, users: &[AssocUse]) -> Vec<AssocUse> {
    let n = ctx.kinds.len();
    let mut users: Vec<&AssocUse> = users.iter().collect();
    users.sort_by(|a, b| (&a.account, &a.user).cmp(&(&b.account, &b.user)));
    let mut out = Vec::new();
    let named_users = !ctx.conds.users.is_empty();
    if ctx.conds.accounts.is_empty() && !named_users && !users.is_empty() {
        out.push(AssocUse { account: "root".into(), user: None, secs: sum(users.iter().copied(), n) });
    }
    let mut accounts: Vec<&str> = users.iter().map(|u| u.account.as_str()).collect();
    accounts.dedup();
    for account in accounts {
        let mine: Vec<&AssocUse> = users.iter().copied().filter(|u| u.account == account).collect();
        if !named_users {
            out.push(AssocUse { account: account.into(), user: None, secs: sum(mine.iter().copied(), n) });
        }
        out.extend(mine.into_iter().cloned());
    }
    out
}

/// Sorts user rows as Slurm's `sort_user_dec`: most of the first sorting TRES first, then
/// by login (stable, so a user's accounts stay in alphabetical order).
pub fn sort_users(rows: &mut [AssocUse], by: usize) {
    rows.sort_by(|a, b| a.account.cmp(&b.account));
    rows.sort_by(|a, b| b.secs[by].cmp(&a.secs[by]).then_with(|| a.user.cmp(&b.user)));
}
