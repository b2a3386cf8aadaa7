//! The reading side of `scontrol`: `show job|node|partition|config|hostnames|hostlist|
//! hostlistsorted`, `ping` and `version`, against a real daemon, with Slurm's layouts, error
//! texts and exit codes (the reference transcripts in ../shared/reference/).

use crate::common;
use common::T;
use common::*;

/// Waits until `release` exists in the work directory.
const BLOCK: &str = "while [ ! -e release ]; do sleep 0.02; done";

/// What a command printed and returned.
#[derive(Debug, PartialEq, Eq)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn out(code: i32, stdout: &str, stderr: &str) -> Out {
    Out { code, stdout: stdout.into(), stderr: stderr.into() }
}

fn scontrol_cmd(mut cmd: std::process::Command, args: &[&str]) -> Out {
    let o = cmd.args(args).output().expect("run scontrol");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Out { code: o.status.code().unwrap_or(-1), stdout: text(&o.stdout), stderr: text(&o.stderr) }
}

fn scontrol(c: &Cluster, args: &[&str]) -> Out {
    scontrol_cmd(c.cmd("scontrol"), args)
}

/// The line of `text` that starts with `prefix` (after the indentation).
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.trim_start().starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} line in:\n{text}"))
}

/// Section 2 of the reference transcripts, which needs no daemon.
#[test]
fn hostnames_and_hostlists_as_in_the_transcripts() {
    let c = Cluster::configure("0", "");
    assert_eq!(
        scontrol(&c, &["show", "hostnames", "gpu[12-13],n[01-03]"]),
        out(0, "gpu12\ngpu13\nn01\nn02\nn03\n", "")
    );
    assert_eq!(scontrol(&c, &["show", "hostnames", "gpu12"]), out(0, "gpu12\n", ""));
    assert_eq!(
        scontrol(&c, &["show", "hostnames", "a[1-2]-b[08-10]"]),
        out(0, "a1-b08\na1-b09\na1-b10\na2-b08\na2-b09\na2-b10\n", "")
    );
    assert_eq!(scontrol(&c, &["show", "hostnames", "n[01-03"]), out(0, "", "Invalid hostlist: n[01-03\n"));
    assert_eq!(scontrol(&c, &["show", "hostnames"]), out(0, "", "scontrol: error: host list is empty\n"));
    assert_eq!(scontrol(&c, &["show", "hostlist", "n01,n02,n03,gpu12,gpu13"]), out(0, "n[01-03],gpu[12-13]\n", ""));
    assert_eq!(
        scontrol(&c, &["show", "hostlistsorted", "n03,n01,gpu13,n02,gpu12"]),
        out(0, "gpu[12-13],n[01-03]\n", "")
    );
    // ours: no capture of `scontrol show hostlist` without a list.
    assert_eq!(scontrol(&c, &["show", "hostlist"]), out(1, "", "invalid encode argument\n"));

    // Inside a job, the job's node list is the default.
    let mut cmd = c.cmd("scontrol");
    cmd.env("SLURM_JOB_NODELIST", "node[7-8]");
    assert_eq!(scontrol_cmd(cmd, &["show", "hostnames"]), out(0, "node7\nnode8\n", ""));
    // Abbreviated, in any case, or as ENTITY=LIST.
    assert_eq!(scontrol(&c, &["sho", "HOSTN", "x[1-2]"]), out(0, "x1\nx2\n", ""));
    assert_eq!(scontrol(&c, &["show", "hostnames=x[1-2]"]), out(0, "x1\nx2\n", ""));
}

#[test]
fn show_without_an_entity_or_with_an_unknown_one() {
    let c = Cluster::configure("0", "");
    // ours: no capture of these three refusals of `show`'s arguments.
    assert_eq!(scontrol(&c, &["show"]), out(1, "", "too few arguments for keyword:show\n"));
    assert_eq!(scontrol(&c, &["show", "bogus"]), out(1, "", "invalid entity:bogus for keyword:show \n"));
    assert_eq!(scontrol(&c, &["show", "job", "1", "2"]), out(1, "", "too many arguments for keyword:show\n"));
    assert_eq!(scontrol(&c, &["-Q", "show", "bogus"]), out(1, "", ""));
    assert_eq!(scontrol(&c, &["bogus"]), out(1, "", "invalid keyword: bogus\n"));
}

