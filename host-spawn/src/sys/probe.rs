//! Probing this libc for the `posix_spawn` file actions that not every version has
//! (`addchdir_np`, `addclosefrom_np`): with `dlsym` in a dynamically linked binary, by name at
//! link time in a statically linked one (`crt-static`, as the installed build is), which has no
//! dynamic symbol table for `dlsym` to search and whose libc is the one it was linked with.

use std::ffi::{c_char, c_int};

/// What this libc's `posix_spawn` can express.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PosixSpawnSupport {
    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29, musl 1.1.24).
    pub(crate) chdir: bool,
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    pub(crate) closefrom: bool,
}

type AddChdirFn = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const c_char) -> c_int;
type AddClosefromFn = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, c_int) -> c_int;

#[cfg(not(target_feature = "crt-static"))]
pub(super) use self::dynamic::{addchdir_fn, addclosefrom_fn};
#[cfg(target_feature = "crt-static")]
pub(super) use self::linked::{addchdir_fn, addclosefrom_fn};

/// The functions looked up in the libraries loaded with the binary.
#[cfg(not(target_feature = "crt-static"))]
mod dynamic {
    use std::ffi::{CStr, c_void};
    use std::mem;
    use std::sync::OnceLock;

    use super::{AddChdirFn, AddClosefromFn};

    /// Looks `name` up in the libraries already loaded, as std's `weak!` does.
    fn lookup(name: &CStr) -> Option<*mut c_void> {
        // SAFETY: `name` is NUL-terminated; RTLD_DEFAULT searches the global symbol scope.
        let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        (!sym.is_null()).then_some(sym)
    }

    pub(in super::super) fn addchdir_fn() -> Option<AddChdirFn> {
        static FN: OnceLock<Option<AddChdirFn>> = OnceLock::new();
        *FN.get_or_init(|| {
            lookup(c"posix_spawn_file_actions_addchdir_np").map(|sym| {
                // SAFETY: glibc and musl declare this symbol with exactly the `AddChdirFn` signature.
                unsafe { mem::transmute::<*mut c_void, AddChdirFn>(sym) }
            })
        })
    }

    pub(in super::super) fn addclosefrom_fn() -> Option<AddClosefromFn> {
        static FN: OnceLock<Option<AddClosefromFn>> = OnceLock::new();
        *FN.get_or_init(|| {
            lookup(c"posix_spawn_file_actions_addclosefrom_np").map(|sym| {
                // SAFETY: glibc declares this symbol with exactly the `AddClosefromFn` signature.
                unsafe { mem::transmute::<*mut c_void, AddClosefromFn>(sym) }
            })
        })
    }
}

/// The functions of the libc linked into the binary: both in glibc (a glibc without them fails
/// the link), `addchdir_np` alone in musl.
#[cfg(target_feature = "crt-static")]
mod linked {
    use super::{AddChdirFn, AddClosefromFn};

    pub(in super::super) fn addchdir_fn() -> Option<AddChdirFn> {
        Some(libc::posix_spawn_file_actions_addchdir_np)
    }

    #[cfg(target_env = "gnu")]
    pub(in super::super) fn addclosefrom_fn() -> Option<AddClosefromFn> {
        Some(libc::posix_spawn_file_actions_addclosefrom_np)
    }

    #[cfg(not(target_env = "gnu"))]
    pub(in super::super) fn addclosefrom_fn() -> Option<AddClosefromFn> {
        None
    }
}

pub(crate) fn posix_spawn_support() -> PosixSpawnSupport {
    PosixSpawnSupport { chdir: addchdir_fn().is_some(), closefrom: addclosefrom_fn().is_some() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_glibc_supports_chdir_and_closefrom() {
        // The development and CI machines run glibc ≥ 2.34; if this fails, posix_spawn falls
        // back to fork-exec for every request. The static build (where `dlsym` finds nothing)
        // holds it too.
        assert_eq!(posix_spawn_support(), PosixSpawnSupport { chdir: true, closefrom: true });
    }
}
