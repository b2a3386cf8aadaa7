//! The shell commands `cluster apply` runs on a host, each one idempotent: it looks first,
//! changes only what differs from the plan, and says which it did on its last line
//! (`same`, `written`, `running`, `started`, …), so that running the plan twice changes
//! nothing the second time. Each is `sh -c SCRIPT sh ARGS…`: the values are arguments,
//! never pasted into the script.

/// `sh -c script sh args…`.
pub fn sh(script: &str, args: &[&str]) -> Vec<String> {
    let mut argv = vec!["sh".to_string(), "-c".into(), script.into(), "sh".into()];
    argv.extend(args.iter().map(|a| a.to_string()));
    argv
}

/// Writes standard input to `path` with `mode` and `owner` unless it already holds exactly
/// that; prints `same` or `written`. A file that exists is written in place (it may be a
/// mount, which cannot be replaced).
pub fn ensure_file(path: &str, mode: &str, owner: &str) -> Vec<String> {
    sh(
        "t=$(mktemp) || exit 1; cat > \"$t\" || exit 1; \
         if cmp -s \"$t\" \"$1\"; then rm -f \"$t\"; chmod \"$2\" \"$1\" && chown \"$3\" \"$1\" && echo same; \
         elif [ -e \"$1\" ]; then cat \"$t\" > \"$1\" && rm -f \"$t\" && chmod \"$2\" \"$1\" && chown \"$3\" \"$1\" && echo written; \
         else install -D -m \"$2\" -o \"${3%%:*}\" -g \"${3##*:}\" \"$t\" \"$1\" && rm -f \"$t\" && echo written; fi",
        &[path, mode, owner],
    )
}

/// Directories owned by `owner`, made where missing.
pub fn ensure_dirs(owner: &str, dirs: &[&str]) -> Vec<String> {
    let mut args = vec![owner];
    args.extend_from_slice(dirs);
    sh("o=$1; shift; install -d -o \"${o%%:*}\" -g \"${o##*:}\" -m 0755 \"$@\" && echo ready", &args)
}

/// The packages installed where missing (Debian's apt, Fedora's dnf); prints `installed`
/// with the ones it installed, or `present`.
pub fn ensure_packages(packages: &[&str]) -> Vec<String> {
    sh(
        "missing=''; for p in \"$@\"; do \
           if command -v dpkg-query >/dev/null; then s=$(dpkg-query -W -f='${db:Status-Status}' \"$p\" 2>/dev/null); \
           else rpm -q \"$p\" >/dev/null 2>&1 && s=installed; fi; \
           [ \"$s\" = installed ] || missing=\"$missing $p\"; done; \
         [ -z \"$missing\" ] && { echo present; exit 0; }; \
         if command -v apt-get >/dev/null; then DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2 || exit 1; \
         else dnf install -y $missing >&2 || exit 1; fi; echo \"installed$missing\"",
        packages,
    )
}

/// munged running with the key on disk: left alone when it answers and `restart` is not
/// asked, else (re)started by systemd, or directly where systemd does not run the machine.
pub fn munged(restart: bool) -> Vec<String> {
    sh(
        "if [ \"$1\" = no ] && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then echo running; exit 0; fi; \
         if [ -d /run/systemd/system ]; then systemctl restart munge || exit 1; \
         else [ -f /run/munge/munged.pid ] && kill \"$(cat /run/munge/munged.pid)\" 2>/dev/null && sleep 0.5; \
           install -d -o munge -g munge -m 0755 /run/munge && runuser -u munge -- /usr/sbin/munged || exit 1; fi; \
         for i in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && { echo started; exit 0; }; sleep 0.2; done; \
         echo 'munged does not answer' >&2; exit 1",
        &[if restart { "yes" } else { "no" }],
    )
}

/// A Slurm daemon running: left alone when its pid file names a live process, else started
/// by systemd (`unit`), or directly with `command…`.
pub fn daemon(pid_file: &str, unit: &str, command: &[&str]) -> Vec<String> {
    let mut args = vec![pid_file, unit];
    args.extend_from_slice(command);
    sh(
        "p=$1 u=$2; shift 2; \
         if [ -f \"$p\" ] && kill -0 \"$(cat \"$p\")\" 2>/dev/null; then echo running; exit 0; fi; \
         if [ -d /run/systemd/system ]; then systemctl daemon-reload && systemctl enable --now \"$u\" || exit 1; \
         else \"$@\" || exit 1; fi; echo started",
        &args,
    )
}

