//! The floor every spawn bench compares against: `posix_spawn` of a program and `waitpid`, with
//! no wrapper at all, from the bench process itself.

use std::ffi::CString;

#[allow(unsafe_code, reason = "posix_spawn and waitpid without any wrapper, as the floor")]
mod sys {
    use std::ffi::CString;

    pub(crate) fn posix_spawn_wait(path: &CString) {
        let argv = [path.as_ptr().cast_mut(), std::ptr::null_mut()];
        let envp = [std::ptr::null_mut()];
        let mut pid = 0;
        // SAFETY: `path`, `argv` and `envp` are valid NULL-terminated C arrays for the call;
        // NULL file actions and attributes are allowed.
        let rc = unsafe {
            libc::posix_spawn(&mut pid, path.as_ptr(), std::ptr::null(), std::ptr::null(), argv.as_ptr(), envp.as_ptr())
        };
        assert_eq!(rc, 0, "posix_spawn failed");
        wait(pid);
    }

    pub(crate) fn wait(pid: libc::pid_t) {
        let mut status = 0;
        // SAFETY: `pid` is our own child and `status` a valid out-parameter.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(rc, pid, "waitpid failed");
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child failed: {status}");
    }
}

/// `waitpid` for a child that must exit with status 0.
pub(crate) fn wait(pid: libc::pid_t) {
    sys::wait(pid);
}

/// `posix_spawn` of `path` with no file actions or attributes, then `waitpid`.
pub(crate) fn posix_spawn_wait(path: &CString) {
    sys::posix_spawn_wait(path);
}
