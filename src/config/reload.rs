//! A reload of the configuration (SIGHUP): which keys take effect at once and which only at
//! the daemon's next start. Every field of [`Config`] is named once below, in one of three
//! lists, so that a key added later cannot be silently neither applied nor reported: the
//! compiler refuses a field left out of the destructuring.

use super::Config;

/// What a reload gives: the configuration to run with from now on, and the keys whose new
/// values wait for the next start.
#[derive(Debug)]
pub struct Reloaded {
    /// The running configuration with every key a reload may change taken from the file.
    pub config: Config,
    /// The keys (as the file names them) that changed in the file but keep their running
    /// values until the daemon starts again, in the file's order.
    pub restart_only: Vec<&'static str>,
}

impl Config {
    /// The configuration `new` (just read from the file) makes of this running one.
    pub fn reloaded(&self, new: Config) -> Reloaded {
        let Config {
            // Taken at once: they are read at each use.
            gpu_history_days,
            foreign_gpu_memory_mib,
            foreign_gpu_processes,
            def_mem_per_cpu,
            partitions,
            kill_wait,
            min_job_age,
            history_days,
            max_array_size,
            hide_gpus_from_cpu_jobs,
            limits,
            shard_memory,
            operators,
            private_jobs,
            private_usage,
            default_account,
            accounts,
            account_tree,
            priority,
            qos,
            preempt_mode,
            requeue_delay,
            notify,
            idle_gpus,
            // Only at the next start: the node's resources, its names, where the daemon
            // listens and keeps its state, and what its start set up from them.
            cluster_name,
            node_name,
            cpus,
            memory,
            gpu_setting,
            gpus,
            nvml_library,
            gpu_sample_interval,
            job_acct_gather_frequency,
            gpu_history_resolution,
            state_dir,
            socket,
            mode,
            shards_per_gpu,
            mps,
            cgroup,
            listen,
            // Where the file is, not a key of it.
            path: _,
        } = new;
        let mut restart_only = Vec::new();
        let mut note = |key: &'static str, changed: bool| {
            if changed {
                restart_only.push(key);
            }
        };
        note("cluster_name", cluster_name != self.cluster_name);
        note("node_name", node_name != self.node_name);
        note("cpus", cpus != self.cpus);
        note("memory", memory != self.memory);
        // Each GPU carries the `gpus` key's type too (`type = …`).
        note("gpus", gpu_setting != self.gpu_setting || gpus != self.gpus);
        note("nvml_library", nvml_library != self.nvml_library);
        note("gpu_sample_interval", gpu_sample_interval != self.gpu_sample_interval);
        note("job_acct_gather_frequency", job_acct_gather_frequency != self.job_acct_gather_frequency);
        note("gpu_history_resolution", gpu_history_resolution != self.gpu_history_resolution);
        note("state_dir", state_dir != self.state_dir);
        note("socket", socket != self.socket);
        note("mode", mode != self.mode);
        note("shards_per_gpu", shards_per_gpu != self.shards_per_gpu);
        note("mps", mps != self.mps);
        note("cgroup", cgroup != self.cgroup);
        note("listen", listen != self.listen);
        let config = Config {
            gpu_history_days,
            foreign_gpu_memory_mib,
            foreign_gpu_processes,
            def_mem_per_cpu,
            partitions,
            kill_wait,
            min_job_age,
            history_days,
            max_array_size,
            hide_gpus_from_cpu_jobs,
            limits,
            shard_memory,
            operators,
            private_jobs,
            private_usage,
            default_account,
            accounts,
            account_tree,
            priority,
            qos,
            preempt_mode,
            requeue_delay,
            notify,
            idle_gpus,
            ..self.clone()
        };
        Reloaded { config, restart_only }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config(text: &str) -> Config {
        let file = toml::from_str(text).expect("a valid file");
        Config::resolve(file, Path::new("/etc/slurmlet/slurmlet.toml")).expect("a valid configuration")
    }

    #[test]
    fn keys_a_reload_may_change_are_taken_and_the_others_named() {
        let running =
            config("cpus = 4\nmemory = 8000\nkill_wait = 30\nnode_name = \"a\"\nnvml_library = \"/lib/a.so\"");
        let file = config("cpus = 8\nmemory = 8000\nkill_wait = 5\nnode_name = \"b\"\nnvml_library = \"/lib/b.so\"");
        let reloaded = running.reloaded(file);
        assert_eq!(reloaded.config.kill_wait, 5);
        assert_eq!(reloaded.config.cpus, 4);
        assert_eq!(reloaded.config.node_name, "a");
        assert_eq!(reloaded.config.nvml_library, Path::new("/lib/a.so"));
        assert_eq!(reloaded.restart_only, ["node_name", "cpus", "nvml_library"]);
    }

    #[test]
    fn an_unchanged_file_names_nothing() {
        let text = "cpus = 4\nmemory = 8000\ngpus = 2\nshards_per_gpu = 4\n[cgroup]\nconstrain_cores = false";
        let reloaded = config(text).reloaded(config(text));
        assert!(reloaded.restart_only.is_empty(), "{:?}", reloaded.restart_only);
    }
}
