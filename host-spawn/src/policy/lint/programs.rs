//! What `wrt policy check` knows about programs that can run other programs or write files:
//! families of Debian's common programs, what each does with its arguments, stdin and
//! environment, and which options are its ways out.

/// How a family turns a request into code or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Reads commands from its stdin whatever its arguments (`ed`, `gdb`, `sqlite3`): the guest
    /// writes that stdin, so no argument pattern makes it safe.
    ReadsStdin,
    /// Runs a program its arguments give (a script, or code after one of `code_options`),
    /// or, when they give none, one read from stdin.
    Interpreter {
        /// Options whose value is code (`-c`, `-e`) or names a module to run (`-m`).
        code_options: &'static [&'static str],
    },
    /// Takes its program text in its arguments (`awk`, `sed` scripts, `make` variable
    /// assignments such as `a:=$(shell …)`): any open wildcard is code.
    CodeInArgs,
    /// Runs the program its arguments name (`xargs`, `env`, `timeout`).
    Runner,
    /// Runs a shell, or commands read from stdin, when its arguments name no command, and
    /// changes identity, root or namespaces on the way (`su`, `sudo`, `chroot`, `unshare`):
    /// no argument pattern makes it safe.
    ShellRunner,
    /// Writes, moves or removes the files its arguments name (`cp`, `dd`, `tee`, `rm`).
    Writer,
    /// Safe with fixed arguments, but some options run programs or write files.
    Options,
    /// Administers the host (mounts, network, containers, packages): no argument pattern
    /// makes it safe.
    Admin,
}

/// A family of programs with the same way out.
#[derive(Debug)]
pub(super) struct Family {
    /// Program names (the rule as written, or the file it resolves to, with versions and
    /// target prefixes stripped: `python3.11`, `x86_64-linux-gnu-gcc-12`).
    pub(super) names: &'static [&'static str],
    pub(super) kind: Kind,
    /// What it can do, for the message.
    pub(super) how: &'static str,
    /// Arguments that run programs or write files, spelled as a guest would pass them; a
    /// rule's pattern is tested against each to say which it lets through.
    pub(super) options: &'static [&'static str],
    /// Environment variables that make it run or load code of the caller's choosing (a
    /// trailing `*` is a prefix).
    pub(super) env: &'static [&'static str],
}

const SHELL_ENV: &[&str] = &["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH"];

