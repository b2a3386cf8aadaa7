//! The texts `strerror` gives for the errors a forked child commonly meets (an `execve` or
//! a `chdir` that fails), in static memory: between `fork` and `execve` the child may call
//! only async-signal-safe functions, which `strerror` is not.

/// `strerror`'s text for `errno`, for the errors an `execve` or `chdir` commonly fails with.
pub fn known_text(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::E2BIG => "Argument list too long",
        libc::EACCES => "Permission denied",
        libc::EAGAIN => "Resource temporarily unavailable",
        libc::EFAULT => "Bad address",
        libc::EINVAL => "Invalid argument",
        libc::EIO => "Input/output error",
        libc::EISDIR => "Is a directory",
        libc::ELIBBAD => "Accessing a corrupted shared library",
        libc::ELOOP => "Too many levels of symbolic links",
        libc::EMFILE => "Too many open files",
        libc::ENAMETOOLONG => "File name too long",
        libc::ENFILE => "Too many open files in system",
        libc::ENOENT => "No such file or directory",
        libc::ENOEXEC => "Exec format error",
        libc::ENOMEM => "Cannot allocate memory",
        libc::ENOTDIR => "Not a directory",
        libc::EPERM => "Operation not permitted",
        libc::ETXTBSY => "Text file busy",
        _ => return None,
    })
}

/// Writes the text of `errno` to `fd`: [`known_text`]'s, or `errno N` for another error.
/// Async-signal-safe: no allocation, no lock, only `write`.
pub fn write_text(fd: libc::c_int, errno: i32) {
    match known_text(errno) {
        // SAFETY: writes from a static string of the given length.
        Some(text) => unsafe {
            libc::write(fd, text.as_ptr().cast(), text.len());
        },
        None => {
            let mut buf = [0u8; 20];
            let len = decimal_after(b"errno ", errno, &mut buf);
            // SAFETY: writes `len` bytes of a stack buffer at least that long.
            unsafe { libc::write(fd, buf.as_ptr().cast(), len) };
        }
    }
}

/// Puts `prefix` then the decimal digits of `n` (a `-` first when negative) in `buf`;
/// their length.
fn decimal_after(prefix: &[u8], n: i32, buf: &mut [u8; 20]) -> usize {
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut len = prefix.len();
    if n < 0 {
        buf[len] = b'-';
        len += 1;
    }
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut rest = n.unsigned_abs();
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for d in digits[..count].iter().rev() {
        buf[len] = *d;
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_are_those_strerror_gives() {
        let errnos = [
            libc::E2BIG,
            libc::EACCES,
            libc::EAGAIN,
            libc::EFAULT,
            libc::EINVAL,
            libc::EIO,
            libc::EISDIR,
            libc::ELIBBAD,
            libc::ELOOP,
            libc::EMFILE,
            libc::ENAMETOOLONG,
            libc::ENFILE,
            libc::ENOENT,
            libc::ENOEXEC,
            libc::ENOMEM,
            libc::ENOTDIR,
            libc::EPERM,
            libc::ETXTBSY,
        ];
        for errno in errnos {
            let strerror = crate::sys::c_error_text(&std::io::Error::from_raw_os_error(errno));
            assert_eq!(known_text(errno), Some(strerror.as_str()), "errno {errno}");
        }
        assert_eq!(known_text(libc::ECHILD), None);
    }

    /// What [`write_text`] writes for `errno`, read back through a pipe.
    fn written(errno: i32) -> String {
        use std::io::Read;
        let (r, w) = crate::sys::pipe().unwrap();
        write_text(std::os::fd::AsRawFd::as_raw_fd(&w), errno);
        drop(w);
        let mut out = String::new();
        std::fs::File::from(r).read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn known_errors_are_written_as_text_and_others_as_numbers() {
        assert_eq!(written(libc::ENOENT), "No such file or directory");
        assert_eq!(written(libc::ENOEXEC), "Exec format error");
        assert_eq!(written(libc::ECHILD), format!("errno {}", libc::ECHILD));
        assert_eq!(written(1234567890), "errno 1234567890");
        assert_eq!(written(i32::MIN), "errno -2147483648");
    }
}
