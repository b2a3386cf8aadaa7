//! The multicall entry point: `argv[0]` picks the command (`sbatch`, `squeue`, …, `slurmletd`).

fn main() {
    let code = slurmlet::cli::main_with(std::env::args_os().collect());
    std::process::exit(code);
}
