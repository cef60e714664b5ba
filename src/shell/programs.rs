//! Program knowledge, as data: every table the reducer ([`super::reduce`])
//! and the file reader ([`super::files`]) consult, in one place.
//!
//! Options are written as they appear on a command line: `-u` (a short
//! option; in a cluster `-Eu root` or attached `-uroot`), `--user` (a long
//! option; `--user=root` or `--user root`). To teach toolgate a program, add
//! a row here; the code reading the rows does not change.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// How a wrapper finds the command it runs (SPEC §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// The words after its options (and its fixed operands) are a command.
    Command,
    /// The words after its options are joined by spaces into a script
    /// (`eval`, `watch`).
    Script,
    /// It runs a command only through a script option (`su -c`).
    ScriptOption,
}

/// A wrapper: a program that runs another command (SPEC §8.2).
#[derive(Debug)]
pub struct Wrapper {
    /// Its names.
    pub names: &'static [&'static str],
    /// Options that take a value.
    pub value: &'static [&'static str],
    /// Options that take no value. An option in neither list is unknown:
    /// it is read as taking no value and the invocation is incomplete.
    pub flags: &'static [&'static str],
    /// Options whose value is a script it runs (`su -c`, `env -S`).
    pub script: &'static [&'static str],
    /// Options with which it runs nothing given after it (`command -v`,
    /// `sudo -l`): the words after are not a command.
    pub queries: &'static [&'static str],
    /// Options that put it in a mode toolgate does not read (`sudo -l`,
    /// `sudo -e`): the invocation is incomplete.
    pub modes: &'static [&'static str],
    /// Options whose value, if any, is attached (`xargs -i{}`, `-l1`).
    pub optional: &'static [&'static str],
    /// Options with which its script words are a command instead
    /// (`watch -x`).
    pub as_command: &'static [&'static str],
    /// Options whose value is a file it reads (`xargs -a`).
    pub reads: &'static [&'static str],
    /// Options whose value is a file it writes (`time -o`).
    pub writes: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`,
    /// `flock FILE`, `busybox` none).
    pub operands: u8,
    /// `-N` (a number) is an option (`nice -10`).
    pub numeric: bool,
    /// Leading `NAME=value` words are assignments (`env`).
    pub assignments: bool,
    /// How it finds its command.
    pub runs: Runs,
    /// Stripped for allow rules (SPEC §8.4: `timeout time nice nohup stdbuf
    /// command builtin noglob`; `xargs` only when given no option).
    pub transparent: bool,
    /// The command it runs gets a trailing dynamic word (`xargs`,
    /// `parallel`), and `{}` in it is dynamic.
    pub feeds_arguments: bool,
}

const fn w(names: &'static [&'static str]) -> Wrapper {
    Wrapper {
        names,
        value: &[],
        flags: &[],
        script: &[],
        queries: &[],
        modes: &[],
        optional: &[],
        as_command: &[],
        reads: &[],
        writes: &[],
        operands: 0,
        numeric: false,
        assignments: false,
        runs: Runs::Command,
        transparent: false,
        feeds_arguments: false,
    }
}

