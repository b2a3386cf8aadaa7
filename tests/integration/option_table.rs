//! The option table against Slurm's man pages, and every option of sbatch, srun and salloc
//! walked through the command line, the input environment variables and `#SBATCH` lines.
//!
//! Each option must be implemented (and then change the job description or the command's
//! behaviour), accepted with a warning, or refused with a reason; all three ways of giving it
//! must agree.

use serde_json::{json, Value as Json};
use slurmlet::options::directive;
use slurmlet::options::sources::{compose, Composed, SourceError};
use slurmlet::options::table::{self, Support, Tool, Value};
use slurmlet::options::OptionError;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/slurm-man/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (short, long) of each documented synopsis line such as `-J, --job-name=<jobname>`.
fn documented_options(tool: Tool) -> Vec<(Option<char>, String)> {
    fixture(&format!("{}.options", tool.name()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (short, rest) = match line.strip_prefix('-').and_then(|l| l.split_once(", ")) {
                Some((s, rest)) if s.len() == 1 => (s.chars().next(), rest),
                _ => (None, line),
            };
            let long: String =
                rest.trim_start_matches("--").chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            (short, long)
        })
        .collect()
}

#[test]
fn the_table_holds_exactly_the_documented_options_with_their_short_names() {
    for tool in Tool::ALL {
        let documented = documented_options(tool);
        assert!(documented.len() > 90, "{}: {} options read", tool.name(), documented.len());
        for (short, long) in &documented {
            let spec = table::find(tool, long)
                .unwrap_or_else(|| panic!("{} --{long} is documented but not in the option table", tool.name()));
            assert_eq!(spec.short_for(tool), *short, "{} --{long}: short name", tool.name());
        }
        for spec in table::options_for(tool) {
            assert!(
                documented.iter().any(|(_, l)| l == spec.long),
                "{} --{} is in the table but not documented for it",
                tool.name(),
                spec.long
            );
        }
    }
}

#[test]
fn every_documented_input_variable_is_read_or_explained() {
    for tool in Tool::ALL {
        let read: Vec<&str> = table::input_vars(tool).map(|(v, _)| v).collect();
        let explained: Vec<&str> =
            table::OTHER_INPUT_VARS.iter().filter(|(t, _, _)| t.has(tool)).map(|(_, v, _)| *v).collect();
        for line in fixture(&format!("{}.env", tool.name())).lines().filter(|l| !l.is_empty()) {
            for var in line.split(" or ").map(|v| v.split('=').next().unwrap_or(v).trim()) {
                assert!(
                    read.contains(&var) || explained.contains(&var),
                    "{}: input variable {var} is neither read nor explained",
                    tool.name()
                );
            }
        }
        // Every variable names an option of this command.
        let listed = table::INPUT_VARS.iter().filter(|(t, _, _)| t.has(tool)).count();
        assert_eq!(listed, read.len(), "{}: an input variable names an option the command lacks", tool.name());
    }
}

/// A value for `--long` that its grammar accepts.
fn sample(long: &str, nodefile: &str) -> String {
    match long {
        "begin" => "now+1hour".into(),
        "comment" => "a b c".into(),
        "error" => "err-%j.log".into(),
        "output" => "out-%x-%j.log".into(),
        "input" => "in.txt".into(),
        "kill-on-invalid-dep" => "yes".into(),
        "exclude" | "nodelist" => "gpu[12-13]".into(),
        "gpus" => "tesla:2".into(),
        "gres" => "gpu:2".into(),
        "job-name" | "wckey" | "partition" | "account" | "qos" | "constraint" | "reservation" => "x1".into(),
        "mem" => "2G".into(),
        "mem-per-gpu" => "1G".into(),
        "nodefile" => nodefile.into(),
        "open-mode" => "append".into(),
        "signal" => "B:USR1@90".into(),
        "time" | "time-min" => "1-00:00".into(),
        "tres-per-task" => "cpu=2".into(),
        "export" => "NONE".into(),
        "export-file" => "/dev/null".into(),
        "wrap" => "hostname".into(),
        "chdir" => "/tmp".into(),
        "nice" => "5".into(),
        "mail-type" => "END".into(),
        "mail-user" => "pi@lab".into(),
        _ => "2".into(),
    }
}

