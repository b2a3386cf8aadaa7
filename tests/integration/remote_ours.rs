//! The remote suite (`tests/integration/remote_suite/`) against slurmlet's own daemon over
//! TCP with a token, as `tests/real_slurm.rs` runs it against a real Slurm 26.05: what our
//! commands print through the profile is what they print on the daemon's local socket.

use crate::common;
use crate::remote_suite;

use common::Cluster;
use remote_suite::Endpoint;
use std::path::PathBuf;
use std::process::Output;

/// A daemon with 2 GPUs that listens on TCP too, and a profiles file naming it `tcp`, with
/// a token from `scontrol token` in a file.
struct Ours {
    cluster: Cluster,
    profiles: PathBuf,
}

impl Ours {
    fn start(_test: &str) -> Option<Ours> {
        let (cluster, addr) = Cluster::start_on_tcp("2", "");
        let token = cluster.run("scontrol", &["token", "lifespan=600"]);
        assert!(token.status.success(), "{}", remote_suite::text(&token.stderr));
        let token_file = cluster.dir.path().join("token");
        std::fs::write(&token_file, &token.stdout).unwrap();
        let profiles = cluster.dir.path().join("profiles.toml");
        std::fs::write(
            &profiles,
            format!("[profiles.tcp]\nurl = \"http://{addr}/\"\ntoken_file = \"{}\"\n", token_file.display()),
        )
        .unwrap();
        Some(Ours { cluster, profiles })
    }

    fn run(&self, profile: Option<&str>, name: &str, args: &[&str]) -> Output {
        let mut cmd = self.cluster.cmd(name);
        cmd.args(args)
            .env("SLURMLET_PROFILES", &self.profiles)
            .env("XDG_CACHE_HOME", self.cluster.dir.path().join("cache"));
        match profile {
            Some(p) => cmd.env("SLURMLET_PROFILE", p),
            None => cmd.env_remove("SLURMLET_PROFILE"),
        };
        cmd.output().expect("run command")
    }
}

impl Endpoint for Ours {
    fn ours(&self, name: &str, args: &[&str]) -> Output {
        self.run(Some("tcp"), name, args)
    }

    fn theirs(&self, name: &str, args: &[&str]) -> Output {
        self.run(None, name, args)
    }

    fn workdir(&self) -> String {
        self.cluster.work.display().to_string()
    }
}

remote_suite!(Ours::start);
