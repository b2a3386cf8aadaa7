//! The job size ranges (`grouping=`): which CPU counts each column takes, and its header.
//!
//! As Slurm makes them: each size `s` of the list closes a range that began at the size
//! before it (`0-49`, `50-249`, …) and, unless the last size is 0, a last range takes the
//! rest (`>= 1000`). The sizes are taken in the order given (Slurm does not sort them: out
//! of order, ranges overlap or are empty, and a job is counted in every range it falls
//! in), and `s - 1` wraps as C's unsigned arithmetic does. With `grouping=individual` each
//! CPU count that a job of the period had is a column of its own. A `%N` after a size sets
//! the width of its column (the last size's, of the last range too).

use super::lists::atoi;

/// Slurm's default sizes.
pub const DEFAULT: &str = "50,250,500,1000";

/// Slurm's `INFINITE`: the top of the last range.
const INFINITE: u32 = u32::MAX;

/// One column: the jobs with `min..=max` CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bin {
    /// Fewest CPUs.
    pub min: u32,
    /// Most CPUs.
    pub max: u32,
    /// Its header.
    pub name: String,
    /// Its width.
    pub width: i32,
}

impl Bin {
    /// Whether a job with `cpus` CPUs falls in it.
    pub fn holds(&self, cpus: u64) -> bool {
        cpus >= u64::from(self.min) && cpus <= u64::from(self.max)
    }
}

/// The columns of the sizes `sizes` (each `N` or `N%width`): ranges, or with `individual`
/// one column per size. `unit` is `CPUs` or `TRES`; `width` the columns' width unless a
/// size sets its own.
pub fn bins(sizes: &[String], individual: bool, unit: &str, width: i32) -> Vec<Bin> {
    let own_width = |s: &str| s.split_once('%').map(|(_, w)| atoi(w)).filter(|w| *w != 0).unwrap_or(width);
    let mut out = Vec::new();
    let mut last = 0u32;
    for s in sizes {
        let size = atoi(s) as u32;
        let (min, max, name) = if individual {
            (size, size, format!("{size} {unit}"))
        } else {
            (last, size.wrapping_sub(1), format!("{last}-{} {unit}", size.wrapping_sub(1)))
        };
        out.push(Bin { min, max, name, width: own_width(s) });
        last = size;
    }
    if last != 0 && !individual {
        let w = sizes.last().map_or(width, |s| own_width(s));
        out.push(Bin { min: last, max: INFINITE, name: format!(">= {last} {unit}"), width: w });
    }
    out
}

/// `grouping=individual`'s sizes: the CPU counts of `cpus`, each once, smallest first.
pub fn individual_sizes(cpus: impl Iterator<Item = u64>) -> Vec<String> {
    let mut sizes: Vec<u64> = cpus.collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.iter().map(u64::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<String> {
        s.split(',').map(String::from).collect()
    }

    fn names(b: &[Bin]) -> Vec<&str> {
        b.iter().map(|b| b.name.as_str()).collect()
    }

    #[test]
    fn the_default_sizes_make_slurms_five_ranges() {
        let b = bins(&list(DEFAULT), false, "CPUs", 13);
        assert_eq!(names(&b), ["0-49 CPUs", "50-249 CPUs", "250-499 CPUs", "500-999 CPUs", ">= 1000 CPUs"]);
        assert!(b[0].holds(49) && !b[0].holds(50) && b[4].holds(1_000_000));
        assert!(b.iter().all(|b| b.width == 13));
    }

    #[test]
    fn sizes_are_taken_as_given() {
        let b = bins(&list("1,2"), false, "TRES", 20);
        assert_eq!(names(&b), ["0-0 TRES", "1-1 TRES", ">= 2 TRES"]);
        let b = bins(&list("250,50"), false, "CPUs", 13);
        assert_eq!(names(&b), ["0-249 CPUs", "250-49 CPUs", ">= 50 CPUs"]);
        assert!(b[0].holds(100) && !b[1].holds(100) && b[2].holds(100));
    }

    #[test]
    fn a_last_size_of_zero_leaves_no_last_range() {
        let b = bins(&list("0"), false, "CPUs", 13);
        assert_eq!(names(&b), ["0-4294967295 CPUs"]);
        assert!(b[0].holds(7));
    }

    #[test]
    fn a_size_may_set_its_columns_width() {
        let b = bins(&list("4%7,8%-20"), false, "CPUs", 13);
        let widths: Vec<i32> = b.iter().map(|b| b.width).collect();
        assert_eq!(widths, [7, -20, -20]);
    }

    #[test]
    fn individual_columns_are_the_cpu_counts_seen() {
        let sizes = individual_sizes([2, 1, 2, 8].into_iter());
        assert_eq!(sizes, ["1", "2", "8"]);
        let b = bins(&sizes, true, "CPUs", 13);
        assert_eq!(names(&b), ["1 CPUs", "2 CPUs", "8 CPUs"]);
        assert!(b[1].holds(2) && !b[1].holds(1));
    }
}