/// Every wrapper (SPEC §8.2). Shells with `-c` are in [`SHELLS`]; `find
/// -exec` in [`FIND_EXEC`].
pub static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        value: &[
            "-a", "--argv0", "-u", "--unset", "-C", "--chdir", "-P", "--default-signal",
            "--block-signal", "--ignore-signal",
        ],
        flags: &[
            "-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-",
            "--list-signal-handling",
        ],
        script: &["-S", "--split-string"],
        assignments: true,
        ..w(&["env"])
    },
    Wrapper {
        value: &[
            "-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C",
            "--close-from", "-D", "--chdir", "-r", "--role", "-t", "--type", "-U", "--other-user",
            "-T", "--command-timeout", "-R", "--chroot",
        ],
        flags: &[
            "-A", "--askpass", "-b", "--background", "-B", "--bell", "-E", "--preserve-env", "-H",
            "--set-home", "-i", "--login", "-k", "--reset-timestamp", "-n", "--non-interactive",
            "-P", "--preserve-groups", "-S", "--stdin", "-s", "--shell", "-N", "--no-update", "--",
        ],
        modes: &[
            "-l", "--list", "-e", "--edit", "-v", "--validate", "-V", "--version", "-K",
            "--remove-timestamp", "--help",
        ],
        ..w(&["sudo"])
    },
    Wrapper {
        value: &["-u", "-C"],
        flags: &["-n", "-s", "-L"],
        ..w(&["doas"])
    },
    Wrapper {
        queries: &["-h", "--help", "-V", "--version"],
        value: &[
            "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
            "--whitelist-environment",
        ],
        flags: &[
            "-", "-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty", "-f",
            "--fast",
        ],
        script: &["-c", "--command", "--session-command"],
        runs: Runs::ScriptOption,
        ..w(&["su"])
    },
    Wrapper {
        value: &["-n", "--adjustment"],
        numeric: true,
        transparent: true,
        ..w(&["nice"])
    },
    Wrapper {
        value: &[
            "-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid",
        ],
        flags: &["-t", "--ignore"],
        ..w(&["ionice"])
    },
    Wrapper {
        value: &["-i", "--input", "-o", "--output", "-e", "--error"],
        transparent: true,
        ..w(&["stdbuf"])
    },
    Wrapper {
        value: &["-a"],
        flags: &["-c", "-l"],
        ..w(&["exec"])
    },
    Wrapper {
        flags: &["-p"],
        queries: &["-v", "-V"],
        transparent: true,
        ..w(&["command"])
    },
    Wrapper {
        transparent: true,
        ..w(&["builtin"])
    },
    Wrapper {
        transparent: true,
        ..w(&["noglob"])
    },
    Wrapper {
        transparent: true,
        ..w(&["nohup"])
    },
    Wrapper {
        flags: &["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
        ..w(&["setsid"])
    },
    Wrapper {
        flags: &["-p"],
        ..w(&["unbuffer"])
    },
    Wrapper {
        value: &["-t", "-w"],
        flags: &["-d", "-i", "-m", "-s", "-u"],
        ..w(&["caffeinate"])
    },
    Wrapper {
        value: &["-s", "--signal", "-k", "--kill-after"],
        flags: &["--foreground", "--preserve-status", "-v", "--verbose", "-f", "-p"],
        operands: 1,
        transparent: true,
        ..w(&["timeout", "gtimeout"])
    },
    Wrapper {
        value: &["-f", "--format"],
        flags: &["-p", "--portability", "-v", "--verbose", "-a", "--append", "-q", "--quiet", "-l"],
        writes: &["-o", "--output"],
        transparent: true,
        ..w(&["time"])
    },
    Wrapper {
        value: &[
            "-I", "-n", "--max-args", "-P", "--max-procs", "-d", "--delimiter", "-L", "-s",
            "--max-chars", "-E", "--process-slot-var", "-J", "-R", "-S",
        ],
        flags: &[
            "-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive",
            "-x", "--exit", "-o", "--open-tty", "--replace",
        ],
        optional: &["-i", "-l", "-e", "--replace", "--max-lines", "--eof"],
        reads: &["-a", "--arg-file"],
        transparent: true,
        feeds_arguments: true,
        ..w(&["xargs"])
    },
    Wrapper {
        value: &[
            "--block", "--blocksize", "--block-size", "-j", "--jobs", "-P", "--max-procs", "-S",
            "--sshlogin", "-d", "--delimiter", "-I", "--colsep", "-C", "-n", "--max-args", "-N",
            "-L", "--max-lines", "--results", "--res", "--timeout", "--delay", "--retries",
            "--tag-string", "--tagstring", "-E", "--halt", "--memfree", "--load", "--workdir",
            "--wd", "--tmpdir", "--basefile", "--bf", "--transferfile", "--tf", "--return",
            "--sshloginfile", "--slf", "--env", "--limit",
        ],
        flags: &[
            "-k", "--keep-order", "-0", "--null", "-q", "--quote", "-u", "--ungroup", "-v",
            "--verbose", "--dry-run", "--dryrun", "--progress", "--eta", "--bar", "-X", "-m",
            "--group", "--line-buffer", "--lb", "--tag", "--no-notice", "--will-cite", "-r",
            "--no-run-if-empty", "--pipe", "--spreadstdin", "--xargs", "--shuf", "--nonall",
            "--onall", "--trim", "--plus", "--citation", "--joblog", "--files", "-t",
        ],
        reads: &["-a", "--arg-file"],
        feeds_arguments: true,
        ..w(&["parallel"])
    },
    Wrapper {
        value: &["-n", "--interval", "-q", "--equexit", "-s", "--shotsdir"],
        flags: &[
            "-d", "--differences", "-t", "--no-title", "-b", "--beep", "-e", "--errexit", "-g",
            "--chgexit", "-c", "--color", "-C", "--no-color", "-p", "--precise", "-w", "--no-wrap",
            "-x", "--exec", "-r", "--no-rerun",
        ],
        as_command: &["-x", "--exec"],
        runs: Runs::Script,
        ..w(&["watch"])
    },
    Wrapper {
        value: &["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
        flags: &[
            "-s", "--shared", "-x", "-e", "--exclusive", "-n", "--nb", "--nonblock", "-u",
            "--unlock", "-o", "--close", "-F", "--no-fork", "--verbose",
        ],
        script: &["-c", "--command"],
        operands: 1,
        ..w(&["flock"])
    },
    Wrapper {
        value: &["--userspec", "--groups"],
        flags: &["--skip-chdir"],
        operands: 1,
        ..w(&["chroot"])
    },
    Wrapper {
        optional: &[
            "-m", "--mount", "-u", "--uts", "-i", "--ipc", "-n", "--net", "-p", "--pid", "-U",
            "--user", "-C", "--cgroup", "-T", "--time", "-r", "--root", "-w", "--wd",
        ],
        value: &[
            "-t", "--target", "-S", "--setuid", "-G", "--setgid", "-N", "--net-socket",
            "--user-parent",
        ],
        flags: &[
            "-a", "--all", "-m", "--mount", "-u", "--uts", "-i", "--ipc", "-n", "--net", "-p",
            "--pid", "-U", "--user", "-C", "--cgroup", "-T", "--time", "-r", "--root", "-w",
            "--wd", "-F", "--no-fork", "--preserve-credentials", "-Z", "--follow-context", "-e",
            "--env",
        ],
        ..w(&["nsenter"])
    },
    Wrapper {
        value: &[
            "-S", "--setuid", "-G", "--setgid", "--propagation", "--setgroups", "-R", "--root",
            "-w", "--wd", "--map-user", "--map-group", "--map-users", "--map-groups",
            "--monotonic", "--boottime", "-l", "--load-interp",
        ],
        flags: &[
            "-m", "--mount", "-u", "--uts", "-i", "--ipc", "-n", "--net", "-p", "--pid", "-U",
            "--user", "-C", "--cgroup", "-T", "--time", "-f", "--fork", "-r", "--map-root-user",
            "-c", "--map-current-user", "--kill-child", "--mount-proc", "--keep-caps",
            "--map-auto",
        ],
        ..w(&["unshare"])
    },
    Wrapper {
        queries: &["-h", "--help", "-V", "--version"],
        value: &[
            "-E", "--echo", "-m", "--logging-format", "-T", "--log-timing", "-I", "--log-in", "-O",
            "--log-out", "-B", "--log-io",
        ],
        flags: &[
            "-a", "--append", "-e", "--return", "-f", "--flush", "-q", "--quiet", "-t", "--timing",
        ],
        script: &["-c", "--command"],
        runs: Runs::ScriptOption,
        ..w(&["script"])
    },
    Wrapper {
        queries: &["--list", "--list-full", "--help"],
        ..w(&["busybox"])
    },
    Wrapper {
        runs: Runs::Script,
        ..w(&["eval"])
    },
    // Beyond SPEC §8.2's list: programs that run the command after them
    // (tracers, sandboxes, schedulers, privilege tools), so that deny and
    // ask rules see it (`strace rm -rf x` is `rm -rf x` to a deny rule).
    Wrapper {
        value: &["-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-X", "-O", "-S"],
        flags: &["-f", "-ff", "-c", "-C", "-w", "-t", "-tt", "-ttt", "-T", "-v", "-V", "-x", "-xx", "-y", "-yy", "-q", "-qq", "-i", "-r", "-z", "-Z", "-k"],
        ..w(&["strace"])
    },
    Wrapper {
        value: &["-o", "-e", "-p", "-s", "-u", "-a", "-A", "-D", "-l", "-n", "-x", "-w"],
        flags: &["-f", "-c", "-C", "-i", "-r", "-S", "-t", "-tt", "-ttt", "-T", "-b"],
        ..w(&["ltrace"])
    },
    Wrapper {
        flags: &["-q", "-v", "--quiet", "--verbose"],
        ..w(&["valgrind"])
    },
    Wrapper {
        flags: &["--quiet", "--debug", "--noprofile", "--private", "--net=none", "--nonewprivs", "--seccomp"],
        ..w(&["firejail"])
    },
    Wrapper {
        flags: &["-a", "--all-tasks", "-b", "--batch", "-d", "--deadline", "-f", "--fifo", "-i", "--idle", "-o", "--other", "-r", "--rr", "-R", "--reset-on-fork", "-v", "--verbose"],
        value: &["-T", "--sched-runtime", "-P", "--sched-period", "-D"],
        modes: &["-p", "--pid", "-m", "--max"],
        operands: 1,
        ..w(&["chrt"])
    },
    Wrapper {
        flags: &["-a", "--all-tasks", "-c", "--cpu-list"],
        modes: &["-p", "--pid"],
        operands: 1,
        ..w(&["taskset"])
    },
    Wrapper {
        value: &["-u", "--user", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"],
        flags: &["-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty"],
        script: &["-c", "--command"],
        ..w(&["runuser"])
    },
    Wrapper {
        value: &["--user"],
        flags: &["--disable-internal-agent", "--keep-cwd"],
        ..w(&["pkexec"])
    },
    Wrapper {
        queries: &["--help", "--version"],
        ..w(&["toybox"])
    },
    Wrapper {
        value: &["-e", "--error-file", "-f", "--auth-file", "-n", "--server-num", "-p", "--xauth-protocol", "-s", "--server-args", "-w", "--wait"],
        flags: &["-a", "--auto-servernum", "-l", "--listen-tcp"],
        ..w(&["xvfb-run"])
    },
    Wrapper {
        value: &["--config-file", "--dbus-daemon"],
        flags: &["--session"],
        ..w(&["dbus-run-session"])
    },
    Wrapper {
        flags: &["-e", "-v"],
        ..w(&["chronic"])
    },
    Wrapper {
        value: &["-p", "--property", "-u", "--unit", "-E", "--setenv", "--slice", "--description", "-M", "--machine", "-H", "--host", "--uid", "--gid", "--nice", "--working-directory", "--on-calendar", "--on-active"],
        flags: &["--user", "--system", "-t", "--pty", "-P", "--pipe", "-q", "--quiet", "-G", "--collect", "--wait", "--scope", "-S", "--shell", "-d", "--same-dir", "-r", "--remain-after-exit"],
        ..w(&["systemd-run"])
    },
    // Shells outside SPEC's list: their `-c` script is read as a POSIX
    // script, so deny rules see the commands in it; what does not read
    // cleanly makes the invocation incomplete.
    Wrapper {
        flags: &["-f", "-e", "-x", "-v", "-X", "-V", "-n", "-l", "-i", "-b", "-m", "-q", "-s", "-t"],
        script: &["-c"],
        runs: Runs::ScriptOption,
        ..w(&["csh", "tcsh"])
    },
    Wrapper {
        flags: &[
            "-NoProfile", "-noprofile", "-NoLogo", "-nologo", "-NonInteractive",
            "-noninteractive", "-nop", "-NoExit", "-Login", "-l",
        ],
        value: &["-ExecutionPolicy", "-ep", "-WorkingDirectory", "-wd", "-OutputFormat", "-InputFormat"],
        script: &["-c", "-Command", "-command", "-EncodedCommand", "-e", "-ec"],
        runs: Runs::ScriptOption,
        ..w(&["pwsh", "powershell"])
    },
    Wrapper {
        flags: &["-n", "--no-config-file", "-l", "--login", "-i", "--interactive", "--no-rc", "--norc"],
        script: &["-c", "--commands"],
        runs: Runs::ScriptOption,
        ..w(&["nu", "elvish", "xonsh"])
    },
    // `trap ACTION SIGNAL…`: the action is code the shell runs later.
    Wrapper {
        queries: &["-l", "-p", "-P"],
        runs: Runs::Script,
        ..w(&["trap"])
    },
];

/// Every name of a table's rows with its row: a lookup is one hash probe,
/// not a scan of every row's names (the tables are asked for each command
/// read).
struct NameIndex(std::sync::OnceLock<HashMap<&'static str, usize, BuildHasherDefault<Fnv>>>);

/// FNV-1a: the keys are the tables' own names (fixed, short), so a
/// seeded hash buys nothing and std's SipHash costs more than the lookup
/// it serves; the standard library offers no other `Hasher`.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

impl NameIndex {
    const fn new() -> NameIndex {
        NameIndex(std::sync::OnceLock::new())
    }

    /// The first row of `rows` that `names` gives `name`.
    fn find<T>(
        &self,
        rows: &'static [T],
        names: fn(&T) -> &'static [&'static str],
        name: &str,
    ) -> Option<&'static T> {
        let index = self.0.get_or_init(|| {
            let mut m = HashMap::default();
            for (i, row) in rows.iter().enumerate() {
                for &n in names(row) {
                    // Of two rows naming a program, the first wins (as a
                    // scan would find it).
                    m.entry(n).or_insert(i);
                }
            }
            m
        });
        index.get(name).and_then(|&i| rows.get(i))
    }
}

/// What every table knows of one program name: one lookup for a command
/// instead of one per table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    /// Its wrapper row ([`wrapper`]).
    pub wrapper: Option<&'static Wrapper>,
    /// Its subcommand table ([`subcommand_table`]).
    pub subcommands: Option<&'static SubcommandTable>,
    /// Its file table ([`file_program`]).
    pub file: Option<&'static FileProgram>,
    /// Its network table ([`network_program`]).
    pub network: Option<&'static NetworkProgram>,
    /// Its inline-code options ([`INLINE_CODE`]).
    pub inline_code: Option<&'static [&'static str]>,
    /// It is one of the [`SHELLS`].
    pub shell: bool,
}

