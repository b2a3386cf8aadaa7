//! Options whose value is optional in Slurm (getopt's `optional_argument`), through the real
//! binary and daemon: the values Slurm accepts are accepted, attached with `=` to the long name
//! or directly to the short one (`-I5`), and the values it refuses get its words.

use crate::common;
use common::*;

#[test]
fn get_user_env_takes_slurms_timeout_and_mode() {
    let c = Cluster::start("0", "");
    // pysqa's documented Slurm template, and many site templates, have this line.
    std::fs::write(c.path("template.sh"), "#!/bin/sh\n#SBATCH --get-user-env=L\n#SBATCH -J tpl\ntrue\n").unwrap();
    let o = c.run("sbatch", &["--parsable", "template.sh"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "done, so nothing is said");
    let id: u32 = stdout(&o).trim().parse().unwrap();
    assert_eq!(c.job(id).name, "tpl");

    for value in ["--get-user-env", "--get-user-env=S", "--get-user-env=10", "--get-user-env=10L", "--get-user-env=l"] {
        let o = c.run("sbatch", &[value, "--wrap", "true"]);
        assert_eq!(o.status.code(), Some(0), "{value}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{value}");
    }
    let o = c.cmd("sbatch").args(["--wrap", "true"]).env("SBATCH_GET_USER_ENV", "30S").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "the input variable too: {}", stderr(&o));

    for value in ["--get-user-env=X", "--get-user-env=10X", "--get-user-env=abc"] {
        let o = c.run("sbatch", &[value, "--wrap", "true"]);
        assert_eq!(o.status.code(), Some(255), "{value}");
        assert_eq!(stderr(&o), "sbatch: error: Invalid --get-user-env specification\n", "{value}");
    }
}

#[test]
fn short_options_take_an_attached_optional_value_and_ignored_values_are_ignored() {
    let c = Cluster::start("0", "");
    // getopt reads `-koff` as --no-kill=off (not -k -o ff), `-I5` as --immediate=5 and
    // `-K1` as --kill-on-bad-exit=1.
    let o = c.run("srun", &["-koff", "echo", "hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "hi\n");
    assert!(!c.path("ff").exists(), "-koff is not -k -o ff");
    for args in
        [&["-I5", "echo", "hi"][..], &["-K1", "echo", "hi"], &["-vK0", "echo", "hi"], &["--immediate=5", "echo", "hi"]]
    {
        let o = c.run("srun", args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "hi\n", "{args:?}");
    }
    // Slurm declares these with an optional value, and ignores it.
    for args in [&["--overlap=yes", "echo", "hi"][..], &["--external-launcher=1", "echo", "hi"]] {
        let o = c.run("srun", args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "hi\n", "{args:?}");
    }
    // After the program, words are its own.
    let o = c.run("srun", &["echo", "-I5", "-koff"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "-I5 -koff\n");
}
