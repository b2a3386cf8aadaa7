//! seff's rules checked against figures worked out by hand from the script's: its number
//! formats, its sums over a job's steps, and its lines.

use super::figures::{Figures, Refusal};
use super::gpu::{lines, per_gpu, GpuFigures};
use super::report::{debug_lines, efficiency_lines, identity_lines};
use super::units::{human_bytes, kbytes_text, percent_text, time_text, utilization_text};
use crate::api::acct::{AcctJob, AcctStep, StepId, Tres, Usage};
use crate::api::activity::GpuSeries;

const GIB: u64 = 1 << 30;

#[test]
fn durations_as_time2str_writes_them() {
    assert_eq!(time_text(0), "00:00:00");
    assert_eq!(time_text(59), "00:00:59");
    assert_eq!(time_text(3661), "01:01:01");
    assert_eq!(time_text(86_399), "23:59:59");
    // From one day on, `D-` in front.
    assert_eq!(time_text(86_400), "1-00:00:00");
    assert_eq!(time_text(90_061), "1-01:01:01");
    assert_eq!(time_text(864_005), "10-00:00:05");
}

#[test]
fn sizes_as_kbytes2str_writes_them() {
    assert_eq!(kbytes_text(0.0), "0.00 MB");
    // Below 1 KiB the power is still 0 (int() truncates the negative logarithm to 0).
    assert_eq!(kbytes_text(0.5), "0.50 KB");
    assert_eq!(kbytes_text(512.0), "512.00 KB");
    assert_eq!(kbytes_text(1023.0), "1023.00 KB");
    assert_eq!(kbytes_text(1024.0), "1.00 MB");
    assert_eq!(kbytes_text(1536.0), "1.50 MB");
    // 1.125 is a tie: printf rounds it to even.
    assert_eq!(kbytes_text(1152.0), "1.12 MB");
    // One KiB short of a GiB stays in MB and rounds up to 1024.00.
    assert_eq!(kbytes_text(1_048_575.0), "1024.00 MB");
    assert_eq!(kbytes_text(1_048_576.0), "1.00 GB");
    assert_eq!(kbytes_text(4_096_000.0), "3.91 GB");
    assert_eq!(kbytes_text(1_073_741_824.0), "1.00 TB");
    assert_eq!(kbytes_text(2f64.powi(50)), "1.00 EB");
    // Past the last unit letter, none.
    assert_eq!(kbytes_text(2f64.powi(60)), "1.00 B");
}

#[test]
fn efficiencies_with_two_decimals_and_none_of_nothing() {
    assert_eq!(percent_text(150.0, 200.0), "75.00");
    assert_eq!(percent_text(1.0, 3.0), "33.33");
    assert_eq!(percent_text(2.0, 3.0), "66.67");
    assert_eq!(percent_text(1.0, 8.0), "12.50");
    assert_eq!(percent_text(5.0, 0.0), "0.00");
}

#[test]
fn jobstats_sizes_and_utilisations() {
    assert_eq!(human_bytes(0), "0.0B");
    assert_eq!(human_bytes(1023), "1023.0B");
    assert_eq!(human_bytes(1024), "1.0KB");
    assert_eq!(human_bytes(1_572_864), "1.5MB");
    assert_eq!(human_bytes(3 * GIB), "3.0GB");
    assert_eq!(human_bytes(12 * GIB + 300 * (1 << 20)), "12.3GB");
    assert_eq!(utilization_text(80.0), "80%");
    assert_eq!(utilization_text(100.0), "100%");
    assert_eq!(utilization_text(100.0 / 3.0), "33.3%");
    // A tie at the second decimal rounds to even, as Python's round() does.
    assert_eq!(utilization_text(87.25), "87.2%");
}