#[test]
fn show_job_of_a_running_and_a_pending_job() {
    let c = Cluster::start("2", "cpus = 1\n");
    let running = c.sbatch(&["-J", "sleeper", "-t", "10", "--gres=gpu:1", "--wrap", BLOCK]);
    c.wait_state(running, &["RUNNING"], T);
    let pending = c.sbatch(&["-J", "waiting", "-t", "5", "--gres=gpu:1", "--comment", "second", "--wrap", "true"]);
    wait_for("the second job to wait for the CPU", T, || {
        let j = c.job(pending);
        until(j.state_reason == "Resources", || format!("{:?} {}", j.job_state, j.state_reason))
    });
    let work = c.work.display().to_string();
    let user = slurmlet::identity::user_name(slurmlet::identity::uid());

    let shown = scontrol(&c, &["show", "job", &running.to_string()]);
    assert_eq!((shown.code, shown.stderr.as_str()), (0, ""), "{shown:?}");
    let text = &shown.stdout;
    assert!(text.starts_with(&format!("JobId={running} JobName=sleeper\n   UserId=")), "{text}");
    assert!(line(text, "UserId=").starts_with(&format!("   UserId={user}(")), "{text}");
    assert_eq!(line(text, "JobState="), "   JobState=RUNNING Reason=None Dependency=(null)");
    assert!(line(text, "RunTime=").ends_with(" TimeLimit=00:10:00 TimeMin=N/A"), "{text}");
    assert_eq!(line(text, "NodeList="), "   NodeList=node1");
    assert_eq!(line(text, "BatchHost="), "   BatchHost=node1");
    assert!(line(text, "AllocTRES=").contains("gres/gpu=1"), "{text}");
    assert_eq!(line(text, "WorkDir="), format!("   WorkDir={work}"));
    assert_eq!(line(text, "StdOut="), format!("   StdOut={work}/slurm-{running}.out"));
    assert_eq!(line(text, "StdIn="), "   StdIn=/dev/null");
    assert_eq!(line(text, "TresPerNode="), "   TresPerNode=gres/gpu:1");
    assert!(text.ends_with("\n   TresPerNode=gres/gpu:1\n   \n\n"), "{text}");
    assert!(!text.contains("DerivedExitCode") && !text.contains("JOB_GRES"), "details only with -d");

    let pend = scontrol(&c, &["show", "job", &pending.to_string()]).stdout;
    assert_eq!(line(&pend, "JobState="), "   JobState=PENDING Reason=Resources Dependency=(null)");
    // As Slurm's backfill sets them: the start the plan expects (when the running job's
    // time limit ends) and that plus its own time limit.
    let running_end = line(text, "StartTime=").split("EndTime=").nth(1).unwrap().split(' ').next().unwrap().to_string();
    let expected = line(&pend, "StartTime=");
    assert!(
        expected.starts_with(&format!("   StartTime={running_end} EndTime=")),
        "{expected} (the running job ends {running_end})"
    );
    assert!(expected.ends_with(" Deadline=N/A") && !expected.contains("Unknown"), "{expected}");
    assert_eq!(line(&pend, "NodeList="), "   NodeList=");
    assert_eq!(line(&pend, "AllocTRES="), "   AllocTRES=(null)");
    assert_eq!(line(&pend, "Comment="), "   Comment=second ");
    assert!(!pend.contains("BatchHost="), "{pend}");

    // -d: the derived exit code and the allocation, GPU indices and all.
    let detailed = scontrol(&c, &["show", "job", "-d", &running.to_string()]).stdout;
    assert_eq!(line(&detailed, "DerivedExitCode="), "   DerivedExitCode=0:0");
    assert_eq!(line(&detailed, "JOB_GRES="), "   JOB_GRES=gpu:1");
    let nodes = line(&detailed, "Nodes=");
    assert!(nodes.starts_with("     Nodes=node1 CPU_IDs=0 Mem=") && nodes.ends_with(" GRES=gpu:1(IDX:0)"), "{nodes}");

    // -o, before or after the words: one line per job.
    for args in [vec!["-o", "show", "job"], vec!["show", "job", "--oneliner"]] {
        let one = scontrol(&c, &args).stdout;
        let lines: Vec<&str> = one.lines().collect();
        assert_eq!(lines.len(), 2, "{one}");
        assert!(lines[0].starts_with(&format!("JobId={running} JobName=sleeper UserId=")), "{one}");
        assert!(lines[1].starts_with(&format!("JobId={pending} JobName=waiting UserId=")), "{one}");
        assert!(lines[1].contains(" JobState=PENDING Reason=Resources ") && lines[1].ends_with(" "), "{one}");
    }

    // No id: every job, a blank line after each.
    let all = scontrol(&c, &["show", "job"]).stdout;
    assert_eq!(all.matches("\n   \n\n").count(), 2, "{all}");
    assert!(all.find(&format!("JobId={running} ")) < all.find(&format!("JobId={pending} ")), "{all}");

    // A finished job shows how it ended.
    std::fs::write(c.path("release"), "").unwrap();
    c.wait_state(pending, &["COMPLETED"], T);
    let done = scontrol(&c, &["show", "job", &running.to_string()]).stdout;
    assert_eq!(line(&done, "JobState="), "   JobState=COMPLETED Reason=None Dependency=(null)");
    assert!(line(&done, "Requeue=").ends_with(" ExitCode=0:0"), "{done}");
}

