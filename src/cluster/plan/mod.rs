//! The plan: the files a Slurm cluster is brought up from (`slurm.conf`, `gres.conf`,
//! `cgroup.conf`, `slurmdbd.conf`, the `sacctmgr` commands, the munge key, the systemd
//! drop-in), made from the box's configuration and what each node has, and the report of
//! every check. A directory a person can read and keep in version control: the two secrets
//! are listed in its `.gitignore`, and planning again keeps them.

pub mod checks;
pub mod daemons_conf;
pub mod gres_conf;
mod model;
pub mod sacctmgr;
pub mod slurm_conf;
mod write;

pub use model::{box_users, limits_need_enforcing, Inputs, Plan, PlanFile, Secrets};
pub use write::{secrets, write, WriteError, MUNGE_KEY_BYTES};

use crate::cluster::facts::NodeFacts;
use crate::config::Config;
use checks::{Check, Level};
use std::collections::BTreeMap;

/// The JWT key's file, in the plan's directory and on the controller (in
/// [`JWT_KEY_DIR`]), as Slurm's guide names it.
pub const JWT_KEY_FILE: &str = "jwt_hs256.key";

/// Where the controller keeps the JWT key: slurmctld's state directory, which only the
/// `slurm` user reads.
pub const JWT_KEY_DIR: &str = "/var/spool/slurmctld";

/// `AuthAltTypes` and `AuthAltParameters`: JSON Web Tokens beside munge, for slurmrestd's
/// users (in `slurm.conf` and `slurmdbd.conf` alike).
pub fn jwt_lines() -> [String; 2] {
    ["AuthAltTypes=auth/jwt".into(), format!("AuthAltParameters=jwt_key={JWT_KEY_DIR}/{JWT_KEY_FILE}")]
}

/// What the box does that the cluster will not, one line each.
pub fn not_carried(config: &Config) -> Vec<Check> {
    let mut notes = Vec::new();
    if config.mps {
        notes.push(Check::warn(
            None,
            "mps = true: Slurm's shards start no MPS server",
            "run nvidia-cuda-mps-control on the nodes yourself, or use gres/mps",
        ));
    }
    if config.idle_gpus.is_some() {
        notes.push(Check::warn(
            None,
            "[idle_gpus]: Slurm does not cancel jobs whose GPUs stay idle",
            "none in Slurm; watch with `seff` and sreport",
        ));
    }
    if config.notify.webhook.is_some() || !config.notify.user_webhooks.is_empty() {
        notes.push(Check::warn(
            None,
            "webhooks: Slurm mails only (MailProg)",
            "point MailProg at a script that posts to the webhook",
        ));
    }
    notes
}

/// The plan for `inputs`, with `secrets`, `earlier` checks (nodes that did not answer) and
/// each node's clock less this machine's (`offsets`).
pub fn make(inputs: &Inputs, secrets: &Secrets, earlier: Vec<Check>, offsets: &BTreeMap<String, f64>) -> Plan {
    let config = inputs.config;
    let mut checks = earlier;
    if inputs.nodes.is_empty() {
        checks.push(Check::fail(
            None,
            "no node answered: there is nothing to plan",
            "reach the nodes (see above) and plan again",
        ));
    }
    checks.extend(checks::node_checks(&inputs.nodes, offsets, &inputs.controller, &box_users(config)));
    if !inputs.accounting && limits_need_enforcing(config) {
        checks.push(Check::warn(
            None,
            "the box's accounts, QOS and limits are not carried without accounting",
            "plan without --no-accounting",
        ));
    }
    checks.extend(not_carried(config));
    let mut files = vec![
        PlanFile { path: "slurm.conf", contents: slurm_conf::render(inputs).into_bytes(), mode: 0o644 },
        PlanFile {
            path: "gres.conf",
            contents: gres_conf::render(&inputs.nodes, config.shards_per_gpu).into_bytes(),
            mode: 0o644,
        },
        PlanFile { path: "cgroup.conf", contents: daemons_conf::cgroup_conf(inputs).into_bytes(), mode: 0o644 },
        PlanFile { path: "munge.key", contents: secrets.munge_key.clone(), mode: 0o400 },
        PlanFile { path: JWT_KEY_FILE, contents: secrets.jwt_key.clone(), mode: 0o400 },
        PlanFile {
            path: "systemd/slurmd.service.d/slurmlet-configless.conf",
            contents: daemons_conf::slurmd_dropin(inputs).into_bytes(),
            mode: 0o644,
        },
        PlanFile {
            path: ".gitignore",
            contents: b"# The plan's secrets.\nmunge.key\njwt_hs256.key\nslurmdbd.conf\n".to_vec(),
            mode: 0o644,
        },
    ];
    if inputs.accounting {
        match sacctmgr::commands(config, &inputs.cluster, &crate::identity::user_name_of) {
            Ok(lines) => files.push(PlanFile {
                path: "accounts.sh",
                contents: accounts_script(&inputs.cluster, &lines).into_bytes(),
                mode: 0o755,
            }),
            Err(e) => checks.push(Check::fail(
                None,
                format!("the accounts cannot be carried: {e}"),
                "give that uid a user name on this machine, or take it out of the accounts",
            )),
        }
        checks.extend(
            sacctmgr::notes(config)
                .into_iter()
                .map(|n| Check::warn(None, n, "add what it needs to accounts.sh before it is run")),
        );
        files.push(PlanFile {
            path: "slurmdbd.conf",
            contents: daemons_conf::slurmdbd_conf(inputs, &secrets.db_password).into_bytes(),
            mode: 0o600,
        });
    }
    let facts: BTreeMap<&str, &NodeFacts> = inputs.nodes.iter().map(|(n, f)| (n.as_str(), f)).collect();
    let facts = serde_json::to_string_pretty(&facts).unwrap_or_default() + "\n";
    files.push(PlanFile { path: "nodes.json", contents: facts.into_bytes(), mode: 0o644 });
    let report = report(inputs, &checks);
    files.push(PlanFile { path: "report.txt", contents: report.into_bytes(), mode: 0o644 });
    Plan { files, checks }
}

