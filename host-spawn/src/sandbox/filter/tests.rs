use super::*;

/// `AUDIT_ARCH_I386`: the other architecture an x86_64 kernel runs system calls for.
const OTHER_ARCH: u32 = 0x4000_0003;

/// Runs `program` as the kernel does on `struct seccomp_data` (number, architecture, first
/// three arguments): the action it returns and how many instructions it ran.
fn run(program: &[libc::sock_filter], nr: u32, arch: u32, args: [u64; 3]) -> (u32, usize) {
    let word = |offset: u32| match offset {
        NR => nr,
        ARCH_OFFSET => arch,
        ARG0_LOW => args[0] as u32,
        ARG1_LOW => args[1] as u32,
        ARG2_LOW => args[2] as u32,
        ARG2_HIGH => (args[2] >> 32) as u32,
        other => panic!("the filter loads offset {other}"),
    };
    let (mut pc, mut acc, mut steps) = (0usize, 0u32, 0usize);
    loop {
        let insn = program.get(pc).expect("the program never runs off its end");
        steps += 1;
        let jump = |taken: bool| pc + 1 + usize::from(if taken { insn.jt } else { insn.jf });
        pc = match insn.code {
            LD_W_ABS => {
                acc = word(insn.k);
                pc + 1
            }
            JEQ_K => jump(acc == insn.k),
            JGE_K => jump(acc >= insn.k),
            JSET_K => jump(acc & insn.k != 0),
            RET_K => return (insn.k, steps),
            code => panic!("unexpected instruction {code:#x}"),
        };
    }
}

/// What the module docs promise, written out call by call.
fn expected(network: bool, nr: u32, arch: u32, args: [u64; 3]) -> u32 {
    let nr_is = |n: libc::c_long| i64::from(nr) == n;
    if arch != ARCH || FOREIGN_FROM.is_some_and(|from| nr >= from) || nr_is(libc::SYS_clone3) {
        FOREIGN
    } else if XATTR_CALLS.iter().any(|&call| nr_is(call)) {
        NO_ATTRIBUTES
    } else if nr_is(libc::SYS_ioctl) && args[1] as u32 == TIOCSTI
        || (nr_is(libc::SYS_clone) || nr_is(libc::SYS_unshare)) && args[0] as u32 & NEW_NAMESPACES != 0
        || nr_is(libc::SYS_setns)
        || [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl].into_iter().any(nr_is)
        || [
            libc::SYS_sched_setaffinity,
            libc::SYS_sched_setscheduler,
            libc::SYS_sched_setparam,
            libc::SYS_sched_setattr,
        ]
        .into_iter()
        .any(nr_is)
            && args[0] as u32 != 0
        || nr_is(libc::SYS_prlimit64) && args[0] as u32 != 0 && args[2] != 0
        || nr_is(libc::SYS_setpriority) && (args[1] as u32 != 0 || args[0] as u32 == PRIO_USER)
        || nr_is(libc::SYS_ioprio_set) && (args[1] as u32 != 0 || args[0] as u32 == IOPRIO_WHO_USER)
        || !network && (nr_is(libc::SYS_socket) || nr_is(libc::SYS_io_uring_setup))
    {
        REFUSE
    } else {
        ALLOW
    }
}

/// Numbers around every rule and boundary, and then some.
fn numbers() -> impl Iterator<Item = u32> {
    (0..1100).chain([0x3FFF_FFFF, 0x4000_0000, 0x4000_0001, 0x4000_0000 + 41, 0x7FFF_FFFF, 0xFFFF_FFFF])
}

#[test]
fn the_filter_decides_every_call_as_the_module_docs_say() {
    let arg_cases = [
        [0, 0, 0],
        [0, u64::from(TIOCSTI), 0],
        [0, u64::from(TIOCSTI) | 1 << 32, 0],
        [0, 0x5413, 0],
        [u64::from(libc::SIGCHLD as u32), 0, 0],
        [libc::CLONE_NEWUSER as u64, 0, 0],
        [libc::CLONE_NEWNET as u64 | u64::from(libc::SIGCHLD as u32), 0, 0],
        [(libc::CLONE_VM | libc::CLONE_VFORK) as u64, 0, 0],
        // Another process (pid 4242, or one whose high bits the kernel drops), setting limits
        // at an address with only its high or low half set, or naming a user.
        [4242, 0, 0x7fff_0000_0000],
        [1 << 32, 0, 0x1000],
        [0, 4242, 0],
        [u64::from(PRIO_USER), 0, 0],
        [u64::from(IOPRIO_WHO_USER), 0, 0],
        [1, 0, 0],
        [u64::MAX, u64::MAX, u64::MAX],
    ];
    for network in [false, true] {
        let filter = Filter::new(network);
        for nr in numbers() {
            for arch in [ARCH, OTHER_ARCH, 0] {
                for args in arg_cases {
                    let (action, _) = run(&filter.program, nr, arch, args);
                    assert_eq!(
                        action,
                        expected(network, nr, arch, args),
                        "network {network}, nr {nr:#x}, arch {arch:#x}, args {args:x?}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_filter_runs_few_instructions_for_the_kernels_action_cache() {
    for network in [false, true] {
        let filter = Filter::new(network);
        let steps = |arch| (0..TABLE_SIZE as u32).map(|nr| run(&filter.program, nr, arch, [0, 0, 0]).1).sum::<usize>();
        let (native, other) = (steps(ARCH), steps(OTHER_ARCH));
        // A chain of comparisons ran 12 instructions for most numbers (more with the extended
        // attribute calls); the tree runs about 8.2 with its 30 rules (load and check the
        // architecture, load the number, two to five comparisons, return), and 3 for another
        // architecture, the least a filter that checks it can.
        assert_eq!(other, 3 * TABLE_SIZE as usize, "network {network}");
        assert!(native * 10 <= 85 * TABLE_SIZE as usize, "network {network}: {native} instructions");
    }
}

#[test]
fn every_jump_lands_inside_the_filter() {
    for network in [false, true] {
        let program = Filter::new(network).program;
        for (at, insn) in program.iter().enumerate().filter(|(_, insn)| insn.code & 0x07 == libc::BPF_JMP as u16) {
            let last = at + 1 + usize::from(insn.jt.max(insn.jf));
            assert!(last < program.len(), "instruction {at} jumps past the end");
        }
        assert_eq!(program.last().map(|i| i.code), Some(RET_K));
    }
}
