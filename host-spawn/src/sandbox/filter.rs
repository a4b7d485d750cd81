//! The child's seccomp filter, see [seccomp(2)](https://man7.org/linux/man-pages/man2/seccomp.2.html):
//! a classic BPF program built once per spawner in the parent; each confined child installs it
//! with one call ([`install`](crate::sys::seccomp::install)).
//!
//! What it refuses (`EPERM`): `ioctl(TIOCSTI)` (pushing input into a terminal, which a child
//! could otherwise do to the terminal wrt runs in); new namespaces (`unshare` and `clone` with
//! a `CLONE_NEW*` flag, `setns`), whose user namespaces would open much of the kernel to it;
//! and, unless the network is allowed, `socket` of every family and `io_uring_setup` (whose
//! operations can open sockets without the `socket` call). `socketpair` stays allowed.
//! Every extended attribute call (get, set, list and remove, by path, link, descriptor, and the
//! `*xattrat` calls of Linux 6.13) fails with `EOPNOTSUPP`, as on a file system without extended
//! attributes: Landlock does not govern them, so a child could otherwise read and replace
//! attributes of any file it can name, the compile cache's key among them (and programs take
//! that error for "no attributes here", as `ls -l` does).
//! Other processes are out of reach where Landlock does not hold them (it holds signals and
//! `ptrace` and what needs `ptrace`'s permission, but not what needs only the same user): the
//! kernel keyrings (`add_key`, `request_key`, `keyctl`) are refused, so a child can neither read
//! a key of wrt's session or of its user nor add one; and the calls that change another
//! process's resource limits, priority, I/O priority, CPU affinity or scheduling are refused
//! unless they name the caller itself (pid 0): `prlimit64` (reading another's limits stays
//! allowed), `setpriority` and `ioprio_set` (not of a whole user either), `sched_setaffinity`,
//! `sched_setscheduler`, `sched_setparam` and `sched_setattr`. A child that names itself by its
//! own pid rather than 0 is refused too.
//! `clone3`, whose flags sit in memory the filter cannot read, fails with `ENOSYS`, so that
//! libc falls back to `clone`. System calls of another architecture (the 32-bit x86 ABI, x32)
//! fail with `ENOSYS`, so none of them can go around the numbers checked.
//!
//! # Layout: a decision tree, because the kernel runs the filter at every install
//!
//! When a filter is installed, the kernel runs it once for every system call number of each
//! architecture the machine runs (about 460 on x86_64, and as many again for its 32-bit ABI) to
//! learn which numbers it always allows (its action cache), with the instructions interpreted
//! one by one. Every confined child installs the filter, so that cost is paid at every spawn:
//! with the checks as a chain of comparisons, 12 instructions for most numbers, it was the
//! largest part of the filter's install. The filter is therefore a decision tree over the
//! number, laid out by [`plan`] to run the fewest instructions summed over all numbers below
//! [`TABLE_SIZE`]: about 8 on average, and 3 for the other architecture.

/// The filter's verdict on a system call number of the native architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Allow,
    /// `EPERM`.
    Refuse,
    /// `ENOSYS`, as for a system call the kernel does not have.
    Foreign,
    /// `EOPNOTSUPP`, as on a file system without extended attributes.
    NoAttributes,
    /// `ioctl`: refused for `TIOCSTI`, allowed otherwise.
    Ioctl,
    /// `clone` and `unshare`: refused with any `CLONE_NEW*` flag, allowed otherwise.
    Namespaces,
    /// Allowed when the first argument (a pid) is 0, the caller itself; refused otherwise.
    OwnProcess,
    /// `prlimit64`: allowed for the caller itself (pid 0) or when it sets nothing (a null third
    /// argument); refused otherwise.
    OwnLimits,
    /// `setpriority` and `ioprio_set`: allowed when the second argument (who) is 0 and the
    /// first (which) is not this number, the one naming every process of a user.
    OwnPriority {
        of_user: u32,
    },
}

