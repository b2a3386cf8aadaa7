//! `amd-smi … --json`: AMD's current tool (ROCm 6 on, replacing `rocm-smi`), read for each
//! GPU's busy share and memory and for its compute processes. What is read, and from which
//! releases (the CLI of `ROCm/amdsmi`, `amdsmi_cli/`, and of `ROCm/rocm-systems`,
//! `projects/amdsmi/amdsmi_cli/`):
//!
//! - the top of the document is a list of one object per GPU (`[{"gpu": 0, …}]`, amd-smi
//!   24.x–25.x, ROCm 6.x), or an object whose `gpu_data` is that list (`metric` and `static`
//!   from amd-smi 26, ROCm 7); both are read, and a lone object with a `gpu`;
//! - a figure is `{"value": 37, "unit": "%"}` (the JSON output from ROCm 6.1 on), a bare
//!   number (earlier releases, and the `gpu` index), or `"N/A"` when the driver does not
//!   say; a string holding a number is read as that number;
//! - `metric --usage --mem-usage`: `usage.gfx_activity` (`gfx_usage` in ROCm 6.0's) in
//!   percent; `mem_usage.used_vram` and `mem_usage.total_vram` in `MB`, which amd-smi
//!   computes as bytes / 1024² (MiB);
//! - `process`: `process_list`, each item `{"process_info": {"pid": …, "memory_usage":
//!   {"vram_mem": …}, "mem_usage": …}}` with memory in bytes (`"unit": "B"`), or
//!   `{"process_info": "No running processes detected"}`;
//! - `list`: each GPU's `bdf` (`0000:c1:00.0`, in lower case where `rocm-smi` writes upper).
//!
//! Nothing here trusts the tool: an index or pid that is not a `u32`, a figure that is not a
//! non-negative number or does not fit 64 bits, is left out (`None`); utilisation over 100%
//! and memory over the total are set right by [`super::GpuSample::bounded`], which the
//! sampler's callers apply.

use serde_json::Value;

/// The arguments that make `amd-smi` list each GPU's index and PCI bus id.
pub const LIST: [&str; 2] = ["list", "--json"];

/// The arguments that make `amd-smi` give each GPU's busy share and memory.
pub const METRIC: [&str; 4] = ["metric", "--usage", "--mem-usage", "--json"];

/// The arguments that make `amd-smi` list each GPU's compute processes.
pub const PROCESS: [&str; 2] = ["process", "--json"];

/// One GPU's own figures, as AMD's tools number it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AmdFigures {
    /// The tool's index of the GPU.
    pub gpu: u32,
    /// Memory in use, bytes.
    pub memory_used: Option<u64>,
    /// Memory in all, bytes.
    pub memory_total: Option<u64>,
    /// How busy the GPU was lately, in percent.
    pub utilization: Option<u32>,
}

/// A compute process on one GPU, as AMD's tools number it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmdProcess {
    /// The tool's index of the GPU.
    pub gpu: u32,
    /// Its pid.
    pub pid: u32,
    /// The GPU memory (VRAM) it holds in bytes, when the tool says.
    pub used_memory: Option<u64>,
}

/// The first JSON document in `text`: the whole text, or what follows the lines before it
/// (a tool may print a warning first, on its standard output). `None` when there is none.
pub fn json_in(text: &str) -> Option<Value> {
    let start = text.find(['{', '['])?;
    serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>().next()?.ok()
}