/// What each implemented option must put into the job description (`Json::Null`: present,
/// any value). Options that change what the command does rather than the job are listed in
/// [`BEHAVIOUR`].
fn expected_desc(long: &str) -> Option<Json> {
    Some(match long {
        "account" => json!({ "account": "x1" }),
        "array" => json!({ "array": "2" }),
        "begin" => json!({ "begin_time": null }),
        "comment" => json!({ "comment": "a b c" }),
        "cpus-per-gpu" => json!({ "cpus_per_tres": "gres/gpu:2" }),
        "cpus-per-task" => json!({ "cpus_per_task": 2 }),
        // A bare job id is Slurm's afterany.
        "dependency" => json!({ "dependency": "afterany:2" }),
        "error" => json!({ "standard_error": "err-%j.log" }),
        "exclude" => json!({ "excluded_nodes": ["gpu12", "gpu13"] }),
        "gpus" => json!({ "tres_per_job": "gres/gpu:tesla:2" }),
        "gpus-per-node" => json!({ "tres_per_node": "gres/gpu:2" }),
        "gpus-per-task" => json!({ "tres_per_task": "gres/gpu:2" }),
        "gres" => json!({ "tres_per_node": "gres/gpu:2" }),
        "hold" => json!({ "hold": true }),
        "input" => json!({ "standard_input": "in.txt" }),
        "job-name" => json!({ "name": "x1" }),
        "kill-on-invalid-dep" => json!({ "flags": ["KILL_INVALID_DEPENDENCY"] }),
        "mail-type" => json!({ "mail_type": ["END"] }),
        "mail-user" => json!({ "mail_user": "pi@lab" }),
        "mem" => json!({ "memory_per_node": { "set": true, "infinite": false, "number": 2048 } }),
        "mem-per-cpu" => json!({ "memory_per_cpu": { "set": true, "infinite": false, "number": 2 } }),
        "mem-per-gpu" => json!({ "memory_per_tres": "gres/gpu:1024" }),
        "mincpus" => json!({ "minimum_cpus": 2 }),
        "nice" => json!({ "nice": 5 }),
        "qos" => json!({ "qos": "x1" }),
        "reservation" => json!({ "reservation": "x1" }),
        "nodefile" => json!({ "required_nodes": ["node7"] }),
        "nodelist" => json!({ "required_nodes": ["gpu12", "gpu13"] }),
        "no-requeue" => json!({ "requeue": false }),
        "nodes" => json!({ "minimum_nodes": 2 }),
        "ntasks" => json!({ "tasks": 2 }),
        "ntasks-per-node" => json!({ "tasks_per_node": 2 }),
        "open-mode" => json!({ "open_mode": ["APPEND"] }),
        "output" => json!({ "standard_output": "out-%x-%j.log" }),
        "partition" => json!({ "partition": "x1" }),
        "requeue" => json!({ "requeue": true }),
        "signal" => {
            json!({ "kill_warning_delay": { "set": true, "infinite": false, "number": 90 }, "kill_warning_flags": ["BATCH_JOB"] })
        }
        "time" => json!({ "time_limit": { "set": true, "infinite": false, "number": 1440 } }),
        "tres-per-task" => json!({ "cpus_per_task": 2 }),
        "wckey" => json!({ "wckey": "x1" }),
        _ => return None,
    })
}

/// Implemented options that change what the command does, not the job description.
const BEHAVIOUR: &[&str] = &[
    "bell",
    "chdir",
    "clusters",
    "disable-status",
    "epilog",
    "exact",
    "export",
    "export-file",
    "get-user-env",
    "help",
    "ignore-pbs",
    "immediate",
    "jobid",
    "kill-command",
    "kill-on-bad-exit",
    "label",
    "multi-prog",
    "no-bell",
    "no-shell",
    "ntasks-per-gpu",
    "overlap",
    "parsable",
    "preserve-env",
    "prolog",
    "pty",
    "quiet",
    "quit-on-interrupt",
    "task-epilog",
    "task-prolog",
    "test-only",
    "unbuffered",
    "usage",
    "verbose",
    "version",
    "wait",
    "wait-for-children",
    "wrap",
];

