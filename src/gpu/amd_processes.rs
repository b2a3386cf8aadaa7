//! The figures and compute processes of AMD GPUs (those `rocm-smi` found), through AMD's
//! tools: `amd-smi` ([`super::amd_smi`]), and `rocm-smi` ([`super::rocm_smi_use`]) where
//! `amd-smi` is missing or fails; AMD's [`GpuSampler`].
//!
//! The tools number the GPUs their own way. `rocm-smi`'s indices are those discovery gave
//! the node's GPUs; `amd-smi`'s are matched to them by PCI bus id (`amd-smi list`, asked
//! until it answers once), and by index for a GPU whose bus id it does not list. What is
//! reported carries the UUID the node's GPU has (`GPU-<unique id>`), as the other samplers'
//! does; a GPU that has none, or that is not the node's, is left out.

use super::amd_smi::{self, AmdFigures, AmdProcess};
use super::rocm_smi_use;
use super::sampler::{GpuProcess, GpuReading, GpuSample, GpuSampler};
use super::tool::{output_within, TOOL_DEADLINE};
use super::{Gpu, GpuError};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one look may take in all, however many calls it makes: what a look of
/// nvidia-smi's (two calls) may take, so that the daemon's deadline for a look holds for AMD's
/// too (see `daemon::runtime::gpu_watch`).
pub const LOOK_BUDGET: Duration = TOOL_DEADLINE.saturating_mul(2);

/// Asks `amd-smi`, then `rocm-smi`, both looked up in `PATH`.
#[derive(Debug)]
pub struct AmdProcesses {
    amd_smi: String,
    rocm_smi: String,
    /// The node's whole GPUs that have a UUID: index, UUID, PCI bus id.
    gpus: Vec<(u32, String, Option<String>)>,
    /// `amd-smi`'s index of each GPU → the node's UUID of it, once `amd-smi list` answered.
    amd_smi_uuids: Mutex<Option<HashMap<u32, String>>>,
}

impl AmdProcesses {
    /// The sampler of the whole GPUs among `gpus`.
    pub fn new(gpus: &[Gpu]) -> AmdProcesses {
        AmdProcesses::with_programs("amd-smi", "rocm-smi", gpus)
    }

    /// The same, through the programs named.
    fn with_programs(amd_smi: &str, rocm_smi: &str, gpus: &[Gpu]) -> AmdProcesses {
        let gpus = gpus
            .iter()
            .filter(|g| g.mig_parent.is_none())
            .filter_map(|g| Some((g.index, g.uuid.clone()?, g.pci_bus_id.clone())))
            .collect();
        AmdProcesses { amd_smi: amd_smi.into(), rocm_smi: rocm_smi.into(), gpus, amd_smi_uuids: Mutex::new(None) }
    }

    /// One look through `amd-smi`, finished by `until`.
    fn through_amd_smi(&self, until: Instant) -> Result<GpuSample, GpuError> {
        let uuids = self.amd_smi_uuids(until)?;
        let program = &self.amd_smi;
        let figures =
            amd_smi::parse_metric(&run(program, &amd_smi::METRIC, until)?).ok_or_else(|| unreadable(program))?;
        let processes =
            amd_smi::parse_process(&run(program, &amd_smi::PROCESS, until)?).ok_or_else(|| unreadable(program))?;
        Ok(sample_of(&uuids, figures, processes))
    }

    /// `amd-smi`'s index of each of the node's GPUs, as `amd-smi list` matches them by bus
    /// id (asked until it has answered once).
    fn amd_smi_uuids(&self, until: Instant) -> Result<HashMap<u32, String>, GpuError> {
        if let Some(known) = self.amd_smi_uuids.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            return Ok(known.clone());
        }
        let listed = amd_smi::parse_list(&run(&self.amd_smi, &amd_smi::LIST, until)?);
        let matched = match_by_bus(&self.gpus, &listed);
        *self.amd_smi_uuids.lock().unwrap_or_else(|e| e.into_inner()) = Some(matched.clone());
        Ok(matched)
    }

    /// One look through `rocm-smi`, finished by `until`; its GPUs' indices are the node's.
    fn through_rocm_smi(&self, until: Instant) -> Result<GpuSample, GpuError> {
        let program = &self.rocm_smi;
        let used =
            rocm_smi_use::parse_use(&run(program, &rocm_smi_use::USE, until)?).ok_or_else(|| unreadable(program))?;
        let gpus_of = if used.processes.is_empty() {
            BTreeMap::new()
        } else {
            rocm_smi_use::parse_pid_gpus(&run(program, &rocm_smi_use::PID_GPUS, until)?)
        };
        let processes = rocm_smi_use::processes_on_gpus(&used.processes, &gpus_of);
        let uuids = self.gpus.iter().map(|(index, uuid, _)| (*index, uuid.clone())).collect();
        Ok(sample_of(&uuids, used.gpus, processes))
    }
}

impl GpuSampler for AmdProcesses {
    fn name(&self) -> &str {
        "amd-smi/rocm-smi"
    }

