//! Who a job runs as: a user's ids, groups and passwd fields, and taking them on; and the
//! user and group databases' names and ids as the commands and the daemon print and read them
//! (this process's own ids, a uid's name, a name's uid).
//!
//! The system daemon and the supervisors run as root; everything done for a job's owner —
//! creating its output files, checking its paths, running its programs — is done with the
//! owner's credentials, so that the owner's permissions and quotas apply.

use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use thiserror::Error;

/// A user that cannot be taken on.
#[derive(Debug, Error)]
pub enum IdentityError {
    /// No passwd entry for the uid.
    #[error("user {0} does not exist on this machine")]
    NoSuchUser(u32),
    /// The group list could not be read.
    #[error("cannot read the groups of user {0}")]
    Groups(String),
    /// The switch itself failed.
    #[error("cannot take on the credentials of user {name} (uid {uid}): {source}")]
    Switch {
        /// User name.
        name: String,
        /// uid.
        uid: u32,
        /// Why.
        source: std::io::Error,
    },
}

/// The owner a job's processes run as: what `SO_PEERCRED` said at submit time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunAs {
    /// The user the processes become, who owns what they create.
    pub uid: u32,
    /// Primary gid (the submitter's, which `newgrp` may have changed).
    pub gid: u32,
}

impl RunAs {
    /// The owner to switch to when the caller is root and the owner is not; `None` when
    /// there is nothing to switch (a per-user daemon, or root's own job).
    pub fn when_needed(uid: u32, gid: u32) -> Option<RunAs> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        (root && uid != 0).then_some(RunAs { uid, gid })
    }
}

/// A user with the groups `initgroups` would give, and the passwd fields a job's
/// environment gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user, as the passwd database numbers them.
    pub uid: u32,
    /// The passwd entry's group, which files the user creates take unless told otherwise.
    pub gid: u32,
    /// Supplementary groups (the primary one included).
    pub groups: Vec<libc::gid_t>,
    /// The user's name, which a job sees as `USER` and `LOGNAME`.
    pub name: String,
    /// The passwd entry's home directory, which a job sees as `HOME`.
    pub home: String,
    /// The passwd entry's shell, which a job sees as `SHELL`.
    pub shell: String,
}

impl Identity {
    /// Looks `who` up in the user and group databases.
    pub fn lookup(who: RunAs) -> Result<Identity, IdentityError> {
        let mut buf = vec![0u8; 16384];
        // SAFETY: the passwd record and buffer live across the call; the result pointer is
        // read only on success, and its strings point into `buf`.
        let (name, home, shell) = unsafe {
            let mut pw: libc::passwd = std::mem::zeroed();
            let mut res: *mut libc::passwd = std::ptr::null_mut();
            if libc::getpwuid_r(who.uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut res) != 0 || res.is_null() {
                return Err(IdentityError::NoSuchUser(who.uid));
            }
            let text = |p: *const libc::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            (text(pw.pw_name), text(pw.pw_dir), text(pw.pw_shell))
        };
        let groups = group_list(&name, who.gid)?;
        Ok(Identity { uid: who.uid, gid: who.gid, groups, name, home, shell })
    }

    /// Sets the user's `USER` and `LOGNAME` in `env` (a job never runs under another
    /// name), and `HOME` and `SHELL` where the job's environment has none.
    pub fn set_env(&self, env: &mut Vec<String>) {
        let has = |env: &[String], name: &str| env.iter().any(|e| e.split('=').next() == Some(name));
        env.retain(|e| !matches!(e.split('=').next(), Some("USER" | "LOGNAME")));
        env.push(format!("USER={}", self.name));
        env.push(format!("LOGNAME={}", self.name));
        if !has(env, "HOME") {
            env.push(format!("HOME={}", self.home));
        }
        if !has(env, "SHELL") && !self.shell.is_empty() {
            env.push(format!("SHELL={}", self.shell));
        }
    }

