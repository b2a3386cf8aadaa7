//! Malformed hostlists through the real binary and daemon: every command that reads one
//! reports what Slurm's hostlist code logs (`_parse_single_range: …`) first, then its own
//! words, with its exit code; the texts were checked against Slurm 26.05's commands.

use crate::common;
use common::*;

fn err(stderr: &str, code: i32) -> (String, String, Option<i32>) {
    (String::new(), stderr.to_string(), Some(code))
}

const REVERSED: &str = "_parse_single_range: Invalid range: `3-1'";

#[test]
fn scontrol_reports_each_malformed_range_as_slurm_logs_it() {
    let c = Cluster::start("0", "");
    let hostnames = |list: &str| outcome(&c.run("scontrol", &["show", "hostnames", list]));
    assert_eq!(hostnames("n[3-1]"), err(&format!("scontrol: error: {REVERSED}\nInvalid hostlist: n[3-1]\n"), 0));
    assert_eq!(
        hostnames("x[1-2],n[a-b]"),
        err("scontrol: error: _parse_single_range: Invalid range: `a-b'\nInvalid hostlist: x[1-2],n[a-b]\n", 0)
    );
    assert_eq!(
        hostnames("n[1,,2]"),
        err("scontrol: error: _parse_single_range: Invalid range: `'\nInvalid hostlist: n[1,,2]\n", 0)
    );
    assert_eq!(
        hostnames("n[0-65536]"),
        err(
            "scontrol: error: _parse_single_range: Too many hosts in range `0-65536'\nInvalid hostlist: n[0-65536]\n",
            0
        )
    );
    // A bracket left open: nothing logged, as in Slurm.
    assert_eq!(hostnames("n[01-03"), err("Invalid hostlist: n[01-03\n", 0));
    // What Slurm accepts is accepted: text outside brackets, `1-`, a blank before a number.
    assert_eq!(hostnames("n01-03]"), ("n01-03]\n".into(), String::new(), Some(0)));
    assert_eq!(hostnames("n[1-]"), ("n1\n".into(), String::new(), Some(0)));
    assert_eq!(hostnames("n[ 1-2]"), ("n01\nn02\n".into(), String::new(), Some(0)));
    // Slurm logs a bad group before the last two once per name of the next, and goes on.
    assert_eq!(
        hostnames("a[3-1]b[1-2]c[1-2]"),
        (String::new(), format!("scontrol: error: {REVERSED}\n").repeat(2), Some(0))
    );

    assert_eq!(
        outcome(&c.run("scontrol", &["show", "hostlist", "n[3-1]"])),
        err(&format!("scontrol: error: {REVERSED}\nInvalid hostlist: n[3-1]\n"), 1)
    );
    assert_eq!(
        outcome(&c.run("scontrol", &["show", "node", "n[3-1]"])),
        err(
            &format!(
                "scontrol: error: {REVERSED}\nunable to parse node list n[3-1]\n\
                 scontrol: error: hostlist_shift_dims: no hostlist given\n"
            ),
            1
        )
    );
}

#[test]
fn job_commands_and_sinfo_report_the_logged_line_before_their_own() {
    let c = Cluster::start("0", "");
    for (cmd, args) in [
        ("sbatch", &["-w", "n[3-1]", "--wrap", "true"][..]),
        ("srun", &["-w", "n[3-1]", "true"]),
        ("salloc", &["-w", "n[3-1]", "true"]),
    ] {
        assert_eq!(
            outcome(&c.run(cmd, args)),
            err(&format!("{cmd}: error: {REVERSED}\n{cmd}: fatal: Invalid node list specified\n"), 1),
            "{cmd}"
        );
    }
    std::fs::write(c.path("nodes"), "node1\nn[3-1]\n").unwrap();
    assert_eq!(
        outcome(&c.run("sbatch", &["-F", "nodes", "--wrap", "true"])),
        err(&format!("sbatch: error: {REVERSED}\nsbatch: fatal: Invalid node list specified\n"), 1)
    );
    assert_eq!(
        outcome(&c.run("sbatch", &["-w", "n[01-03", "--wrap", "true"])),
        err("sbatch: fatal: Invalid node list specified\n", 1)
    );
    assert_eq!(
        outcome(&c.run("sinfo", &["-n", "n[3-1]"])),
        err(&format!("sinfo: error: {REVERSED}\nsinfo: error: 'n[3-1]' invalid entry for --nodes\n"), 1)
    );
    assert!(c.client().jobs().unwrap().jobs.is_empty(), "nothing was queued");
}
