//! `scontrol show node[s] [NAME]`: the node in Slurm's `Key=Value` layout (that of Slurm
//! 24.11), from `GET /slurm/v0.0.43/nodes`; with `--json`, that reply.

use super::record::{or_null, time, Record};
use super::Flags;
use crate::api::types::Node;
use std::fmt::Write;

/// `list` joined by `sep`, or `(null)` when empty.
fn joined(list: &[String], sep: &str) -> String {
    or_null(&list.join(sep)).to_string()
}

/// One node as `scontrol show node` prints it.
pub fn render(node: &Node, flags: Flags) -> String {
    let mut r = Record::new(flags.one_liner);
    let _ = write!(r, "NodeName={} Arch={} CoresPerSocket={} ", node.name, node.architecture, node.cores);
    r.end_line();
    let _ = write!(
        r,
        "CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad={:.2}",
        node.alloc_cpus,
        node.effective_cpus,
        node.cpus,
        f64::from(node.cpu_load) / 100.0
    );
    r.end_line();
    let _ = write!(r, "AvailableFeatures={}", joined(&node.features, ","));
    r.end_line();
    let _ = write!(r, "ActiveFeatures={}", joined(&node.active_features, ","));
    r.end_line();
    let _ = write!(r, "Gres={}", or_null(&node.gres));
    r.end_line();
    if flags.details {
        let _ = write!(r, "GresDrain={}", or_null(&node.gres_drained));
        r.end_line();
        let _ = write!(r, "GresUsed={}", or_null(&node.gres_used));
        r.end_line();
    }
    let _ = write!(r, "NodeAddr={} NodeHostName={} Version={}", node.address, node.hostname, node.version);
    r.end_line();
    let _ = write!(r, "OS={} ", node.operating_system);
    r.end_line();
    let free = match node.free_mem.get() {
        Some(mb) => mb.to_string(),
        None => "N/A".into(),
    };
    let _ = write!(
        r,
        "RealMemory={} AllocMem={} FreeMem={free} Sockets={} Boards={}",
        node.real_memory, node.alloc_memory, node.sockets, node.boards
    );
    r.end_line();
    let owner = if node.owner.is_empty() { "N/A" } else { &node.owner };
    let _ = write!(
        r,
        "State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner={owner} MCS_label=N/A",
        node.state.join("+"),
        node.threads,
        node.temporary_disk,
        node.weight
    );
    r.end_line();
    if !node.partitions.is_empty() {
        let _ = write!(r, "Partitions={} ", node.partitions.join(","));
        r.end_line();
    }
    let started = |t: Option<u64>| if t.unwrap_or(0) == 0 { "None".to_string() } else { time(t) };
    let _ = write!(
        r,
        "BootTime={} SlurmdStartTime={}",
        started(node.boot_time.get()),
        started(node.slurmd_start_time.get())
    );
    r.end_line();
    let _ = write!(r, "LastBusyTime={} ResumeAfterTime=None", time(node.last_busy.get()));
    r.end_line();
    let _ = write!(r, "CfgTRES={}", node.tres);
    r.end_line();
    let _ = write!(r, "AllocTRES={}", node.tres_used);
    r.end_line();
    let _ = write!(r, "CurrentWatts=0 AveWatts=0");
    r.end_line();
    if !node.reason.is_empty() {
        let _ = write!(r, "Reason={}", node.reason);
        r.end_line();
    }
    r.finish()
}

