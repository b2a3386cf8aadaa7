//! The shell completions of `completions/` ask the daemon: `scancel <TAB>` offers the caller's
//! running jobs first, `sbatch -p <TAB>` the partitions (and `sbatch -pl<TAB>`, the value
//! attached), `--gres=<TAB>` the GRES; with no daemon the static completion answers (files).
//! Driven through tmux in bash (required) and zsh (where installed); fish's `complete -C` is
//! asked directly (where installed). The helper they call never starts a daemon, and gives up
//! on one that does not answer.
use crate::common;
use crate::common::tmux;
use common::Cluster;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tmux::Tmux;

/// The node's name, as tests/integration/common configures it.
const NODE: &str = "node1";

const PARTITIONS: &str = "[[partitions]]\nname = \"short\"\ndefault = true\n\n[[partitions]]\nname = \"long\"\n";

fn completions_dir(shell: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("completions").join(shell)
}

fn installed(program: &str) -> bool {
    Command::new(program).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// The lines that set a shell up in the cluster's environment (`export` works in bash and zsh).
fn environment(c: &Cluster) -> String {
    format!(
        "cd {work}\nexport SLURMLET_CONF={conf} SLURMLET_SOCKET={sock} XDG_RUNTIME_DIR={xdg} PATH={bin}:$PATH\nfor v in $(env | grep -o '^SLURM_[A-Z_]*'); do unset $v; done\n",
        work = c.work.display(),
        conf = c.config.display(),
        sock = c.socket.display(),
        xdg = c.dir.path().join("xdg").display(),
        bin = c.bin.display(),
    )
}

/// Two running jobs and a held one (ids in that order), and a file in the work directory.
fn jobs(c: &Cluster) -> (u32, u32, u32) {
    let first = c.sbatch(&["-J", "train", "--wrap", "sleep 300"]);
    let second = c.sbatch(&["-J", "eval", "--wrap", "sleep 300"]);
    let held = c.sbatch(&["-H", "-J", "later", "--wrap", "true"]);
    for id in [first, second] {
        c.wait_state(id, &["RUNNING"], Duration::from_secs(20));
    }
    std::fs::write(c.work.join("notes-file.txt"), "x").unwrap();
    (first, second, held)
}

/// Clears the screen and waits for the prompt alone on it.
fn fresh_prompt(t: &Tmux, prompt: &str) {
    t.keys(&["C-u", "clear", "Enter"]);
    t.wait_for("a clear screen", |s| {
        s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>() == [prompt]
    });
}

/// The screen's lines after the last prompt line, each trimmed.
fn after_prompt<'a>(screen: &'a str, prompt: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let last = lines.iter().rposition(|l| l.starts_with(prompt)).unwrap_or(0);
    lines[last + 1..].iter().copied().filter(|l| !l.is_empty()).collect()
}