/// The ways to give one option to `tool`: (how, result).
fn three_ways(tool: Tool, spec: &table::OptSpec, value: &str) -> Vec<(String, Result<Composed, SourceError>)> {
    let token = match spec.value {
        Value::Flag | Value::Count => format!("--{}", spec.long),
        // Slurm ignores the value these take: one is given, to check that it is accepted.
        Value::IgnoredValue => format!("--{}=ignored", spec.long),
        Value::Required(_) | Value::Optional(_) => format!("--{}={value}", spec.long),
    };
    let mut ways =
        vec![(format!("command line {token}"), compose(tool, &[], None, "s.sh", &[], std::slice::from_ref(&token)))];
    if tool == Tool::Sbatch {
        let written = if value.contains(' ') { token.replace(value, &format!("\"{value}\"")) } else { token.clone() };
        let script = format!("#!/bin/sh\n#SBATCH {written}\ntrue\n");
        let dirs = directive::extract(&script, "#SBATCH", "s.sh").expect("directive reads");
        ways.push((format!("#SBATCH {token}"), compose(tool, &dirs, Some(&script), "s.sh", &[], &[])));
    }
    for (var, s) in table::input_vars(tool).filter(|(_, s)| s.long == spec.long) {
        let v = match s.value {
            Value::Flag | Value::Count | Value::IgnoredValue => "1".to_string(),
            _ => value.to_string(),
        };
        ways.push((format!("{var}={v}"), compose(tool, &[], None, "s.sh", &[(var.to_string(), v)], &[])));
    }
    ways
}

