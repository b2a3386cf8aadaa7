//! `rocm-smi --showuse --showmeminfo vram --showpids --json` and `rocm-smi --showpidgpus`:
//! each AMD GPU's busy share and memory and the compute (KFD) processes, from the tool that
//! came before `amd-smi`, for machines that have only it. Read as `rocm_smi.py` of
//! `ROCm/rocm_smi_lib` (ROCm 5 and 6) writes them:
//!
//! - the JSON is an object of `cardN` objects (N the tool's index of the GPU, as discovery
//!   reads it) whose values are strings: `"GPU use (%)": "37"`, `"VRAM Total Memory (B)"`,
//!   `"VRAM Total Used Memory (B)"`; and a `system` object where `--showpids` puts each
//!   process as `"PID4242": "python3, 1, 1073741824, 0, 0"` (its name, the number of GPUs it
//!   uses, its VRAM in bytes over all of them, SDMA use, CU occupancy; a name with spaces is
//!   split at them, so the figures are counted from the end);
//! - the JSON does not say which GPUs a process uses (its `--showpidgpus` writes none), so
//!   that is read from the text of `--showpidgpus`: `PID 4242 is using 2 DRM device(s):`
//!   and, on the next lines, the indices (`0 1`).
//!
//! A process on several GPUs is reported on each, its VRAM split evenly among them (the tool
//! gives only the sum). The number of GPUs the tool says a process uses is not believed;
//! the indices it lists are, and only those of the node's GPUs are kept (by the sampler).

use super::amd_smi::{bytes, json_in, percent, AmdFigures, AmdProcess};
use serde_json::Value;
use std::collections::BTreeMap;

/// The arguments that make `rocm-smi` give each GPU's busy share, VRAM and the processes.
pub const USE: [&str; 5] = ["--showuse", "--showmeminfo", "vram", "--showpids", "--json"];

/// The arguments that make `rocm-smi` list the GPUs of each process.
pub const PID_GPUS: [&str; 1] = ["--showpidgpus"];

/// The most GPUs one process is believed to use: more than any machine has.
const MAX_GPUS_OF_A_PROCESS: usize = 1024;

/// What `rocm-smi … --json` ([`USE`]) said: each GPU's figures, and each process's pid and
/// VRAM over all its GPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RocmUse {
    /// Each GPU's figures.
    pub gpus: Vec<AmdFigures>,
    /// Each process: its pid and its VRAM in bytes, when said.
    pub processes: Vec<(u32, Option<u64>)>,
}

/// Reads [`USE`]'s output; `None` when it holds no JSON object.
pub fn parse_use(text: &str) -> Option<RocmUse> {
    let Value::Object(doc) = json_in(text)? else { return None };
    let mut found = RocmUse::default();
    for (key, card) in &doc {
        let Some(gpu) = key.strip_prefix("card").and_then(|n| n.parse::<u32>().ok()) else { continue };
        let field =
            |name: &str| card.as_object()?.iter().find(|(k, _)| k.trim().eq_ignore_ascii_case(name)).map(|(_, v)| v);
        found.gpus.push(AmdFigures {
            gpu,
            memory_used: field("VRAM Total Used Memory (B)").and_then(|v| bytes(v, 1)),
            memory_total: field("VRAM Total Memory (B)").and_then(|v| bytes(v, 1)),
            utilization: field("GPU use (%)").and_then(percent),
        });
    }
    found.gpus.sort_by_key(|g| g.gpu);
    if let Some(Value::Object(system)) = doc.get("system") {
        for (key, value) in system {
            let Some(pid) = key.strip_prefix("PID").and_then(|p| p.trim().parse::<u32>().ok()).filter(|&p| p > 0)
            else {
                continue;
            };
            // name…, GPUs, VRAM, SDMA, CU occupancy
            let fields: Vec<&str> = value.as_str().unwrap_or_default().split(',').map(str::trim).collect();
            let vram = fields.len().checked_sub(3).and_then(|at| bytes(&Value::from(fields[at]), 1));
            found.processes.push((pid, vram));
        }
    }
    Some(found)
}

/// Reads [`PID_GPUS`]'s output: each pid and the indices of the GPUs it uses, in the order
/// listed, each once.
pub fn parse_pid_gpus(text: &str) -> BTreeMap<u32, Vec<u32>> {
    let mut found: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    let mut current: Option<u32> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("PID ") {
            let pid = rest.split_whitespace().next().and_then(|p| p.parse::<u32>().ok()).filter(|&p| p > 0);
            current = pid.filter(|_| rest.contains(" is using "));
            if let Some(pid) = current {
                found.entry(pid).or_default();
            }
            continue;
        }
        let indices: Option<Vec<u32>> = line.split_whitespace().map(|n| n.parse().ok()).collect();
        match (current, indices) {
            (Some(pid), Some(indices)) if !line.is_empty() => {
                let listed = found.entry(pid).or_default();
                for index in indices {
                    if !listed.contains(&index) && listed.len() < MAX_GPUS_OF_A_PROCESS {
                        listed.push(index);
                    }
                }
            }
            _ => current = None,
        }
    }
    found
}