impl Known {
    /// A name no table knows.
    pub const NOTHING: Known = Known {
        wrapper: None,
        subcommands: None,
        file: None,
        network: None,
        inline_code: None,
        shell: false,
    };
}

/// A name no table has whose inline-code options are Python's.
static PYTHON_LIKE: Known = Known {
    inline_code: Some(PYTHON_INLINE_CODE),
    ..Known::NOTHING
};

static KNOWN_INDEX: std::sync::OnceLock<HashMap<&'static str, Known, BuildHasherDefault<Fnv>>> =
    std::sync::OnceLock::new();

/// Every program name some table of this module names (with repeats).
fn table_names() -> impl Iterator<Item = &'static str> {
    let rows = |names: &'static [&'static str]| names.iter().copied();
    WRAPPERS
        .iter()
        .flat_map(move |r| rows(r.names))
        .chain(SUBCOMMAND_TABLES.iter().flat_map(move |r| rows(r.names)))
        .chain(FILE_PROGRAMS.iter().flat_map(move |r| rows(r.names)))
        .chain(NETWORK_PROGRAMS.iter().flat_map(move |r| rows(r.names)))
        .chain(INLINE_CODE.iter().flat_map(move |(n, _)| rows(n)))
        .chain(SHELLS.iter().copied())
}

/// What the tables know of the program `name` (a basename), as each
/// table's own lookup answers it.
pub fn known(name: &str) -> &'static Known {
    let index = KNOWN_INDEX.get_or_init(|| {
        let mut names: Vec<&'static str> = Vec::new();
        names.extend(table_names());
        let mut m = HashMap::default();
        for n in names {
            m.entry(n).or_insert_with(|| Known {
                wrapper: wrapper(n),
                subcommands: subcommand_table(n),
                file: file_program(n),
                network: network_program(n),
                // Of two rows naming a program, the first (as a scan finds it).
                inline_code: INLINE_CODE
                    .iter()
                    .find(|(names, _)| names.contains(&n))
                    .map(|(_, o)| *o)
                    .or_else(|| n.starts_with("python").then_some(PYTHON_INLINE_CODE)),
                shell: SHELLS.contains(&n),
            });
        }
        m
    });
    match index.get(name) {
        Some(k) => k,
        None if name.starts_with("python") => &PYTHON_LIKE,
        None => &Known::NOTHING,
    }
}

static WRAPPER_INDEX: NameIndex = NameIndex::new();
static SUBCOMMAND_INDEX: NameIndex = NameIndex::new();
static FILE_INDEX: NameIndex = NameIndex::new();
static NETWORK_INDEX: NameIndex = NameIndex::new();

/// The wrapper of this name, if it is one.
pub fn wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPER_INDEX.find(WRAPPERS, |w| w.names, name)
}

/// Shells: with `-c` (or a short cluster holding `c`) they run a script.
pub const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];
/// Options of a shell that take a value.
pub const SHELL_VALUE_OPTIONS: &[&str] = &["--rcfile", "--init-file", "-o", "+o", "-O", "+O"];

/// `find` actions that run a command, ended by `;` or `+`.
pub const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Variables whose assignment allow rules may look past (SPEC §8.4).
pub const SAFE_VARIABLES: &[&str] = &[
    "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "NO_COLOR", "FORCE_COLOR", "NODE_ENV",
    "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "GOOS", "GOARCH",
    "CGO_ENABLED", "GO111MODULE", "GOEXPERIMENT",
];

/// Directories whose programs allow rules may name by basename (SPEC §8.4).
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/opt/homebrew/bin",
];