/// The per-GPU objects of an amd-smi document: its list, its `gpu_data` list, or itself when
/// it is one GPU's object.
fn entries(doc: &Value) -> Vec<&Value> {
    match doc {
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => match map.get("gpu_data") {
            Some(Value::Array(items)) => items.iter().collect(),
            _ if map.contains_key("gpu") => vec![doc],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The value of `v` as a whole number that fits `u32`.
fn index(v: &Value) -> Option<u32> {
    let n = match v {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    u32::try_from(n).ok()
}

/// The number a figure holds, with its unit: `{"value": N, "unit": U}`, a bare number or a
/// string holding one (`"37"`); `None` for `"N/A"` and anything else.
fn figure(v: &Value) -> Option<(Number, Option<&str>)> {
    match v {
        Value::Object(map) => Some((number(map.get("value")?)?, map.get("unit").and_then(Value::as_str))),
        _ => Some((number(v)?, None)),
    }
}

/// A bare number, or a string holding one; negative, infinite and not-a-number values are
/// not figures.
fn number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Number::of(n.as_u64(), n.as_f64()),
        Value::String(s) => {
            let s = s.trim();
            Number::of(s.parse().ok(), s.parse().ok())
        }
        _ => None,
    }
}

/// A figure's number: whole where the tool wrote a whole one, so that large byte counts stay
/// exact.
#[derive(Debug, Clone, Copy)]
enum Number {
    Whole(u64),
    Real(f64),
}

impl Number {
    fn of(whole: Option<u64>, real: Option<f64>) -> Option<Number> {
        match (whole, real) {
            (Some(w), _) => Some(Number::Whole(w)),
            (None, Some(r)) if r.is_finite() && r >= 0.0 => Some(Number::Real(r)),
            _ => None,
        }
    }

    /// `self × scale`, when it fits 64 bits.
    fn scaled(self, scale: u64) -> Option<u64> {
        match self {
            Number::Whole(w) => w.checked_mul(scale),
            Number::Real(r) => {
                let x = (r * scale as f64).round();
                (x < u64::MAX as f64).then_some(x as u64)
            }
        }
    }
}

/// Bytes in one of a memory unit as amd-smi writes it; `None` for a unit it does not use.
/// Its `MB` is MiB: it divides bytes by 1024².
fn unit_bytes(unit: &str) -> Option<u64> {
    match unit.trim().to_ascii_uppercase().as_str() {
        "B" => Some(1),
        "KB" | "KIB" => Some(1 << 10),
        "MB" | "MIB" => Some(1 << 20),
        "GB" | "GIB" => Some(1 << 30),
        _ => None,
    }
}

/// Memory in bytes from a figure, a bare number counting `bare` bytes each.
pub(super) fn bytes(v: &Value, bare: u64) -> Option<u64> {
    let (number, unit) = figure(v)?;
    number.scaled(match unit {
        Some(unit) => unit_bytes(unit)?,
        None => bare,
    })
}

/// A percentage from a figure, rounded; `None` for one that does not fit `u32` (one over
/// 100 is kept, and set right with a note by the sample's bounds).
pub(super) fn percent(v: &Value) -> Option<u32> {
    let (number, unit) = figure(v)?;
    if unit.is_some_and(|u| u.trim() != "%") {
        return None;
    }
    number.scaled(1).and_then(|n| u32::try_from(n).ok())
}

/// The value at `path` under `v`, through objects.
fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, key| v.get(key))
}

/// Each GPU's index and PCI bus id from `amd-smi list --json`; GPUs without both are left
/// out.
pub fn parse_list(text: &str) -> Vec<(u32, String)> {
    let Some(doc) = json_in(text) else { return Vec::new() };
    entries(&doc)
        .into_iter()
        .filter_map(|e| {
            let bdf = e.get("bdf")?.as_str()?.trim();
            Some((index(e.get("gpu")?)?, bdf.to_string())).filter(|_| !bdf.is_empty() && bdf != "N/A")
        })
        .collect()
}

/// Each GPU's figures from `amd-smi metric --usage --mem-usage --json`; `None` when the text
/// holds no JSON document (the tool said something else).
pub fn parse_metric(text: &str) -> Option<Vec<AmdFigures>> {
    let doc = json_in(text)?;
    let figures = entries(&doc)
        .into_iter()
        .filter_map(|e| {
            let memory = |key: &str| at(e, &["mem_usage", key]).and_then(|v| bytes(v, 1 << 20));
            let busy = ["gfx_activity", "gfx_usage"].iter().find_map(|key| at(e, &["usage", key]).and_then(percent));
            Some(AmdFigures {
                gpu: index(e.get("gpu")?)?,
                memory_used: memory("used_vram"),
                memory_total: memory("total_vram"),
                utilization: busy,
            })
        })
        .collect();
    Some(figures)
}