    /// Runs `work` on a thread of its own that has this user's credentials, and returns its
    /// result. Linux keeps credentials per thread and the raw system calls change only the
    /// calling thread's (glibc's wrappers would change every thread's), so no other thread of
    /// the process ever runs as the user, and the thread's credentials end with it.
    pub fn on_thread<T: Send>(&self, work: impl FnOnce() -> T + Send) -> Result<T, IdentityError> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: the raw calls read the group list only; they change this thread alone.
                let rc = unsafe {
                    let mut rc = libc::syscall(libc::SYS_setgroups, self.groups.len(), self.groups.as_ptr());
                    if rc == 0 {
                        rc = libc::syscall(libc::SYS_setresgid, self.gid, self.gid, self.gid);
                    }
                    if rc == 0 {
                        rc = libc::syscall(libc::SYS_setresuid, self.uid, self.uid, self.uid);
                    }
                    rc
                };
                if rc != 0 {
                    return Err(self.switch_error(std::io::Error::last_os_error()));
                }
                Ok(work())
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Becomes this user for the rest of the process's life: groups, gid, then uid. Returns
    /// the errno of the call that failed.
    ///
    /// # Safety
    ///
    /// To be called only in a child right after `fork` (it makes only async-signal-safe
    /// calls, on memory prepared before the fork).
    pub unsafe fn become_for_good(&self) -> Result<(), i32> {
        // SAFETY: setgroups reads `groups.len()` gids from the vector, filled before the
        // fork; setgid and setuid take numbers; `__errno_location` points at this thread's
        // errno. In the child of a fork there is one thread, so glibc's change of every
        // thread's ids has no other thread to signal.
        unsafe {
            if libc::setgroups(self.groups.len(), self.groups.as_ptr()) != 0
                || libc::setgid(self.gid) != 0
                || libc::setuid(self.uid) != 0
            {
                return Err(*libc::__errno_location());
            }
        }
        Ok(())
    }

    /// Makes `cmd` run as `owner` when the daemon acts for another user (see
    /// [`RunAs::when_needed`]): the child takes the owner's groups, gid and uid before it
    /// executes the program. Nothing changes when there is nobody to switch to.
    pub fn run_command_as(cmd: &mut std::process::Command, owner: RunAs) -> Result<(), IdentityError> {
        use std::os::unix::process::CommandExt;
        let Some(owner) = RunAs::when_needed(owner.uid, owner.gid) else { return Ok(()) };
        let user = Identity::lookup(owner)?;
        // SAFETY: the closure runs in the child right after fork; `become_for_good` makes
        // only async-signal-safe calls on memory prepared before the fork.
        unsafe {
            cmd.pre_exec(move || user.become_for_good().map_err(std::io::Error::from_raw_os_error));
        }
        Ok(())
    }

    fn switch_error(&self, source: std::io::Error) -> IdentityError {
        IdentityError::Switch { name: self.name.clone(), uid: self.uid, source }
    }
}

