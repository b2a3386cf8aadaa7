//! How sreport prints an amount of TRES-seconds (`-t`): seconds, minutes or hours rounded
//! as printf's `%.0lf` rounds, a percentage of a total, or both; and the width of a usage
//! column, which grows with the largest value it will hold.

/// `-t`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// `Seconds`.
    Secs,
    /// `Minutes`, the default.
    #[default]
    Mins,
    /// `Hours`.
    Hours,
    /// `Percent`.
    Percent,
    /// `SecPer`.
    SecsPer,
    /// `MinPer`.
    MinsPer,
    /// `HourPer`.
    HoursPer,
}

/// Whether `text` is `word` or a start of it at least `min` long, case aside (Slurm's
/// `xstrncasecmp(text, word, MAX(len, min))`).
pub fn abbrev(text: &str, word: &str, min: usize) -> bool {
    text.len() >= min && word.get(..text.len()).is_some_and(|w| w.eq_ignore_ascii_case(text))
}

impl TimeFormat {
    /// Reads `-t`'s value as Slurm does (`None`: unknown).
    pub fn parse(text: &str) -> Option<TimeFormat> {
        let table = [
            ("SecPer", 6, TimeFormat::SecsPer),
            ("MinPer", 6, TimeFormat::MinsPer),
            ("HourPer", 6, TimeFormat::HoursPer),
            ("Seconds", 1, TimeFormat::Secs),
            ("Minutes", 1, TimeFormat::Mins),
            ("Hours", 1, TimeFormat::Hours),
            ("Percent", 1, TimeFormat::Percent),
        ];
        table.iter().find(|(w, min, _)| abbrev(text, w, *min)).map(|(_, _, f)| *f)
    }

    /// The words of the `Usage reported in …` line.
    pub fn words(self) -> &'static str {
        match self {
            TimeFormat::Secs => "Seconds",
            TimeFormat::Mins => "Minutes",
            TimeFormat::Hours => "Hours",
            TimeFormat::Percent => "Percentage of Total",
            TimeFormat::SecsPer => "Seconds/Percentage of Total",
            TimeFormat::MinsPer => "Minutes/Percentage of Total",
            TimeFormat::HoursPer => "Hours/Percentage of Total",
        }
    }

    /// Whether values carry their percentage too (wider columns).
    pub fn with_percent(self) -> bool {
        matches!(self, TimeFormat::SecsPer | TimeFormat::MinsPer | TimeFormat::HoursPer)
    }

    /// `value` seconds as printed, against `total` for percentages (0 counts as 1).
    pub fn show(self, value: u64, total: u64) -> String {
        let percent = value as f64 / total.max(1) as f64 * 100.0;
        let v = value as f64;
        match self {
            TimeFormat::Secs => value.to_string(),
            TimeFormat::Mins => format!("{:.0}", v / 60.0),
            TimeFormat::Hours => format!("{:.0}", v / 3600.0),
            TimeFormat::Percent => format!("{percent:.2}%"),
            TimeFormat::SecsPer => format!("{value}({percent:.2}%)"),
            TimeFormat::MinsPer => format!("{:.0}({percent:.2}%)", v / 60.0),
            TimeFormat::HoursPer => format!("{:.0}({percent:.2}%)", v / 3600.0),
        }
    }

    /// The width of a usage column whose largest value is `max` seconds: 8, one more for
    /// each power of ten from 10^8 up, 9 more when percentages are printed too.
    pub fn usage_width(self, max: u64) -> i32 {
        let mut width = 8;
        let mut order: u128 = 100_000_000;
        let max_order: u128 = order * 100_000_000_000_000_000;
        while order < max_order && u128::from(max) >= order {
            width += 1;
            order *= 10;
        }
        width + if self.with_percent() { 9 } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_formats_read_as_slurm_reads_them() {
        assert_eq!(TimeFormat::parse("hours"), Some(TimeFormat::Hours));
        assert_eq!(TimeFormat::parse("Percent"), Some(TimeFormat::Percent));
        assert_eq!(TimeFormat::parse("p"), Some(TimeFormat::Percent));
        assert_eq!(TimeFormat::parse("m"), Some(TimeFormat::Mins));
        assert_eq!(TimeFormat::parse("minper"), Some(TimeFormat::MinsPer));
        assert_eq!(TimeFormat::parse("MinPer"), Some(TimeFormat::MinsPer));
        assert_eq!(TimeFormat::parse("bogus"), None);
    }

    #[test]
    fn values_print_as_printf_prints_them() {
        assert_eq!(TimeFormat::Mins.show(40610, 0), "677");
        assert_eq!(TimeFormat::Hours.show(40610, 0), "11");
        assert_eq!(TimeFormat::Percent.show(40610, 172800), "23.50%");
        assert_eq!(TimeFormat::MinsPer.show(49380, 345600), "823(14.29%)");
        assert_eq!(TimeFormat::Percent.show(0, 0), "0.00%");
    }

    #[test]
    fn usage_columns_widen_with_their_largest_value() {
        assert_eq!(TimeFormat::Mins.usage_width(99_999_999), 8);
        assert_eq!(TimeFormat::Mins.usage_width(100_000_000), 9);
        assert_eq!(TimeFormat::Mins.usage_width(1_000_000_000), 10);
        assert_eq!(TimeFormat::HoursPer.usage_width(5), 17);
    }
}
