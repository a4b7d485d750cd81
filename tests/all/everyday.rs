//! Everyday programs under the default child sandbox: a guest given a project directory
//! (`--dir`) and allowed `sh` and one program runs a short job with it (compilers, build tools,
//! interpreters with temporary files and subprocesses, version control, archivers, text tools,
//! a database), and gets what the same job gives run natively (`env -i PATH=… sh -c JOB` in a
//! copy of the same directory): the same output and exit status. As root, and as an
//! unprivileged user (`nobody`, through `setpriv`, when the tests run as root). A job whose
//! program is not installed is skipped, and says so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use wrt_test_guests::CONTAIN_RUN_ENDS_AT_DEADLINE;

use crate::util::{command, stdout};

/// A job: its name, the program the guest is allowed besides `sh` (which must be installed,
/// with the others it names), and the shell script, run in the project directory.
struct Job {
    name: &'static str,
    needs: &'static [&'static str],
    script: &'static str,
}

const C_HELLO: &str = "printf '#include <stdio.h>\\nint main(void) { puts(\"hello\"); return 0; }\\n' > hello.c";

const JOBS: &[Job] = &[
    Job { name: "gcc", needs: &["gcc"], script: "PRE && gcc -O1 hello.c -o hello && ./hello" },
    Job { name: "cc", needs: &["cc"], script: "PRE && cc hello.c -o hello && ./hello" },
    Job {
        name: "g++",
        needs: &["g++"],
        script: "printf '#include <iostream>\\nint main() { std::cout << \"hi\" << std::endl; }\\n' > hi.cc && g++ hi.cc -o hi && ./hi",
    },
    Job {
        name: "make",
        needs: &["make", "cc"],
        script: "PRE && printf 'hello: hello.c\\n\\tcc -o hello hello.c\\n' > Makefile && make -s && ./hello && make -s && echo up-to-date",
    },
    Job {
        name: "python3",
        needs: &["python3"],
        script: "python3 -c 'import tempfile, subprocess\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b\"temp\"); f.flush()\n    print(subprocess.run([\"cat\", f.name], capture_output=True, text=True).stdout)\nprint(len(tempfile.mkdtemp()) > 0)'",
    },
    Job {
        name: "perl",
        needs: &["perl"],
        script: "perl -e 'open(my $f, \">\", \"p.txt\") or die; print $f \"line\\n\" x 3; close $f; print -s \"p.txt\", \"\\n\"; print `wc -l < p.txt`'",
    },
    Job {
        name: "node",
        needs: &["node"],
        script: "node -e 'const fs = require(\"fs\"), os = require(\"os\"), cp = require(\"child_process\"); const d = fs.mkdtempSync(os.tmpdir() + \"/n-\"); fs.writeFileSync(d + \"/n\", \"tmp\"); console.log(fs.readFileSync(d + \"/n\", \"utf8\"), cp.execSync(\"echo sub\").toString().trim()); fs.rmSync(d, { recursive: true })'",
    },
    Job {
        name: "git",
        needs: &["git"],
        script: "git init -q . && git add src && git -c user.name=a -c user.email=a@example.com commit -qm first && git log --format=%s && git status --short | wc -l",
    },
    Job { name: "tar", needs: &["tar"], script: "tar cf t.tar src && rm -r src && tar xf t.tar && cat src/a.txt" },
    Job { name: "gzip", needs: &["gzip"], script: "cp src/a.txt g && gzip g && gzip -dc g.gz" },
    Job { name: "bzip2", needs: &["bzip2"], script: "cp src/a.txt b && bzip2 b && bzip2 -dc b.bz2" },
    Job { name: "xz", needs: &["xz"], script: "cp src/a.txt x && xz x && xz -dc x.xz" },
    Job { name: "zstd", needs: &["zstd"], script: "zstd -q src/a.txt -o a.zst && zstd -qdc a.zst" },
    Job { name: "zip", needs: &["zip", "unzip"], script: "zip -qr z.zip src && unzip -Z1 z.zip | sort" },
    Job {
        name: "sqlite3",
        needs: &["sqlite3"],
        script: "sqlite3 db.sqlite 'create table t(x); insert into t values (1), (2), (3); vacuum; select sum(x) from t;'",
    },
    Job { name: "sed", needs: &["sed"], script: "sed -i s/alpha/omega/ src/a.txt && cat src/a.txt" },
    Job { name: "awk", needs: &["awk"], script: "awk '{ n += length($0) } END { print NR, n }' src/a.txt src/b.txt" },
    Job { name: "grep", needs: &["grep"], script: "grep -rn beta src | sort" },
    Job { name: "sort", needs: &["sort"], script: "seq 1 300000 | sort -rn -S 1M | head -2" },
    Job { name: "find", needs: &["find"], script: "find src -type f -name '*.txt' | sort" },
    Job { name: "xargs", needs: &["xargs"], script: "ls src | xargs -n1 echo file" },
    Job {
        name: "diff",
        needs: &["diff", "patch"],
        script: "cp src/a.txt a2 && echo more >> a2 && diff -u src/a.txt a2 > d.patch; patch -s src/a.txt < d.patch && cat src/a.txt",
    },
    Job { name: "sha256sum", needs: &["sha256sum"], script: "sha256sum src/a.txt" },
    Job { name: "base64", needs: &["base64"], script: "base64 src/a.txt | base64 -d" },
    Job {
        name: "mktemp",
        needs: &["mktemp"],
        script: "f=$(mktemp) && echo temp > \"$f\" && cat \"$f\" && d=$(mktemp -d) && ls -A \"$d\" | wc -l",
    },
    Job { name: "bc", needs: &["bc"], script: "echo '2^64 + 1' | bc" },
    Job { name: "jq", needs: &["jq"], script: "echo '{\"a\": [1, 2, 3]}' | jq '.a | add'" },
    Job { name: "openssl", needs: &["openssl"], script: "openssl dgst -sha256 -r src/a.txt" },
    Job {
        name: "readelf",
        needs: &["readelf", "cc"],
        script: "PRE && cc hello.c -o hello && readelf -h hello | grep -c Machine",
    },
];