/// A program's options before its subcommand (SPEC §7.2).
#[derive(Debug)]
pub struct SubcommandTable {
    /// Its names.
    pub names: &'static [&'static str],
    /// Options before the subcommand that take a value; `--opt=value` never
    /// takes the next word.
    pub value: &'static [&'static str],
    /// Options known to take no value.
    pub flags: &'static [&'static str],
}

/// Programs with a subcommand form (SPEC §7.2). An option in neither list
/// is read as taking no value; deny and ask candidates also try it as
/// taking one (SPEC §13).
pub static SUBCOMMAND_TABLES: &[SubcommandTable] = &[
    SubcommandTable {
        names: &["git"],
        value: &[
            "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
            "--config-env", "--exec-path", "--list-cmds",
        ],
        flags: &[
            "--no-pager", "-p", "--paginate", "-P", "--bare", "--no-replace-objects",
            "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
            "--no-optional-locks", "--no-advice", "--version", "--help", "-v", "-h", "--html-path",
            "--man-path", "--info-path",
        ],
    },
    SubcommandTable {
        names: &["docker", "podman"],
        value: &[
            "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert",
            "--tlscert", "--tlskey", "--url", "--connection", "--root", "--runroot", "--remote",
        ],
        flags: &["-D", "--debug", "--tls", "--tlsverify", "-v", "--version", "--help"],
    },
    SubcommandTable {
        names: &["kubectl", "oc"],
        value: &[
            "-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server",
            "--user", "--token", "--as", "--as-group", "--request-timeout", "-v",
            "--certificate-authority", "--client-certificate", "--client-key",
        ],
        flags: &["--insecure-skip-tls-verify", "-A", "--all-namespaces", "--help", "-h"],
    },
    SubcommandTable {
        names: &["helm"],
        value: &[
            "-n", "--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver",
            "--kube-token", "--registry-config", "--repository-config", "--repository-cache",
        ],
        flags: &["--debug", "-h", "--help"],
    },
    SubcommandTable {
        names: &["npm", "pnpm", "yarn"],
        value: &[
            "-C", "--prefix", "--dir", "--cwd", "--filter", "-F", "-w", "--workspace",
            "--loglevel", "--registry", "--userconfig",
        ],
        flags: &[
            "-g", "--global", "-r", "--recursive", "-s", "--silent", "-q", "--quiet", "--ws",
            "--workspaces", "--workspace-root", "-W", "-y", "--yes", "--verbose", "-v",
            "--version", "-h", "--help", "--offline", "--frozen-lockfile",
        ],
    },
    SubcommandTable {
        names: &["cargo"],
        value: &[
            "-C", "--config", "-Z", "--color", "--manifest-path", "--target-dir", "-j", "--jobs",
        ],
        flags: &[
            "-v", "--verbose", "-q", "--quiet", "--frozen", "--locked", "--offline", "-V",
            "--version", "-h", "--help", "--list",
        ],
    },
    SubcommandTable {
        names: &["gh"],
        value: &["-R", "--repo", "--hostname"],
        flags: &["--help", "--version"],
    },
    SubcommandTable {
        names: &["aws"],
        value: &[
            "--profile", "--region", "--output", "--endpoint-url", "--query", "--ca-bundle",
            "--cli-read-timeout", "--cli-connect-timeout", "--color",
        ],
        flags: &[
            "--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--no-cli-pager",
            "--version",
        ],
    },
    SubcommandTable {
        names: &["gcloud"],
        value: &[
            "--project", "--account", "--configuration", "--format", "--verbosity",
            "--impersonate-service-account", "--billing-project", "--flags-file", "--flatten",
            "--trace-token",
        ],
        flags: &[
            "-q", "--quiet", "--log-http", "--user-output-enabled", "--no-user-output-enabled",
            "-h", "--help",
        ],
    },
    SubcommandTable {
        names: &["terraform", "tofu"],
        value: &[],
        flags: &["-help", "-version", "-v", "-h"],
    },
];

/// The subcommand table of this program, if it has one.
pub fn subcommand_table(name: &str) -> Option<&'static SubcommandTable> {
    SUBCOMMAND_INDEX.find(SUBCOMMAND_TABLES, |t| t.names, name)
}

/// What a program's operands are (SPEC §8.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// Files it reads.
    Read,
    /// Files it edits (creates, writes, removes).
    Edit,
    /// The last is an edit, the others reads (`cp`); with one operand, a
    /// read.
    LastEdit,
    /// Its first operand is not a file (a mode or owner); the rest are
    /// edits (`chmod`, `chown`).
    EditAfterFirst,
    /// The first is an edit, the others reads (`zip ARCHIVE FILES…`).
    FirstEdit,
    /// Not files.
    None,
}

/// A program that names files (SPEC §8.5, §13).
#[derive(Debug)]
pub struct FileProgram {
    /// Its names.
    pub names: &'static [&'static str],
    /// What its operands are.
    pub operands: Operands,
    /// Options that take a value that is not a file.
    pub value: &'static [&'static str],
    /// Options whose value is a file it reads.
    pub reads: &'static [&'static str],
    /// Options whose value is a file it edits.
    pub writes: &'static [&'static str],
    /// Options that take two values, the second a file it reads
    /// (`jq --slurpfile NAME FILE`).
    pub reads2: &'static [&'static str],
    /// Options that take two values, neither a file (`jq --arg NAME V`).
    pub value2: &'static [&'static str],
    /// How many leading operands are not files (a pattern, a script, a
    /// filter), unless an option of `given_by` supplied it.
    pub leading: u8,
    /// Options that supply the leading operand (`grep -e`, `sed -f`).
    pub given_by: &'static [&'static str],
    /// Options that make it recursive.
    pub recursive: &'static [&'static str],
    /// Always recursive (`rg`, `du`, `find`).
    pub always_recursive: bool,
    /// Options that make its file operands edits (`-i`, `--in-place`); a
    /// short one also matches with a suffix attached (`sed -i.bak`).
    pub in_place: &'static [&'static str],
    /// Options that execute a command or write beyond its operands.
    pub exec: &'static [&'static str],
}

const fn f(names: &'static [&'static str], operands: Operands) -> FileProgram {
    FileProgram {
        names,
        operands,
        value: &[],
        reads: &[],
        writes: &[],
        reads2: &[],
        value2: &[],
        leading: 0,
        given_by: &[],
        recursive: &[],
        always_recursive: false,
        in_place: &[],
        exec: &[],
    }
}

use Operands::{Edit, EditAfterFirst, FirstEdit, LastEdit, Read};