/// Runs `scontrol show node [NAME]`; `NAME` may be a hostlist expression.
pub fn run(arg: Option<&str>, flags: Flags, argv: &[String]) -> i32 {
    let names = match arg.map(crate::options::hostlist::expand) {
        None => None,
        Some(Ok(names)) => Some(names),
        Some(Err(e)) => {
            // Slurm's words, and then those of its attempt to walk the list it has not got.
            for line in &e.log {
                crate::cli::error("scontrol", line);
            }
            if !flags.quiet {
                eprintln!("unable to parse node list {}", e.text);
            }
            crate::cli::error("scontrol", "hostlist_shift_dims: no hostlist given");
            return 1;
        }
    };
    let client = match crate::cli::connect("scontrol") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut reply = match client.nodes() {
        Ok(r) => r,
        Err(e) => {
            crate::cli::error("scontrol", &e.to_string());
            return 1;
        }
    };
    let mut code = 0;
    if let Some(names) = &names {
        for name in names.iter().filter(|n| !reply.nodes.iter().any(|node| &node.name == *n)) {
            code = 1;
            if !flags.quiet && !flags.json {
                println!("Node {name} not found");
            }
        }
        reply.nodes.retain(|node| names.contains(&node.name));
    }
    if flags.json {
        super::json::stamp(&mut reply.meta, argv);
        super::json::print(&reply);
        return code;
    }
    if names.is_none() && reply.nodes.is_empty() && !flags.quiet {
        println!("No nodes in the system");
    }
    let text: String = reply.nodes.iter().map(|n| render(n, flags)).collect();
    crate::cli::format::emit_text(&text);
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::noval::NoVal;

    /// The node of the slurm-24.11 transcript (section 1), as the daemon reports one.
    fn vm() -> Node {
        Node {
            architecture: "x86_64".into(),
            boards: 1,
            cores: 2,
            cpus: 2,
            effective_cpus: 2,
            cpu_load: 50,
            gres: "gpu:4".into(),
            gres_drained: "N/A".into(),
            gres_used: "gpu:0".into(),
            name: "vm".into(),
            address: "vm".into(),
            hostname: "vm".into(),
            version: "24.11.5".into(),
            operating_system: "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0".into(),
            real_memory: 23081,
            free_mem: NoVal::of(23455),
            sockets: 1,
            threads: 1,
            weight: 1,
            state: vec!["IDLE".into()],
            partitions: vec!["gpu".into(), "debug".into()],
            tres: "cpu=2,mem=23081M,billing=2".into(),
            ..Default::default()
        }
    }

    #[test]
    fn an_idle_node_in_slurm_24_11_layout() {
        let text = render(&vm(), Flags::default());
        let expected = "NodeName=vm Arch=x86_64 CoresPerSocket=2 
   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.50
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=gpu:4
   NodeAddr=vm NodeHostName=vm Version=24.11.5
   OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 
   RealMemory=23081 AllocMem=0 FreeMem=23455 Sockets=1 Boards=1
   State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu,debug 
   BootTime=None SlurmdStartTime=None
   LastBusyTime=Unknown ResumeAfterTime=None
   CfgTRES=cpu=2,mem=23081M,billing=2
   AllocTRES=
   CurrentWatts=0 AveWatts=0
   

";
        assert_eq!(text, expected);
    }

    /// `scontrol show node -d | grep -iE 'gres|tres|cpualloc'` of the slurm-24.11 transcript.
    #[test]
    fn details_add_the_gres_in_use() {
        let node = Node { alloc_cpus: 2, tres_used: "cpu=2,mem=2000M".into(), ..vm() };
        let text = render(&node, Flags { details: true, ..Flags::default() });
        let grepped: Vec<&str> = text
            .lines()
            .filter(|l| ["gres", "tres", "cpualloc"].iter().any(|k| l.to_lowercase().contains(k)))
            .collect();
        assert_eq!(
            grepped,
            [
                "   CPUAlloc=2 CPUEfctv=2 CPUTot=2 CPULoad=0.50",
                "   Gres=gpu:4",
                "   GresDrain=N/A",
                "   GresUsed=gpu:0",
                "   CfgTRES=cpu=2,mem=23081M,billing=2",
                "   AllocTRES=cpu=2,mem=2000M",
            ]
        );
        let one = render(&node, Flags { one_liner: true, ..Flags::default() });
        assert_eq!(one.lines().count(), 1);
        assert!(one.starts_with("NodeName=vm Arch=x86_64 CoresPerSocket=2  CPUAlloc=2 "), "{one}");
    }
}
