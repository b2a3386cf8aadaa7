//! How the planner reaches a node: ssh by default, or any command that runs what follows it
//! on the node (`ip netns exec {node}`, `nsenter …`, a container's `exec`), named with
//! `--via`. Every call has a deadline, and a node's name is checked before it is put on a
//! command line, so that a name cannot become an option of ssh.

use super::shell;
use crate::program::{self, Finished, Limits, ProgramError};
use std::process::Command;
use std::time::Duration;

/// The transport when none is named: ssh that never asks for a password and gives up on a
/// node it cannot reach within ten seconds.
pub const DEFAULT: &str = "ssh -o BatchMode=yes -o ConnectTimeout=10 {node}";

/// The most a node's answer may hold.
const MAX_OUTPUT: usize = 1 << 20;

/// A transport that cannot be used, or a call through it that failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// `--via` cannot be split into words, or is empty.
    #[error("--via {0:?}: {1}")]
    BadCommand(String, String),
    /// A node's name that is not a host's.
    #[error("{0:?} is not a host name (letters, digits, '-', '_' and '.', not starting with '-')")]
    BadNode(String),
    /// The command could not be run or ran past its deadline.
    #[error("{node}: {source}")]
    Program {
        /// The node.
        node: String,
        /// Why.
        source: ProgramError,
    },
}

/// How commands reach a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    /// The words before the command, `{node}` standing for the node's name.
    words: Vec<String>,
    /// Whether it is ssh, which joins the command's words for the remote shell: they are
    /// quoted into one.
    ssh: bool,
}

/// Whether `name` may be put on a command line as a host: it cannot be an option, and holds
/// nothing a shell or ssh reads specially.
pub fn valid_node_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with(['-', '.'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Transport {
    /// The transport `--via TEXT` names: its words, with `{node}` where the node's name
    /// goes (after the last word when no word holds it).
    pub fn parse(text: &str) -> Result<Transport, TransportError> {
        let mut words = shell::split(text).map_err(|e| TransportError::BadCommand(text.into(), e.to_string()))?;
        let Some(first) = words.first() else {
            return Err(TransportError::BadCommand(text.into(), "names no command".into()));
        };
        let ssh = std::path::Path::new(first).file_name().is_some_and(|n| n == "ssh");
        if !words.iter().any(|w| w.contains("{node}")) {
            words.push("{node}".into());
        }
        Ok(Transport { words, ssh })
    }

    /// Whether this is ssh, as a lab's nodes are normally reached.
    pub fn is_ssh(&self) -> bool {
        self.ssh
    }

    /// How the report names it.
    pub fn describe(&self) -> String {
        let text = shell::join(&self.words);
        if self.ssh {
            format!("ssh ({text})")
        } else {
            format!("{text} (not ssh: each command runs on the node through it)")
        }
    }

    /// The command that runs `argv` on `node`.
    pub fn command(&self, node: &str, argv: &[String]) -> Result<Command, TransportError> {
        if !valid_node_name(node) {
            return Err(TransportError::BadNode(node.into()));
        }
        let words: Vec<String> = self.words.iter().map(|w| w.replace("{node}", node)).collect();
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        if self.ssh {
            cmd.arg("--").arg(shell::join(argv));
        } else {
            cmd.args(argv);
        }
        Ok(cmd)
    }

    /// Runs `argv` on `node` with `input` on its standard input, within `deadline`.
    pub fn run(
        &self,
        node: &str,
        argv: &[String],
        input: Option<&[u8]>,
        deadline: Duration,
    ) -> Result<Finished, TransportError> {
        let mut cmd = self.command(node, argv)?;
        let failed = |source| TransportError::Program { node: node.into(), source };
        let limits = Limits { deadline, max_output: MAX_OUTPUT };
        let Some(input) = input else { return program::run(&mut cmd, None, limits).map_err(failed) };
        // The input (a whole binary) is more than a pipe holds: a thread writes it while the
        // output is read. When the deadline kills the command, the pipe breaks and the
        // thread ends.
        program::prepare(&mut cmd, true);
        let name = program::name_of(&cmd);
        let mut child = cmd.spawn().map_err(|source| failed(ProgramError::Start { program: name.clone(), source }))?;
        let stdin = child.stdin.take();
        let input = input.to_vec();
        std::thread::spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = std::io::Write::write_all(&mut stdin, &input);
            }
        });
        program::finish(child, &name, None, limits).map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(cmd: &Command) -> Vec<String> {
        std::iter::once(cmd.get_program()).chain(cmd.get_args()).map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn ssh_gets_the_command_as_one_quoted_word() {
        let t = Transport::parse(DEFAULT).unwrap();
        assert!(t.is_ssh());
        let cmd = t.command("n1", &["echo".into(), "a b".into()]).unwrap();
        assert_eq!(argv(&cmd), ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "n1", "--", "echo 'a b'"]);
    }

    #[test]
    fn another_command_gets_the_words_as_they_are_and_the_node_where_it_says() {
        let t = Transport::parse("ip netns exec {node}").unwrap();
        assert!(!t.is_ssh());
        let cmd = t.command("n2", &["echo".into(), "a b".into()]).unwrap();
        assert_eq!(argv(&cmd), ["ip", "netns", "exec", "n2", "echo", "a b"]);
        let t = Transport::parse("ssh -p 2222").unwrap();
        assert_eq!(argv(&t.command("n3", &["true".into()]).unwrap()), ["ssh", "-p", "2222", "n3", "--", "true"]);
    }

    #[test]
    fn a_node_name_cannot_become_an_option_or_a_second_command() {
        let t = Transport::parse(DEFAULT).unwrap();
        for name in ["-oProxyCommand=touch /tmp/x", "n1;reboot", "n1 n2", "", "$(id)", ".hidden"] {
            assert!(matches!(t.command(name, &[]), Err(TransportError::BadNode(_))), "{name}");
        }
    }

    #[test]
    fn an_empty_or_unmatched_via_is_refused() {
        assert!(matches!(Transport::parse("  "), Err(TransportError::BadCommand(..))));
        assert!(matches!(Transport::parse("ssh 'x"), Err(TransportError::BadCommand(..))));
    }

    #[test]
    fn a_node_that_does_not_answer_in_time_is_given_up() {
        let t = Transport::parse("env NODE={node}").unwrap();
        let err = t.run("n1", &["sleep".into(), "5".into()], None, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(&err, TransportError::Program { source, .. } if source.timed_out()), "{err}");
        let done = t.run("n1", &["sh".into(), "-c".into(), "echo $NODE".into()], None, Duration::from_secs(5)).unwrap();
        assert_eq!(done.stdout_text(), "n1\n");
    }
}
