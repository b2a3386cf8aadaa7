//! sshare's fields, their widths, and each one's text for an association, as Slurm's
//! `print_fields` writes them: floating values with six decimals (`%*f`, or an exponent
//! where they do not fit), unset ones blank, and an infinite `LevelFS` as `inf`.

use crate::api::types::{AssocShares, LEVEL_FS_INFINITE};
use crate::cli::sacct::fields::Cell;
use crate::cli::sacct::print::Layout;

/// Every field, with its width (negative: left-justified), in Slurm's order (a prefix
/// picks the first field it starts).
pub const FIELDS: &[(&str, i32)] = &[
    ("Account", -20),
    ("Cluster", 10),
    ("EffectvUsage", 13),
    ("FairShare", 10),
    ("GrpTRESMins", 30),
    ("GrpTRESRaw", 30),
    ("ID", 6),
    ("LevelFS", 10),
    ("NormShares", 11),
    ("NormUsage", 11),
    ("Partition", 12),
    ("RawShares", 10),
    ("RawUsage", 11),
    ("TRESRunMins", 30),
    ("User", 10),
];

/// The default fields under Fair Tree, and with `-l`.
pub const DEFAULT: &str = "A,User,RawShares,NormShares,RawUsage,Eff,Fairshare";
/// `-l`.
pub const LONG: &str = "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,GrpTRESMins,TRESRunMins";

/// A floating value as `print_fields_double` writes it in a column of `width` (its text
/// as `%f` when parsable).
pub fn double(value: Option<f64>, width: i32, layout: &Layout) -> Cell {
    let Some(v) = value else { return Cell::Text(None) };
    if *layout != Layout::Fixed {
        return Cell::Text(Some(format!("{v:.6}")));
    }
    let w = width.unsigned_abs() as usize;
    let plain = format!("{v:.6}");
    if plain.len() <= w {
        return Cell::Text(Some(plain));
    }
    Cell::Text(Some(c_exponent(v, w)))
}

/// `%.*e` as C writes it (`1.234e+05`), its precision cut so that it fits `width` where
/// Slurm's does.
fn c_exponent(v: f64, width: usize) -> String {
    let written = |precision: usize| {
        let s = format!("{v:.precision$e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    };
    let first = written(width);
    let over = first.len().saturating_sub(width);
    written(width.saturating_sub(over))
}

/// The text of field `name` for `share`, whose account is `spaces` deep.
pub fn value(name: &str, share: &AssocShares, spaces: usize, layout: &Layout) -> Cell {
    let width = FIELDS.iter().find(|(n, _)| *n == name).map_or(10, |(_, w)| *w);
    let text = |s: String| Cell::Text(Some(s));
    match name {
        "Account" => {
            let account = if share.is_user() { &share.parent } else { &share.name };
            text(format!("{}{account}", " ".repeat(spaces)))
        }
        "Cluster" => text(share.cluster.clone()),
        "EffectvUsage" => double(share.effective_usage.get(), width, layout),
        "FairShare" => double(share.fairshare.factor.get().filter(|_| share.is_user()), width, layout),
        "ID" => Cell::Number(Some(share.id.max(0) as u64)),
        "LevelFS" => {
            let level = share.fairshare.level.get().map(|l| if l >= LEVEL_FS_INFINITE { f64::INFINITY } else { l });
            double(level, width, layout)
        }
        "NormShares" => double(share.shares_normalized.get(), width, layout),
        "NormUsage" => double(share.usage_normalized.get(), width, layout),
        "Partition" => text(share.partition.clone()),
        "RawShares" => Cell::Number(share.shares.get().map(u64::from)),
        "RawUsage" => Cell::Number(Some(share.usage.max(0) as u64)),
        "User" => Cell::Text(share.is_user().then(|| share.name.clone())),
        "TRESRunMins" => text(
            share
                .tres
                .run_seconds
                .iter()
                .map(|t| format!("{}={}", t.name, t.value.get().unwrap_or(0) / 60))
                .collect::<Vec<_>>()
                .join(","),
        ),
        // Neither limits on TRES-minutes nor per-TRES usage are kept.
        _ => Cell::Text(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_with_six_decimals_or_an_exponent_where_they_do_not_fit() {
        let fixed = Layout::Fixed;
        assert_eq!(double(Some(0.5), 11, &fixed), Cell::Text(Some("0.500000".into())));
        assert_eq!(double(Some(f64::INFINITY), 10, &fixed), Cell::Text(Some("inf".into())));
        assert_eq!(double(None, 10, &fixed), Cell::Text(None));
        assert_eq!(double(Some(123_456_789.0), 10, &fixed), Cell::Text(Some("1.2346e+08".into())));
        let parsable = Layout::Parsable { delimiter: "|".into(), trailing: false };
        assert_eq!(double(Some(123_456_789.0), 10, &parsable), Cell::Text(Some("123456789.000000".into())));
    }
}