/// Each GPU's compute processes from `amd-smi process --json`; `None` when the text holds no
/// JSON document. A process's memory is its VRAM (`memory_usage.vram_mem`), else all it
/// holds through the GPU (`mem_usage`).
pub fn parse_process(text: &str) -> Option<Vec<AmdProcess>> {
    let doc = json_in(text)?;
    let mut found = Vec::new();
    for entry in entries(&doc) {
        let (Some(gpu), Some(Value::Array(list))) = (entry.get("gpu").and_then(index), entry.get("process_list"))
        else {
            continue;
        };
        for item in list {
            let info = item.get("process_info").unwrap_or(item);
            let Some(pid) = info.get("pid").and_then(index).filter(|&pid| pid > 0) else { continue };
            let used_memory = [&["memory_usage", "vram_mem"][..], &["mem_usage"], &["mem"]]
                .iter()
                .find_map(|path| at(info, path).and_then(|v| bytes(v, 1)));
            found.push(AmdProcess { gpu, pid, used_memory });
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `amd-smi metric --usage --mem-usage --json` of two MI300X as amd-smi 24.x (ROCm 6.2,
    /// 6.3) prints it: a list, figures with their units (some left out here).
    const METRIC_LIST: &str = r#"[
    {
        "gpu": 0,
        "usage": {
            "gfx_activity": {"value": 37, "unit": "%"},
            "umc_activity": {"value": 2, "unit": "%"},
            "mm_activity": "N/A",
            "vcn_activity": [{"value": 0, "unit": "%"}, "N/A", "N/A", "N/A"],
            "gfx_busy_inst": "N/A"
        },
        "mem_usage": {
            "total_vram": {"value": 196592, "unit": "MB"},
            "used_vram": {"value": 5130, "unit": "MB"},
            "free_vram": {"value": 191462, "unit": "MB"},
            "total_visible_vram": {"value": 196592, "unit": "MB"},
            "total_gtt": {"value": 128646, "unit": "MB"}
        }
    },
    {
        "gpu": 1,
        "usage": "N/A",
        "mem_usage": {"total_vram": {"value": 196592, "unit": "MB"}, "used_vram": "N/A"}
    }
]"#;

    #[test]
    fn reads_metric_as_a_list_with_units() {
        let figures = parse_metric(METRIC_LIST).unwrap();
        assert_eq!(
            figures,
            [
                AmdFigures {
                    gpu: 0,
                    memory_used: Some(5130 << 20),
                    memory_total: Some(196_592 << 20),
                    utilization: Some(37)
                },
                AmdFigures { gpu: 1, memory_used: None, memory_total: Some(196_592 << 20), utilization: None },
            ]
        );
    }

    #[test]
    fn reads_metric_under_gpu_data_and_with_bare_numbers() {
        // amd-smi 26 (ROCm 7) wraps the list in `gpu_data`.
        let wrapped = format!(r#"{{"gpu_data": {METRIC_LIST}}}"#);
        assert_eq!(parse_metric(&wrapped), parse_metric(METRIC_LIST));
        // ROCm 6.0's: `gfx_usage`, bare numbers (MiB, percent), one GPU's object alone.
        let old = r#"{"gpu": 3, "usage": {"gfx_usage": 12, "mem_usage": 0}, "mem_usage": {"total_vram": 65520, "used_vram": 10}}"#;
        assert_eq!(
            parse_metric(old).unwrap(),
            [AmdFigures {
                gpu: 3,
                memory_used: Some(10 << 20),
                memory_total: Some(65520 << 20),
                utilization: Some(12)
            }]
        );
    }

    #[test]
    fn odd_figures_are_left_out_and_impossible_ones_kept_for_the_bounds() {
        let text = r#"Some warning the tool printed first
[
  {"gpu": 0, "usage": {"gfx_activity": {"value": 400, "unit": "%"}},
   "mem_usage": {"total_vram": {"value": 18446744073709551615, "unit": "MB"}, "used_vram": {"value": -3, "unit": "MB"}}},
  {"gpu": 1, "usage": {"gfx_activity": {"value": 12.6, "unit": "%"}},
   "mem_usage": {"total_vram": {"value": 1, "unit": "parsecs"}, "used_vram": {"value": "garbage", "unit": "MB"}}},
  {"gpu": 2, "usage": {"gfx_activity": {"value": 5, "unit": "ns"}}, "mem_usage": "N/A"},
  {"gpu": 4294967296, "usage": {"gfx_activity": 1}},
  {"gpu": "N/A"},
  "garbage",
  {"usage": {"gfx_activity": 1}}
]"#;
        let figures = parse_metric(text).unwrap();
        assert_eq!(figures.len(), 3, "{figures:?}");
        assert_eq!(figures[0], AmdFigures { gpu: 0, utilization: Some(400), ..Default::default() });
        assert_eq!(figures[1], AmdFigures { gpu: 1, utilization: Some(13), ..Default::default() });
        assert_eq!(figures[2], AmdFigures { gpu: 2, ..Default::default() });
        assert_eq!(parse_metric("AMDSMI_STATUS_NO_PERM"), None);
        assert_eq!(parse_metric("{}"), Some(Vec::new()));
    }

    /// `amd-smi process --json` as amd-smi 24.x–26 prints it: a process on GPU 0, none on
    /// GPU 1.
    const PROCESS_LIST: &str = r#"[
    {
        "gpu": 0,
        "process_list": [
            {
                "process_info": {
                    "name": "python3",
                    "pid": 4242,
                    "memory_usage": {
                        "gtt_mem": {"value": 2097152, "unit": "B"},
                        "cpu_mem": {"value": 425984, "unit": "B"},
                        "vram_mem": {"value": 3221225472, "unit": "B"}
                    },
                    "mem_usage": {"value": 3223748608, "unit": "B"},
                    "usage": {"gfx": {"value": 0, "unit": "ns"}, "enc": {"value": 0, "unit": "ns"}},
                    "sdma_usage": {"value": 0, "unit": "us"},
                    "cu_occupancy": "N/A",
                    "evicted_time": {"value": 0, "unit": "ms"}
                }
            }
        ]
    },
    {
        "gpu": 1,
        "process_list": [{"process_info": "No running processes detected"}]
    }
]"#;

    #[test]
    fn reads_processes_with_their_vram() {
        assert_eq!(
            parse_process(PROCESS_LIST).unwrap(),
            [AmdProcess { gpu: 0, pid: 4242, used_memory: Some(3 << 30) }]
        );
        let wrapped = format!(r#"{{"gpu_data": {PROCESS_LIST}}}"#);
        assert_eq!(parse_process(&wrapped), parse_process(PROCESS_LIST));
    }

    #[test]
    fn a_process_without_vram_is_read_by_what_it_holds_or_not_at_all() {
        let text = r#"[{"gpu": 2, "process_list": [
            {"process_info": {"pid": 7, "memory_usage": {"vram_mem": "N/A"}, "mem_usage": {"value": 1024, "unit": "B"}}},
            {"process_info": {"pid": 8, "mem": 2048}},
            {"process_info": {"pid": 9, "memory_usage": {"vram_mem": {"value": 99999999999999999999999, "unit": "B"}}}},
            {"process_info": {"pid": 0, "mem_usage": 1}},
            {"process_info": {"pid": -4, "mem_usage": 1}},
            {"process_info": {"pid": "garbage"}},
            {"pid": 10, "mem_usage": {"value": 1, "unit": "GB"}},
            "garbage"
        ]}, {"gpu": 3, "process_list": "N/A"}, {"gpu": "x", "process_list": [{"process_info": {"pid": 11}}]}]"#;
        assert_eq!(
            parse_process(text).unwrap(),
            [
                AmdProcess { gpu: 2, pid: 7, used_memory: Some(1024) },
                AmdProcess { gpu: 2, pid: 8, used_memory: Some(2048) },
                AmdProcess { gpu: 2, pid: 9, used_memory: None },
                AmdProcess { gpu: 2, pid: 10, used_memory: Some(1 << 30) },
            ]
        );
        assert_eq!(parse_process(""), None);
    }

    #[test]
    fn reads_the_bus_ids_of_list() {
        let text = r#"[{"gpu": 0, "bdf": "0000:c1:00.0", "uuid": "a1ff74a1-0000-1000-8018-f68e602b8a79", "kfd_id": 45412, "node_id": 2, "partition_id": 0},
                       {"gpu": 1, "bdf": "N/A"}, {"gpu": 2}]"#;
        assert_eq!(parse_list(text), [(0, "0000:c1:00.0".to_string())]);
        assert!(parse_list("garbage").is_empty());
    }
}