fn step(id: StepId, usage: Option<Usage>) -> AcctStep {
    AcctStep {
        id,
        name: "batch".into(),
        state: "COMPLETED".into(),
        cancelled_by: None,
        start: 1000,
        end: 1100,
        exit_status: usage.map(|_| 0),
        ntasks: 1,
        alloc: Tres::default(),
        time_limit: None,
        usage,
        gpu_use: None,
        nodes: "node1".into(),
    }
}

fn usage(user_usec: u64, sys_usec: u64, max_rss_kb: u64) -> Option<Usage> {
    Some(Usage { user_usec, sys_usec, max_rss_kb, ave_rss_kb: 0 })
}

/// A job of 4 cores and 8000 MB that ran 100 s: its script used 100.6 s of CPU and 1 GiB
/// at most, its step 50.6 s and 2 GiB.
fn job() -> AcctJob {
    let alloc = Tres { cpus: 4, mem_mb: 8000, gpus: 0, shards: 0, nodes: 1 };
    AcctJob {
        id: 42,
        user: "alice".into(),
        group: "lab".into(),
        cluster: "box".into(),
        state: "COMPLETED".into(),
        start: 1000,
        end: 1100,
        req: alloc,
        alloc: Some(alloc),
        exit_status: 0,
        nodes: "node1".into(),
        steps: vec![
            step(StepId::Batch, usage(100_000_000, 600_000, 1 << 20)),
            step(StepId::Number(0), usage(50_000_000, 600_000, 2 << 20)),
        ],
        ..Default::default()
    }
}

#[test]
fn figures_add_the_steps_as_seff_does() {
    let f = Figures::of(&job(), 5000).unwrap();
    // Whole seconds 100 + 50, microseconds 1.2 s rounded: 151.
    assert_eq!(f.cpu_secs, 151);
    assert_eq!(f.walltime, 100);
    assert_eq!(f.core_walltime(), 400);
    assert_eq!(f.mem_kb, 2 << 20, "the largest step's");
    assert_eq!(f.alloc_mem_kb, 8000 * 1024);
    assert_eq!((f.ncpus, f.nnodes, f.per_node), (4, 1, true));
    // The high byte of the raw status; a job never given cores counts one.
    let failed = AcctJob { state: "FAILED".into(), exit_status: 3 << 8, alloc: None, ..job() };
    let f = Figures::of(&failed, 5000).unwrap();
    assert_eq!((f.exit_code, f.ncpus, f.nnodes), (3, 1, 1));
    // Microseconds of 0.4 s round down.
    let short = AcctJob { steps: vec![step(StepId::Batch, usage(2_200_000, 200_000, 10))], ..job() };
    assert_eq!(Figures::of(&short, 5000).unwrap().cpu_secs, 2);
    // A running job's wall-clock runs to now; its running steps have no CPU time yet.
    let running = AcctJob { state: "RUNNING".into(), end: 0, steps: vec![step(StepId::Batch, None)], ..job() };
    let f = Figures::of(&running, 1250).unwrap();
    assert_eq!((f.walltime, f.cpu_secs, f.mem_kb), (250, 0, 0));
}

#[test]
fn array_tasks_have_their_array_id_and_a_task_less_one_is_refused() {
    let task = AcctJob { id: 43, array_job_id: 40, array_task_id: Some(3), ..job() };
    assert_eq!(Figures::of(&task, 5000).unwrap().array_job_id, "40_3");
    assert!(identity_lines(&Figures::of(&task, 5000).unwrap()).starts_with("Job ID: 43\nArray Job ID: 40_3\n"));
    let bad = AcctJob { array_job_id: 40, array_task_id: None, ..job() };
    assert_eq!(Figures::of(&bad, 5000), Err(Refusal::BadArrayTask(40)));
}

