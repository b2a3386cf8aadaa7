//! From the options given to the checks and the REST job description.

use super::table::{self, Support, Tool};
use super::{array, begin, dependency, export, gres, hostlist, memory, signal, time};
use super::{JobOptions, OptionError, OptionWarning};
use crate::api::noval::NoVal;
use crate::api::types::JobDescMsg;

/// A whole number for `--option`, with Slurm's wording when it is not one.
fn number(options: &JobOptions, long: &'static str) -> Result<Option<u32>, OptionError> {
    options
        .value(long)
        .map(|v| v.trim().parse::<u32>().map_err(|_| OptionError::InvalidNumber { option: long, value: v.to_string() }))
        .transpose()
}

/// The hosts of `--long=text`. A malformed `--nodelist` or `--nodefile` is Slurm's
/// `Invalid node list specified`, after the lines its hostlist code logs; Slurm's commands
/// leave `--exclude` to the controller, whose refusal slurmlet's own text stands for.
fn hosts(long: &'static str, text: &str) -> Result<Vec<String>, OptionError> {
    hostlist::expand(text).map_err(|e| match long {
        _ if e.too_many => OptionError::Invalid {
            option: long,
            value: text.into(),
            why: format!("it names more than {} hosts", hostlist::MAX_HOSTS),
        },
        "exclude" => OptionError::InvalidSpec { option: long, value: text.into() },
        _ => OptionError::NodeList(e),
    })
}

/// Whether `--get-user-env=VALUE` is Slurm's `[timeout][mode]`: a number (read as `strtol`
/// reads it, so blanks and a sign may lead and it may be left out), then nothing or a mode
/// starting with `S` or `L` (`L`, `10`, `10L`, `5s`).
fn get_user_env_ok(value: &str) -> bool {
    let number = value.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let unsigned = number.strip_prefix(['+', '-']).unwrap_or(number);
    let digits = unsigned.len() - unsigned.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    // Without digits strtol reads nothing, and the mode is the whole value.
    let mode = if digits == 0 { value } else { &unsigned[digits..] };
    mode.is_empty() || mode.starts_with(['s', 'S', 'l', 'L'])
}

/// The options that take a whole number.
const NUMBERS: &[&str] = &["ntasks", "cpus-per-task", "ntasks-per-node", "cpus-per-gpu", "mincpus", "ntasks-per-gpu"];

