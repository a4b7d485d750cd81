//! `wait_any` over several children: the one that exits first is reported with its index and
//! status, a timeout returns `None`, killed children are reported one at a time as they are
//! removed, and an ended child is reported again until it is released. Needs `sleep` and `sh`.
use std::time::{Duration, Instant};

use twins::sdk::{Child, Command, wait_any};

fn sleep(secs: &str) -> Child {
    Command::new("sleep").arg(secs).spawn().expect("spawn sleep")
}

fn main() {
    let mut children = vec![sleep("100"), Command::new("sh").args(["-c", "exit 7"]).spawn().expect("sh"), sleep("100")];
    let ids: Vec<u32> = children.iter().map(Child::id).collect();
    let (index, status) = wait_any(&mut children, None).expect("wait_any").expect("no timeout");
    assert_eq!((index, status.code()), (1, Some(7)), "{status}");
    // Reported again while it is in the slice.
    let again = wait_any(&mut children, Some(Duration::from_secs(5))).expect("wait_any again");
    assert_eq!(again, Some((1, status)));
    drop(children.swap_remove(1));

    let started = Instant::now();
    assert_eq!(wait_any(&mut children, Some(Duration::from_millis(200))).expect("wait_any timeout"), None);
    assert!(started.elapsed() >= Duration::from_millis(150), "returned after {:?}", started.elapsed());

    // Through `&mut [&mut Child]` too.
    let [first, second] = children.as_mut_slice() else { panic!("two children left") };
    second.kill().expect("kill");
    let (index, status) = wait_any(&mut [&mut *first, &mut *second], None).expect("wait_any").expect("ended");
    assert_eq!((index, status.signal()), (1, Some(9)), "{status}");
    assert_eq!(children.swap_remove(1).id(), ids[2]);

    children[0].kill().expect("kill");
    let (index, status) = wait_any(&mut children, None).expect("wait_any").expect("ended");
    assert_eq!((index, status.signal()), (0, Some(9)), "{status}");
    assert_eq!(children[0].id(), ids[0]);
    println!("wait_any ok");
}
