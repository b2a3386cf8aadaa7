//! The two `bpf(2)` commands the device filter needs, with the parts of `union bpf_attr`
//! they read.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `BPF_PROG_LOAD`.
const PROG_LOAD: libc::c_long = 5;
/// `BPF_PROG_ATTACH`.
const PROG_ATTACH: libc::c_long = 8;
/// `BPF_PROG_TYPE_CGROUP_DEVICE`.
const PROG_TYPE_CGROUP_DEVICE: u32 = 15;
/// `BPF_CGROUP_DEVICE`, the attach type.
const CGROUP_DEVICE: u32 = 6;
/// `BPF_F_ALLOW_MULTI`: the group's programs and those of the groups above it all run.
const ALLOW_MULTI: u32 = 1 << 1;
/// The verifier log's size for a failed load: its last line says why.
pub const LOG_SIZE: usize = 64 * 1024;

/// The part of `union bpf_attr` that `BPF_PROG_LOAD` reads, up to
/// `expected_attach_type` (Linux 4.17); the kernel takes the fields after it as zero.
#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// The part of `union bpf_attr` that `BPF_PROG_ATTACH` reads, up to `replace_bpf_fd`.
#[repr(C)]
#[derive(Default)]
struct ProgAttach {
    target_fd: u32,
    attach_bpf_fd: u32,
    attach_type: u32,
    attach_flags: u32,
    replace_bpf_fd: u32,
}

// The kernel's layout (`__aligned_u64` fields at multiples of 8), on every target.
const _: () = {
    assert!(std::mem::offset_of!(ProgLoad, insns) == 8);
    assert!(std::mem::offset_of!(ProgLoad, license) == 16);
    assert!(std::mem::offset_of!(ProgLoad, log_buf) == 32);
    assert!(std::mem::offset_of!(ProgLoad, prog_name) == 48);
    assert!(std::mem::offset_of!(ProgLoad, expected_attach_type) == 68);
    assert!(std::mem::size_of::<ProgLoad>() == 72);
    assert!(std::mem::size_of::<ProgAttach>() == 20);
};

/// Runs `bpf(cmd, attr, sizeof attr)`.
fn bpf<T>(cmd: libc::c_long, attr: &T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, initialised `#[repr(C)]` prefix of `union bpf_attr` of
    // the size given; every pointer in it points at memory that outlives the call (the
    // callers' borrows), and the kernel writes only through a log buffer given with its
    // length.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *const T, std::mem::size_of::<T>() as libc::c_uint) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

/// Loads `insns` (encoded `struct bpf_insn`s) as a cgroup device program; with `log`,
/// the verifier writes its log there.
pub fn load_device_program(insns: &[[u8; 8]], log: Option<&mut [u8]>) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut name = [0u8; 16];
    name[..13].copy_from_slice(b"slurmlet_devs");
    let mut attr = ProgLoad {
        prog_type: PROG_TYPE_CGROUP_DEVICE,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as usize as u64,
        license: license.as_ptr() as usize as u64,
        prog_name: name,
        ..ProgLoad::default()
    };
    if let Some(log) = log {
        attr.log_level = 1;
        attr.log_size = log.len() as u32;
        attr.log_buf = log.as_mut_ptr() as usize as u64;
    }
    let fd = bpf(PROG_LOAD, &attr)?;
    // SAFETY: a successful BPF_PROG_LOAD returns a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Attaches device program `program` to the cgroup whose directory `group` is open.
pub fn attach_device_program(group: &impl AsRawFd, program: &OwnedFd) -> io::Result<()> {
    let attr = ProgAttach {
        target_fd: group.as_raw_fd() as u32,
        attach_bpf_fd: program.as_raw_fd() as u32,
        attach_type: CGROUP_DEVICE,
        attach_flags: ALLOW_MULTI,
        ..ProgAttach::default()
    };
    bpf(PROG_ATTACH, &attr).map(|_| ())
}
