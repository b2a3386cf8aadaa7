//! `scontrol ping` and `scontrol version`.
//!
//! `ping` prints Slurm's controller line, `Slurmctld(primary) at HOST is UP`, and exits 0;
//! when no daemon answers (and, for the per-user daemon, none can be started) the line says
//! `DOWN` and the exit code is 1. `version` (also `-V`/`--version`) prints slurmlet's
//! version the way every other command here does.

/// The controller line for `host`.
pub fn line(host: &str, up: bool) -> String {
    format!("Slurmctld(primary) at {host} is {}", if up { "UP" } else { "DOWN" })
}

/// Runs `scontrol ping`.
pub fn run() -> i32 {
    let pinged = crate::cli::try_connect().and_then(|c| c.ping());
    match pinged {
        Ok(reply) => {
            let mut code = 1;
            for ping in &reply.pings {
                let up = ping.responding || ping.pinged == "UP";
                if up {
                    code = 0;
                }
                let mode = if ping.primary || ping.mode.is_empty() { "primary" } else { &ping.mode };
                println!("Slurmctld({mode}) at {} is {}", ping.hostname, if up { "UP" } else { "DOWN" });
            }
            code
        }
        Err(_) => {
            println!("{}", line(&crate::paths::hostname(), false));
            if crate::identity::uid() == 0 {
                println!("*****************************************");
                println!("** RESTORE SLURMCTLD DAEMON TO SERVICE **");
                println!("*****************************************");
            }
            1
        }
    }
}

/// Runs `scontrol version`.
pub fn version() -> i32 {
    println!("{}", crate::api::release::version_line());
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_line() {
        assert_eq!(line("vm", true), "Slurmctld(primary) at vm is UP");
        assert_eq!(line("vm", false), "Slurmctld(primary) at vm is DOWN");
    }
}