/// The project directory: `src/a.txt` and `src/b.txt`, owned by `owner`.
fn project(owner: Option<u32>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("src/b.txt"), "gamma\n").unwrap();
    if let Some(uid) = owner {
        for path in [dir.path(), &dir.path().join("src"), &dir.path().join("src/a.txt"), &dir.path().join("src/b.txt")]
        {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
    dir
}

fn installed(program: &str) -> bool {
    ["/usr/local/bin", "/usr/bin", "/bin"].iter().any(|dir| Path::new(dir).join(program).exists())
}

/// `cmd` as `nobody` when `as_user`.
fn as_user(as_user: bool, program: &str) -> std::process::Command {
    if !as_user {
        return command(program);
    }
    let mut cmd = command("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", program]);
    cmd
}

/// The job run natively, in a fresh project: its stdout (trimmed) and exit status, as the
/// guest prints them.
fn native(job: &Job, user: bool) -> String {
    let dir = project(user.then_some(65534));
    let script = job.script.replace("PRE", C_HELLO);
    let out = as_user(user, "env")
        .args(["-i", "PATH=/usr/local/bin:/usr/bin:/bin", "sh", "-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    format!("{}, {}", out.status, String::from_utf8_lossy(&out.stdout).trim())
}

/// The job run by a guest in a fresh project, through `wrt run` under the defaults.
fn through_wrt(job: &Job, user: bool, cache: &Path) -> (String, Output) {
    let dir = project(user.then_some(65534));
    let project = dir.path().to_str().unwrap();
    let script = format!("cd {project} && {}", job.script.replace("PRE", C_HELLO));
    let mut cmd = as_user(user, env!("CARGO_BIN_EXE_wrt"));
    cmd.env("XDG_CACHE_HOME", cache).args(["run", "--allow-run", "sh", "--allow-run", job.needs[0], "--dir", project]);
    let out = cmd.args([CONTAIN_RUN_ENDS_AT_DEADLINE, &script, "sandbox"]).output().unwrap();
    let text = stdout(&out);
    let shown = text.strip_prefix("run returned: ").unwrap_or(&text).trim().to_owned();
    (shown, out)
}

/// Runs every installed job both ways; panics naming each job whose results differ.
fn every_job_as_natively(user: bool) {
    let cache = tempfile::tempdir().unwrap();
    if user {
        std::os::unix::fs::chown(cache.path(), Some(65534), Some(65534)).unwrap();
    }
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut differ = Vec::new();
    let mut ran = 0;
    for job in JOBS {
        if let Some(missing) = job.needs.iter().find(|p| !installed(p)) {
            eprintln!("SKIPPED {}: `{missing}` is not installed", job.name);
            continue;
        }
        let want = native(job, user);
        let (got, out) = through_wrt(job, user, cache.path());
        if got != want {
            differ.push(format!(
                "{}: natively `{want}`, under wrt `{got}` (wrt {}; stderr: {})",
                job.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        ran += 1;
    }
    assert!(differ.is_empty(), "{} of {ran} jobs differ:\n{}", differ.len(), differ.join("\n"));
    assert!(ran >= 25, "only {ran} jobs ran");
}

#[test]
fn everyday_programs_give_their_native_results() {
    every_job_as_natively(false);
}

/// As `nobody`, when the tests run as root (an unprivileged runner is the user case already).
#[test]
fn everyday_programs_give_their_native_results_to_an_unprivileged_user() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: the tests run unprivileged already (the other test is the user case)");
        return;
    }
    every_job_as_natively(true);
}
