//! Stand-in device nodes for tests of device filtering: made with `mknod` (as root) in a
//! directory of the build's own, with the numbers of devices every machine has.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Two device nodes in a directory of their own, removed with it when the test ends.
pub struct Nodes {
    pub dir: PathBuf,
    /// A node with /dev/null's numbers (1:3).
    pub allowed: PathBuf,
    /// A node with /dev/zero's numbers (1:5).
    pub denied: PathBuf,
}

impl Nodes {
    /// Makes `allowed` (1:3) and `denied` (1:5) in a new directory named after `test`, or
    /// says why they cannot be made or opened.
    pub fn make(test: &str) -> Result<Nodes, String> {
        if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
            return Err("not root: device nodes and cgroups cannot be made".into());
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let nodes = Nodes { allowed: dir.join("allowed"), denied: dir.join("denied"), dir };
        for (node, minor) in [(&nodes.allowed, "3"), (&nodes.denied, "5")] {
            let made = Command::new("mknod").arg(node).args(["c", "1", minor]).output().map_err(|e| e.to_string())?;
            if !made.status.success() {
                return Err(format!(
                    "mknod {} refused: {}",
                    node.display(),
                    String::from_utf8_lossy(&made.stderr).trim()
                ));
            }
            std::fs::File::open(node)
                .map_err(|e| format!("device node {} cannot be opened here (nodev?): {e}", node.display()))?;
        }
        Ok(nodes)
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