#[test]
fn a_finished_jobs_lines() {
    let f = Figures::of(&job(), 5000).unwrap();
    let text = identity_lines(&f) + &efficiency_lines(&f);
    assert_eq!(
        text,
        "Job ID: 42\n\
         Cluster: box\n\
         User/Group: alice/lab\n\
         State: COMPLETED (exit code 0)\n\
         Nodes: 1\n\
         Cores per node: 4\n\
         CPU Utilized: 00:02:31\n\
         CPU Efficiency: 37.75% of 00:06:40 core-walltime\n\
         Job Wall-clock time: 00:01:40\n\
         Memory Utilized: 2.00 GB\n\
         Memory Efficiency: 25.60% of 7.81 GB (7.81 GB/node)\n"
    );
    assert_eq!(
        debug_lines(&f).lines().nth(1),
        Some("Slurm data: 42  alice lab COMPLETED box 4 1 8192000 1 151 100 2097152 0")
    );
}

#[test]
fn one_core_per_cpu_memory_running_and_pending_lines() {
    let one = Tres { cpus: 1, mem_mb: 1000, gpus: 0, shards: 0, nodes: 1 };
    let running = AcctJob {
        state: "RUNNING".into(),
        end: 0,
        alloc: Some(one),
        mem_per_cpu: true,
        steps: vec![step(StepId::Batch, None)],
        ..job()
    };
    let f = Figures::of(&running, 1061).unwrap();
    let text = identity_lines(&f) + &efficiency_lines(&f);
    assert!(text.contains("State: RUNNING\nCores: 1\n"), "{text}");
    assert!(text.contains("CPU Efficiency: 0.00% of 00:01:01 core-walltime\n"), "{text}");
    assert!(text.contains("Memory Efficiency: 0.00% of 1000.00 MB (1000.00 MB/core)\n"), "{text}");
    assert!(text.ends_with("WARNING: Efficiency statistics can only be obtained after the job has ended as seff tool is based on the accounting database data.\n"), "{text}");
    let pending = AcctJob { state: "PENDING".into(), start: 0, end: 0, alloc: None, steps: vec![], ..job() };
    let f = Figures::of(&pending, 1061).unwrap();
    assert_eq!(efficiency_lines(&f), "Efficiency not available for jobs in the PENDING state.\n");
    assert!(identity_lines(&f).ends_with("State: PENDING\nCores: 1\n"));
}

#[test]
fn each_gpus_figures_over_the_jobs_run_only() {
    let gpu_job = AcctJob { start: 1000, end: 1100, gpu_indices: vec![0, 1, 3], ..job() };
    let series = vec![
        // Steps of 60 s: the one from 960 overlaps the run, the one from 1100 does not.
        GpuSeries {
            index: 0,
            total_memory: Some(40 * GIB),
            samples: vec![(900, 39 * GIB, 100), (960, GIB, 80), (1020, 3 * GIB, 95), (1080, 2 * GIB, 90), (1100, 0, 0)],
        },
        GpuSeries { index: 1, total_memory: Some(40 * GIB), samples: vec![(960, 0, 0), (1020, 0, 0)] },
        GpuSeries { index: 2, total_memory: Some(40 * GIB), samples: vec![(1020, GIB, 50)] },
    ];
    let figures = per_gpu(&gpu_job, &series, 60, 5000);
    assert_eq!(
        figures[0],
        GpuFigures { index: 0, mean_util: Some(265.0 / 3.0), max_memory: Some(3 * GIB), total_memory: Some(40 * GIB) }
    );
    assert_eq!(figures[1].mean_util, Some(0.0));
    assert_eq!(figures[2], GpuFigures { index: 3, mean_util: None, max_memory: None, total_memory: None });
    assert_eq!(
        lines("node1", &figures),
        "\n  GPU utilization per node\n\
         \x20     node1 (GPU 0): 88.3%\n\
         \x20     node1 (GPU 1): 0% <-- GPU was not used\n\
         \x20     node1 (GPU 3): GPU utilization is unknown\n\
         \n  GPU memory usage per node - maximum used/total\n\
         \x20     node1 (GPU 0): 3.0GB/40GB (7.5%)\n\
         \x20     node1 (GPU 1): 0.0B/40GB (0.0%)\n\
         \x20     node1 (GPU 3): GPU memory usage is unknown\n"
    );
}