/// A system user without a home or a shell, added where missing; prints `present` or
/// `added`.
pub fn system_user(name: &str) -> Vec<String> {
    sh(
        "if id -u \"$1\" >/dev/null 2>&1; then echo present; \
         else useradd --system --no-create-home --shell /usr/sbin/nologin \"$1\" && echo added; fi",
        &[name],
    )
}

/// slurmrestd running, with tokens (`rest_auth/jwt`), as `user` once it has bound its port:
/// left alone when it runs, else started by systemd (whose unit takes the options from the
/// drop-in), or directly with its pid in `/run/slurmrestd.pid`.
pub fn slurmrestd(user: &str, listen: &str) -> Vec<String> {
    sh(
        "if [ -d /run/systemd/system ]; then systemctl is-active --quiet slurmrestd && { echo running; exit 0; }; \
           systemctl daemon-reload && systemctl enable --now slurmrestd || exit 1; \
         else p=/run/slurmrestd.pid; \
           if [ -f $p ] && kill -0 \"$(cat $p)\" 2>/dev/null; then echo running; exit 0; fi; \
           setsid -f sh -c 'echo $$ > /run/slurmrestd.pid; \
             exec env SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt -u \"$1\" -g \"$1\" \"$2\"' sh \"$1\" \"$2\" \
             </dev/null >>/var/log/slurm/slurmrestd.log 2>&1 || exit 1; fi; echo started",
        &[user, listen],
    )
}

/// `/etc/slurm/slurm.conf` moved aside on a configless node, which would read it rather
/// than the controller's.
pub fn no_local_slurm_conf() -> Vec<String> {
    sh(
        "f=/etc/slurm/slurm.conf; if [ -f \"$f\" ]; then mv \"$f\" \"$f.local\" && echo \"moved to $f.local\"; else echo none; fi",
        &[],
    )
}

/// The directory MariaDB reads its drop-in configuration from (Debian's, Fedora's); prints it.
pub fn mariadb_conf_dir() -> Vec<String> {
    sh(
        "for d in /etc/mysql/mariadb.conf.d /etc/my.cnf.d; do [ -d \"$d\" ] && { echo \"$d\"; exit 0; }; done; \
         echo 'no /etc/mysql/mariadb.conf.d or /etc/my.cnf.d: is mariadb-server installed?' >&2; exit 1",
        &[],
    )
}

/// What Slurm's accounting guide asks of MariaDB for slurmdbd: a long lock wait (slurmdbd's
/// rollups hold locks for minutes), and no snapshot isolation (MariaDB 11.6 turned it on, and
/// slurmdbd's updates then fail with "Record has changed since last read"). `loose-` lets an
/// older MariaDB that lacks the setting start anyway.
pub const MARIADB_CNF: &str = "# Written by `slurmlet cluster apply`: MariaDB as slurmdbd needs it.\n\
     [mysqld]\ninnodb_lock_wait_timeout=900\nloose-innodb_snapshot_isolation=OFF\n";

/// MariaDB answering on its socket: left alone when it answers and `restart` is not asked,
/// else (re)started by systemd, or directly (its data directory, wherever its configuration
/// puts it, made first where missing) where systemd does not run the machine.
pub fn mariadb(restart: bool) -> Vec<String> {
    sh(
        "up() { mariadb-admin --protocol=socket ping >/dev/null 2>&1; }; \
         if [ \"$1\" = no ] && up; then echo running; exit 0; fi; \
         if [ -d /run/systemd/system ]; then systemctl enable mariadb >&2 && systemctl restart mariadb || exit 1; \
         else if [ -f /run/mysqld/mysqld.pid ]; then kill \"$(cat /run/mysqld/mysqld.pid)\" 2>/dev/null && \
             for i in $(seq 100); do [ -f /run/mysqld/mysqld.pid ] || break; sleep 0.1; done; \
             rm -f /run/mysqld/mysqld.pid; fi; \
           d=$(mariadbd --help --verbose 2>/dev/null | awk '$1 == \"datadir\" {print $2}'); \
           [ -d \"${d:-/var/lib/mysql}/mysql\" ] || mariadb-install-db --user=mysql --skip-test-db \
             --auth-root-authentication-method=socket >&2 || exit 1; \
           install -d -o mysql -g mysql -m 0755 /run/mysqld && install -d -o mysql -m 0750 /var/log/mysql || exit 1; \
           setsid -f mariadbd --user=mysql --pid-file=/run/mysqld/mysqld.pid --log-error=/var/log/mysql/error.log \
             </dev/null >/dev/null 2>&1 || exit 1; fi; \
         for i in $(seq 300); do up && { echo started; exit 0; }; sleep 0.2; done; \
         echo 'MariaDB does not answer on its socket (log: /var/log/mysql/)' >&2; exit 1",
        &[if restart { "yes" } else { "no" }],
    )
}

