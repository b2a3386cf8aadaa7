//! slurmrestd on the controller, and the profile that points this machine's commands at
//! it. slurmrestd takes JSON Web Tokens (`rest_auth/jwt`), signed with the plan's key, which
//! slurmctld and slurmdbd check; it runs as a user of its own, as Slurm asks (never root or
//! `slurm`). Once the cluster is up, this machine asks it for a ping with a token got
//! through the transport, as the profile's commands will, and then writes the profile.

use super::{scripts, Apply, Stop};
use crate::api::profile::{self, Installed, Profile};
use std::path::Path;
use std::time::Instant;

/// The user slurmrestd runs as.
pub const REST_USER: &str = "slurmrestd";

/// slurmrestd's port (Slurm's default).
pub const REST_PORT: u16 = 6820;

/// How long a token the profile's command asks for lives, in seconds.
const TOKEN_LIFESPAN: u32 = 7200;

/// The drop-in of `slurmrestd.service`: tokens, and its own user (the distributions' unit
/// runs it as root otherwise, which slurmrestd refuses).
const REST_DROPIN: &str = "# Written by `slurmlet cluster apply`: slurmrestd takes tokens, and runs as its own user.\n\
     [Service]\nEnvironment=\"SLURMRESTD_OPTIONS=-a rest_auth/jwt -u slurmrestd -g slurmrestd\"\n";

impl Apply<'_> {
    /// slurmrestd's user, drop-in and daemon on `ctl`.
    pub(super) fn rest(&self, ctl: &str) -> Result<(), Stop> {
        self.step(ctl, "slurmrestd's user", &scripts::system_user(REST_USER), None)?;
        let dropin = "/etc/systemd/system/slurmrestd.service.d/slurmlet.conf";
        self.step(
            ctl,
            "slurmrestd drop-in",
            &scripts::ensure_file(dropin, "0644", "root:root"),
            Some(REST_DROPIN.as_bytes()),
        )?;
        self.step(ctl, "slurmrestd", &scripts::slurmrestd(REST_USER, &format!("0.0.0.0:{REST_PORT}")), None)?;
        Ok(())
    }

    /// The profile this machine's commands use for the cluster: its slurmrestd at the URL
    /// asked for, and a token from `scontrol token` on `ctl` through the transport.
    pub(super) fn profile_for(&self, ctl: &str) -> Result<Profile, Stop> {
        let argv = ["scontrol".to_string(), "token".into(), format!("lifespan={TOKEN_LIFESPAN}")];
        let line = self.command_line(ctl, &argv).map_err(|e| self.stop(ctl, "profile", &e))?;
        Ok(Profile { url: self.rest_url.clone(), token_command: Some(line), ..Profile::default() })
    }

    /// This machine pings slurmrestd through the profile, then adds the profile to
    /// `profiles` (the user's profiles file).
    pub(super) fn install_profile(&self, ctl: &str, profiles: &Path) -> Result<(), Stop> {
        let name = self.plan.cluster.as_str();
        let profile = self.profile_for(ctl)?;
        let file =
            profile::ProfilesFile { profiles: [(name.to_string(), profile.clone())].into(), ..Default::default() };
        let remote = profile::remote(&file, profiles, name)
            .map_err(|e| self.stop(ctl, "profile", &e.to_string()))?
            .ok_or_else(|| self.stop(ctl, "profile", &format!("{name} is the name of this machine's own daemon")))?;
        let until = Instant::now() + super::UP_DEADLINE;
        let version = loop {
            let ping = crate::api::client::Client::remote(&remote).and_then(|c| c.ping().map(|_| c.data_parser()));
            match ping {
                Ok(version) => break version,
                Err(e) if Instant::now() > until => {
                    return Err(Stop {
                        host: ctl.into(),
                        what: format!("slurmrestd does not answer this machine at {}: {e}", self.rest_url),
                        fix: format!(
                            "read /var/log/slurm/slurmrestd.log on {ctl}; if this machine reaches it by another \
                             name, give it: --rest-url http://ADDRESS:{REST_PORT}"
                        ),
                    })
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(500)),
            }
        };
        self.say(ctl, &format!("check: slurmrestd answers this machine at {} ({version})", self.rest_url));
        let comment = format!("The cluster {name}, written by `slurmlet cluster apply`.");
        let said = match profile::install(profiles, name, &profile, &comment) {
            Ok(Installed::Added) => format!("added to {}", profiles.display()),
            Ok(Installed::Same) => format!("the same in {}", profiles.display()),
            Ok(Installed::Differs) => format!(
                "{} has another profile {name}, left as it is; this one's url is {}",
                profiles.display(),
                self.rest_url
            ),
            Err(e) => return Err(self.stop(ctl, "profile", &e.to_string())),
        };
        self.say("this machine", &format!("profile {name}: {said} (use it: squeue -M {name})"));
        Ok(())
    }
}