/// Every program whose operands or options name files.
pub static FILE_PROGRAMS: &[FileProgram] = &[
    f(
        &[
            "cat", "tac", "more", "nl", "strings", "zcat", "bzcat", "xzcat", "gzcat", "file",
            "stat", "md5", "cksum", "sum", "b2sum", "rev", "expand", "unexpand", "tsort", "fmt",
            "pr",
        ],
        Read,
    ),
    FileProgram {
        value: &[
            "-I", "--ignore", "-w", "--width", "--hide", "--format", "--sort", "--time",
            "--time-style", "--color", "--block-size", "--indicator-style", "--quoting-style",
            "-T", "--tabsize",
        ],
        recursive: &["-R", "--recursive"],
        ..f(&["ls", "gls", "eza", "exa", "lsd"], Read)
    },
    FileProgram {
        value: &[
            "-n", "--lines", "-c", "--bytes", "-s", "--sleep-interval", "--pid",
            "--max-unchanged-stats",
        ],
        ..f(&["head", "tail"], Read)
    },
    FileProgram {
        value: &[
            "-b", "-h", "-j", "-o", "-p", "-P", "-t", "-T", "-x", "-y", "-z", "--pattern",
            "--tabs", "--shift", "--max-back-scroll", "--lines", "--window",
        ],
        writes: &["--log-file", "--LOG-FILE"],
        // `+cmd` runs a less command at start (`+!cmd` a shell command).
        exec: &["+"],
        ..f(&["less"], Read)
    },
    FileProgram {
        value: &[
            "-l", "--language", "-H", "--highlight-line", "--theme", "--style", "-r",
            "--line-range", "--tabs", "--wrap", "--terminal-width", "-m", "--map-syntax",
            "--color", "--italic-text", "--decorations", "--paging", "--pager", "--file-name",
        ],
        ..f(&["bat", "batcat"], Read)
    },
    FileProgram {
        value: &[
            "-A", "--address-radix", "-j", "--skip-bytes", "-N", "--read-bytes", "-S", "--strings",
            "-t", "--format", "-w", "--width",
        ],
        ..f(&["od"], Read)
    },
    FileProgram {
        value: &[
            "-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-n",
            "-name",
        ],
        // `xxd [IN [OUT]]`: a second operand is written.
        ..f(&["xxd"], LastEdit)
    },
    FileProgram {
        value: &["-e", "-f", "-n", "-s"],
        ..f(&["hexdump", "hd"], Read)
    },
    FileProgram {
        value: &["-w", "--wrap", "-b", "--break"],
        ..f(&["base64", "base32", "basenc"], Read)
    },
    FileProgram {
        value: &["-e", "--expression", "-l", "--line-length", "-s"],
        reads: &["-f", "--file"],
        leading: 1,
        given_by: &["-e", "--expression", "-f", "--file"],
        in_place: &["-i", "--in-place", "-I"],
        ..f(&["sed", "gsed"], Read)
    },
    FileProgram {
        value: &[
            "-v", "--assign", "-F", "--field-separator", "-e", "--source", "-l", "--load", "-W",
        ],
        reads: &["-f", "--file", "-i", "--include"],
        leading: 1,
        given_by: &["-f", "--file", "-e", "--source"],
        in_place: &["--in-place"],
        ..f(&["awk", "gawk", "mawk", "nawk"], Read)
    },
    FileProgram {
        value: &[
            "-e", "--regexp", "-m", "--max-count", "-A", "--after-context", "-B",
            "--before-context", "-C", "--context", "--include", "--exclude", "--exclude-dir",
            "--color", "--colour", "--label", "-d", "--directories", "-D", "--devices",
            "--binary-files", "--group-separator",
        ],
        reads: &["-f", "--file", "--exclude-from"],
        leading: 1,
        given_by: &["-e", "--regexp", "-f", "--file"],
        recursive: &["-r", "-R", "--recursive", "--dereference-recursive"],
        ..f(&["grep", "egrep", "fgrep", "ggrep", "zgrep"], Read)
    },
    FileProgram {
        value: &[
            "-e", "--regexp", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "-m",
            "--max-count", "-A", "--after-context", "-B", "--before-context", "-C", "--context",
            "-j", "--threads", "-M", "--max-columns", "--max-depth", "-d", "--maxdepth",
            "--type-add", "--color", "--colors", "-E", "--encoding", "-r", "--replace", "--sort",
            "--sortr", "--max-filesize", "--path-separator", "--context-separator",
            "--field-match-separator", "--dfa-size-limit", "--regex-size-limit", "--engine",
            "--pre", "--pre-glob", "-V",
        ],
        reads: &["-f", "--file", "--ignore-file"],
        leading: 1,
        given_by: &["-e", "--regexp", "-f", "--file", "--files", "--type-list"],
        always_recursive: true,
        exec: &["--pre"],
        ..f(&["rg"], Read)
    },
    FileProgram {
        value: &[
            "-A", "--after", "-B", "--before", "-C", "--context", "-G", "--file-search-regex",
            "-m", "--max-count", "--ignore", "--ignore-dir", "--depth", "--color-match",
            "--color-path", "--color-line-number", "-g", "--pager", "--workers",
        ],
        reads: &["-p", "--path-to-ignore"],
        leading: 1,
        given_by: &["-g"],
        always_recursive: true,
        ..f(&["ag"], Read)
    },
    FileProgram {
        value: &[
            "-d", "--delimiter", "-f", "--fields", "-c", "--characters", "-b", "--bytes",
            "--output-delimiter",
        ],
        ..f(&["cut"], Read)
    },
    FileProgram {
        value: &[
            "-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "-T",
            "--temporary-directory", "--parallel", "--batch-size", "--compress-program", "--sort",
            "--random-source",
        ],
        writes: &["-o", "--output"],
        reads: &["--files0-from"],
        exec: &["--compress-program"],
        ..f(&["sort"], Read)
    },
    FileProgram {
        value: &[
            "-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars", "--group",
            "--all-repeated",
        ],
        // `uniq [IN [OUT]]`: a second operand is written.
        ..f(&["uniq"], LastEdit)
    },
    FileProgram {
        reads: &["--files0-from"],
        ..f(&["wc"], Read)
    },
    FileProgram {
        value: &[
            "-U", "--unified", "-C", "--context", "-I", "--ignore-matching-lines", "-x",
            "--exclude", "-F", "--show-function-line", "-L", "--label", "-W", "--width",
            "--line-format", "--color", "--palette", "--from-file", "--to-file", "-D", "--ifdef",
            "--horizon-lines", "--tabsize",
        ],
        reads: &["-X", "--exclude-from"],
        recursive: &["-r", "--recursive"],
        ..f(&["diff", "colordiff"], Read)
    },
    FileProgram {
        value: &["-n", "--bytes", "-i", "--ignore-initial"],
        ..f(&["cmp"], Read)
    },
    FileProgram {
        value: &["-a", "--algorithm"],
        ..f(
            &["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "shasum"],
            Read,
        )
    },
    FileProgram {
        value: &["--indent", "-L", "--tab-width"],
        reads: &["-f", "--from-file"],
        reads2: &["--slurpfile", "--rawfile"],
        value2: &["--arg", "--argjson"],
        leading: 1,
        given_by: &["-f", "--from-file"],
        ..f(&["jq", "gojq", "jaq"], Read)
    },
    FileProgram {
        value: &[
            "-p", "--input-format", "-o", "--output-format", "-I", "--indent", "--expression",
            "-e",
        ],
        reads: &["--from-file"],
        leading: 1,
        given_by: &["--from-file", "-n", "--null-input"],
        in_place: &["-i", "--inplace"],
        ..f(&["yq"], Read)
    },
    f(&["source", "."], Read),
    FileProgram {
        value: &[
            "-s", "--separator", "-c", "--columns", "-o", "--output-separator", "-N",
            "--table-columns", "-R", "--table-right", "-H", "--table-hide", "-W", "--table-wrap",
            "-E", "--table-noextreme", "-d", "--table-noheadings", "-r", "--tree", "-i",
            "--tree-id", "-p", "--tree-parent",
        ],
        ..f(&["column"], Read)
    },
    FileProgram {
        value: &["-w", "--width"],
        ..f(&["fold"], Read)
    },
    FileProgram {
        value: &["-d", "--delimiters"],
        ..f(&["paste"], Read)
    },
    FileProgram {
        value: &["-f", "--from-code", "-t", "--to-code"],
        writes: &["-o", "--output"],
        ..f(&["iconv"], Read)
    },
    FileProgram {
        leading: 1,
        value: &[
            "-passin", "-passout", "-pass", "-k", "-subj", "-days", "-newkey", "-md", "-inform",
            "-outform", "-connect", "-servername", "-name", "-digest", "-keyform", "-cipher",
            "-iter", "-rand",
        ],
        reads: &[
            "-in", "-key", "-CAfile", "-CAkey", "-CA", "-certfile", "-cert", "-config", "-kfile",
            "-signkey", "-inkey", "-pubin", "-extfile", "-req",
        ],
        writes: &["-out", "-keyout"],
        ..f(&["openssl"], Read)
    },
    FileProgram {
        value: &[
            "-r", "--recipient", "-u", "--local-user", "--default-key", "--keyserver", "--homedir",
            "--passphrase", "--trust-model", "--cipher-algo", "--digest-algo", "--compress-algo",
            "-z", "--recv-keys", "--search-keys",
        ],
        reads: &["--passphrase-file", "--import"],
        writes: &["-o", "--output"],
        ..f(&["gpg", "gpg2"], Read)
    },
    // `man PAGE`: its operands are page names; a pager or browser it is
    // given is a command it runs.
    FileProgram {
        value: &["-M", "--manpath", "-S", "-s", "--sections", "-L", "--locale", "-m", "--systems", "-E", "--encoding", "-R", "--recode", "-C", "--config-file"],
        exec: &["-P", "--pager", "-H", "--html"],
        ..f(&["man"], Operands::None)
    },
    FileProgram {
        value: &["-c", "--cmd", "-S", "-u", "-U", "-i", "-t", "-T", "-w", "-W", "-s"],
        exec: &["-c", "--cmd", "-S", "+"],
        ..f(
            &["vim", "vi", "nvim", "view", "gvim", "mvim", "ex", "vimdiff"],
            Read,
        )
    },
    FileProgram {
        value: &[
            "-T", "--tabsize", "-r", "--fill", "-Y", "--syntax", "-X", "--wordchars", "-o",
            "--operatingdir", "-Q", "--quotestr", "-s", "--speller",
        ],
        ..f(&["nano", "pico"], Read)
    },
    FileProgram {
        value: &[
            "-l", "--load", "-f", "--funcall", "--eval", "--execute", "-L", "--directory",
            "--chdir",
        ],
        exec: &["--eval", "--execute", "-f", "--funcall", "-l", "--load"],
        ..f(&["emacs", "emacsclient"], Read)
    },
    FileProgram {
        value: &["-a", "-b", "--env", "--stdout", "--stderr", "-s"],
        ..f(&["open", "xdg-open"], Read)
    },
    FileProgram {
        value: &[
            "-d", "--max-depth", "-t", "--threshold", "-B", "--block-size", "--exclude",
            "--time-style", "--time",
        ],
        reads: &["-X", "--exclude-from", "--files0-from"],
        always_recursive: true,
        ..f(&["du"], Read)
    },
    FileProgram {
        value: &["-L", "-P", "-I", "--filelimit", "--charset", "--sort", "--timefmt", "--ignore"],
        writes: &["-o"],
        always_recursive: true,
        ..f(&["tree"], Read)
    },
    // Writers.
    f(&["tee"], Edit),
    FileProgram {
        value: &["-d", "--date", "-t"],
        reads: &["-r", "--reference"],
        ..f(&["touch"], Edit)
    },
    FileProgram {
        recursive: &["-r", "-R", "--recursive"],
        ..f(&["rm"], Edit)
    },
    f(&["unlink"], Edit),
    FileProgram {
        value: &["-s", "--size"],
        reads: &["-r", "--reference"],
        ..f(&["truncate"], Edit)
    },
    FileProgram {
        value: &["-n", "--iterations", "-s", "--size", "--random-source"],
        ..f(&["shred"], Edit)
    },
    f(&["rmdir"], Edit),
    FileProgram {
        value: &["-m", "--mode", "--context"],
        ..f(&["mkdir"], Edit)
    },
    FileProgram {
        value: &["-S", "--suffix", "--backup"],
        writes: &["-t", "--target-directory"],
        always_recursive: true,
        ..f(&["mv"], Edit)
    },
    FileProgram {
        value: &[
            "-S", "--suffix", "--backup", "--sparse", "--reflink", "--preserve", "--no-preserve",
        ],
        writes: &["-t", "--target-directory"],
        recursive: &["-r", "-R", "--recursive", "-a", "--archive"],
        ..f(&["cp"], LastEdit)
    },
    FileProgram {
        value: &[
            "-e", "--rsh", "--rsync-path", "--exclude", "--include", "-f", "--filter", "--chmod",
            "--chown", "--usermap", "--groupmap", "-B", "--block-size", "--max-size", "--min-size",
            "--bwlimit", "--timeout", "--port", "--compare-dest", "--copy-dest", "--link-dest",
            "--partial-dir", "--backup-dir", "--suffix", "-T", "--temp-dir", "--log-file-format",
            "--out-format", "--info", "--debug", "--iconv", "--contimeout", "--address",
            "--sockopts", "--outbuf", "--compress-choice", "--zc", "--compress-level",
            "--checksum-choice", "--max-alloc", "--modify-window",
        ],
        reads: &["--exclude-from", "--include-from", "--files-from", "--password-file"],
        writes: &["--log-file", "--write-batch", "--only-write-batch"],
        recursive: &["-r", "--recursive", "-a", "--archive"],
        exec: &["-e", "--rsh", "--rsync-path"],
        ..f(&["rsync"], LastEdit)
    },
    FileProgram {
        value: &["-P", "-o", "-c", "-l", "-S", "-J", "-D", "-X"],
        reads: &["-i", "-F"],
        recursive: &["-r"],
        exec: &["-S"],
        ..f(&["scp"], LastEdit)
    },
    FileProgram {
        value: &[
            "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix", "--backup",
            "--strip-program",
        ],
        writes: &["-t", "--target-directory"],
        ..f(&["install", "ginstall"], LastEdit)
    },
    FileProgram {
        value: &["-S", "--suffix", "--backup"],
        writes: &["-t", "--target-directory"],
        ..f(&["ln"], LastEdit)
    },
    FileProgram {
        reads: &["--reference"],
        recursive: &["-R", "--recursive"],
        ..f(&["chmod", "chown", "chgrp"], EditAfterFirst)
    },
    FileProgram {
        value: &[
            "-x", "--exclude", "-X", "--exclude-from", "-i", "--include", "-P", "--password", "-n",
            "-Z", "--compression-method", "-s", "--split-size",
        ],
        recursive: &["-r", "--recurse-paths", "-R"],
        ..f(&["zip"], FirstEdit)
    },
    FileProgram {
        value: &["-x", "-P", "-O", "-I"],
        writes: &["-d"],
        ..f(&["unzip"], Read)
    },
    FileProgram {
        value: &["-S", "--suffix", "-b", "--blocksize", "-p", "--processes", "-T", "--threads"],
        in_place: &[],
        ..f(
            &["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "pigz"],
            Edit,
        )
    },
    FileProgram {
        value: &["-e", "-E", "-I", "-x"],
        exec: &["-e", "-E"],
        in_place: &["-i"],
        ..f(&["perl"], Read)
    },
];

/// The file table of this program, if it has one.
pub fn file_program(name: &str) -> Option<&'static FileProgram> {
    FILE_INDEX.find(FILE_PROGRAMS, |p| p.names, name)
}

/// Interpreters whose inline-code option executes arbitrary code (SPEC
/// §8.5): the option marks the invocation.
pub static INLINE_CODE: &[(&[&str], &[&str])] = &[
    (&["python", "python2", "python3", "pypy", "pypy3"], PYTHON_INLINE_CODE),
    (
        &["node", "nodejs", "bun", "deno"],
        &["-e", "--eval", "-p", "--print"],
    ),
    (&["perl"], &["-e", "-E"]),
    (&["ruby"], &["-e"]),
    (&["php"], &["-r"]),
    (&["lua", "luajit"], &["-e"]),
];

/// Python's inline-code options: also those of any program whose name
/// starts with `python` (`python3.12`).
const PYTHON_INLINE_CODE: &[&str] = &["-c"];

/// `git -c NAME=VALUE` settings that run a command or write (SPEC §8.5).
pub const GIT_EXEC_CONFIG: &[&str] = &[
    "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.hookspath",
    "core.askpass", "credential.helper", "diff.external", "sequence.editor", "gpg.program",
    "pager.", "alias.", "protocol.ext.allow", "uploadpack.packobjectshook", "filter.", "remote.",
    "url.",
];

/// `tar` options that run a command.
pub const TAR_EXEC: &[&str] = &[
    "--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "-F",
    "--new-volume-script", "--rsh-command",
];
/// `tar` options that take a value (not a file).
pub const TAR_VALUE: &[&str] = &[
    "-b", "--blocking-factor", "--exclude", "--strip-components", "--owner", "--group", "--mode",
    "--mtime", "--transform", "--xform", "--format", "-H", "--checkpoint", "--newer", "-N",
    "--after-date", "--label", "-V", "--record-size", "--occurrence", "--sort",
];
/// `tar` options whose value is a file it reads.
pub const TAR_READS: &[&str] = &["-T", "--files-from", "-X", "--exclude-from"];
/// `tar` options whose value is a directory it changes into.
pub const TAR_CHDIR: &[&str] = &["-C", "--directory"];

/// `find` primaries that write a file (their value).
pub const FIND_WRITES: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];
/// `find` primaries that delete or run something.
pub const FIND_EXEC_FLAGS: &[&str] = &[
    "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];
/// `find` options before its paths.
pub const FIND_LEADING: &[&str] = &["-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"];

/// Network programs (SPEC §8.5) and how they name hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOperands {
    /// Operands that are URLs (`curl`, `wget`).
    Urls,
    /// The first operand is `[user@]host` (`ssh`, `mosh`, `sftp`).
    FirstHost,
    /// Operands of the form `[user@]host:path` (`scp`, `rsync`).
    HostPaths,
    /// Operands after the subcommand that are URLs or `user@host:path`
    /// (`git clone`, `pip install`, `npm install`).
    SubcommandUrls(&'static [&'static str]),
}

