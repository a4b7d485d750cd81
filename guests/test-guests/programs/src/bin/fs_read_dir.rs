//! Lists `/data` and prints `/data/input.txt`.
fn main() {
    let mut names: Vec<String> = std::fs::read_dir("/data")
        .expect("read_dir /data")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8 name"))
        .collect();
    names.sort();
    println!("entries: {names:?}");
    print!("{}", std::fs::read_to_string("/data/input.txt").expect("read /data/input.txt"));
}