/// Why a value of `slurmdbd.conf` cannot be put into SQL: only letters, digits, `_` and
/// `-` are (what the plan writes), so that nothing needs quoting.
fn sql_word<'v>(key: &str, value: Option<&'v str>, default: &'v str) -> Result<&'v str, String> {
    let value = value.unwrap_or(default);
    let plain = !value.is_empty() && value.len() <= 64;
    if plain && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        Ok(value)
    } else {
        Err(format!(
            "slurmdbd.conf: {key}={value:?} is not a plain word (letters, digits, _ and -, at most 64), which apply \
             puts into MariaDB"
        ))
    }
}

/// The SQL, for MariaDB's root on its socket, that makes slurmdbd's database and user with
/// the password of `slurmdbd.conf`, or sets them so again. Fed on standard input, so the
/// password is never on a command line.
pub fn database_sql(user: Option<&str>, password: Option<&str>, database: Option<&str>) -> Result<String, String> {
    let user = sql_word("StorageUser", user, "slurm")?;
    let password = sql_word("StoragePass", password, "")?;
    let database = sql_word("StorageLoc", database, "slurm_acct_db")?;
    Ok(format!(
        "CREATE DATABASE IF NOT EXISTS `{database}`;\n\
         CREATE USER IF NOT EXISTS '{user}'@'localhost' IDENTIFIED BY '{password}';\n\
         ALTER USER '{user}'@'localhost' IDENTIFIED BY '{password}';\n\
         GRANT ALL ON `{database}`.* TO '{user}'@'localhost';\n\
         SELECT 'ready';\n"
    ))
}

/// MariaDB's root, on its socket, running standard input's SQL.
pub fn mariadb_root() -> Vec<String> {
    ["mariadb", "--protocol=socket", "-u", "root", "-N", "-B"].map(String::from).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn run(argv: &[String], input: &[u8]) -> (bool, String) {
        use std::io::Write;
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    #[test]
    fn a_file_is_written_once_and_then_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etc/slurm/slurm.conf");
        let path = path.to_str().unwrap();
        let owner = format!("{}:{}", crate::identity::uid(), crate::identity::gid());
        let write = ensure_file(path, "0644", &owner);
        assert_eq!(run(&write, b"ClusterName=lab\n"), (true, "written".into()));
        assert_eq!(run(&write, b"ClusterName=lab\n"), (true, "same".into()));
        assert_eq!(run(&write, b"ClusterName=other\n"), (true, "written".into()));
        assert_eq!(std::fs::read_to_string(path).unwrap(), "ClusterName=other\n");
    }

    #[test]
    fn values_are_arguments_never_script() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a file; touch pwned");
        let owner = format!("{}:{}", crate::identity::uid(), crate::identity::gid());
        assert_eq!(run(&ensure_file(path.to_str().unwrap(), "0600", &owner), b"x"), (true, "written".into()));
        assert!(path.exists() && !dir.path().join("pwned").exists());
    }

    #[test]
    fn only_plain_words_of_slurmdbd_conf_reach_sql() {
        let sql = database_sql(Some("slurm"), Some("s3cr-et_9"), None).unwrap();
        assert!(sql.contains("CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 's3cr-et_9';"), "{sql}");
        assert!(sql.contains("GRANT ALL ON `slurm_acct_db`.* TO 'slurm'@'localhost';"), "{sql}");
        let quote = database_sql(None, Some("x'; DROP DATABASE mysql; --"), None).unwrap_err();
        assert!(quote.starts_with("slurmdbd.conf: StoragePass=\"x'; DROP"), "{quote}");
        assert!(database_sql(None, None, None).unwrap_err().contains("StoragePass=\"\""));
        assert!(database_sql(Some("slurm"), Some("pw"), Some("a`b")).is_err());
    }
}
