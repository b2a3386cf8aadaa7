//! seff's lines for one job, in the words, order and number formats of Slurm's
//! `contribs/seff/seff`, so that scripts and habits built on its output keep working.

use super::figures::Figures;
use super::units::{kbytes_text, percent_text, time_text};
use std::fmt::Write;

/// seff's two `-d` lines: the raw figures, under a header. The header names an `Ntasks`
/// the values do not have, as in the script.
pub fn debug_lines(f: &Figures) -> String {
    format!(
        "Slurm data: JobID ArrayJobID User Group State Clustername Ncpus Nnodes Ntasks Reqmem PerNode Cput Walltime Mem ExitStatus\n\
         Slurm data: {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n\n",
        f.job_id,
        f.array_job_id,
        f.user,
        f.group,
        f.state,
        f.cluster,
        f.ncpus,
        f.nnodes,
        f.req_mem_kb,
        u8::from(f.per_node),
        f.cpu_secs,
        f.walltime,
        f.mem_kb,
        f.exit_code
    )
}

/// Who and what: the job's ids, cluster, owner, state and the cores it was given.
pub fn identity_lines(f: &Figures) -> String {
    let mut out = format!("Job ID: {}\n", f.job_id);
    if !f.array_job_id.is_empty() {
        let _ = writeln!(out, "Array Job ID: {}", f.array_job_id);
    }
    let _ = writeln!(out, "Cluster: {}", f.cluster);
    let _ = writeln!(out, "User/Group: {}/{}", f.user, f.group);
    if f.state == "PENDING" || f.state == "RUNNING" {
        let _ = writeln!(out, "State: {}", f.state);
    } else {
        let _ = writeln!(out, "State: {} (exit code {})", f.state, f.exit_code);
    }
    if f.ncpus == 1 {
        let _ = writeln!(out, "Cores: {}", f.ncpus);
    } else {
        let _ = writeln!(out, "Nodes: {}", f.nnodes);
        let _ = writeln!(out, "Cores per node: {}", f.ncpus / f.nnodes);
    }
    out
}

/// The efficiencies of a job that started: CPU time against core-walltime, memory used
/// against memory given; for a pending job, seff's one line saying there are none.
///
/// The script's further line comparing the largest task's memory peak with the average
/// task's is never printed here: slurmlet keeps one memory peak per step, not one per
/// task, so the two are the same.
pub fn efficiency_lines(f: &Figures) -> String {
    if f.state == "PENDING" {
        return "Efficiency not available for jobs in the PENDING state.\n".to_string();
    }
    let core_walltime = f.core_walltime();
    let mut out = format!("CPU Utilized: {}\n", time_text(f.cpu_secs));
    let _ = writeln!(
        out,
        "CPU Efficiency: {}% of {} core-walltime",
        percent_text(f.cpu_secs as f64, core_walltime as f64),
        time_text(core_walltime)
    );
    let _ = writeln!(out, "Job Wall-clock time: {}", time_text(f.walltime));
    let _ = writeln!(out, "Memory Utilized: {}", kbytes_text(f.mem_kb as f64));
    let alloc = f.alloc_mem_kb as f64;
    let (share, per) = if f.per_node { (alloc / f.nnodes as f64, "node") } else { (alloc / f.ncpus as f64, "core") };
    let _ = writeln!(
        out,
        "Memory Efficiency: {}% of {} ({}/{per})",
        percent_text(f.mem_kb as f64, alloc),
        kbytes_text(alloc),
        kbytes_text(share)
    );
    if f.state == "RUNNING" {
        out.push_str(RUNNING_WARNING);
    }
    out
}

/// What seff adds under a running job's figures.
pub const RUNNING_WARNING: &str = "WARNING: Efficiency statistics can only be obtained after the job has ended as seff tool is based on the accounting database data.\n";
