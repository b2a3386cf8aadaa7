//! Sets of small ids (CPU and GPU indices) in Slurm's two text forms: the range list
//! `bit_fmt` writes (`0-1,4`) and the hexadecimal mask `bit_fmt_hexmask_trim` writes
//! (`0x13`).

/// `ids` in Slurm's range form (`0-1,3`), as `bit_fmt` writes a bitmap: ascending, runs of two
/// or more joined with `-`. `ids` must be ascending.
pub fn ranges(ids: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { ids[i].to_string() } else { format!("{}-{}", ids[i], ids[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// `ids` as a hexadecimal mask, bit N for id N, without leading zeros (`[0, 1, 4]`:
/// `0x13`), as Slurm's task/affinity writes a task's CPU mask; `0x0` when `ids` is empty.
pub fn hex_mask(ids: &[u32]) -> String {
    let Some(&top) = ids.iter().max() else { return "0x0".into() };
    let mut digits = vec![0u8; top as usize / 4 + 1];
    for &id in ids {
        digits[id as usize / 4] |= 1 << (id % 4);
    }
    let hex: String = digits.iter().rev().map(|d| char::from_digit(u32::from(*d), 16).expect("a nibble")).collect();
    format!("0x{}", hex.to_ascii_uppercase())
}

/// The ids of a range list (`0-3,8,10-11`, as idset files write them); what cannot be read
/// is left out.
pub fn parse_ranges(text: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
                    ids.extend(a..=b);
                }
            }
            None => ids.extend(part.trim().parse::<u32>().ok()),
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_written_as_ranges() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[0, 1]), "0-1");
        assert_eq!(ranges(&[0, 1, 3]), "0-1,3");
        assert_eq!(ranges(&[0, 2, 4, 5, 6, 9]), "0,2,4-6,9");
    }

    #[test]
    fn ids_are_written_as_a_mask() {
        assert_eq!(hex_mask(&[]), "0x0");
        assert_eq!(hex_mask(&[0]), "0x1");
        assert_eq!(hex_mask(&[1]), "0x2");
        assert_eq!(hex_mask(&[0, 1, 4]), "0x13");
        assert_eq!(hex_mask(&[0, 1, 2, 3]), "0xF");
        assert_eq!(hex_mask(&[63]), "0x8000000000000000");
        assert_eq!(hex_mask(&[100]), format!("0x1{}", "0".repeat(25)));
    }

    #[test]
    fn range_lists_are_read() {
        assert_eq!(parse_ranges("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_ranges(""), Vec::<u32>::new());
        assert_eq!(parse_ranges("1"), [1]);
    }
}
