//! Reservations against a real Slurm 26.05: `scripts/real-slurm/reservations.sh` ran
//! `scontrol create|show reservation` and `sinfo -T` on a one-node cluster (node1: 2 CPUs, 4
//! GPUs; partitions gpu, the default, and debug) and kept what each printed
//! (`tests/fixtures/real-slurm-reservations/`, see its INDEX.md and FINDINGS.md). Here the
//! same commands run, in the same order, against a slurmlet daemon on a node like it, and
//! must print the same bytes (TZ=UTC, as the captures were made).
//!
//! The captures name users alice and bob, who do not exist here; `daemon` and `bin` (who
//! exist on every machine) stand in for them, in the commands and in what is compared.
//! Where slurmlet says more than Slurm about an error, it does so on `scontrol: error:`
//! lines before Slurm's own; those lines are what may differ.

use crate::common::*;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-slurm-reservations")
}

/// The captures in the order INDEX.md lists them: file, command line, exit status.
fn index() -> Vec<(String, String, i32)> {
    let text = std::fs::read_to_string(fixtures().join("INDEX.md")).unwrap();
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let file = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            let command = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let exit = cells.get(3)?.trim().parse().ok()?;
            (cells.get(2)? == &"root").then(|| (file.to_string(), command.to_string(), exit))
        })
        .collect()
}

/// The captures compared, by number: the listings with none; section B's creates and shows
/// of what slurmlet takes (not MaxStartDelay=, TRESPerNode=, or a partition reserved
/// whole), and its refusals.
const COMPARED: &[&str] = &[
    "001", "002", "003", "004", "006", "007", "008", "010", "011", "012", "013", "014", "015", "016", "017", "018",
    "019", "022", "023", "024", "025", "026", "028", "029", "030", "032", "033", "034", "035", "036", "038", "039",
    "040", "041", "042", "043", "044", "047", "048", "049", "050", "051", "052", "053", "054", "055", "056", "057",
    "058", "059", "060", "061", "062", "063", "064", "065", "066",
];

fn stand_ins(text: &str) -> String {
    text.replace("alice", "daemon").replace("bob", "bin")
}

/// Splits a command line as the capture script quoted it (single quotes only).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The records of a `scontrol show reservation`, by name.
fn records(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter(|r| r.starts_with("ReservationName="))
        .map(|r| {
            let name = r["ReservationName=".len()..].split(' ').next().unwrap().to_string();
            (name, format!("{}\n", r.trim_end()))
        })
        .collect()
}

#[test]
fn scontrol_and_sinfo_print_what_a_real_slurm_printed_for_the_same_reservations() {
    let extra = format!(
        "cpus = 2\noperators = [\"{}\"]\n[[partitions]]\nname = \"gpu\"\ndefault = true\n[[partitions]]\nname = \"debug\"\nmax_time = \"30\"\n",
        crate::common::fake_nvml::me()
    );
    let c = Cluster::start("4", &extra);
    let mut compared = 0;
    for (file, command, exit) in index() {
        if !COMPARED.iter().any(|n| file.starts_with(n)) {
            continue;
        }
        let argv = words(&stand_ins(&command));
        let out = c.cmd(&argv[0]).args(&argv[1..]).env("TZ", "UTC").output().unwrap();
        let expected_out = stand_ins(&std::fs::read_to_string(fixtures().join(&file)).unwrap());
        let err_file = fixtures().join(file.replace(".txt", ".stderr.txt"));
        let expected_err = std::fs::read_to_string(&err_file).map(|e| stand_ins(&e)).unwrap_or_default();
        let (got_out, got_err) = (stdout(&out), stderr(&out));
        assert_eq!(got_out, expected_out, "{file}: `{command}` printed");
        // slurmlet's own account of an error comes first, on `scontrol: error:` lines.
        let ours = got_err.strip_suffix(&expected_err).unwrap_or_else(|| {
            panic!("{file}: `{command}` said on stderr\n{got_err}\nwhich does not end with\n{expected_err}")
        });
        assert!(ours.lines().all(|l| l.starts_with("scontrol: error: ")), "{file}: {got_err}");
        assert_eq!(out.status.code(), Some(exit), "{file}: `{command}`: {got_err}");
        compared += 1;
    }
    assert_eq!(compared, COMPARED.len(), "every capture listed was found in INDEX.md");

    // Every reservation made shows as the cluster's did, in the order they were made.
    let shown = stdout(&c.cmd("scontrol").args(["show", "reservation"]).env("TZ", "UTC").output().unwrap());
    let theirs = records(&stand_ins(&std::fs::read_to_string(fixtures().join("045_B_show_after_gpus.txt")).unwrap()));
    let ours = records(&shown);
    assert!(ours.len() >= 20, "{shown}");
    let mut last = 0;
    for (name, record) in &ours {
        let Some(at) = theirs.iter().position(|(n, _)| n == name) else { continue };
        assert_eq!(record, &theirs[at].1, "reservation {name}");
        assert!(at >= last, "{name} is listed in the order made");
        last = at;
    }
    // sinfo -T: each line of ours is the cluster's line for that reservation, once the name
    // column is as wide (it follows the longest name shown).
    let lines = stdout(&c.cmd("sinfo").args(["-T", "-h"]).env("TZ", "UTC").output().unwrap());
    let theirs = stand_ins(&std::fs::read_to_string(fixtures().join("046_B_sinfo_-T_after_gpus.txt")).unwrap());
    for line in lines.lines() {
        let name = line.split(' ').next().unwrap();
        let rest = line[name.len()..].trim_start();
        let twin = theirs.lines().find(|l| l.split(' ').next() == Some(name));
        if let Some(twin) = twin {
            assert_eq!(rest, twin[name.len()..].trim_start(), "sinfo -T line of {name}");
        }
    }
}