#[test]
fn show_job_errors_are_slurms() {
    let c = Cluster::start("0", "");
    assert_eq!(scontrol(&c, &["show", "job"]), out(0, "No jobs in the system\n", ""));
    assert_eq!(
        scontrol(&c, &["show", "job", "999999"]),
        out(1, "", "slurm_load_jobs error: Invalid job id specified\n")
    );
    assert_eq!(
        scontrol(&c, &["show", "job", "abc"]),
        out(1, "", "scontrol_print_job error: Invalid job id specified\n")
    );
    assert_eq!(scontrol(&c, &["-Q", "show", "job", "999999"]), out(1, "", ""));
    let failed = c.sbatch(&["--wrap", "exit 3"]);
    c.wait_state(failed, &["FAILED"], T);
    let text = scontrol(&c, &["show", "job", &failed.to_string()]).stdout;
    assert!(line(&text, "JobState=").starts_with("   JobState=FAILED Reason="), "{text}");
    assert!(line(&text, "Requeue=").ends_with(" ExitCode=3:0"), "{text}");
}

/// `scontrol --json show job N` prints what `GET /slurm/v0.0.43/job/N` answers, with the
/// command line and the caller in `meta`.
#[test]
fn show_job_json_is_the_rest_reply() {
    let c = Cluster::start("0", "");
    let id = c.sbatch(&["--hold", "-J", "held", "--wrap", "true"]);
    let shown = scontrol(&c, &["--json", "show", "job", &id.to_string()]);
    assert_eq!((shown.code, shown.stderr.as_str()), (0, ""));
    let printed: serde_json::Value = serde_json::from_str(&shown.stdout).expect("JSON");
    let rest = c.client().job(&id.to_string()).unwrap();
    assert_eq!(printed["jobs"], serde_json::to_value(&rest.jobs).unwrap());
    assert_eq!(printed["jobs"][0]["name"], "held");
    assert_eq!(printed["meta"]["command"], serde_json::json!(["scontrol", "--json", "show", "job", id.to_string()]));
    assert_eq!(printed["meta"]["plugin"]["data_parser"], "data_parser/v0.0.43");
    assert_eq!(printed["errors"], serde_json::json!([]));

    let v43 = scontrol(&c, &["--json=v0.0.43", "show", "job", &id.to_string()]);
    let v43: serde_json::Value = serde_json::from_str(&v43.stdout).expect("JSON");
    assert_eq!(v43["jobs"], printed["jobs"]);

    let missing = scontrol(&c, &["--json", "show", "job", "999999"]);
    assert_eq!(missing.code, 1);
    let missing: serde_json::Value = serde_json::from_str(&missing.stdout).expect("JSON");
    assert_eq!(missing["errors"][0]["error"], "Invalid job id specified");
    assert_eq!(missing["jobs"], serde_json::json!([]));

    let refused = scontrol(&c, &["--json=v0.0.40", "show", "job"]);
    assert_eq!(refused.code, 1);
    // ours: no capture of a refused data_parser version.
    assert!(refused.stderr.starts_with("scontrol: error: data_parser/v0.0.40 "), "{refused:?}");
}