/// A network program.
#[derive(Debug)]
pub struct NetworkProgram {
    /// Its names.
    pub names: &'static [&'static str],
    /// How it names hosts.
    pub hosts: HostOperands,
    /// Options that take a value (skipped).
    pub value: &'static [&'static str],
    /// Options whose value is a URL or host.
    pub host_options: &'static [&'static str],
    /// Options whose value is a file it reads (`curl -T F`; `-d @F`).
    pub reads: &'static [&'static str],
    /// Options whose value is a file it writes (`curl -o F`).
    pub writes: &'static [&'static str],
}

/// Every network program.
pub static NETWORK_PROGRAMS: &[NetworkProgram] = &[
    NetworkProgram {
        names: &["curl"],
        hosts: HostOperands::Urls,
        value: &[
            "-H", "--header", "-X", "--request", "-u", "--user", "-A", "--user-agent", "-e",
            "--referer", "-m", "--max-time", "--connect-timeout", "-w", "--write-out", "-r",
            "--range", "-b", "--cookie", "--retry", "--retry-delay", "--limit-rate", "-Y", "-y",
            "--resolve", "--connect-to", "--cacert", "--capath", "-E", "--cert", "--key",
            "--oauth2-bearer", "--data-urlencode", "-F", "--form", "-d", "--data", "--data-raw",
            "--data-binary", "--data-ascii", "--json", "-z", "--time-cond", "--max-redirs",
            "--interface", "--dns-servers", "--proto", "--proto-redir", "--tls-max", "--ciphers",
            "--user", "--aws-sigv4", "-C", "--continue-at", "--variable", "--expand-url",
            "--expand-data", "--create-file-mode", "-Q", "--quote", "--mail-from", "--mail-rcpt",
        ],
        host_options: &["--url", "-x", "--proxy", "--preproxy"],
        reads: &["-T", "--upload-file", "-K", "--config", "--netrc-file", "-D"],
        writes: &[
            "-o", "--output", "-c", "--cookie-jar", "--dump-header", "--trace", "--trace-ascii",
            "--stderr", "--output-dir", "--etag-save", "--hsts", "--alt-svc",
        ],
    },
    NetworkProgram {
        names: &["wget", "wget2"],
        hosts: HostOperands::Urls,
        value: &[
            "-U", "--user-agent", "--header", "-t", "--tries", "-T", "--timeout", "-w", "--wait",
            "--limit-rate", "-l", "--level", "-A", "--accept", "-R", "--reject", "--user",
            "--password", "--http-user", "--http-password", "-e", "--execute", "--post-data", "-Q",
            "--quota", "-D", "--domains", "--exclude-domains", "-B", "--base", "--referer",
            "--method", "--body-data", "-X", "--exclude-directories", "-I",
            "--include-directories", "--cut-dirs", "--progress", "--restrict-file-names",
            "--max-redirect",
        ],
        host_options: &[],
        reads: &[
            "-i", "--input-file", "--post-file", "--body-file", "--load-cookies",
            "--ca-certificate", "--certificate", "--private-key", "--config",
        ],
        writes: &[
            "-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
            "--directory-prefix", "--save-cookies",
        ],
    },
    NetworkProgram {
        names: &["ssh", "mosh", "sftp", "autossh"],
        hosts: HostOperands::FirstHost,
        value: &[
            "-p", "-l", "-o", "-L", "-R", "-D", "-b", "-c", "-e", "-E", "-I", "-m", "-O", "-Q",
            "-S", "-W", "-w", "-B", "-P", "-s", "-M",
        ],
        host_options: &["-J"],
        reads: &["-i", "-F"],
        writes: &[],
    },
    NetworkProgram {
        names: &["scp", "rsync"],
        hosts: HostOperands::HostPaths,
        value: &[],
        host_options: &[],
        reads: &[],
        writes: &[],
    },
    NetworkProgram {
        names: &["git"],
        hosts: HostOperands::SubcommandUrls(&[
            "clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote",
        ]),
        value: &[
            "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
            "--config-env", "--exec-path",
        ],
        host_options: &[],
        reads: &[],
        writes: &[],
    },
    NetworkProgram {
        names: &["pip", "pip3", "pipx", "uv"],
        hosts: HostOperands::SubcommandUrls(&["install", "download", "add", "pip"]),
        value: &[
            "-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root",
            "-e", "--editable",
        ],
        host_options: &[
            "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host",
            "--proxy",
        ],
        reads: &[],
        writes: &[],
    },
    NetworkProgram {
        names: &["npm", "pnpm", "yarn", "bun"],
        hosts: HostOperands::SubcommandUrls(&["install", "i", "add", "ci"]),
        value: &[],
        host_options: &["--registry"],
        reads: &[],
        writes: &[],
    },
];