/// `getgrouplist`: the groups of `name`, with `gid` first.
fn group_list(name: &str, gid: u32) -> Result<Vec<libc::gid_t>, IdentityError> {
    let cname = CString::new(name).map_err(|_| IdentityError::Groups(name.to_string()))?;
    let mut groups: Vec<libc::gid_t> = vec![0; 64];
    for _ in 0..8 {
        let mut n = groups.len() as libc::c_int;
        // SAFETY: the list has room for `n` entries; getgrouplist writes at most that many
        // and sets `n` to the number it needs.
        let rc = unsafe { libc::getgrouplist(cname.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if rc >= 0 {
            groups.truncate(n as usize);
            return Ok(groups);
        }
        groups.resize((n as usize).max(groups.len() * 2), 0);
    }
    Err(IdentityError::Groups(name.to_string()))
}

/// The current user's uid.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The current user's primary gid.
pub fn gid() -> u32 {
    // SAFETY: getgid has no preconditions and cannot fail.
    unsafe { libc::getgid() }
}

/// The name of a uid, or the number as text.
pub fn user_name(uid: u32) -> String {
    lookup_name(uid, false)
}

/// The name of a gid, or the number as text.
pub fn group_name(gid: u32) -> String {
    lookup_name(gid, true)
}

/// Names already looked up, as ((is group, id), name): a listing of many jobs asks for the
/// same few users over and over, and each NSS lookup reads files.
static NAMES: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<(bool, u32), String>>> =
    std::sync::OnceLock::new();

fn lookup_name(id: u32, group: bool) -> String {
    let names = NAMES.get_or_init(Default::default);
    if let Some(name) = names.lock().ok().and_then(|n| n.get(&(group, id)).cloned()) {
        return name;
    }
    let name = lookup_name_uncached(id, group);
    if let Ok(mut n) = names.lock() {
        n.insert((group, id), name.clone());
    }
    name
}

fn lookup_name_uncached(id: u32, group: bool) -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: all pointers refer to live, correctly sized buffers; the result pointer is only
    // read when the call reports success.
    unsafe {
        if group {
            let mut grp: libc::group = std::mem::zeroed();
            let mut res: *mut libc::group = std::ptr::null_mut();
            if libc::getgrgid_r(id, &mut grp, buf.as_mut_ptr().cast(), buf.len(), &mut res) == 0 && !res.is_null() {
                return std::ffi::CStr::from_ptr(grp.gr_name).to_string_lossy().into_owned();
            }
        } else {
            let mut pw: libc::passwd = std::mem::zeroed();
            let mut res: *mut libc::passwd = std::ptr::null_mut();
            if libc::getpwuid_r(id, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut res) == 0 && !res.is_null() {
                return std::ffi::CStr::from_ptr(pw.pw_name).to_string_lossy().into_owned();
            }
        }
    }
    id.to_string()
}

/// The uid of a user name (or a numeric uid), if it exists.
pub fn user_uid(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    user_ids(name).map(|(uid, _)| uid)
}

/// The gid of a group name (or a numeric gid), if it exists.
pub fn group_gid(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    let cname = std::ffi::CString::new(name).ok()?;
    let mut buf = vec![0u8; 4096];
    // SAFETY: all pointers refer to live, correctly sized buffers; the result is only read
    // when the call reports success.
    unsafe {
        let mut grp: libc::group = std::mem::zeroed();
        let mut res: *mut libc::group = std::ptr::null_mut();
        if libc::getgrnam_r(cname.as_ptr(), &mut grp, buf.as_mut_ptr().cast(), buf.len(), &mut res) == 0
            && !res.is_null()
        {
            return Some(grp.gr_gid);
        }
    }
    None
}

/// The uid and primary gid of the passwd entry of user `name` (a name, never a number).
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut buf = vec![0u8; 4096];
    // SAFETY: as in lookup_name.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut res: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwnam_r(cname.as_ptr(), &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut res) == 0
            && !res.is_null()
        {
            return Some((pw.pw_uid, pw.pw_gid));
        }
    }
    None
}

/// The name of the passwd entry of `uid`, if it has one.
pub fn user_name_of(uid: u32) -> Option<String> {
    let name = user_name(uid);
    (name != uid.to_string() || user_ids(&name).is_some_and(|(u, _)| u == uid)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_user_has_a_name_and_its_primary_group() {
        let me = RunAs { uid: uid(), gid: gid() };
        let id = Identity::lookup(me).unwrap();
        assert_eq!(id.name, user_name(me.uid));
        assert!(id.groups.contains(&me.gid), "{:?}", id.groups);
    }

    #[test]
    fn environment_names_the_user_and_keeps_the_jobs_home() {
        let id = Identity {
            uid: 1000,
            gid: 1000,
            groups: vec![1000],
            name: "alice".into(),
            home: "/home/alice".into(),
            shell: "/bin/zsh".into(),
        };
        let mut env = vec!["USER=root".to_string(), "HOME=/scratch/alice".to_string()];
        id.set_env(&mut env);
        assert!(env.contains(&"USER=alice".to_string()) && env.contains(&"LOGNAME=alice".to_string()));
        assert!(!env.contains(&"USER=root".to_string()));
        assert!(env.contains(&"HOME=/scratch/alice".to_string()) && env.contains(&"SHELL=/bin/zsh".to_string()));
    }

    #[test]
    fn nobody_on_a_thread_leaves_the_process_as_it_was() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return; // Only root can take on another user.
        }
        let Some(uid) = user_uid("nobody") else { return };
        let nobody = Identity::lookup(RunAs { uid, gid: uid }).unwrap();
        // SAFETY: as above.
        let inside = nobody.on_thread(|| unsafe { libc::geteuid() }).unwrap();
        assert_eq!(inside, uid);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::geteuid() }, 0);
    }
}
