//! Small wrappers over the Linux calls the daemon, the job supervisor and the commands need,
//! one file for each kind of thing they act on; everything is named from here
//! (`crate::sys::pipe`), wherever it lives:
//!
//! * `process`: pidfds, signals to processes and groups, what `/proc` says of a process;
//! * `clock`: the monotonic instant of a UNIX time, local broken-down times, local
//!   midnight, weekdays and local times;
//! * `files`: atomic writes, umasks, private directories;
//! * `fd`: pipes, socket pairs, waiting on descriptors, their flags and limit;
//! * `fd_passing`: descriptors sent with a message over a Unix socket;
//! * `signal_fd`: signals read from a signalfd;
//! * `terminal`: pseudo-terminals;
//!
//! and here, what fits none of them: C's error text, the allocator's tuning, and a number
//! written without allocating.

mod clock;
mod fd;
mod fd_passing;
mod files;
mod process;
mod signal_fd;
mod terminal;

pub use clock::{checked_local_tm, format_local_time, instant_at, local_midnight, local_tm, local_weekday, now};
pub use fd::{
    close_inherited_on_exec, open_files_limit, pipe, poll_readable, seqpacket_pair, set_cloexec, set_nonblocking,
    wait_closed, wait_readable,
};
pub use fd_passing::{recv_with_fds, send_with_fds, MAX_FDS};
pub use files::{create_private_dir, current_umask, set_thread_umask, write_atomically};
pub use process::{
    children, group_members, is_zombie, kill_group, kill_pid, pidfd_open, pidfd_send_signal, process_group,
    process_start_ticks, read_stat_fields, reap, session_members, stat_fields, wait_exit, wait_pidfd,
};
pub use signal_fd::SignalFd;
pub use terminal::{openpty, set_winsize};

use std::io;

/// An error as C programs print it (`%m`, `strerror`): without Rust's ` (os error N)`.
pub fn c_error_text(e: &io::Error) -> String {
    let full = e.to_string();
    match full.rfind(" (os error ") {
        Some(at) => full[..at].to_string(),
        None => full,
    }
}

/// Writes `n` in decimal at `at` followed by a NUL (at most 11 bytes), with no allocation:
/// for a child between `fork` and `execve`.
///
/// # Safety
///
/// `at` must point at 11 writable bytes.
pub unsafe fn write_decimal(at: *mut u8, mut n: u32) {
    let mut tmp = [0u8; 10];
    let mut len = 0;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // SAFETY: a u32 has at most ten digits, so `len` is at most 10 and the writes stay in
    // the 11 bytes the caller promised at `at`.
    unsafe {
        for i in 0..len {
            *at.add(i) = tmp[len - 1 - i];
        }
        *at.add(len) = 0;
    }
}

/// Keeps the daemon's memory from growing with its threads. glibc gives each thread that
/// allocates its own arena, up to eight per CPU, and an arena keeps what was freed in it:
/// large replies built on the runtime's many blocking threads left several copies of their
/// size resident. Two arenas serve a daemon of two worker threads; and buffers of a MiB or
/// more are mapped on their own and given back when freed (a fixed threshold also stops
/// glibc raising it after the first large buffer is freed).
pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets allocator parameters; it is called before other threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
