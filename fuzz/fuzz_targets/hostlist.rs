#![no_main]
//! Hostlist expressions: never a panic (`expand` caps the host count itself); a small
//! expansion compresses and expands back to the same hosts.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::hostlist::{compress, compress_sorted, expand};
use std::collections::BTreeSet;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(hosts) = expand(text) else { return };
    // The round trip is checked on small lists only, to keep each run fast, and without
    // names that hold brackets (text outside a bracket group, `n]1`, is a name as in Slurm,
    // and no expression can name it again).
    if hosts.len() > 4096 || hosts.iter().any(|h| h.contains(['[', ']'])) {
        return;
    }
    let set: BTreeSet<&String> = hosts.iter().collect();
    let compressed = compress(&hosts);
    let again = expand(&compressed).unwrap_or_else(|e| panic!("{compressed:?}: {e}"));
    assert_eq!(again, hosts, "compress keeps order and duplicates: {compressed:?}");
    let sorted = compress_sorted(&hosts);
    let again = expand(&sorted).unwrap_or_else(|e| panic!("{sorted:?}: {e}"));
    assert_eq!(again.iter().collect::<BTreeSet<_>>(), set, "{sorted:?}");
    assert_eq!(again.len(), set.len(), "compress_sorted drops duplicates: {sorted:?}");
});