#[test]
fn bash_completes_jobs_partitions_and_gres_from_the_daemon_and_files_without_one() {
    let mut c = Cluster::start("2", PARTITIONS);
    let (first, second, held) = jobs(&c);
    let dir = completions_dir("bash");
    let rc = c.path("bashrc");
    std::fs::write(
        &rc,
        format!(
            "{env}PS1='prompt$ '\nbind 'set show-all-if-ambiguous on'\nbind 'set completion-query-items 0'\nsource {dir}/scancel\nsource {dir}/sbatch\nsource {dir}/scontrol\nsource {dir}/sacct\n",
            env = environment(&c),
            dir = dir.display()
        ),
    )
    .unwrap();
    let t = Tmux::new();
    t.start_command(&format!("exec bash --noprofile --rcfile {} -i", rc.display()));
    t.wait_for("a prompt", |s| s.contains("prompt$"));

    // The caller's running jobs, then its held one, in that order.
    t.keys(&["scancel ", "Tab"]);
    let want = format!("{first} {second} {held}");
    let screen = t.wait_for("scancel's job ids", |s| {
        s.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want)
    });
    assert!(!screen.contains("notes-file.txt"), "the daemon answered: no files offered\n{screen}");
    fresh_prompt(&t, "prompt$");
    t.keys(&["scontrol hold ", "Tab"]);
    t.wait_for("scontrol hold's job ids", |s| {
        s.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want)
    });
    fresh_prompt(&t, "prompt$");
    t.keys(&["sbatch -p ", "Tab"]);
    t.wait_for("the partitions, the default first", |s| {
        s.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["short", "long"])
    });
    t.keys(&["l", "Tab"]);
    t.wait_for("the partition completed", |s| s.lines().any(|l| l.trim_end() == "prompt$ sbatch -p long"));
    fresh_prompt(&t, "prompt$");
    t.keys(&["sbatch -pl", "Tab"]);
    t.wait_for("an attached value completed", |s| s.lines().any(|l| l.trim_end() == "prompt$ sbatch -plong"));
    fresh_prompt(&t, "prompt$");
    t.keys(&["sbatch --gres=", "Tab"]);
    t.wait_for("the GRES completed", |s| s.lines().any(|l| l.trim_end() == "prompt$ sbatch --gres=gpu"));
    t.keys(&["C-u"]);
    // sacct -j offers the jobs that ended too, after those queued.
    let ended = c.sbatch(&["-J", "over", "--wrap", "true"]);
    c.wait_state(ended, &["COMPLETED"], common::T);
    fresh_prompt(&t, "prompt$");
    t.keys(&["sacct -j ", "Tab"]);
    let want_all = format!("{first} {second} {held} {ended}");
    t.wait_for("sacct's job ids, the ended one last", |s| {
        s.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want_all)
    });
    fresh_prompt(&t, "prompt$");
    t.keys(&["scancel ", "Tab"]);
    t.wait_for("scancel's job ids without it", |s| {
        s.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == want)
    });
    t.keys(&["C-u"]);

    // No daemon: the static completion answers (scancel's options, as clap writes them).
    c.kill_daemon();
    fresh_prompt(&t, "prompt$");
    t.keys(&["scancel ", "Tab"]);
    let screen = t.wait_for("scancel's options", |s| s.contains("--partition"));
    let listed = after_prompt(&screen, "prompt$ scancel");
    assert!(!listed.iter().any(|l| l.split_whitespace().any(|w| w == first.to_string())), "{screen}");
    fresh_prompt(&t, "prompt$");
    t.keys(&["sbatch -p ", "Tab"]);
    t.wait_for("file names", |s| s.contains("notes-file.txt"));
}

#[test]
fn zsh_completes_jobs_with_their_names_and_partitions() {
    if !installed("zsh") {
        common::skip("zsh_completes_jobs_with_their_names_and_partitions", "zsh is not installed");
        return;
    }
    let c = Cluster::start("2", PARTITIONS);
    let (first, second, held) = jobs(&c);
    let rc_dir = c.path("zdot");
    std::fs::create_dir_all(&rc_dir).unwrap();
    std::fs::write(
        rc_dir.join(".zshrc"),
        format!(
            "{env}PS1='prompt%% '\nfpath=({dir} $fpath)\nautoload -U compinit\ncompinit -u -D\n",
            env = environment(&c),
            dir = completions_dir("zsh").display()
        ),
    )
    .unwrap();
    let t = Tmux::new();
    t.start_command(&format!("ZDOTDIR={} exec zsh -i", rc_dir.display()));
    t.wait_for("a prompt", |s| s.contains("prompt%"));

    t.keys(&["scancel ", "Tab"]);
    let screen = t.wait_for("scancel's job ids with their names", |s| s.contains("later PENDING"));
    let listed = after_prompt(&screen, "prompt%");
    let position = |id: u32| {
        listed.iter().position(|l| l.starts_with(&format!("{id} "))).unwrap_or_else(|| panic!("{id}:\n{screen}"))
    };
    assert!(position(first) < position(second) && position(second) < position(held), "{screen}");
    assert!(listed[position(first)].contains("train RUNNING"), "{screen}");
    assert!(listed[position(held)].contains("later PENDING (JobHeldUser)"), "{screen}");
    fresh_prompt(&t, "prompt%");
    t.keys(&["sbatch -p l", "Tab"]);
    t.wait_for("the partition completed", |s| s.lines().any(|l| l.trim_end() == "prompt% sbatch -p long"));
    // A short option's attached value (`-plong`), as getopt reads it.
    fresh_prompt(&t, "prompt%");
    t.keys(&["sbatch -pl", "Tab"]);
    t.wait_for("an attached value completed", |s| s.lines().any(|l| l.trim_end() == "prompt% sbatch -plong"));
    fresh_prompt(&t, "prompt%");
    t.keys(&["squeue -psh", "Tab"]);
    t.wait_for("squeue's attached value completed", |s| s.lines().any(|l| l.trim_end() == "prompt% squeue -pshort"));
    fresh_prompt(&t, "prompt%");
    t.keys(&[&format!("sbatch -w{}", &NODE[..3]), "Tab"]);
    t.wait_for("an attached node name completed", |s| {
        s.lines().any(|l| l.trim_end() == format!("prompt% sbatch -w{NODE}"))
    });
}

