//! sinfo's rows and fields, printed in its formats and as JSON.

use super::fields::{format_row, header, value};
use super::json::json_value;
use super::*;
use crate::api::noval::NoVal;
use crate::api::types::PartitionState;

fn node(state: &str, alloc: u32) -> Node {
    Node {
        name: "vm".into(),
        hostname: "vm".into(),
        address: "vm".into(),
        cpus: 2,
        cores: 2,
        sockets: 1,
        threads: 1,
        real_memory: 23081,
        free_mem: NoVal::of(22965),
        cpu_load: 41,
        gres: "gpu:4".into(),
        gres_used: "gpu:0".into(),
        state: vec![state.into()],
        partitions: vec!["gpu".into(), "debug".into()],
        alloc_cpus: alloc,
        weight: 1,
        ..Default::default()
    }
}

fn partition(name: &str, max: Option<u32>, default: bool) -> PartitionInfo {
    let mut p = PartitionInfo { name: name.into(), ..Default::default() };
    p.maximums.time = max.map(NoVal::of).unwrap_or_else(NoVal::infinite);
    p.maximums.nodes = NoVal::infinite();
    p.priority.tier = 1;
    p.partition = PartitionState { state: vec!["UP".into()] };
    p.nodes.configured = "vm".into();
    if default {
        p.flags = vec!["DEFAULT".into()];
    }
    p
}

fn render(format: &str, node_mode: bool, state: &str, alloc: u32) -> Vec<String> {
    let parts = [partition("gpu", None, true), partition("debug", Some(30), false)];
    let n = node(state, alloc);
    let prefs: Vec<&PartitionInfo> = parts.iter().collect();
    let nodes = vec![&n];
    let rows = if node_mode { node_rows(&prefs, &nodes) } else { partition_rows(&prefs, &nodes) };
    let mut tokens = format::parse(format);
    if format == NODE_FORMAT || format == NODE_LONG_FORMAT {
        if let Some(Token::Field(f)) = tokens.first_mut() {
            f.width = 9;
        }
    }
    let mut out = vec![header(&tokens)];
    out.extend(rows.iter().map(|r| format_row(&tokens, r)));
    out
}

#[test]
fn default_format() {
    assert_eq!(
        render(DEFAULT_FORMAT, false, "IDLE", 0),
        vec![
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
            "gpu*         up   infinite      1   idle vm",
            "debug        up      30:00      1   idle vm",
        ]
    );
}

#[test]
fn node_format() {
    assert_eq!(
        render(NODE_FORMAT, true, "IDLE", 0),
        vec![
            "NODELIST   NODES PARTITION STATE ",
            "vm             1      gpu* idle  ",
            "vm             1     debug idle  "
        ]
    );
    assert_eq!(
        render(NODE_LONG_FORMAT, true, "IDLE", 0),
        vec![
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              ",
            "vm             1      gpu*        idle 2       1:2:1  23081        0      1   (null) none                ",
            "vm             1     debug        idle 2       1:2:1  23081        0      1   (null) none                ",
        ]
    );
}

#[test]
fn summarize_and_long() {
    assert_eq!(
        render(SUMMARIZE_FORMAT, false, "IDLE", 0),
        vec![
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST",
            "gpu*         up   infinite          0/1/0/1 vm",
            "debug        up      30:00          0/1/0/1 vm",
        ]
    );
    assert_eq!(
        render(LONG_FORMAT, false, "IDLE", 0),
        vec![
            "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST",
            "gpu*         up   infinite 1-infinite   no       NO        all      1        idle vm",
            "debug        up      30:00 1-infinite   no       NO        all      1        idle vm",
        ]
    );
}

#[test]
fn custom_formats() {
    assert_eq!(
        render("%P %a %l %D %t %N %G %c %m", false, "IDLE", 0),
        vec![
            "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST GRES CPUS MEMORY",
            "gpu* up infinite 1 idle vm gpu:4 2 23081",
            "debug up 30:00 1 idle vm gpu:4 2 23081"
        ]
    );
    assert_eq!(
        render("%N %c %m %G %t %O %e", true, "IDLE", 0)[..2],
        ["NODELIST CPUS MEMORY GRES STATE CPU_LOAD FREE_MEM", "vm 2 23081 gpu:4 idle 0.41 22965"]
    );
    assert_eq!(
        render("%N %C %G %t", true, "MIXED", 1)[..2],
        ["NODELIST CPUS(A/I/O/T) GRES STATE", "vm 1/1/0/2 gpu:4 mix"]
    );
    assert_eq!(render("%P %G %l %p %c %m", false, "ALLOCATED", 2)[1], "gpu* gpu:4 infinite 1 2 23081");
    assert_eq!(render("%T", false, "ALLOCATED", 2)[1], "allocated");
    assert_eq!(render("%t", false, "ALLOCATED", 2)[1], "alloc");
}

#[test]
fn null_gres_and_long_fields() {
    let parts = [partition("gpu", Some(24 * 60), true)];
    let mut n = node("IDLE", 0);
    n.gres = String::new();
    let rows = partition_rows(&[&parts[0]], &[&n]);
    assert_eq!(value("G", &rows[0]), "(null)");
    assert_eq!(value("l", &rows[0]), "1-00:00:00");
    let t = format::parse_long("Partition,Gres:8,CPUsState", 20);
    assert_eq!(header(&t), "PARTITION           GRES    CPUS(A/I/O/T)       ");
    assert_eq!(format_row(&t, &rows[0]), "gpu*                (null)  0/2/0/2             ");
}

#[test]
fn json_shape() {
    let parts = [partition("gpu", None, true)];
    let n = node("MIXED", 1);
    let rows = partition_rows(&[&parts[0]], &[&n]);
    let v = json_value(&rows);
    assert_eq!(v["sinfo"][0]["nodes"]["allocated"], 1);
    assert_eq!(v["sinfo"][0]["cpus"]["idle"], 1);
    assert_eq!(v["sinfo"][0]["gres"]["total"], "gpu:4");
    assert_eq!(v["sinfo"][0]["partition"]["name"], "gpu");
}