/// Every family, most specific first.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        names: &[
            "sh", "bash", "dash", "zsh", "ksh", "mksh", "ksh93", "yash", "fish", "csh", "tcsh", "rbash", "busybox",
            "toybox",
        ],
        kind: Kind::Interpreter { code_options: &["-c"] },
        how: "it runs the commands its arguments give, or those written to its stdin when they give none (`-s`, no script)",
        options: &["-c", "-s", "-i"],
        env: SHELL_ENV,
    },
    Family {
        names: &["python", "python2", "python3", "pypy", "pypy3"],
        kind: Kind::Interpreter { code_options: &["-c", "-m"] },
        how: "it runs the code its arguments give, or the code written to its stdin (`-`, no script)",
        options: &["-c", "-m", "-", "-i"],
        env: &[
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONINSPECT",
            "PYTHONUSERBASE",
            "PYTHONEXECUTABLE",
            "PYTHONBREAKPOINT",
            "PYTHONWARNINGS",
        ],
    },
    Family {
        names: &["perl"],
        kind: Kind::Interpreter { code_options: &["-e", "-E", "-M"] },
        how: "it runs the code its arguments give, or the code written to its stdin (no script)",
        options: &["-e", "-E", "-M", "-"],
        env: &["PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "PERL_MB_OPT", "PERL_MM_OPT"],
    },
    Family {
        names: &["ruby", "irb"],
        kind: Kind::Interpreter { code_options: &["-e", "-r"] },
        how: "it runs the code its arguments give, or the code written to its stdin (no script)",
        options: &["-e", "-r", "-"],
        env: &["RUBYOPT", "RUBYLIB"],
    },
    Family {
        names: &["node", "nodejs", "deno", "bun"],
        kind: Kind::Interpreter { code_options: &["-e", "--eval", "-p", "--print", "-r", "--require"] },
        how: "it runs the code its arguments give, or the code written to its stdin (no script)",
        options: &["-e", "--eval", "-p", "-r", "--require", "--import", "-"],
        env: &["NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE"],
    },
    Family {
        names: &[
            "php", "lua", "luajit", "tclsh", "wish", "expect", "Rscript", "R", "guile", "julia", "ocaml", "pwsh",
            "jshell", "groovy", "scala", "racket", "sbcl", "clisp",
        ],
        kind: Kind::Interpreter { code_options: &["-r", "-e", "-c", "--eval"] },
        how: "it runs the code its arguments give, or the code written to its stdin (no script)",
        options: &["-r", "-e", "-c", "--eval", "-"],
        env: &[
            "LUA_INIT",
            "LUA_PATH",
            "LUA_CPATH",
            "TCLLIBPATH",
            "R_PROFILE",
            "R_PROFILE_USER",
            "PHPRC",
            "PHP_INI_SCAN_DIR",
            "JULIA_LOAD_PATH",
        ],
    },
    Family {
        names: &["awk", "gawk", "mawk", "nawk", "original-awk"],
        kind: Kind::CodeInArgs,
        how: "its program text comes from its arguments, and `system()`, `|&` and pipes in it run any command",
        options: &["-f", "--file", "-e", "--source", "-E", "-l", "--load"],
        env: &["AWKPATH", "AWKLIBPATH"],
    },
    Family {
        names: &["sed"],
        kind: Kind::CodeInArgs,
        how: "its script comes from its arguments, and the `e` command runs commands and `w` writes files",
        options: &["-e", "-f", "-i", "--in-place", "-s"],
        env: &[],
    },
    Family {
        names: &["make", "gmake", "bmake", "pmake"],
        kind: Kind::CodeInArgs,
        how: "variable assignments in its arguments (`a:=$(shell …)`) run commands, and so does any makefile it reads (`-f`, `--eval`)",
        options: &["-f", "--file=", "--eval=", "-E", "-C", "-I", "SHELL="],
        env: &["MAKEFLAGS", "MAKEFILES", "GNUMAKEFLAGS", "MFLAGS", "SHELL"],
    },
    Family {
        names: &[
            "ed", "red", "ex", "gdb", "lldb", "sqlite3", "psql", "mysql", "mariadb", "dc", "ftp", "lftp", "telnet",
        ],
        kind: Kind::ReadsStdin,
        how: "it reads commands from its stdin whatever its arguments, and some of them run any program (`!`, `.shell`, `\\!`, `shell`)",
        options: &[],
        env: &[
            "EDITOR",
            "VISUAL",
            "PAGER",
            "SQLITE_HISTORY",
            "PSQLRC",
            "PSQL_PAGER",
            "PSQL_EDITOR",
            "GDBHISTFILE",
            "MYSQL_HISTFILE",
        ],
    },
    Family {
        names: &[
            "ld.so",
            "ld-linux",
            "xargs",
            "env",
            "nice",
            "nohup",
            "timeout",
            "setsid",
            "stdbuf",
            "flock",
            "parallel",
            "setpriv",
            "strace",
            "ltrace",
            "watch",
            "taskset",
            "ionice",
            "chrt",
            "prlimit",
            "numactl",
            "time",
            "catchsegv",
            "valgrind",
            "perf",
            "fakeroot",
            "proot",
            "xvfb-run",
            "dbus-launch",
            "dbus-run-session",
            "sshpass",
            "cgexec",
            "tsp",
            "entr",
            "run-parts",
            "start-stop-daemon",
            "systemd-run",
            "systemd-nspawn",
            "firejail",
            "bwrap",
            "faketime",
            "linux32",
            "linux64",
            "setarch",
            "unbuffer",
            "rlwrap",
            "chpst",
            "daemonize",
        ],
        kind: Kind::Runner,
        how: "it runs the program its arguments name",
        options: &["-c", "-e", "--", "-exec"],
        env: &[],
    },
    Family {
        names: &[
            "su",
            "sudo",
            "doas",
            "runuser",
            "pkexec",
            "sg",
            "newgrp",
            "chroot",
            "unshare",
            "nsenter",
            "capsh",
            "script",
            "tmux",
            "screen",
            "at",
            "batch",
            "machinectl",
            "ssh-agent",
            "login",
            "byobu",
            "dtach",
            "abduco",
        ],
        kind: Kind::ShellRunner,
        how: "it runs a shell or commands read from its stdin when its arguments name no command, and changes identity, root, namespaces or terminal on the way",
        options: &[],
        env: &["SHELL"],
    },
    Family {
        names: &[
            "cp",
            "mv",
            "dd",
            "tee",
            "install",
            "ln",
            "split",
            "csplit",
            "truncate",
            "shred",
            "rm",
            "rmdir",
            "chmod",
            "chown",
            "chgrp",
            "touch",
            "mkdir",
            "mkfifo",
            "mknod",
            "xxd",
            "base64",
            "cpio",
            "pax",
            "unzip",
            "gzip",
            "gunzip",
            "bzip2",
            "xz",
            "zstd",
            "lz4",
            "7z",
            "7za",
            "ar",
            "objcopy",
            "strip",
            "sponge",
            "logrotate",
            "crontab",
            "setfacl",
            "chattr",
            "mktemp",
            "link",
            "unlink",
        ],
        kind: Kind::Writer,
        how: "it writes, moves or removes the files its arguments name",
        options: &["of=", "-t", "--target-directory=", "-o", "--output="],
        env: &[],
    },
    Family {
        names: &["sort"],
        kind: Kind::Writer,
        how: "`-o FILE` writes any file and `--compress-program=` runs any program",
        options: &["-o", "--output=", "--compress-program=", "-T"],
        env: &["TMPDIR"],
    },
    Family {
        names: &["patch"],
        kind: Kind::Writer,
        how: "it writes the files its patch names (`../` and absolute paths included, given `-p0`) and runs `ed` for ed-style diffs",
        options: &["-o", "--output=", "-d", "--directory=", "-p0", "-i"],
        env: &[],
    },
    Family {
        names: &["cc", "gcc", "g++", "c++", "clang", "clang++", "cpp", "ld", "as", "tcc", "rustc", "go"],
        kind: Kind::Options,
        how: "`-wrapper`, `@file` response files, `-fplugin=`, `-B`, `-specs=` and `-Wl,`/`-Wp,` options run any program or write files",
        options: &[
            "-wrapper",
            "@file",
            "-fplugin=",
            "-B",
            "-specs=",
            "-Wl,-plugin",
            "-Wp,-MD,",
            "-Xlinker",
            "-o",
            "--output",
            "-iplugindir=",
        ],
        env: &[
            "GCC_EXEC_PREFIX",
            "COMPILER_PATH",
            "LIBRARY_PATH",
            "CPATH",
            "C_INCLUDE_PATH",
            "GCC_COMPARE_DEBUG",
            "DEPENDENCIES_OUTPUT",
            "SUNPRO_DEPENDENCIES",
            "RUSTC_WRAPPER",
        ],
    },
    Family {
        names: &["git"],
        kind: Kind::Options,
        how: "`-c`, `--output=`, `--upload-pack`, `--exec-path`, `core.sshCommand`, `core.fsmonitor`, filters and hooks run programs or write files",
        options: &[
            "-c",
            "--output=",
            "--upload-pack=",
            "--receive-pack=",
            "--exec-path=",
            "--ext-diff",
            "--open-files-in-pager",
            "-O",
            "--config-env=",
            "-C",
            "--git-dir=",
            "--work-tree=",
            "--exec=",
        ],
        env: &[
            "GIT_CONFIG_*",
            "GIT_SSH",
            "GIT_SSH_COMMAND",
            "GIT_PAGER",
            "GIT_EDITOR",
            "GIT_EXTERNAL_DIFF",
            "GIT_ASKPASS",
            "GIT_PROXY_COMMAND",
            "GIT_EXEC_PATH",
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_TEMPLATE_DIR",
            "GIT_SEQUENCE_EDITOR",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "SSH_ASKPASS",
        ],
    },
    Family {
        names: &["ssh", "scp", "sftp", "rsync"],
        kind: Kind::Options,
        how: "`-o ProxyCommand=`, `LocalCommand`, `-F` configuration and rsync's `-e`/`--rsh` run any program, and copies write any file",
        options: &["-o", "-F", "-e", "--rsh=", "-S", "--rsync-path="],
        env: &["RSYNC_RSH", "RSYNC_CONNECT_PROG", "SSH_ASKPASS"],
    },
    Family {
        names: &["tar", "bsdtar"],
        kind: Kind::Options,
        how: "`--to-command`, `--checkpoint-action=exec`, `--use-compress-program`, `-I` and `-F` run any program, and extraction writes files",
        options: &[
            "--to-command=",
            "--checkpoint-action=exec=",
            "--use-compress-program=",
            "-I",
            "-F",
            "--info-script=",
            "-C",
            "-f",
            "-x",
        ],
        env: &["TAR_OPTIONS"],
    },
    Family {
        names: &["find"],
        kind: Kind::Options,
        how: "`-exec`, `-execdir`, `-ok` run programs, and `-fprint`, `-fls`, `-delete` write or remove files",
        options: &["-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls", "-delete"],
        env: &[],
    },
    Family {
        names: &[
            "vi",
            "vim",
            "nvim",
            "view",
            "emacs",
            "nano",
            "less",
            "more",
            "most",
            "man",
            "pager",
            "editor",
            "sensible-editor",
            "sensible-pager",
            "mc",
        ],
        kind: Kind::Options,
        how: "`:!`, `!cmd`, `LESSOPEN`, `-c` commands and pagers run any program, and they write files",
        options: &["-c", "+", "--cmd", "-u", "-P", "-H", "--pager="],
        env: &[
            "LESSOPEN",
            "LESSCLOSE",
            "LESSKEY",
            "LESSEDIT",
            "VISUAL",
            "EDITOR",
            "PAGER",
            "MANPAGER",
            "MANOPT",
            "VIMINIT",
            "EXINIT",
            "MYVIMRC",
            "BROWSER",
        ],
    },
    Family {
        names: &["curl", "wget"],
        kind: Kind::Options,
        how: "`-o`/`-O` write any file, `-K`/`--config` and `-e` read more options, and they reach the network",
        options: &[
            "-o",
            "-O",
            "--output=",
            "--output-document=",
            "-K",
            "--config=",
            "-e",
            "--execute=",
            "-D",
            "--dump-header",
            "-T",
            "--upload-file",
            "-d@",
            "--post-file=",
        ],
        env: &["CURL_HOME", "WGETRC", "http_proxy", "https_proxy", "ALL_PROXY"],
    },
    Family {
        names: &["openssl"],
        kind: Kind::Options,
        how: "`-out` writes any file, `-engine` and `-provider` load any code, and `s_client`/`s_server` reach the network",
        options: &["-out", "-engine", "-provider", "-provider-path", "-config", "-writerand"],
        env: &["OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES"],
    },
    Family {
        names: &["zip"],
        kind: Kind::Options,
        how: "`-TT`/`--unzip-command` runs any program and it writes the archive it names",
        options: &["-TT", "--unzip-command", "-T", "-O", "--output-file"],
        env: &["ZIPOPT"],
    },
    Family {
        names: &[
            "mount",
            "umount",
            "ip",
            "iptables",
            "nft",
            "tc",
            "ifconfig",
            "route",
            "sysctl",
            "modprobe",
            "insmod",
            "docker",
            "podman",
            "kubectl",
            "ctr",
            "nerdctl",
            "crictl",
            "systemctl",
            "service",
            "journalctl",
            "apt",
            "apt-get",
            "aptitude",
            "dpkg",
            "rpm",
            "dnf",
            "yum",
            "pip",
            "pip3",
            "npm",
            "npx",
            "cargo",
            "snap",
            "flatpak",
            "losetup",
            "dmsetup",
            "mkfs",
            "fdisk",
            "parted",
            "useradd",
            "usermod",
            "passwd",
            "chpasswd",
            "visudo",
            "reboot",
            "shutdown",
            "kill",
            "pkill",
            "killall",
        ],
        kind: Kind::Admin,
        how: "it administers the host (mounts, network, containers, services, packages whose scripts run as root, users, processes)",
        options: &[],
        env: &[
            "DOCKER_HOST",
            "KUBECONFIG",
            "CONTAINER_HOST",
            "APT_CONFIG",
            "PIP_CONFIG_FILE",
            "NPM_CONFIG_PREFIX",
            "npm_config_script_shell",
            "CARGO_HOME",
            "RUSTC_WRAPPER",
        ],
    },
];

