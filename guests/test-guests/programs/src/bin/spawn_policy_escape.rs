//! Runs one host program as a hostile guest would try a policy's rule:
//! `spawn_policy_escape [--stdin TEXT] [--env NAME=VALUE]... [--cwd DIR] PROGRAM ARGS...`.
//! Writes TEXT to the program's stdin, prints `exit: STATUS` and the program's output, or
//! `error: MESSAGE` and exits with 1 when the spawn is refused.

fn main() {
    let mut args = std::env::args().skip(1);
    let mut stdin = String::new();
    let mut env = Vec::new();
    let mut cwd = None;
    let program = loop {
        match args.next().as_deref() {
            Some("--stdin") => stdin = args.next().expect("--stdin TEXT"),
            Some("--env") => {
                let spec = args.next().expect("--env NAME=VALUE");
                let (name, value) = spec.split_once('=').expect("--env NAME=VALUE");
                env.push((name.to_owned(), value.to_owned()));
            }
            Some("--cwd") => cwd = Some(args.next().expect("--cwd DIR")),
            Some(program) => break program.to_owned(),
            None => panic!("no program to run"),
        }
    };
    let mut command = wrt_guest::Command::new(program);
    command.args(args).envs(env);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    match command.output_with_input(stdin.as_bytes()) {
        Ok(output) => {
            println!("exit: {}", output.status);
            print!("{}", String::from_utf8_lossy(&output.stdout));
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
        }
        Err(err) => {
            println!("error: {err}");
            std::process::exit(1);
        }
    }
}