/// The network table of this program, if it has one.
pub fn network_program(name: &str) -> Option<&'static NetworkProgram> {
    NETWORK_INDEX.find(NETWORK_PROGRAMS, |p| p.names, name)
}

/// Paths that name no file (SPEC §8.1).
pub fn is_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || path
        .strip_prefix("/dev/fd/")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Long options that are aliases of a short option letter, for matching a
/// rule's short cluster (SPEC §7.2 item 4, §13): `(program, subcommand,
/// long option, letter)`. A subcommand of `""` means the program itself.
pub static OPTION_ALIASES: &[(&str, &str, &str, char)] = &[
    ("rm", "", "--recursive", 'r'), ("rm", "", "--force", 'f'), ("rm", "", "--interactive", 'i'),
    ("rm", "", "--dir", 'd'), ("rm", "", "--verbose", 'v'),
    ("cp", "", "--recursive", 'r'), ("cp", "", "--force", 'f'), ("cp", "", "--archive", 'a'),
    ("cp", "", "--interactive", 'i'), ("cp", "", "--no-clobber", 'n'), ("cp", "", "--verbose", 'v'),
    ("cp", "", "--update", 'u'), ("cp", "", "--link", 'l'), ("cp", "", "--symbolic-link", 's'),
    ("cp", "", "--dereference", 'L'), ("cp", "", "--no-dereference", 'P'),
    ("mv", "", "--force", 'f'), ("mv", "", "--interactive", 'i'), ("mv", "", "--no-clobber", 'n'),
    ("mv", "", "--verbose", 'v'), ("mv", "", "--update", 'u'),
    ("chmod", "", "--recursive", 'R'), ("chmod", "", "--verbose", 'v'), ("chmod", "", "--changes", 'c'),
    ("chmod", "", "--silent", 'f'), ("chmod", "", "--quiet", 'f'),
    ("chown", "", "--recursive", 'R'), ("chown", "", "--verbose", 'v'), ("chown", "", "--changes", 'c'),
    ("chown", "", "--silent", 'f'), ("chown", "", "--quiet", 'f'),
    ("chgrp", "", "--recursive", 'R'), ("chgrp", "", "--verbose", 'v'),
    ("ln", "", "--symbolic", 's'), ("ln", "", "--force", 'f'),
    ("git", "push", "--force", 'f'), ("git", "push", "--verbose", 'v'), ("git", "push", "--quiet", 'q'),
    ("git", "push", "--set-upstream", 'u'), ("git", "push", "--dry-run", 'n'), ("git", "push", "--delete", 'd'),
    ("git", "clean", "--force", 'f'), ("git", "clean", "--dry-run", 'n'), ("git", "clean", "--quiet", 'q'),
    ("git", "clean", "--interactive", 'i'),
    ("git", "reset", "--quiet", 'q'),
    ("git", "checkout", "--force", 'f'), ("git", "checkout", "--quiet", 'q'),
    ("git", "branch", "--delete", 'd'), ("git", "branch", "--force", 'f'), ("git", "branch", "--move", 'm'),
    ("git", "add", "--force", 'f'), ("git", "add", "--all", 'A'), ("git", "add", "--update", 'u'),
    ("git", "commit", "--all", 'a'), ("git", "commit", "--message", 'm'), ("git", "commit", "--no-verify", 'n'),
    ("git", "rm", "--force", 'f'), ("git", "rm", "--recursive", 'r'),
    ("docker", "rm", "--force", 'f'), ("docker", "rm", "--volumes", 'v'), ("docker", "rm", "--link", 'l'),
    ("docker", "rmi", "--force", 'f'), ("docker", "system", "--force", 'f'), ("docker", "run", "--interactive", 'i'),
    ("docker", "run", "--tty", 't'), ("docker", "run", "--detach", 'd'), ("docker", "run", "--volume", 'v'),
    ("podman", "rm", "--force", 'f'), ("podman", "rm", "--volumes", 'v'),
    ("kubectl", "delete", "--filename", 'f'), ("kubectl", "delete", "--recursive", 'R'),
    ("kubectl", "delete", "--selector", 'l'), ("kubectl", "delete", "--output", 'o'),
    ("kubectl", "apply", "--filename", 'f'), ("kubectl", "apply", "--recursive", 'R'),
];