cfg_select! {
    target_arch = "x86_64" => {
        /// `AUDIT_ARCH_X86_64`.
        const ARCH: u32 = 0xC000_003E;
        /// x32 system calls carry this bit in their number (`__X32_SYSCALL_BIT`).
        const FOREIGN_FROM: Option<u32> = Some(0x4000_0000);
    }
    target_arch = "aarch64" => {
        /// `AUDIT_ARCH_AARCH64`.
        const ARCH: u32 = 0xC000_00B7;
        const FOREIGN_FROM: Option<u32> = None;
    }
    _ => {
        compile_error!("the child seccomp filter knows x86_64 and aarch64 only");
    }
}

/// A bound on the kernel's system call tables (`NR_syscalls`, about 460 on both
/// architectures): the numbers whose instructions [`plan`] minimises.
const TABLE_SIZE: u64 = 512;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_OFFSET: u32 = 4;
/// The low 32 bits of the first and second arguments (little-endian).
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 16 + 8;
const ARG2_LOW: u32 = 16 + 16;
const ARG2_HIGH: u32 = 16 + 16 + 4;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const FOREIGN: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
const NO_ATTRIBUTES: u32 = libc::SECCOMP_RET_ERRNO | libc::EOPNOTSUPP as u32;

/// The extended attribute calls: by path, by link and by descriptor, then `setxattrat`,
/// `getxattrat`, `listxattrat` and `removexattrat` (Linux 6.13; numbered alike on every
/// architecture, and not yet named by `libc`).
const XATTR_CALLS: [libc::c_long; 16] = [
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_getxattr,
    libc::SYS_lgetxattr,
    libc::SYS_fgetxattr,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_flistxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    463,
    464,
    465,
    466,
];

/// The kernel keyring calls.
const KEYRING_CALLS: [libc::c_long; 3] = [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl];

/// The calls that change another process when their first argument is its pid.
const OTHER_PROCESS_CALLS: [libc::c_long; 4] =
    [libc::SYS_sched_setaffinity, libc::SYS_sched_setscheduler, libc::SYS_sched_setparam, libc::SYS_sched_setattr];

/// `PRIO_USER` (`setpriority`) and `IOPRIO_WHO_USER` (`ioprio_set`): every process of a user.
const PRIO_USER: u32 = 2;
const IOPRIO_WHO_USER: u32 = 3;

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

/// The numbers with a verdict other than [`Verdict::Allow`], with or without the network.
fn rules(network: bool) -> Vec<(u32, Verdict)> {
    let mut rules = vec![
        (syscall_nr(libc::SYS_ioctl), Verdict::Ioctl),
        (syscall_nr(libc::SYS_clone), Verdict::Namespaces),
        (syscall_nr(libc::SYS_unshare), Verdict::Namespaces),
        (syscall_nr(libc::SYS_setns), Verdict::Refuse),
        (syscall_nr(libc::SYS_clone3), Verdict::Foreign),
    ];
    rules.extend(XATTR_CALLS.iter().map(|&nr| (syscall_nr(nr), Verdict::NoAttributes)));
    rules.extend(KEYRING_CALLS.iter().map(|&nr| (syscall_nr(nr), Verdict::Refuse)));
    rules.extend(OTHER_PROCESS_CALLS.iter().map(|&nr| (syscall_nr(nr), Verdict::OwnProcess)));
    rules.push((syscall_nr(libc::SYS_prlimit64), Verdict::OwnLimits));
    rules.push((syscall_nr(libc::SYS_setpriority), Verdict::OwnPriority { of_user: PRIO_USER }));
    rules.push((syscall_nr(libc::SYS_ioprio_set), Verdict::OwnPriority { of_user: IOPRIO_WHO_USER }));
    if !network {
        rules.push((syscall_nr(libc::SYS_socket), Verdict::Refuse));
        rules.push((syscall_nr(libc::SYS_io_uring_setup), Verdict::Refuse));
    }
    rules.sort_unstable_by_key(|&(nr, _)| nr);
    rules
}

