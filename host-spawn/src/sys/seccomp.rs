//! The child's seccomp filter, see [seccomp(2)](https://man7.org/linux/man-pages/man2/seccomp.2.html):
//! a classic BPF program built in the parent, installed in the child with one call.
//!
//! What it refuses (`EPERM`): `ioctl(TIOCSTI)` (pushing input into a terminal, which a child
//! could otherwise do to the terminal wrt runs in); new namespaces (`unshare` and `clone` with
//! a `CLONE_NEW*` flag, `setns`), whose user namespaces would open much of the kernel to it;
//! and, unless the network is allowed, `socket` of every family and `io_uring_setup` (whose
//! operations can open sockets without the `socket` call). `socketpair` stays allowed.
//! `clone3`, whose flags sit in memory the filter cannot read, fails with `ENOSYS`, so that
//! libc falls back to `clone`. System calls of another architecture (the 32-bit x86 ABI, x32)
//! fail with `ENOSYS`, so none of them can go around the numbers checked.

use std::ffi::c_void;
use std::ptr;

use nix::errno::Errno;

cfg_select! {
    target_arch = "x86_64" => {
        /// `AUDIT_ARCH_X86_64`.
        const ARCH: u32 = 0xC000_003E;
        /// x32 system calls carry this bit in their number (`__X32_SYSCALL_BIT`).
        const FOREIGN_NR: Option<u32> = Some(0x4000_0000);
    }
    target_arch = "aarch64" => {
        /// `AUDIT_ARCH_AARCH64`.
        const ARCH: u32 = 0xC000_00B7;
        const FOREIGN_NR: Option<u32> = None;
    }
    _ => {
        compile_error!("the child seccomp filter knows x86_64 and aarch64 only");
    }
}

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_OFFSET: u32 = 4;
/// The low 32 bits of the second argument (little-endian).
const ARG1_LOW: u32 = 16 + 8;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const FOREIGN: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// `TIOCSTI`.
const TIOCSTI: u32 = 0x5412;

/// The `CLONE_NEW*` flags of `clone` and `unshare` (not `CLONE_NEWTIME`, whose bit is part of
/// the exit signal in `clone`'s flags).
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// The low 32 bits of the first argument (little-endian).
const ARG0_LOW: u32 = 16;

/// One instruction of the filter before its jumps are resolved.
#[derive(Clone, Copy)]
enum Op {
    /// Load the 32-bit word at this offset of `struct seccomp_data`.
    Load(u32),
    /// Jump to the label when the accumulator equals `k`, else fall through.
    JumpIfEqual(u32, Label),
    /// Jump to the label when the accumulator differs from `k`, else fall through.
    JumpUnlessEqual(u32, Label),
    /// Jump to the label when the accumulator is at least `k`, else fall through.
    JumpIfAtLeast(u32, Label),
    /// Jump to the label when the accumulator has any bit of `k` set, else fall through.
    JumpIfAnySet(u32, Label),
    Return(u32),
    /// Marks where a label points; emits nothing.
    Here(Label),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Label {
    Ioctl,
    Namespaces,
    Refuse,
    Foreign,
}

/// Lays out `ops` and resolves every jump to a forward distance.
fn assemble(ops: &[Op]) -> Vec<libc::sock_filter> {
    let mut at = Vec::new();
    let mut index = 0usize;
    for op in ops {
        match op {
            Op::Here(label) => at.push((*label, index)),
            _ => index += 1,
        }
    }
    let target = |label: Label| at.iter().find(|(l, _)| *l == label).map_or(0, |&(_, i)| i);
    let mut out = Vec::with_capacity(index);
    for op in ops {
        let next = out.len() + 1;
        let distance = |label| u8::try_from(target(label) - next).expect("the filter is short");
        let (code, jt, jf, k) = match *op {
            Op::Load(offset) => (LD_W_ABS, 0, 0, offset),
            Op::JumpIfEqual(k, label) => (JEQ_K, distance(label), 0, k),
            Op::JumpUnlessEqual(k, label) => (JEQ_K, 0, distance(label), k),
            Op::JumpIfAtLeast(k, label) => (JGE_K, distance(label), 0, k),
            Op::JumpIfAnySet(k, label) => (JSET_K, distance(label), 0, k),
            Op::Return(k) => (RET_K, 0, 0, k),
            Op::Here(_) => continue,
        };
        out.push(libc::sock_filter { code, jt, jf, k });
    }
    out
}

/// A compiled filter, kept by the parent for every child it starts.
pub(crate) struct Filter {
    program: Box<[libc::sock_filter]>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Filter({} instructions)", self.program.len())
    }
}

impl Filter {
    /// The child's filter; with `network`, sockets are left alone.
    pub(crate) fn new(network: bool) -> Self {
        let mut ops = vec![Op::Load(ARCH_OFFSET), Op::JumpUnlessEqual(ARCH, Label::Foreign), Op::Load(NR)];
        if let Some(bit) = FOREIGN_NR {
            ops.push(Op::JumpIfAtLeast(bit, Label::Foreign));
        }
        ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_ioctl), Label::Ioctl));
        ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_clone), Label::Namespaces));
        ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_unshare), Label::Namespaces));
        ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_setns), Label::Refuse));
        ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_clone3), Label::Foreign));
        if !network {
            ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_socket), Label::Refuse));
            ops.push(Op::JumpIfEqual(syscall_nr(libc::SYS_io_uring_setup), Label::Refuse));
        }
        ops.extend([
            Op::Return(ALLOW),
            Op::Here(Label::Ioctl),
            Op::Load(ARG1_LOW),
            Op::JumpIfEqual(TIOCSTI, Label::Refuse),
            Op::Return(ALLOW),
            Op::Here(Label::Namespaces),
            Op::Load(ARG0_LOW),
            Op::JumpIfAnySet(NEW_NAMESPACES, Label::Refuse),
            Op::Return(ALLOW),
            Op::Here(Label::Refuse),
            Op::Return(REFUSE),
            Op::Here(Label::Foreign),
            Op::Return(FOREIGN),
        ]);
        Self { program: assemble(&ops).into_boxed_slice() }
    }

    /// The `sock_fprog` the kernel takes; valid while `self` lives.
    pub(crate) fn fprog(&self) -> libc::sock_fprog {
        libc::sock_fprog {
            len: u16::try_from(self.program.len()).unwrap_or(u16::MAX),
            filter: self.program.as_ptr().cast_mut(),
        }
    }
}

/// A system call number as the filter compares it.
fn syscall_nr(nr: libc::c_long) -> u32 {
    u32::try_from(nr).expect("system call numbers are small")
}

/// Installs `prog` on the calling thread. Needs no-new-privileges. Async-signal-safe: one
/// system call on memory prepared before the child was created.
pub(super) fn install(prog: &libc::sock_fprog) -> Result<(), Errno> {
    // SAFETY: `prog` points at a valid BPF program that outlives the call; the kernel copies it.
    let ret = unsafe {
        libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, 0u32, ptr::from_ref(prog).cast::<c_void>())
    };
    if ret == -1 { Err(Errno::last()) } else { Ok(()) }
}
