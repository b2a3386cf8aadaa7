#![no_main]
//! `#SBATCH` directive extraction and the batch script checks.
use libfuzzer_sys::fuzz_target;
use slurmlet::options::directive::{check_script, extract};

fuzz_target!(|data: &[u8]| {
    // The script checks take raw bytes: NUL bytes and invalid UTF-8 are theirs to refuse.
    let _ = check_script(data);
    let Ok(script) = std::str::from_utf8(data) else { return };
    if let Ok(directives) = extract(script, "#SBATCH", "fuzz.sh") {
        let mut last = 0;
        for d in &directives {
            assert!(d.line > last, "directive lines go forward");
            last = d.line;
            assert!(d.text.trim_start_matches('\u{feff}').starts_with("#SBATCH"), "{:?}", d.text);
            assert!(d.args.iter().all(|a| !a.is_empty()), "no empty words: {:?}", d.args);
        }
    }
});