/// The short letter a long option stands for, for this program (basename)
/// and subcommand (`""` when none); `--force=true` is `--force`.
///
/// ```
/// use toolgate::shell::programs::short_alias;
/// assert_eq!(short_alias("rm", "", "--recursive"), Some('r'));
/// assert_eq!(short_alias("git", "push", "--force=true"), Some('f'));
/// assert_eq!(short_alias("git", "push", "--force-with-lease"), None);
/// assert_eq!(short_alias("kubectl", "delete", "--force"), None);
/// ```
pub fn short_alias(program: &str, subcommand: &str, long: &str) -> Option<char> {
    let name = match long.split_once('=') {
        Some((n, "true" | "1" | "yes")) => n,
        Some(_) => return None,
        None => long,
    };
    OPTION_ALIASES
        .iter()
        .find(|(p, s, l, _)| *p == program && (s.is_empty() || *s == subcommand) && *l == name)
        .map(|a| a.3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indexed lookups find the row a scan of the table finds.
    #[test]
    fn index_agrees_with_a_scan() {
        fn check<T>(rows: &'static [T], names: fn(&T) -> &'static [&'static str], find: fn(&str) -> Option<&'static T>) {
            for row in rows {
                for &n in names(row) {
                    let scan = rows.iter().find(|r| names(r).contains(&n));
                    assert!(std::ptr::eq(find(n).unwrap(), scan.unwrap()), "{n}");
                }
            }
            for n in ["", "gitx", "zz", "a", "~"] {
                assert!(find(n).is_none(), "{n}");
            }
        }
        check(WRAPPERS, |w| w.names, wrapper);
        check(SUBCOMMAND_TABLES, |t| t.names, subcommand_table);
        check(FILE_PROGRAMS, |p| p.names, file_program);
        check(NETWORK_PROGRAMS, |p| p.names, network_program);
    }

    /// One lookup of every table answers as each table's own lookup, and
    /// as the scans the reducer made before (`SHELLS`, `INLINE_CODE` with
    /// its `python…` names).
    #[test]
    fn known_agrees_with_each_table() {
        let mut names: Vec<&str> = vec!["", "gitx", "zz", "a", "~", "python3.12", "pythonw", "pyth"];
        names.extend(table_names());
        fn same<T>(a: Option<&'static T>, b: Option<&'static T>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => std::ptr::eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        for n in names {
            let k = known(n);
            assert!(same(k.wrapper, wrapper(n)), "{n}");
            assert!(same(k.subcommands, subcommand_table(n)), "{n}");
            assert!(same(k.file, file_program(n)), "{n}");
            assert!(same(k.network, network_program(n)), "{n}");
            assert_eq!(k.shell, SHELLS.contains(&n), "{n}");
            let inline: Vec<&[&str]> = INLINE_CODE
                .iter()
                .filter(|(names, _)| names.contains(&n) || (n.starts_with("python") && names.contains(&"python")))
                .map(|(_, o)| *o)
                .collect();
            assert_eq!(k.inline_code.map(|o| vec![o]).unwrap_or_default(), inline, "{n}");
        }
    }
}