/// `accounts.sh`: the sacctmgr commands, run once on the controller after slurmdbd is up.
/// Each failure is told and the rest still run; the cluster is added only when the
/// database does not have it yet (slurmctld adds its own when it first registers).
fn accounts_script(cluster: &str, lines: &[String]) -> String {
    let mut out = vec![
        "#!/bin/sh".to_string(),
        "# The box's cluster, QOS, accounts and users in Slurm's database, written by `slurmlet cluster plan`.".into(),
        "# Run on the controller once slurmdbd is up; it exits 1 when a command failed. Run again, it".into(),
        "# changes nothing: what the database already has is counted, not failed (sacctmgr 26.05 says".into(),
        "# \"Already existing account\" of an account, \"Request didn't affect anything\" of an association).".into(),
        "status=0 set=0 kept=0".into(),
        "run() {".into(),
        "  out=$(\"$@\" 2>&1); rc=$?; [ -z \"$out\" ] || printf '%s\\n' \"$out\" >&2".into(),
        "  if [ $rc -eq 0 ]; then set=$((set + 1))".into(),
        "  elif printf '%s' \"$out\" | grep -q -e 'Nothing new added' -e 'Nothing modified' -e 'Already existing' \\"
            .into(),
        "    -e 'Request didn.t affect anything'; then kept=$((kept + 1))".into(),
        "  else echo \"accounts.sh: failed: $*: $(printf '%s' \"$out\" | tail -n 1)\" >&2; status=1; fi".into(),
        "}".into(),
    ];
    let add_cluster = format!("sacctmgr -i add cluster {}", crate::cluster::shell::quote(cluster));
    for line in lines {
        if *line == add_cluster {
            let name = crate::cluster::shell::quote(cluster);
            out.push(format!("sacctmgr -n -P show cluster format=cluster | grep -qx {name} || run {line}"));
        } else {
            out.push(format!("run {line}"));
        }
    }
    out.push("echo \"accounts: $set set, $kept already there\"".into());
    out.push("exit $status".into());
    out.join("\n") + "\n"
}

fn report(inputs: &Inputs, checks: &[Check]) -> String {
    let mut out = vec![
        format!(
            "# The plan of cluster {}: controller {}, {} node(s), accounting {}",
            inputs.cluster,
            inputs.controller,
            inputs.nodes.len(),
            if inputs.accounting { "on (slurmdbd)" } else { "off" }
        ),
        format!("# nodes reached through {}", inputs.transport),
    ];
    out.extend(checks.iter().map(Check::line));
    let (failed, warned) = (
        checks.iter().filter(|c| c.level == Level::Fail).count(),
        checks.iter().filter(|c| c.level == Level::Warn).count(),
    );
    out.push(format!("{failed} failed, {warned} to know of, {} fine", checks.len() - failed - warned));
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::accounts_script;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn accounts_sh_counts_what_the_database_has_and_fails_on_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        // A sacctmgr that has account `old` and user `old` already, and refuses `bad`.
        let fake = dir.path().join("sacctmgr");
        std::fs::write(
            &fake,
            "#!/bin/sh\ncase \"$*\" in\n*show*) echo lab ;;\n*' old'*) echo ' Already existing account old on cluster lab'; exit 1 ;;\n\
             *' bad'*) echo ' Unknown option: bad'; exit 1 ;;\nesac\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = |lines: &[&str]| {
            let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            let script = dir.path().join("accounts.sh");
            std::fs::write(&script, accounts_script("lab", &lines)).unwrap();
            let path = format!("{}:{}", dir.path().display(), std::env::var("PATH").unwrap_or_default());
            let out = std::process::Command::new("sh").arg(&script).env("PATH", path).output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let lines = ["sacctmgr -i add cluster lab", "sacctmgr -i add account old", "sacctmgr -i add account new"];
        assert_eq!(
            run(&lines),
            (
                Some(0),
                "accounts: 1 set, 1 already there\n".into(),
                " Already existing account old on cluster lab\n".into()
            )
        );
        let (code, out, err) = run(&["sacctmgr -i add account bad x", "sacctmgr -i add account new"]);
        assert_eq!((code, out.as_str()), (Some(1), "accounts: 1 set, 0 already there\n"));
        assert!(
            err.contains(
                " Unknown option: bad\naccounts.sh: failed: sacctmgr -i add account bad x:  Unknown option: bad\n"
            ),
            "{err}"
        );
    }
}