impl JobOptions {
    /// Checks every value's syntax, so that a bad value is reported where it was written, and
    /// applies the table: a warning for each option that has no effect here, an error for one
    /// that is refused.
    pub fn validate(&self, tool: Tool) -> Result<Vec<OptionWarning>, OptionError> {
        if let Some(t) = self.value("time") {
            time::parse_time_limit(t)?;
        }
        if let Some(t) = self.value("time-min") {
            time::parse_time_limit(t).map_err(|_| OptionError::InvalidSpec { option: "time-min", value: t.into() })?;
        }
        for long in ["mem", "mem-per-cpu", "mem-per-gpu", "tmp"] {
            if let Some(m) = self.value(long) {
                memory::parse_mem_mb(m, long)?;
            }
        }
        if let Some(g) = self.value("gres") {
            gres::parse_gres(g)?;
        }
        for long in ["gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket"] {
            if let Some(g) = self.value(long) {
                gres::parse_gpus(g, long)?;
            }
        }
        if let Some(t) = self.value("tres-per-task") {
            gres::parse_tres_per_task(t)?;
        }
        for long in NUMBERS {
            number(self, long)?;
        }
        if let Some(v) = self.value("get-user-env").filter(|v| !get_user_env_ok(v)) {
            return Err(OptionError::InvalidSpec { option: "get-user-env", value: v.into() });
        }
        if let Some(s) = self.value("signal") {
            signal::parse_signal_spec(s)?;
        }
        if let Some(n) = self.value("nodes") {
            parse_node_range(n)?;
        }
        if let Some(m) = self.value("open-mode") {
            if !matches!(m, "append" | "a" | "truncate" | "t") {
                return Err(OptionError::InvalidSpec { option: "open-mode", value: m.into() });
            }
        }
        for long in ["nodelist", "exclude"] {
            if let Some(h) = self.value(long) {
                hosts(long, h)?;
            }
        }
        if let Some(b) = self.value("begin") {
            begin::parse_begin(b, crate::sys::now())?;
        }
        if let Some(n) = self.value("nice").filter(|n| !n.is_empty()) {
            n.parse::<i32>().map_err(|_| OptionError::InvalidSpec { option: "nice", value: n.into() })?;
        }
        if let Some(e) = self.value("export") {
            export::parse_export(e)?;
        }
        if let Some(a) = self.value("array") {
            array::parse_array(a, array::DEFAULT_MAX_ARRAY_SIZE)?;
        }
        if let Some(d) = self.value("dependency") {
            dependency::parse_dependency(d)?;
        }
        let mut warnings = Vec::new();
        if let Some(m) = self.value("mail-type") {
            let parsed = super::mail::MailTypes::parse(m)
                .map_err(|_| OptionError::InvalidSpec { option: "mail-type", value: m.into() })?;
            // Slurm drops a word it does not know without a word; said here.
            for word in parsed.unknown {
                warnings.push(OptionWarning(format!("--mail-type: '{word}' is no mail type; it is ignored")));
            }
        }
        for (long, value) in self.given() {
            let Some(spec) = table::find(tool, long) else { continue };
            // A `0|1` option given 0 (`SLURM_OOM_KILL_STEP=0` in every job) asks for nothing.
            let off = matches!(spec.value, table::Value::Optional("0|1") | table::Value::Required("0|1"))
                && value == Some("0");
            // Nor does the binding every task of a step is told of, read by an srun it runs.
            let inherited = long == "cpu-bind" && value.is_some_and(|v| v.starts_with(table::TASK_CPU_BIND));
            let off = off || inherited;
            match spec.support {
                Support::Implemented => {}
                Support::Recorded(_) | Support::NoEffect(_) if off => {}
                Support::Recorded(why) | Support::NoEffect(why) => {
                    warnings.push(OptionWarning(format!("--{long} has no effect here: {why}")))
                }
                Support::Refused(why) => return Err(OptionError::Unsupported { option: spec.long, why: why.into() }),
            }
        }
        Ok(warnings)
    }

    /// Builds the REST job description from these options.
    ///
    /// `script`, `argv`, `environment` and `current_working_directory` are the caller's.
    pub fn to_job_desc(&self) -> Result<JobDescMsg, OptionError> {
        let text = |long: &str| self.value(long).map(str::to_string);
        let mut d = JobDescMsg {
            name: text("job-name"),
            standard_output: text("output"),
            standard_error: text("error"),
            standard_input: text("input"),
            partition: text("partition"),
            comment: text("comment"),
            wckey: text("wckey"),
            mail_type: self
                .value("mail-type")
                .and_then(|m| super::mail::MailTypes::parse(m).ok())
                .map(|p| p.types.flags()),
            mail_user: text("mail-user"),
            account: text("account"),
            qos: text("qos"),
            reservation: text("reservation"),
            constraints: text("constraint"),
            tasks: number(self, "ntasks")?,
            cpus_per_task: number(self, "cpus-per-task")?,
            tasks_per_node: number(self, "ntasks-per-node")?,
            minimum_cpus: number(self, "mincpus")?,
            ..Default::default()
        };
        if self.has("hold") {
            d.hold = Some(true);
        }
        if let Some(t) = self.value("time") {
            d.time_limit = Some(match time::parse_time_limit(t)? {
                Some(m) => NoVal::of(m),
                None => NoVal::infinite(),
            });
        }
        if let Some(n) = self.value("nodes") {
            let (min, max) = parse_node_range(n)?;
            d.minimum_nodes = Some(min);
            d.maximum_nodes = max;
        }
        self.memory_requests(&mut d)?;
        if let Some(n) = number(self, "cpus-per-gpu")? {
            d.cpus_per_tres = Some(format!("gres/gpu:{n}"));
        }
        self.gpu_requests(&mut d)?;
        if let Some(m) = self.value("open-mode") {
            d.open_mode = Some(vec![if m.starts_with('a') { "APPEND" } else { "TRUNCATE" }.into()]);
        }
        if let Some(s) = self.value("signal") {
            let spec = signal::parse_signal_spec(s)?;
            d.kill_warning_signal = Some(signal::signal_name(spec.signal));
            d.kill_warning_delay = Some(NoVal::of(spec.seconds.min(u16::MAX as u32) as u16));
            if spec.batch_only {
                d.kill_warning_flags = Some(vec!["BATCH_JOB".into()]);
            }
        }
        self.node_lists(&mut d)?;
        if let Some(b) = self.value("begin") {
            d.begin_time = Some(NoVal::of(begin::parse_begin(b, crate::sys::now())?));
        }
        if let Some(n) = self.value("nice") {
            d.nice = Some(if n.is_empty() { 100 } else { n.parse().unwrap_or(0) });
        }
        d.array = text("array");
        self.dependency_requests(&mut d)?;
        // The later of the two on the command line wins; both are flags here.
        if self.has("no-requeue") {
            d.requeue = Some(false);
        } else if self.has("requeue") {
            d.requeue = Some(true);
        }
        Ok(d)
    }

