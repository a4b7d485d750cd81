//! Host-call sequences against a real instantiated guest (`guests/test-guests/wat/abi_fuzz.wat`,
//! which exports every `wrt_v1` function with raw arguments, and `poke` to write its memory):
//! spawn, stdio, wait, kill, release and buffer calls with arbitrary handles, pointers, lengths,
//! flags and requests written into guest memory. After each call: the guest is still running
//! and the call returned a value or a documented error code. At the end: buffers never held more
//! than the memory limit, and once the instance is gone no child of it is left running.

#![no_main]

use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use wrt_runtime::wrt_host_spawn::{Policy, ProgramRule};
use wrt_runtime::{ErrorCode, Guest, GuestOutput, Outcome, RunOptions, Runtime, WasmValue};
use wrt_test_support::processes::live_children;

const GUEST: &str = include_str!("../../guests/test-guests/wat/abi_fuzz.wat");
const MAX_MEMORY: u64 = 64 << 20;

/// A 32-bit argument: edge values the fuzzer would take long to find, or any value.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Int {
    Zero,
    One,
    MinusOne,
    /// The valid request at 1024 and its length.
    Request,
    RequestLen,
    /// The buffer_concat parts at 2048.
    Parts,
    /// The first buffer handle and the ones after it.
    Buffer(u8),
    /// A small handle or length.
    Small(u8),
    PageEnd,
    Any(i32),
}

impl Int {
    fn get(self) -> i32 {
        match self {
            Self::Zero => 0,
            Self::One => 1,
            Self::MinusOne => -1,
            Self::Request => 1024,
            Self::RequestLen => 49,
            Self::Parts => 2048,
            Self::Buffer(n) => 0x4000_0000 + i32::from(n % 8),
            Self::Small(n) => i32::from(n),
            Self::PageEnd => 65_536,
            Self::Any(v) => v,
        }
    }
}

/// A wait's timeout in milliseconds: short, so that no input takes long.
#[derive(Debug, Clone, Copy, Arbitrary)]
struct Millis(u8);

#[derive(Debug, Arbitrary)]
enum Call {
    Poke(u16, u8),
    Spawn(Int, Int),
    Write(Int, Int, Int, Int),
    CloseStdin(Int),
    Read(Int, Int, Int, Int, Int),
    Poll(Int, Int, Millis),
    Wait(Int, Millis, Int),
    WaitAny(Int, Int, Millis, Int),
    Kill(Int, Int),
    Release(Int),
    Run(Int, Int, Int, Int),
    LastError(Int, Int),
    BufferFrom(Int, Int),
    BufferAlloc(Int),
    BufferLen(Int),
    BufferRead(Int, Int, Int, Int),
    BufferWrite(Int, Int, Int, Int),
    BufferSlice(Int, Int, Int),
    BufferConcat(Int, Int),
    BufferRelease(Int),
    ReadBuffer(Int, Int, Int, Int),
    WriteBuffer(Int, Int, Int, Int),
}

