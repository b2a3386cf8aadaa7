//! The multicall entry point: `argv[0]` picks the command (`sbatch`, `squeue`, …, `slurmletd`).

/// The static release binary's allocator (see Cargo.toml).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = slurmlet::cli::main_with(std::env::args_os().collect());
    std::process::exit(code);
}