    /// `--mem`, `--mem-per-cpu` and `--mem-per-gpu` into the memory fields, in MB.
    fn memory_requests(&self, d: &mut JobDescMsg) -> Result<(), OptionError> {
        if let Some(m) = self.value("mem") {
            d.memory_per_node = Some(NoVal::of(memory::parse_mem_mb(m, "mem")?));
        }
        if let Some(m) = self.value("mem-per-cpu") {
            d.memory_per_cpu = Some(NoVal::of(memory::parse_mem_mb(m, "mem-per-cpu")?));
        }
        if let Some(m) = self.value("mem-per-gpu") {
            d.memory_per_tres = Some(format!("gres/gpu:{}", memory::parse_mem_mb(m, "mem-per-gpu")?));
        }
        Ok(())
    }

    /// `--nodelist`, `--nodefile` (its names join the list's) and `--exclude` into the
    /// required and excluded nodes.
    fn node_lists(&self, d: &mut JobDescMsg) -> Result<(), OptionError> {
        if let Some(h) = self.value("nodelist") {
            d.required_nodes = Some(hosts("nodelist", h)?);
        }
        if let Some(path) = self.value("nodefile") {
            let text = std::fs::read_to_string(path).map_err(|e| OptionError::Invalid {
                option: "nodefile",
                value: path.into(),
                why: format!("cannot read it: {e}"),
            })?;
            let mut nodes = d.required_nodes.take().unwrap_or_default();
            for word in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()) {
                nodes.extend(hosts("nodefile", word)?);
            }
            d.required_nodes = Some(nodes);
        }
        if let Some(h) = self.value("exclude") {
            d.excluded_nodes = Some(hosts("exclude", h)?);
        }
        Ok(())
    }

    /// `--dependency` in Slurm's form, and `--kill-on-invalid-dep` into the job's flags.
    fn dependency_requests(&self, d: &mut JobDescMsg) -> Result<(), OptionError> {
        if let Some(dep) = self.value("dependency") {
            d.dependency = Some(dependency::parse_dependency(dep)?.to_slurm_string());
        }
        if let Some(kill) = self.value("kill-on-invalid-dep") {
            let flag = match kill.to_ascii_lowercase().as_str() {
                "yes" | "y" | "1" => "KILL_INVALID_DEPENDENCY",
                "no" | "n" | "0" => "NO_KILL_INVALID_DEPENDENCY",
                _ => {
                    return Err(OptionError::Invalid {
                        option: "kill-on-invalid-dep",
                        value: kill.into(),
                        why: "expected yes or no".into(),
                    })
                }
            };
            d.flags = Some(vec![flag.into()]);
        }
        Ok(())
    }

    /// `--gres`, `--gpus*`, `--tres-per-task` and `--ntasks-per-gpu` into the TRES fields.
    fn gpu_requests(&self, d: &mut JobDescMsg) -> Result<(), OptionError> {
        let mut per_node = Vec::new();
        if let Some(g) = self.value("gres") {
            per_node.extend(gres::parse_gres(g)?);
        }
        if let Some(g) = self.value("gpus-per-node") {
            per_node.push(gres::parse_gpus(g, "gpus-per-node")?);
        }
        if !per_node.is_empty() {
            d.tres_per_node = Some(gres::to_tres(&per_node));
        }
        let mut per_job = match self.value("gpus") {
            Some(g) => Some(gres::parse_gpus(g, "gpus")?),
            None => None,
        };
        let mut per_task = Vec::new();
        if let Some(g) = self.value("gpus-per-task") {
            per_task.push(gres::parse_gpus(g, "gpus-per-task")?);
        }
        if let Some(t) = self.value("tres-per-task") {
            let (cpus, gpus) = gres::parse_tres_per_task(t)?;
            if let Some(c) = cpus {
                d.cpus_per_task = Some(c);
            }
            per_task.extend(gpus);
        }
        if !per_task.is_empty() {
            d.tres_per_task = Some(gres::to_tres(&per_task));
        }
        // --ntasks-per-gpu: the task count follows the GPU count, or the GPUs the tasks.
        if let Some(n) = number(self, "ntasks-per-gpu")?.filter(|n| *n > 0) {
            match (&per_job, d.tasks) {
                (Some(g), None) => d.tasks = Some(g.count * n),
                (None, Some(tasks)) => {
                    per_job = Some(gres::GresRequest { name: "gpu".into(), kind: None, count: tasks.div_ceil(n) })
                }
                _ => {}
            }
        }
        if let Some(g) = per_job {
            d.tres_per_job = Some(gres::to_tres(&[g]));
        }
        Ok(())
    }
}

