//! `slurmlet profiles`: lists the endpoints the commands may talk to (the local daemon and
//! the profiles file's; see [`crate::api::profile`]), marks the one in use, and pings each.
//! Tokens are used, never shown: only where each comes from is printed.

use crate::api::client::Client;
use crate::api::profile::{self, Profile, LOCAL};

/// Where a profile's token comes from, as the listing says it.
fn token_source(p: &Profile) -> String {
    match (&p.token_command, &p.token_file, &p.token_env) {
        (Some(cmd), _, _) => format!("command `{cmd}`"),
        (None, Some(file), _) => format!("file {}", file.display()),
        (None, None, var) => format!("${}", var.as_deref().unwrap_or("SLURM_JWT")),
    }
}

/// Pings the endpoint `client` talks to: `UP` with its cluster and version (and, for a
/// cluster profile, the data_parser version it is spoken to in), or why not.
fn check(client: Result<Client, crate::api::client_error::ClientError>) -> String {
    match client.and_then(|c| Ok((c.ping()?, c))) {
        Ok((r, c)) => {
            let up = r.pings.iter().any(|p| p.responding);
            let slurm = &r.meta.slurm;
            let version = format!("{}.{}.{}", slurm.version.major, slurm.version.minor, slurm.version.micro);
            let state = if up { "UP" } else { "DOWN (its controller does not respond)" };
            let parser = match c.profile() {
                Some(_) => format!(", data_parser {}", c.data_parser()),
                None => String::new(),
            };
            format!("{state}: cluster {}, Slurm {version} ({}){parser}", slurm.cluster, slurm.release)
        }
        Err(e) => format!("unreachable: {e}"),
    }
}

/// The local daemon's line: pinged when it answers. A listing starts no daemon: when none
/// answers, it says so (the first command that needs a per-user daemon starts it).
fn local_status() -> String {
    let target = crate::config::target::client_target();
    if std::os::unix::net::UnixStream::connect(&target.socket).is_ok() {
        return check(Client::at(&target.socket));
    }
    match target.system {
        true => format!("not running: the system daemon does not answer on {}", target.socket.display()),
        false => format!(
            "not running: no daemon answers on {}; the first command that needs it starts it",
            target.socket.display()
        ),
    }
}

/// Runs `slurmlet profiles`.
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    if args.len() > 1 {
        eprintln!(
            "usage: slurmlet profiles\n\nLists the endpoints in {} and checks each.",
            profile::profiles_path().display()
        );
        return 2;
    }
    let path = profile::profiles_path();
    let file = match profile::read(&path) {
        Ok(f) => f,
        Err(e) => {
            super::error("slurmlet", &e.to_string());
            return 1;
        }
    };
    let in_use = match profile::selected(None) {
        Ok(Some(r)) => r.name,
        Ok(None) => LOCAL.to_string(),
        Err(e) => {
            super::error("slurmlet", &e.to_string());
            return 1;
        }
    };
    let mark = |name: &str| if name == in_use { "*" } else { " " };
    println!("{} {LOCAL}: this machine's daemon", mark(LOCAL));
    println!("    {}", local_status());
    let mut code = 0;
    for (name, p) in &file.profiles {
        println!(
            "{} {name}: {} as {}, token from {}",
            mark(name),
            p.url,
            p.user.as_deref().unwrap_or("you"),
            token_source(p)
        );
        let client = match profile::remote(&file, &path, name) {
            Ok(Some(remote)) => Client::remote(&remote),
            Ok(None) => {
                println!("    {}", local_status());
                continue;
            }
            Err(e) => Err(crate::api::client_error::ClientError::Profile(e.to_string())),
        };
        let status = check(client);
        if !status.starts_with("UP") {
            code = 1;
        }
        println!("    {status}");
    }
    if file.profiles.is_empty() {
        println!("(no remote profiles: {} has none)", path.display());
    }
    code
}
