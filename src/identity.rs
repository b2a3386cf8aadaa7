//! Who a job runs as: a user's ids, groups and passwd fields, and taking them on.
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
    /// uid.
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
    /// uid.
    pub uid: u32,
    /// Primary gid.
    pub gid: u32,
    /// Supplementary groups (the primary one included).
    pub groups: Vec<libc::gid_t>,
    /// Login name.
    pub name: String,
    /// Home directory.
    pub home: String,
    /// Login shell.
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
        if libc::setgroups(self.groups.len(), self.groups.as_ptr()) != 0
            || libc::setgid(self.gid) != 0
            || libc::setuid(self.uid) != 0
        {
            return Err(*libc::__errno_location());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_user_has_a_name_and_its_primary_group() {
        let me = RunAs { uid: crate::paths::uid(), gid: crate::paths::gid() };
        let id = Identity::lookup(me).unwrap();
        assert_eq!(id.name, crate::paths::user_name(me.uid));
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
        let Some(uid) = crate::paths::user_uid("nobody") else { return };
        let nobody = Identity::lookup(RunAs { uid, gid: uid }).unwrap();
        // SAFETY: as above.
        let inside = nobody.on_thread(|| unsafe { libc::geteuid() }).unwrap();
        assert_eq!(inside, uid);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::geteuid() }, 0);
    }
}