#[test]
fn show_node_and_partition() {
    let c = Cluster::start(
        "2",
        "[[partitions]]\nname = \"gpu\"\ndefault = true\n[[partitions]]\nname = \"debug\"\nmax_time = \"30\"\ndefault_time = \"10\"\n",
    );
    let node = scontrol(&c, &["show", "node"]);
    assert_eq!((node.code, node.stderr.as_str()), (0, ""));
    let text = &node.stdout;
    assert!(text.starts_with("NodeName=node1 Arch="), "{text}");
    assert_eq!(line(text, "CPUAlloc="), "   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=0.00");
    assert_eq!(line(text, "Gres="), "   Gres=gpu:2");
    assert!(line(text, "RealMemory=").starts_with("   RealMemory=16000 AllocMem=0 "), "{text}");
    assert!(line(text, "State=").starts_with("   State=IDLE ThreadsPerCore=1 "), "{text}");
    assert_eq!(line(text, "Partitions="), "   Partitions=gpu,debug ");
    assert_eq!(line(text, "CfgTRES="), "   CfgTRES=cpu=8,mem=16000M,billing=8,gres/gpu=2");
    assert_eq!(line(text, "AllocTRES="), "   AllocTRES=");
    assert!(text.ends_with("\n   \n\n"), "{text}");
    assert!(!text.contains("GresUsed"), "GresUsed only with -d");
    assert_eq!(scontrol(&c, &["show", "nodes", "node1"]).stdout, *text);

    // A running job shows in the node's allocation.
    let id = c.sbatch(&["-c", "2", "--gres=gpu:1", "--wrap", BLOCK]);
    c.wait_state(id, &["RUNNING"], T);
    let busy = scontrol(&c, &["show", "node", "-d"]).stdout;
    assert_eq!(line(&busy, "CPUAlloc="), "   CPUAlloc=2 CPUEfctv=8 CPUTot=8 CPULoad=0.00");
    assert_eq!(line(&busy, "GresUsed="), "   GresUsed=gpu:1(IDX:0)");
    assert_eq!(line(&busy, "GresDrain="), "   GresDrain=N/A");
    assert!(line(&busy, "State=").starts_with("   State=MIXED "), "{busy}");
    assert!(line(&busy, "AllocTRES=").starts_with("   AllocTRES=cpu=2"), "{busy}");
    assert!(line(&busy, "AllocTRES=").ends_with(",gres/gpu=1"), "{busy}");
    assert_eq!(scontrol(&c, &["-o", "show", "node"]).stdout.lines().count(), 1);
    // ours: no capture for a node; worded as the captured `Partition nope not found`
    // (slurm-22.05/transcript.md, slurm-24.11/transcript.md).
    assert_eq!(scontrol(&c, &["show", "node", "nope"]), out(1, "Node nope not found\n", ""));

    let parts = scontrol(&c, &["show", "partition"]);
    assert_eq!((parts.code, parts.stderr.as_str()), (0, ""));
    let (gpu, debug) = parts.stdout.split_once("\n\n").expect("two partitions");
    assert!(gpu.starts_with("PartitionName=gpu\n   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"), "{gpu}");
    assert_eq!(line(gpu, "AllocNodes="), "   AllocNodes=ALL Default=YES QoS=N/A");
    assert!(line(gpu, "MaxNodes=").contains(" MaxTime=UNLIMITED "), "{gpu}");
    assert_eq!(line(gpu, "Nodes="), "   Nodes=node1");
    assert_eq!(line(gpu, "State="), "   State=UP TotalCPUs=8 TotalNodes=1 SelectTypeParameters=NONE");
    assert_eq!(line(gpu, "TRES="), "   TRES=cpu=8,mem=16000M,node=1,billing=8,gres/gpu=2");
    assert!(debug.starts_with("PartitionName=debug\n"), "{debug}");
    assert_eq!(line(debug, "AllocNodes="), "   AllocNodes=ALL Default=NO QoS=N/A");
    assert!(line(debug, "DefaultTime=").starts_with("   DefaultTime=00:10:00 "), "{debug}");
    assert!(line(debug, "MaxNodes=").contains(" MaxTime=00:30:00 "), "{debug}");
    assert!(parts.stdout.ends_with("gres/gpu=2\n\n"));

    let one = scontrol(&c, &["show", "partition", "debug"]);
    assert!(one.stdout.starts_with("PartitionName=debug\n") && one.stdout.matches("PartitionName=").count() == 1);
    assert_eq!(scontrol(&c, &["show", "partition", "nope"]), out(1, "Partition nope not found\n", ""));

    let json = scontrol(&c, &["--json", "show", "partitions"]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(json["partitions"][1]["name"], "debug");
    assert_eq!(json["meta"]["command"], serde_json::json!(["scontrol", "--json", "show", "partitions"]));
}

#[test]
fn show_config_reports_the_daemons_settings() {
    let c = Cluster::start("2", "min_job_age = 120\ndef_mem_per_cpu = 1500\n");
    let shown = scontrol(&c, &["show", "config"]);
    assert_eq!((shown.code, shown.stderr.as_str()), (0, ""));
    let text = &shown.stdout;
    assert!(text.starts_with("Configuration data as of 20"), "{text}");
    for expected in [
        "ClusterName             = testcluster",
        "DefMemPerCPU            = 1500",
        "GresTypes               = gpu",
        "KillWait                = 2 sec",
        "MaxArraySize            = 1001",
        "MinJobAge               = 120 sec",
        "SchedulerType           = sched/backfill",
        "SelectType              = select/cons_tres",
        "SlurmctldHost[0]        = node1",
        "SLURM_VERSION           = 26.05.0",
    ] {
        assert!(text.lines().any(|l| l == expected), "no `{expected}` in:\n{text}");
    }
    let state = c.dir.path().join("state");
    assert!(text.lines().any(|l| l == format!("StateSaveLocation       = {}", state.display())), "{text}");
    assert!(text.ends_with("\n\nSlurmctld(primary) at node1 is UP\n"), "{text}");
    // `scontrol show conf`, as tools abbreviate it.
    assert_eq!(scontrol(&c, &["show", "conf"]).stdout.lines().nth(4), text.lines().nth(4));
}

#[test]
fn ping_and_version() {
    let c = Cluster::start("0", "");
    assert_eq!(scontrol(&c, &["ping"]), out(0, "Slurmctld(primary) at node1 is UP\n", ""));
    // ours: no capture (`scontrol ping` itself: slurm-22.05/transcript.md).
    assert_eq!(scontrol(&c, &["ping", "x"]), out(1, "", "too many arguments for keyword:ping\n"));
    // The Slurm release followed, as every command's --version (tests/integration/parity.rs).
    let version = format!("{}\n", slurmlet::api::release::version_line());
    assert_eq!(scontrol(&c, &["version"]), out(0, &version, ""));
    assert_eq!(scontrol(&c, &["-V"]), out(0, &version, ""));
    assert_eq!(scontrol(&c, &["--version"]), out(0, &version, ""));

    // No daemon answers, and none can start (its configuration is broken): DOWN, exit 1.
    let broken = c.dir.path().join("broken.toml");
    std::fs::write(&broken, "gpuz = 4\n").unwrap();
    let mut cmd = c.cmd("scontrol");
    cmd.env("SLURMLET_CONF", &broken).env("SLURMLET_SOCKET", c.dir.path().join("none").join("s.sock"));
    let down = scontrol_cmd(cmd, &["ping"]);
    assert_eq!(down.code, 1, "{down:?}");
    let first = down.stdout.lines().next().unwrap_or_default();
    // ours: no capture of a controller that is down; the UP line's words with DOWN.
    assert!(first.starts_with("Slurmctld(primary) at ") && first.ends_with(" is DOWN"), "{down:?}");
}
