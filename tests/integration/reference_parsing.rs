//! The `#SBATCH parsing rules` section of the captured Slurm transcripts
//! (`shared/reference/slurm-*/transcript.md`), replayed through the real binary: same scripts,
//! same output files.

use crate::common;
use common::*;
use std::time::Duration;

const LATE: &str = "#!/bin/bash\n#SBATCH -J early\necho \"name=$SLURM_JOB_NAME time_limit_from_env=$SBATCH_TIMELIMIT\"\n#SBATCH -J late_ignored\n";
const SPACED: &str = "#!/bin/bash\n# SBATCH -J with_space_ignored\n#SBATCH  --job-name=two_spaces\n#SBATCH --comment=\"a b c\"  # trailing comment\necho \"name=$SLURM_JOB_NAME\"\n";

fn output_of(c: &Cluster, id: u32) -> String {
    c.wait_state(id, &["COMPLETED"], Duration::from_secs(30));
    c.wait_file(&format!("slurm-{id}.out"), Duration::from_secs(10))
}

#[test]
fn directive_rules_match_the_slurm_transcript() {
    let c = Cluster::start("2", "");
    std::fs::write(c.path("late_directive.sh"), LATE).unwrap();
    std::fs::write(c.path("spaced_directive.sh"), SPACED).unwrap();

    // A directive after the first command is ignored.
    let id = c.sbatch(&["late_directive.sh"]);
    assert_eq!(output_of(&c, id), "name=early time_limit_from_env=\n");

    // `# SBATCH` is a comment, two spaces are fine, quotes group, a trailing comment is dropped.
    let id = c.sbatch(&["spaced_directive.sh"]);
    assert_eq!(output_of(&c, id), "name=two_spaces\n");
    assert_eq!(c.job(id).comment, "a b c");

    // The command line wins over the script.
    let id = c.sbatch(&["-J", "cli_wins", "late_directive.sh"]);
    assert_eq!(output_of(&c, id), "name=cli_wins time_limit_from_env=\n");
}