fn desc_json(c: &Composed) -> serde_json::Map<String, Json> {
    match serde_json::to_value(c.options.to_job_desc().expect("job description")).unwrap() {
        Json::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn every_option_of_every_command_works_the_same_from_cli_env_and_directive() {
    let dir = tempfile::tempdir().unwrap();
    let nodefile = dir.path().join("nodes");
    std::fs::write(&nodefile, "node7\n").unwrap();
    let nodefile = nodefile.display().to_string();
    let mut checked = 0;
    for tool in Tool::ALL {
        let baseline = desc_json(&compose(tool, &[], None, "s.sh", &[], &[]).unwrap());
        for spec in table::options_for(tool) {
            let value = sample(spec.long, &nodefile);
            for (how, result) in three_ways(tool, spec, &value) {
                let what = format!("{} {how}", tool.name());
                match spec.support {
                    Support::Implemented => {
                        let c = result.unwrap_or_else(|e| panic!("{what}: {e:?}"));
                        assert!(c.options.has(spec.long), "{what}: the option was dropped");
                        let mention = format!("--{} ", spec.long);
                        assert!(!c.warnings.iter().any(|w| w.0.contains(&mention)), "{what}: {:?}", c.warnings);
                        let desc = desc_json(&c);
                        match expected_desc(spec.long) {
                            Some(Json::Object(expected)) => {
                                for (k, v) in expected {
                                    let got = desc.get(&k).unwrap_or_else(|| panic!("{what}: no {k} in {desc:?}"));
                                    assert!(v.is_null() || *got == v, "{what}: {k} is {got}, expected {v}");
                                }
                            }
                            _ => {
                                assert!(BEHAVIOUR.contains(&spec.long), "{what}: no expectation written for it");
                                assert_eq!(desc, baseline, "{what}: changes the job description unexpectedly");
                            }
                        }
                    }
                    Support::Recorded(why) | Support::NoEffect(why) => {
                        let c = result.unwrap_or_else(|e| panic!("{what}: {e:?}"));
                        let expected = format!("--{} has no effect here: {why}", spec.long);
                        assert!(c.warnings.iter().any(|w| w.0 == expected), "{what}: warnings {:?}", c.warnings);
                    }
                    Support::Refused(why) => match result.as_ref().map_err(|e| match e {
                        SourceError::Option(o) => Some(o.innermost()),
                        _ => None,
                    }) {
                        Err(Some(OptionError::Unsupported { option, why: w })) => {
                            assert_eq!((*option, w.as_str()), (spec.long, why), "{what}")
                        }
                        other => panic!("{what}: expected a refusal, got {other:?}"),
                    },
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} cases ran");
}

#[test]
fn command_line_beats_environment_beats_directive() {
    let script = "#!/bin/sh\n#SBATCH -J from_directive\n#SBATCH -t 5\ntrue\n";
    let dirs = directive::extract(script, "#SBATCH", "s.sh").unwrap();
    let env = [("SBATCH_JOB_NAME".to_string(), "from_env".to_string())];
    let both = compose(Tool::Sbatch, &dirs, Some(script), "s.sh", &env, &[]).unwrap();
    assert_eq!(both.options.value("job-name"), Some("from_env"));
    assert_eq!(both.options.value("time"), Some("5"));
    let all = compose(Tool::Sbatch, &dirs, Some(script), "s.sh", &env, &["-Jcli".into()]).unwrap();
    assert_eq!(all.options.value("job-name"), Some("cli"));
}

#[test]
fn memory_options_exclude_each_other_as_in_slurm() {
    let script = "#!/bin/sh\n#SBATCH --mem=1G\ntrue\n";
    let dirs = directive::extract(script, "#SBATCH", "s.sh").unwrap();
    // Script and command line both count as given by the user: two ways is an error.
    let err = compose(Tool::Sbatch, &dirs, Some(script), "s.sh", &[], &["--mem-per-cpu=1G".into()]).unwrap_err();
    assert!(format!("{err:?}").contains("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."));
    // One from the command line overrides another from the environment.
    let env = [("SBATCH_MEM_PER_CPU".to_string(), "100".to_string())];
    let c = compose(Tool::Sbatch, &[], None, "s.sh", &env, &["--mem=1G".into()]).unwrap();
    assert!(!c.options.has("mem-per-cpu"));
    assert_eq!(c.options.value("mem"), Some("1G"));
    let env2 = [env[0].clone(), ("SBATCH_MEM_PER_NODE".to_string(), "1G".to_string())];
    let err = compose(Tool::Sbatch, &[], None, "s.sh", &env2, &[]).unwrap_err();
    assert!(format!("{err:?}").contains("SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_NODE are mutually exclusive."), "{err:?}");
}

#[test]
fn ntasks_per_gpu_derives_the_missing_count() {
    let c = compose(Tool::Sbatch, &[], None, "s.sh", &[], &["--ntasks-per-gpu=2".into(), "--gpus=3".into()]).unwrap();
    assert_eq!(c.options.to_job_desc().unwrap().tasks, Some(6));
    let c = compose(Tool::Sbatch, &[], None, "s.sh", &[], &["--ntasks-per-gpu=2".into(), "-n5".into()]).unwrap();
    assert_eq!(c.options.to_job_desc().unwrap().tres_per_job.as_deref(), Some("gres/gpu:3"));
}

#[test]
fn pbs_lines_get_a_notice_unless_ignored() {
    let script = "#!/bin/sh\n#PBS -l walltime=1:00:00\n#SBATCH -J x\ntrue\n";
    let dirs = directive::extract(script, "#SBATCH", "job.sh").unwrap();
    let c = compose(Tool::Sbatch, &dirs, Some(script), "job.sh", &[], &[]).unwrap();
    assert!(c.warnings.iter().any(|w| w.0.starts_with("job.sh:2: #PBS directives are not read")), "{:?}", c.warnings);
    let c = compose(Tool::Sbatch, &dirs, Some(script), "job.sh", &[], &["--ignore-pbs".into()]).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}