    /// Asks `amd-smi`; where it cannot be run, fails or says nothing readable, `rocm-smi`.
    /// One that ran past its deadline is not followed by the other: the driver is stuck, and
    /// the other would hang as well.
    fn sample(&self) -> Result<GpuSample, GpuError> {
        self.sample_by(Instant::now() + LOOK_BUDGET)
    }
}

impl AmdProcesses {
    /// [`GpuSampler::sample`], finished by `until`.
    fn sample_by(&self, until: Instant) -> Result<GpuSample, GpuError> {
        match self.through_amd_smi(until) {
            Err(first) if !hung(&first) => {
                tracing::debug!("amd-smi cannot tell the GPUs' use ({first}); asking rocm-smi");
                self.through_rocm_smi(until)
                    .map_err(|then| GpuError::Both { first: Box::new(first), then: Box::new(then) })
            }
            seen => seen,
        }
    }
}

/// What `program ARGS` prints, run with what is left of the time until `until`.
fn run(program: &str, args: &[&str], until: Instant) -> Result<String, GpuError> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(GpuError::Hung { what: format!("{program} {}", args.join(" ")), after: LOOK_BUDGET });
    }
    output_within(program, args, left)
}

/// Whether `e` says that a tool ran past its time.
fn hung(e: &GpuError) -> bool {
    matches!(e, GpuError::Hung { .. }) || matches!(e, GpuError::Tool(t) if t.timed_out())
}

/// The error of a tool that printed no JSON.
fn unreadable(program: &str) -> GpuError {
    GpuError::Unreadable { program: program.to_string(), why: "no JSON document in its output".into() }
}

/// A PCI bus id to compare: in lower case, with the domain (`0000:`) where it was left out.
fn bus_key(bus: &str) -> String {
    let bus = bus.trim().to_ascii_lowercase();
    if bus.matches(':').count() == 1 {
        format!("0000:{bus}")
    } else {
        bus
    }
}

/// The tool's index of each of `gpus` (index, UUID, bus id) as `listed` (index, bus id)
/// gives it: the index listed with its bus id, else its own where that is not another's.
fn match_by_bus(gpus: &[(u32, String, Option<String>)], listed: &[(u32, String)]) -> HashMap<u32, String> {
    let mut matched = HashMap::new();
    let mut unplaced = Vec::new();
    for (index, uuid, bus) in gpus {
        let found = bus.as_deref().and_then(|bus| listed.iter().find(|(_, l)| bus_key(l) == bus_key(bus)));
        match found {
            Some((tool_index, _)) => {
                matched.insert(*tool_index, uuid.clone());
            }
            None => unplaced.push((*index, uuid)),
        }
    }
    for (index, uuid) in unplaced {
        matched.entry(index).or_insert_with(|| uuid.clone());
    }
    matched
}

/// The sample of `figures` and `processes`, their GPUs named by `uuids` (the tool's index →
/// the node's UUID); what is on a GPU not among them is left out.
fn sample_of(uuids: &HashMap<u32, String>, figures: Vec<AmdFigures>, processes: Vec<AmdProcess>) -> GpuSample {
    let gpus = figures
        .into_iter()
        .filter_map(|f| {
            Some(GpuReading {
                uuid: uuids.get(&f.gpu)?.clone(),
                memory_used: f.memory_used,
                memory_total: f.memory_total,
                utilization: f.utilization,
                note: None,
            })
        })
        .collect();
    let processes = processes
        .into_iter()
        .filter_map(|p| {
            Some(GpuProcess {
                gpu_uuid: uuids.get(&p.gpu)?.clone(),
                pid: p.pid,
                used_memory: p.used_memory,
                sm_util: None,
            })
        })
        .collect();
    GpuSample { gpus, processes, troubles: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::Vendor;
    use std::os::unix::fs::PermissionsExt;

    fn amd(index: u32, uuid: &str, bus: &str) -> Gpu {
        Gpu { uuid: Some(uuid.into()), pci_bus_id: Some(bus.into()), vendor: Vendor::Amd, ..Gpu::nvidia(index) }
    }

    fn node() -> Vec<Gpu> {
        vec![amd(0, "GPU-18f68e602b8a790f", "0000:C1:00.0"), amd(1, "GPU-28f68e602b8a7910", "0000:C2:00.0")]
    }

    /// A shell script named `name` in `dir` that prints `body`'s output.
    fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[test]
    fn amd_smis_indices_are_matched_by_bus_id_and_else_by_index() {
        let gpus: Vec<(u32, String, Option<String>)> = vec![
            (0, "GPU-a".into(), Some("0000:C1:00.0".into())),
            (1, "GPU-b".into(), Some("0000:C2:00.0".into())),
            (2, "GPU-c".into(), None),
        ];
        // amd-smi numbers the two the other way round, and writes bus ids in lower case.
        let listed = [(0, "0000:c2:00.0".to_string()), (1, "c1:00.0".to_string())];
        let matched = match_by_bus(&gpus, &listed);
        assert_eq!(matched.get(&0).map(String::as_str), Some("GPU-b"));
        assert_eq!(matched.get(&1).map(String::as_str), Some("GPU-a"));
        assert_eq!(matched.get(&2).map(String::as_str), Some("GPU-c"), "no bus id: by index");
        assert_eq!(match_by_bus(&gpus, &[]).len(), 3, "nothing listed: all by index");
    }

    #[test]
    fn amd_smi_is_asked_and_what_it_says_carries_the_nodes_uuids() {
        let dir = tempfile::tempdir().unwrap();
        let amd_smi = script(
            dir.path(),
            "amd-smi",
            r#"case "$*" in
  'list --json') echo '[{"gpu": 0, "bdf": "0000:c2:00.0"}, {"gpu": 1, "bdf": "0000:c1:00.0"}]';;
  'metric --usage --mem-usage --json') echo '{"gpu_data": [{"gpu": 0, "usage": {"gfx_activity": {"value": 12, "unit": "%"}},
      "mem_usage": {"total_vram": {"value": 65520, "unit": "MB"}, "used_vram": {"value": 3072, "unit": "MB"}}}]}';;
  'process --json') echo '[{"gpu": 1, "process_list": [{"process_info": {"name": "python3", "pid": 4242,
      "memory_usage": {"vram_mem": {"value": 1073741824, "unit": "B"}}}}]}]';;
  *) exit 2;;