/// A system call number as the filter compares it.
fn syscall_nr(nr: libc::c_long) -> u32 {
    u32::try_from(nr).expect("system call numbers are small")
}

/// Numbers `start..end` (`end` up to 2³², exclusive) with one verdict.
#[derive(Debug, Clone, Copy)]
struct Segment {
    start: u64,
    end: u64,
    verdict: Verdict,
}

impl Segment {
    /// How many of its numbers the kernel runs the filter for at install.
    fn weight(&self) -> u64 {
        self.end.min(TABLE_SIZE).saturating_sub(self.start.min(TABLE_SIZE))
    }

    fn is_single(&self) -> bool {
        self.end - self.start == 1
    }

    /// The single number of a one-number segment, as the filter compares it.
    fn number(&self) -> u32 {
        u32::try_from(self.start).expect("segments start below 2^32")
    }
}

/// Every 32-bit number, in segments of one verdict.
fn segments(network: bool) -> Vec<Segment> {
    let mut points: Vec<(u64, u64, Verdict)> =
        rules(network).iter().map(|&(nr, v)| (nr.into(), u64::from(nr) + 1, v)).collect();
    if let Some(from) = FOREIGN_FROM {
        points.push((from.into(), 1 << 32, Verdict::Foreign));
    }
    let mut out: Vec<Segment> = Vec::new();
    let mut at = 0;
    for (start, end, verdict) in points {
        if start > at {
            out.push(Segment { start: at, end: start, verdict: Verdict::Allow });
        }
        // Neighbouring numbers of one verdict (the extended attribute calls) are one segment.
        match out.last_mut() {
            Some(last) if last.end == start && last.verdict == verdict => last.end = end,
            _ => out.push(Segment { start, end, verdict }),
        }
        at = end;
    }
    if at < 1 << 32 {
        out.push(Segment { start: at, end: 1 << 32, verdict: Verdict::Allow });
    }
    out
}

/// How the tree decides the segments `i..=j`, the numbers that reach one of its nodes.
#[derive(Debug, Clone, Copy)]
enum Node {
    /// One segment: its verdict.
    Leaf,
    /// `nr >= segments[k].start`: `k..=j` if so, `i..k` if not.
    Split(usize),
    /// `nr == segments[i].start` (a single number): its verdict if so, `i+1..=j` if not.
    First,
    /// `nr == segments[j].start` (a single number): its verdict if so, `i..j` if not.
    Last,
}

/// The tree over `segments` that runs the fewest instructions summed over the numbers below
/// [`TABLE_SIZE`] (each node one instruction, each leaf one more), by dynamic programming over
/// the ranges of segments. `plan[i][j]` is the node deciding `i..=j`.
fn plan(segments: &[Segment]) -> Vec<Vec<Node>> {
    let n = segments.len();
    let mut cost = vec![vec![0u64; n]; n];
    let mut node = vec![vec![Node::Leaf; n]; n];
    for len in 1..=n {
        for i in 0..=n - len {
            let j = i + len - 1;
            let weight: u64 = segments[i..=j].iter().map(Segment::weight).sum();
            if i == j {
                cost[i][j] = weight;
                continue;
            }
            let mut best = (u64::MAX, Node::Leaf);
            let mut consider = |c: u64, choice: Node| {
                if c < best.0 {
                    best = (c, choice);
                }
            };
            for k in i + 1..=j {
                consider(weight + cost[i][k - 1] + cost[k][j], Node::Split(k));
            }
            if segments[i].is_single() {
                consider(weight + cost[i][i] + cost[i + 1][j], Node::First);
            }
            if segments[j].is_single() {
                consider(weight + cost[j][j] + cost[i][j - 1], Node::Last);
            }
            (cost[i][j], node[i][j]) = best;
        }
    }
    node
}

/// A jump target, resolved by [`assemble`].
type Label = usize;
const REFUSED: Label = 0;
const FOREIGN_CALL: Label = 1;
const ALLOWED: Label = 2;

/// One instruction of the filter before its jumps are resolved.
#[derive(Debug, Clone, Copy)]
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