/// Whether `name` is `known` or a version, target or flavour of it: `python3.11`,
/// `perl5.36.0`, `ruby3.1`, `gcc-12`, `x86_64-linux-gnu-gcc-12`, `vim.basic`, `nawk`.
pub(super) fn is_flavour_of(name: &str, known: &str) -> bool {
    if name == known {
        return true;
    }
    if let Some(rest) = name.strip_prefix(known)
        && (rest.starts_with(['-', '.', '_']) || rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    {
        return true;
    }
    // A target prefix: `x86_64-linux-gnu-gcc`, `x86_64-linux-gnu-gcc-12`.
    name.split('-').skip(1).enumerate().any(|(i, _)| {
        let tail: Vec<&str> = name.split('-').skip(i + 1).collect();
        let tool = tail.join("-");
        tool == known
            || tool
                .strip_prefix(known)
                .is_some_and(|rest| rest.starts_with('-') && rest[1..].chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// The family of the program called `name`, if it is in one.
pub(super) fn family_named(name: &str) -> Option<&'static Family> {
    if name.is_empty() {
        return None;
    }
    FAMILIES.iter().find(|family| family.names.iter().any(|known| is_flavour_of(name, known)))
}

/// Whether `env` (a family's variable, possibly a prefix ending in `*`) covers `name`.
pub(super) fn env_covers(env: &str, name: &str) -> bool {
    match env.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => env == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_targets_and_flavours_are_recognised() {
        for (name, family) in [
            ("python3.11", "python3"),
            ("perl5.36.0", "perl"),
            ("ruby3.1", "ruby"),
            ("x86_64-linux-gnu-gcc-12", "gcc"),
            ("gcc-12", "gcc"),
            ("vim.basic", "vim"),
            ("sqlite3", "sqlite3"),
            ("nodejs", "nodejs"),
        ] {
            assert!(family_named(name).is_some_and(|f| f.names.contains(&family)), "{name}");
        }
        for name in ["true", "ls", "cat", "grep", "shasum", "perldoc-no", "pythonista", "eddy"] {
            assert!(
                family_named(name).is_none_or(|f| !f.names.iter().any(|k| *k == "python3" || *k == "ed")),
                "{name}"
            );
        }
        assert!(family_named("true").is_none());
        assert!(family_named("cat").is_none());
    }

    #[test]
    fn every_name_is_in_one_family() {
        let mut seen = std::collections::HashSet::new();
        for family in FAMILIES {
            for name in family.names {
                assert!(seen.insert(*name), "{name} is in two families");
            }
        }
    }
}