esac"#,
        );
        let sampler = AmdProcesses::with_programs(&amd_smi, "/nonexistent/rocm-smi", &node());
        let sample = sampler.sample().unwrap();
        assert_eq!(
            sample.gpus,
            [GpuReading {
                uuid: "GPU-28f68e602b8a7910".into(),
                memory_used: Some(3072 << 20),
                memory_total: Some(65520 << 20),
                utilization: Some(12),
                note: None,
            }]
        );
        assert_eq!(
            sample.processes,
            [GpuProcess {
                gpu_uuid: "GPU-18f68e602b8a790f".into(),
                pid: 4242,
                used_memory: Some(1 << 30),
                sm_util: None
            }]
        );
    }

    #[test]
    fn without_amd_smi_rocm_smi_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let rocm_smi = script(
            dir.path(),
            "rocm-smi",
            r#"case "$*" in
  '--showuse --showmeminfo vram --showpids --json') echo '{"card1": {"GPU use (%)": "40", "VRAM Total Memory (B)": "1000", "VRAM Total Used Memory (B)": "600"}, "system": {"PID77": "python3, 1, 512, 0, 0"}}';;
  '--showpidgpus') printf 'PID 77 is using 1 DRM device(s):\n1 \n';;
  *) exit 2;;
esac"#,
        );
        let sampler = AmdProcesses::with_programs("/nonexistent/amd-smi", &rocm_smi, &node());
        let sample = sampler.sample().unwrap();
        assert_eq!(sample.gpus.len(), 1);
        assert_eq!((sample.gpus[0].uuid.as_str(), sample.gpus[0].utilization), ("GPU-28f68e602b8a7910", Some(40)));
        assert_eq!(
            sample.processes,
            [GpuProcess { gpu_uuid: "GPU-28f68e602b8a7910".into(), pid: 77, used_memory: Some(512), sm_util: None }]
        );
    }

    #[test]
    fn an_amd_smi_that_says_nothing_readable_is_followed_by_rocm_smi_and_both_failing_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let amd_smi = script(dir.path(), "amd-smi", "echo 'Traceback (most recent call last):'");
        let rocm_smi = script(dir.path(), "rocm-smi", "echo '{\"card0\": {\"GPU use (%)\": \"5\"}}'");
        let sample = AmdProcesses::with_programs(&amd_smi, &rocm_smi, &node()).sample().unwrap();
        assert_eq!(sample.gpus[0].utilization, Some(5));
        let err = AmdProcesses::with_programs(&amd_smi, "/nonexistent/rocm-smi", &node()).sample().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("amd-smi") && text.contains("no JSON") && text.contains("rocm-smi"), "{text}");
    }

    #[test]
    fn a_look_keeps_within_its_budget_and_a_hung_amd_smi_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("rocm-smi-ran");
        let amd_smi = script(dir.path(), "amd-smi", "exec sleep 30");
        let rocm_smi = script(dir.path(), "rocm-smi", &format!("touch '{}'", marker.display()));
        let sampler = AmdProcesses::with_programs(&amd_smi, &rocm_smi, &node());
        let begun = Instant::now();
        let err = sampler.sample_by(begun + Duration::from_millis(300)).unwrap_err();
        assert!(hung(&err), "{err}");
        assert!(begun.elapsed() < Duration::from_secs(5), "{:?}", begun.elapsed());
        assert!(!marker.exists(), "rocm-smi is not asked after a hung amd-smi");
        // A budget already spent: no tool is even started.
        let err = sampler.sample_by(Instant::now()).unwrap_err();
        assert!(matches!(err, GpuError::Hung { .. }), "{err}");
    }
}
