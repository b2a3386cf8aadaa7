//! `gres.conf`: per node, `AutoDetect=nvml` where Slurm's NVML plugin is installed there,
//! else a line for each GPU with its type and device file (what slurmd cannot find without
//! the plugin, and without which a node drains with "gres/gpu count reported lower than
//! configured"); shards as a count.

use crate::cluster::facts::NodeFacts;
use std::path::PathBuf;

/// The device file of a GPU whose source named none: NVIDIA's by its index.
fn files_of(gpu: &crate::cluster::facts::GpuFact) -> Vec<PathBuf> {
    if gpu.files.is_empty() && gpu.vendor == "nvidia" {
        vec![PathBuf::from(format!("/dev/nvidia{}", gpu.index))]
    } else {
        gpu.files.clone()
    }
}

/// The lines of one node.
pub fn node_lines(facts: &NodeFacts, shards_per_gpu: u32) -> Vec<String> {
    let host = &facts.hostname;
    if facts.gpus.is_empty() {
        return Vec::new();
    }
    let nvidia_only = facts.gpus.iter().all(|g| g.vendor == "nvidia");
    let mut lines = Vec::new();
    if nvidia_only && facts.nvml_plugin.is_some() {
        lines.push(format!("NodeName={host} AutoDetect=nvml"));
    } else {
        lines.push(format!("NodeName={host} AutoDetect=off"));
        for gpu in &facts.gpus {
            let kind = gpu.gres_type.as_deref().map(|t| format!(" Type={t}")).unwrap_or_default();
            let files: Vec<String> = files_of(gpu).iter().map(|f| f.display().to_string()).collect();
            lines.push(format!("NodeName={host} Name=gpu{kind} File={}", files.join(",")));
        }
    }
    if shards_per_gpu > 0 {
        lines.push(format!("NodeName={host} Name=shard Count={}", facts.gpus.len() as u64 * u64::from(shards_per_gpu)));
    }
    lines
}

/// The file's text.
pub fn render(nodes: &[(String, NodeFacts)], shards_per_gpu: u32) -> String {
    let mut out = vec!["# gres.conf of the cluster, written by `slurmlet cluster plan`.".to_string()];
    for (_, facts) in nodes {
        out.extend(node_lines(facts, shards_per_gpu));
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::facts::sample;

    #[test]
    fn without_the_plugin_each_gpu_is_listed_with_its_type_and_file() {
        let facts = sample("n1");
        assert_eq!(
            node_lines(&facts, 0),
            [
                "NodeName=n1 AutoDetect=off",
                "NodeName=n1 Name=gpu Type=tesla_v100-sxm2-32gb File=/dev/nvidia0",
                "NodeName=n1 Name=gpu Type=tesla_v100-sxm2-32gb File=/dev/nvidia1"
            ]
        );
    }

    #[test]
    fn with_the_plugin_slurmd_finds_them_itself() {
        let mut facts = sample("n1");
        facts.nvml_plugin = Some("/usr/lib/x86_64-linux-gnu/slurm-wlm/gpu_nvml.so".into());
        assert_eq!(node_lines(&facts, 4), ["NodeName=n1 AutoDetect=nvml", "NodeName=n1 Name=shard Count=8"]);
    }

    #[test]
    fn a_gpu_without_a_known_file_gets_nvidias_by_its_index() {
        let mut facts = sample("n1");
        facts.gpus[1].files.clear();
        facts.gpus[1].index = 3;
        assert!(node_lines(&facts, 0)[2].ends_with("File=/dev/nvidia3"));
    }
}