/// Parses `-N min[-max]`.
pub fn parse_node_range(text: &str) -> Result<(u32, Option<u32>), OptionError> {
    let bad = || OptionError::InvalidSpec { option: "nodes", value: text.to_string() };
    match text.split_once('-') {
        Some((a, b)) => Ok((a.parse().map_err(|_| bad())?, Some(b.parse().map_err(|_| bad())?))),
        None => Ok((text.parse().map_err(|_| bad())?, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::get_user_env_ok;
    use crate::options::table::{Tool, TASK_CPU_BIND};
    use crate::options::JobOptions;

    /// srun's warnings for `args`.
    fn srun_warnings(args: &[&str]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let options = JobOptions::parse(Tool::Srun, &args).unwrap();
        options.validate(Tool::Srun).unwrap().into_iter().map(|w| w.0).collect()
    }

    #[test]
    fn the_binding_a_task_is_told_of_is_no_request_of_a_nested_srun() {
        let inherited = format!("--cpu-bind={TASK_CPU_BIND}0x18,0x18");
        assert_eq!(srun_warnings(&[&inherited, "true"]), Vec::<String>::new());
        assert_eq!(
            srun_warnings(&["--cpu-bind=cores", "true"]),
            vec!["--cpu-bind has no effect here: tasks are not bound to CPUs, sockets or memory one by one here"]
        );
    }

    #[test]
    fn get_user_env_values_as_slurm_reads_them() {
        for v in ["", "L", "S", "l", "s", "10", "10L", "10S", " 5", "-3L", "+7", "10Long"] {
            assert!(get_user_env_ok(v), "{v:?}");
        }
        for v in ["X", "10X", "abc", " L", "-L", "10 L", "1.5"] {
            assert!(!get_user_env_ok(v), "{v:?}");
        }
    }
}