#[test]
fn fish_completes_jobs_from_the_daemon() {
    if !installed("fish") {
        common::skip("fish_completes_jobs_from_the_daemon", "fish is not installed");
        return;
    }
    let c = Cluster::start("2", PARTITIONS);
    let (first, _, held) = jobs(&c);
    let dir = completions_dir("fish");
    let ask = |line: &str| {
        let script = format!(
            "source {}/scancel.fish; source {}/sbatch.fish; complete -C '{line}'",
            dir.display(),
            dir.display()
        );
        let out = c.program(Path::new("fish")).args(["--no-config", "-c", &script]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ids = ask("scancel ");
    let first_line = ids.lines().next().unwrap_or_default();
    assert_eq!(first_line, format!("{first}\ttrain RUNNING"), "{ids}");
    assert!(ids.contains(&format!("{held}\tlater PENDING")), "{ids}");
    let parts = ask("sbatch --partition=");
    assert!(parts.lines().any(|l| l.starts_with("--partition=long")), "{parts}");
    // A short option's attached value (`-plong`), as getopt reads it: fish puts `-p` back.
    let attached = ask("sbatch -pl");
    let values: Vec<&str> = attached.lines().map(|l| l.split('\t').next().unwrap_or(l)).collect();
    assert_eq!(values, ["-plong"], "{attached}");
    let attached = ask("sbatch -p");
    let values: Vec<&str> = attached.lines().map(|l| l.split('\t').next().unwrap_or(l)).collect();
    assert_eq!(values, ["-pshort", "-plong"], "the default first: {attached}");
    let nodes = ask(&format!("sbatch -w{}", &NODE[..3]));
    assert!(nodes.lines().any(|l| l.starts_with(&format!("-w{NODE}\t"))), "{nodes}");
}

#[test]
fn the_helper_never_starts_a_daemon_and_gives_up_on_one_that_does_not_answer() {
    let c = Cluster::configure("2", PARTITIONS);
    let out = c.run("slurmlet", &["__complete", "jobs", ""]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(common::stdout(&out), "", "no daemon: nothing offered");
    assert!(std::os::unix::net::UnixStream::connect(&c.socket).is_err(), "no daemon was started");

    // A daemon that takes the connection and never answers: nothing, within the deadline.
    std::fs::create_dir_all(c.socket.parent().unwrap()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(&c.socket).unwrap();
    let held = std::thread::spawn(move || listener.accept().map(|(conn, _)| conn));
    let started = std::time::Instant::now();
    let out = c.run("slurmlet", &["__complete", "partitions", ""]);
    let took = started.elapsed();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(common::stdout(&out), "");
    assert!(took < Duration::from_secs(3), "the helper waited {took:?}");
    drop(held.join().unwrap());
}