impl Call {
    fn export(&self) -> (&'static str, Vec<WasmValue>) {
        let i = |v: &Int| WasmValue::I32(v.get());
        let ms = |m: &Millis| WasmValue::I64(i64::from(m.0));
        match self {
            Self::Poke(addr, byte) => {
                ("poke", vec![WasmValue::I32(i32::from(*addr)), WasmValue::I32(i32::from(*byte))])
            }
            Self::Spawn(a, b) => ("spawn", vec![i(a), i(b)]),
            Self::Write(a, b, c, d) => ("write", vec![i(a), i(b), i(c), i(d)]),
            Self::CloseStdin(a) => ("close_stdin", vec![i(a)]),
            Self::Read(a, b, c, d, e) => ("read", vec![i(a), i(b), i(c), i(d), i(e)]),
            Self::Poll(a, b, t) => ("poll", vec![i(a), i(b), ms(t)]),
            Self::Wait(a, t, c) => ("wait", vec![i(a), ms(t), i(c)]),
            Self::WaitAny(a, b, t, d) => ("wait_any", vec![i(a), i(b), ms(t), i(d)]),
            // Stop signals would leave a child stopped until its timeout.
            Self::Kill(a, s) => {
                ("kill", vec![i(a), WasmValue::I32(if (19..=22).contains(&s.get()) { 9 } else { s.get() })])
            }
            Self::Release(a) => ("release", vec![i(a)]),
            Self::Run(a, b, c, d) => ("run", vec![i(a), i(b), i(c), i(d)]),
            Self::LastError(a, b) => ("last_error", vec![i(a), i(b)]),
            Self::BufferFrom(a, b) => ("buffer_from", vec![i(a), i(b)]),
            Self::BufferAlloc(a) => ("buffer_alloc", vec![i(a)]),
            Self::BufferLen(a) => ("buffer_len", vec![i(a)]),
            Self::BufferRead(a, b, c, d) => ("buffer_read", vec![i(a), i(b), i(c), i(d)]),
            Self::BufferWrite(a, b, c, d) => ("buffer_write", vec![i(a), i(b), i(c), i(d)]),
            Self::BufferSlice(a, b, c) => ("buffer_slice", vec![i(a), i(b), i(c)]),
            Self::BufferConcat(a, b) => ("buffer_concat", vec![i(a), i(b)]),
            Self::BufferRelease(a) => ("buffer_release", vec![i(a)]),
            Self::ReadBuffer(a, b, c, d) => ("read_buffer", vec![i(a), i(b), i(c), i(d)]),
            Self::WriteBuffer(a, b, c, d) => ("write_buffer", vec![i(a), i(b), i(c), i(d)]),
        }
    }
}

struct Setup {
    guest: Guest,
    options: RunOptions,
}

fn setup() -> Setup {
    // Children that end by themselves within a second: `true`, and `cat` (which reads its stdin
    // until it is closed or the rule's timeout). The child sandbox is on, with no directory.
    let policy = Policy::deny_all()
        .allow(ProgramRule::new("/bin/true").timeout(Duration::from_secs(1)))
        .allow(ProgramRule::new("/bin/cat").timeout(Duration::from_secs(1)))
        .max_children(8);
    let options = RunOptions::new()
        .spawn_policy(&policy)
        .expect("the fuzz policy is valid")
        .stdout(GuestOutput::Null)
        .stderr(GuestOutput::Null)
        .timeout(Duration::from_secs(20))
        .max_memory(MAX_MEMORY);
    let guest =
        Runtime::new().expect("a runtime").load_bytes("abi_fuzz.wat", GUEST.as_bytes()).expect("the guest loads");
    Setup { guest, options }
}

fuzz_target!(|calls: Vec<Call>| {
    static SETUP: std::sync::OnceLock<Setup> = std::sync::OnceLock::new();
    let Setup { guest, options } = SETUP.get_or_init(setup);
    let mut instance = guest.instantiate(options).expect("the guest instantiates");
    let mut spawned = false;
    for call in calls.iter().take(64) {
        let (name, args) = call.export();
        let outcome = instance.invoke(name, &args).unwrap_or_else(|err| panic!("{name}({args:?}): {err:?}"));
        if name == "poke" {
            assert_eq!(outcome, Outcome::Returned(vec![]));
            continue;
        }
        let Outcome::Returned(values) = &outcome else { panic!("{name}({args:?}) ended the guest: {outcome:?}") };
        let [WasmValue::I32(ret)] = values[..] else { panic!("{name}({args:?}) returned {values:?}") };
        assert!(ret >= 0 || ErrorCode::from_return(ret).is_some(), "{name}({args:?}) returned {ret}");
        spawned |= matches!(name, "spawn" | "run") && ret >= 0;
    }
    let stats = instance.stats();
    assert!(stats.peak_external <= MAX_MEMORY, "{stats:?}");
    drop(instance);
    if spawned {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !live_children().is_empty() {
            assert!(Instant::now() < deadline, "children outlived their instance: {:?}", live_children());
            std::thread::sleep(Duration::from_millis(1));
        }
    }
});
