//! sstat's fields: Slurm's table of names and default widths, and the value of each for a
//! running step, from what its processes use now.

use crate::api::acct::Usage;
use crate::api::step_info::{StepInfo, StepStats};
use crate::cli::sacct::fields::{cpu_text, size_text, usage_tres_text, Cell, Units};

/// Every field sstat knows, with its default width (negative: left-justified), in Slurm's
/// order: a name given with `-o` picks the first field it starts (case ignored).
pub const FIELDS: &[(&str, i32)] = &[
    ("AllocTRES", 10),
    ("AveCPU", 10),
    ("AveCPUFreq", 10),
    ("AveDiskRead", 12),
    ("AveDiskWrite", 12),
    ("AvePages", 10),
    ("AveRSS", 10),
    ("AveVMSize", 10),
    ("ConsumedEnergy", 14),
    ("ConsumedEnergyRaw", 17),
    ("JobID", -12),
    ("MaxDiskRead", 12),
    ("MaxDiskReadNode", 15),
    ("MaxDiskReadTask", 15),
    ("MaxDiskWrite", 12),
    ("MaxDiskWriteNode", 16),
    ("MaxDiskWriteTask", 16),
    ("MaxPages", 8),
    ("MaxPagesNode", 12),
    ("MaxPagesTask", 14),
    ("MaxRSS", 10),
    ("MaxRSSNode", 10),
    ("MaxRSSTask", 10),
    ("MaxVMSize", 10),
    ("MaxVMSizeNode", 14),
    ("MaxVMSizeTask", 14),
    ("MinCPU", 10),
    ("MinCPUNode", 10),
    ("MinCPUTask", 10),
    ("Nodelist", 20),
    ("NTasks", 8),
    ("Pids", 20),
    ("ReqCPUFreq", 10),
    ("ReqCPUFreqMin", 13),
    ("ReqCPUFreqMax", 13),
    ("ReqCPUFreqGov", 13),
    ("SLUID", 14),
    ("TRESUsageInAve", 14),
    ("TRESUsageInMax", 14),
    ("TRESUsageInMaxNode", 18),
    ("TRESUsageInMaxTask", 18),
    ("TRESUsageInMin", 14),
    ("TRESUsageInMinNode", 18),
    ("TRESUsageInMinTask", 18),
    ("TRESUsageInTot", 14),
    ("TRESUsageOutAve", 15),
    ("TRESUsageOutMax", 15),
    ("TRESUsageOutMaxNode", 19),
    ("TRESUsageOutMaxTask", 19),
    ("TRESUsageOutMin", 15),
    ("TRESUsageOutMinNode", 19),
    ("TRESUsageOutMinTask", 19),
    ("TRESUsageOutTot", 15),
];

/// Slurm's default `--format` (`STAT_FIELDS`).
pub const DEFAULT_FORMAT: &str = "jobid,alloctres,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutave,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutmin,tresusageoutminn,tresusageoutmint,tresusageouttot";

/// `-i`'s format (`STAT_FIELDS_PID`).
pub const PID_FORMAT: &str = "jobid,nodelist,pids";

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(Some(s.into()))
}

/// The value of field `name` for step `s` whose processes use `st`. Figures of all its
/// processes together are shared among its tasks for the averages; the largest of one
/// process is the maximum, as one task's.
pub fn value(name: &str, s: &StepInfo, st: &StepStats, units: &Units) -> Cell {
    let tasks = u64::from(s.tasks.max(1));
    let size = |kb: u64| text(size_text(kb * 1024, 0, units));
    // Whole seconds, as Slurm's sstat prints CPU times.
    let cpu = |usec: u64| text(cpu_text(usec / 1_000_000 * 1_000_000));
    let peak = Usage { user_usec: st.cpu_usec, sys_usec: 0, max_rss_kb: st.rss_max_kb, ave_rss_kb: 0 };
    let average =
        Usage { user_usec: st.cpu_usec / tasks, sys_usec: 0, max_rss_kb: st.rss_total_kb / tasks, ave_rss_kb: 0 };
    match name {
        "AllocTRES" => text(&s.tres),
        "AveCPU" | "MinCPU" => cpu(st.cpu_usec / tasks),
        "AveCPUFreq" | "ConsumedEnergy" | "MaxPages" | "AvePages" => text("0"),
        "ConsumedEnergyRaw" => Cell::Number(Some(0)),
        "AveDiskRead" | "AveDiskWrite" | "MaxDiskRead" | "MaxDiskWrite" => text("0"),
        "AveRSS" => size(st.rss_total_kb / tasks),
        "AveVMSize" => size(st.vsize_total_kb / tasks),
        "JobID" => text(format!("{}.{}", s.job_id, s.step)),
        "MaxRSS" => size(st.rss_max_kb),
        "MaxVMSize" => size(st.vsize_max_kb),
        "MaxDiskReadNode" | "MaxDiskWriteNode" | "MaxPagesNode" | "MaxRSSNode" | "MaxVMSizeNode" | "MinCPUNode"
        | "Nodelist" => text(&s.nodes),
        "MaxDiskReadTask" | "MaxDiskWriteTask" | "MaxPagesTask" | "MaxRSSTask" | "MaxVMSizeTask" | "MinCPUTask" => {
            Cell::Number(Some(0))
        }
        "NTasks" => Cell::Number(Some(u64::from(s.tasks))),
        "Pids" => text(st.pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
        "ReqCPUFreq" | "ReqCPUFreqMin" | "ReqCPUFreqMax" | "ReqCPUFreqGov" => text("Unknown"),
        "TRESUsageInAve" => text(usage_tres_text(Some(&average), st.gpu_use.as_ref(), false, units)),
        "TRESUsageInMax" => text(usage_tres_text(Some(&peak), st.gpu_use.as_ref(), true, units)),
        _ => Cell::Text(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::acct::{GpuUse, StepId};

    #[test]
    fn a_steps_figures_as_sstat_prints_them() {
        let s = StepInfo { job_id: 12, step: StepId::Number(0), tasks: 2, nodes: "node1".into(), ..Default::default() };
        let st = StepStats {
            pids: vec![101, 102],
            cpu_usec: 4_200_000,
            rss_max_kb: 3000,
            rss_total_kb: 4000,
            vsize_max_kb: 10_000,
            vsize_total_kb: 20_000,
            gpu_use: Some(GpuUse { mem_max: 2 << 30, mem_ave: 1 << 30, util_max: 90, util_ave: 45 }),
        };
        let u = Units::default();
        let shown = |name: &str| match value(name, &s, &st, &u) {
            Cell::Text(t) => t.unwrap_or_default(),
            Cell::Number(n) => n.map(|n| n.to_string()).unwrap_or_default(),
            other => format!("{other:?}"),
        };
        assert_eq!(shown("JobID"), "12.0");
        assert_eq!(shown("Pids"), "101,102");
        assert_eq!((shown("MaxRSS"), shown("AveRSS")), ("3000K".into(), "2000K".into()));
        assert_eq!((shown("MinCPU"), shown("AveCPU")), ("00:00:02".into(), "00:00:02".into()));
        assert_eq!(shown("TRESUsageInMax"), "cpu=00:00:04,energy=0,gres/gpumem=2G,gres/gpuutil=90,mem=3000K");
        assert_eq!(shown("TRESUsageInAve"), "cpu=00:00:02,energy=0,gres/gpumem=1G,gres/gpuutil=45,mem=2000K");
        assert_eq!(shown("TRESUsageOutMax"), "");
    }
}
