//! Starts `sleep 1000` with stdout piped and reads it the way an event loop does, in a loop: `poll`
//! for stdout (no timeout of its own), then a non-blocking read, until end of file. Only the
//! sandbox's `--timeout` ends the child; when it does, the guest must stop with the timeout (124),
//! never see the end of file and exit 0. Needs `sleep`.
use std::io::ErrorKind;

use wrt_guest::{Command, Events, Stdio};

fn main() {
    let mut child = Command::new("sleep").arg("1000").stdout(Stdio::piped()).spawn().expect("spawn sleep");
    let mut stdout = child.stdout.take().expect("piped");
    let mut buf = [0u8; 64];
    loop {
        child.poll(Events::STDOUT, None).expect("poll");
        match stdout.try_read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    println!("saw end of file");
}