/// Emits the tree deciding `segments[i..=j]`, with fresh labels from `next`.
fn emit(segments: &[Segment], plan: &[Vec<Node>], (i, j): (usize, usize), ops: &mut Vec<Op>, next: &mut Label) {
    let mut label = || {
        *next += 1;
        *next
    };
    match plan[i][j] {
        Node::Leaf => emit_verdict(segments[i].verdict, ops),
        Node::Split(k) => {
            let right = label();
            let bound = u32::try_from(segments[k].start).expect("a split lies below 2^32");
            ops.push(Op::JumpIfAtLeast(bound, right));
            emit(segments, plan, (i, k - 1), ops, next);
            ops.push(Op::Here(right));
            emit(segments, plan, (k, j), ops, next);
        }
        Node::First | Node::Last => {
            let (single, rest) = match plan[i][j] {
                Node::First => (i, (i + 1, j)),
                _ => (j, (i, j - 1)),
            };
            let matched = label();
            ops.push(Op::JumpIfEqual(segments[single].number(), matched));
            emit(segments, plan, rest, ops, next);
            ops.push(Op::Here(matched));
            emit_verdict(segments[single].verdict, ops);
        }
    }
}

fn emit_verdict(verdict: Verdict, ops: &mut Vec<Op>) {
    match verdict {
        Verdict::Allow => ops.push(Op::Return(ALLOW)),
        Verdict::Refuse => ops.push(Op::Return(REFUSE)),
        Verdict::Foreign => ops.push(Op::Return(FOREIGN)),
        Verdict::NoAttributes => ops.push(Op::Return(NO_ATTRIBUTES)),
        Verdict::Ioctl => {
            ops.extend([Op::Load(ARG1_LOW), Op::JumpIfEqual(TIOCSTI, REFUSED), Op::Return(ALLOW)]);
        }
        Verdict::Namespaces => {
            ops.extend([Op::Load(ARG0_LOW), Op::JumpIfAnySet(NEW_NAMESPACES, REFUSED), Op::Return(ALLOW)]);
        }
        Verdict::OwnProcess => ops.extend([Op::Load(ARG0_LOW), Op::JumpUnlessEqual(0, REFUSED), Op::Return(ALLOW)]),
        Verdict::OwnLimits => ops.extend([
            Op::Load(ARG0_LOW),
            Op::JumpIfEqual(0, ALLOWED),
            Op::Load(ARG2_LOW),
            Op::JumpUnlessEqual(0, REFUSED),
            Op::Load(ARG2_HIGH),
            Op::JumpUnlessEqual(0, REFUSED),
            Op::Return(ALLOW),
        ]),
        Verdict::OwnPriority { of_user } => ops.extend([
            Op::Load(ARG1_LOW),
            Op::JumpUnlessEqual(0, REFUSED),
            Op::Load(ARG0_LOW),
            Op::JumpIfEqual(of_user, REFUSED),
            Op::Return(ALLOW),
        ]),
    }
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
    let target = |label: Label| at.iter().find(|(l, _)| *l == label).map(|&(_, i)| i).expect("every label is placed");
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
        let segments = segments(network);
        let plan = plan(&segments);
        let mut ops = vec![Op::Load(ARCH_OFFSET), Op::JumpUnlessEqual(ARCH, FOREIGN_CALL), Op::Load(NR)];
        let mut next = ALLOWED;
        emit(&segments, &plan, (0, segments.len() - 1), &mut ops, &mut next);
        ops.extend([
            Op::Here(REFUSED),
            Op::Return(REFUSE),
            Op::Here(FOREIGN_CALL),
            Op::Return(FOREIGN),
            Op::Here(ALLOWED),
            Op::Return(ALLOW),
        ]);
        Self { program: assemble(&ops).into_boxed_slice() }
    }

    /// The program, which [`Confine`](crate::sys::Confine) hands to the child.
    pub(crate) fn program(&self) -> &[libc::sock_filter] {
        &self.program
    }
}

#[cfg(test)]
mod tests;