/// The processes of `used` on their GPUs as `gpus_of` lists them; one on several GPUs is on
/// each with an even share of its VRAM. A process no GPU is listed for is left out: it cannot
/// be placed.
pub fn processes_on_gpus(used: &[(u32, Option<u64>)], gpus_of: &BTreeMap<u32, Vec<u32>>) -> Vec<AmdProcess> {
    let mut found = Vec::new();
    for &(pid, vram) in used {
        let Some(gpus) = gpus_of.get(&pid).filter(|g| !g.is_empty()) else { continue };
        let share = vram.map(|v| v / gpus.len() as u64);
        found.extend(gpus.iter().map(|&gpu| AmdProcess { gpu, pid, used_memory: share }));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rocm-smi --showuse --showmeminfo vram --showpids --json` of two MI210s, one process on
    /// one of them (the shape `rocm_smi.py` writes, values as strings).
    const USE_TEXT: &str = r#"{"card0": {"GPU use (%)": "37", "GFX Activity": "1234", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "5379194880"}, "card1": {"GPU use (%)": "0", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "11321344"}, "system": {"PID4242": "python3, 1, 5368709120, 0, 0"}}"#;

    #[test]
    fn reads_each_gpus_figures_and_the_processes() {
        let read = parse_use(USE_TEXT).unwrap();
        assert_eq!(
            read.gpus,
            [
                AmdFigures {
                    gpu: 0,
                    memory_used: Some(5_379_194_880),
                    memory_total: Some(68_702_699_520),
                    utilization: Some(37)
                },
                AmdFigures {
                    gpu: 1,
                    memory_used: Some(11_321_344),
                    memory_total: Some(68_702_699_520),
                    utilization: Some(0)
                },
            ]
        );
        assert_eq!(read.processes, [(4242, Some(5 << 30))]);
    }

    #[test]
    fn odd_values_are_left_out_and_names_with_spaces_do_not_shift_the_figures() {
        let text = "WARNING: a warning first\n".to_string()
            + r#"{"card0": {"GPU use (%)": "N/A", "VRAM Total Memory (B)": "99999999999999999999999", "VRAM Total Used Memory (B)": "-5"},
                  "cardX": {"GPU use (%)": "1"}, "card4294967296": {"GPU use (%)": "1"},
                  "system": {"PID17": "my, train, job, 2, 2048, 0, unknown", "PID0": "init, 1, 5, 0, 0",
                             "PIDx": "garbage", "PID18": "x, 1, unknown, 0, 0", "PID19": "", "Driver version": "6.7.0"}}"#;
        let read = parse_use(&text).unwrap();
        assert_eq!(read.gpus, [AmdFigures { gpu: 0, ..Default::default() }]);
        let mut processes = read.processes;
        processes.sort();
        assert_eq!(processes, [(17, Some(2048)), (18, None), (19, None)]);
        assert_eq!(parse_use("No JSON data to report"), None);
        assert_eq!(parse_use("[1, 2]"), None);
    }

    #[test]
    fn reads_which_gpus_each_process_uses() {
        let text = "\n============================ ROCm System Management Interface ============================\n\
                    ================================== GPUs Indexed by PID ==================================\n\
                    PID 4242 is using 1 DRM device(s):\n0 \n\
                    PID 17 is using 3 DRM device(s):\n1 2 \n3 1 \n\
                    PID 99 is using 0 DRM device(s)\n\
                    PID 5 is using 4294967295 DRM device(s):\nnot numbers\n\
                    ==========================================================================================\n\
                    ================================== End of ROCm SMI Log ===================================\n";
        let found = parse_pid_gpus(text);
        assert_eq!(found.get(&4242), Some(&vec![0]));
        assert_eq!(found.get(&17), Some(&vec![1, 2, 3]), "each index once, over wrapped lines");
        assert_eq!(found.get(&99), Some(&vec![]));
        assert_eq!(found.get(&5), Some(&vec![]), "the count the tool gives is not believed");
        assert!(parse_pid_gpus("No KFD PIDs currently running").is_empty());
    }

    #[test]
    fn a_process_on_several_gpus_shares_its_vram_among_them() {
        let gpus_of = BTreeMap::from([(1, vec![0]), (2, vec![0, 1]), (3, vec![])]);
        let placed = processes_on_gpus(&[(1, Some(300)), (2, Some(300)), (3, Some(1)), (4, Some(1))], &gpus_of);
        assert_eq!(
            placed,
            [
                AmdProcess { gpu: 0, pid: 1, used_memory: Some(300) },
                AmdProcess { gpu: 0, pid: 2, used_memory: Some(150) },
                AmdProcess { gpu: 1, pid: 2, used_memory: Some(150) },
            ]
        );
    }
}
