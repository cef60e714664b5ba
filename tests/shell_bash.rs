//! Differential test against real bash: the argv that bash runs for a
//! command must be what the reading says. How no real command runs, and
//! which differences are choices, is in `tests/data/shell/README.md`.

mod common;

use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};
use toolgate::shell::{self, Command, Reading, RedirectionOp, ScriptKind};

/// Every how-many-th tldr line is sampled (about 3,000 of 30,000).
const TLDR_STEP: usize = 10;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    input: String,
}

fn case_inputs() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shell");
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/data/shell exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    for p in paths {
        let text = std::fs::read_to_string(&p).expect("readable");
        let file: File = toml::from_str(&text).expect("case file parses");
        out.extend(file.cases.into_iter().map(|c| c.input));
    }
    out
}

/// True when a command was read from a script that a shell reads (`sh -c`,
/// a here-document, a pipe): bash runs the stand-in for that shell instead.
fn in_shell_script(r: &Reading, c: &Command) -> bool {
    let mut s = Some(c.script());
    while let Some(i) = s {
        let Some(script) = r.scripts.get(i) else {
            return false;
        };
        if !matches!(script.kind, ScriptKind::Input | ScriptKind::Backquote) {
            return true;
        }
        s = script.parent;
    }
    false
}

/// A word of a reading as a pattern: a literal, or anything (0+ words).
#[derive(Debug)]
enum Pat {
    Lit(String),
    Any,
}

fn pattern(r: &Reading, c: &Command) -> Vec<Pat> {
    let mut words: &[toolgate::shell::Word] = c.words(r);
    // `time` is a keyword for bash; the reader keeps it as a word.
    if words
        .first()
        .is_some_and(|w| w.text() == "time" && !w.is_dynamic())
    {
        words = &words[1..];
        while words.first().is_some_and(|w| w.text() == "-p") {
            words = &words[1..];
        }
    }
    words
        .iter()
        .map(|w| {
            if w.is_dynamic() {
                Pat::Any
            } else {
                Pat::Lit(w.text().to_string())
            }
        })
        .collect()
}

fn matches(p: &[Pat], argv: &[String]) -> bool {
    match p.split_first() {
        None => argv.is_empty(),
        Some((Pat::Lit(s), rest)) => {
            argv.first().is_some_and(|a| a == s) && matches(rest, &argv[1..])
        }
        Some((Pat::Any, rest)) => (0..=argv.len()).any(|k| matches(rest, &argv[k..])),
    }
}

/// Why a case is not run under bash, if it is not.
fn skip_reason(input: &str, r: &Reading) -> Option<&'static str> {
    if !r.is_complete() {
        return Some("incomplete reading");
    }
    if input.contains('\0') {
        return Some("NUL byte");
    }
    let lexical = [
        "while",
        "until",
        "select",
        "function",
        "enable",
        "()",
        "command_not_found",
    ];
    if input
        .split(|c: char| c.is_whitespace() || ";&|".contains(c))
        .any(|t| {
            lexical
                .iter()
                .any(|l| t == *l || (l.starts_with('(') && t.contains(l)))
        })
        || input.contains("() ")
        || input.contains("(){")
    {
        return Some("loops, functions or enable");
    }
    for c in &r.commands {
        if in_shell_script(r, c) {
            continue;
        }
        // With the builtin disabled, bash no longer parses `x=(…)` as an
        // argument of a declaration builtin.
        if c.program(r).is_some_and(|p| {
            matches!(
                p.text(),
                "declare" | "typeset" | "local" | "export" | "readonly"
            )
        }) && input.contains("=(")
        {
            return Some("array argument of a declaration builtin");
        }
        if c.assignments(r).iter().any(|a| {
            matches!(
                a.name.as_str(),
                "PATH" | "BASH_ENV" | "ENV" | "SHELLOPTS" | "BASHOPTS"
            )
        }) {
            return Some("assigns PATH or a shell start-up variable");
        }
        if let Some(p) = c.program(r)
            && (p.text().contains('/') || p.is_dynamic())
        {
            return Some("program with a path");
        }
        for rd in c.redirections(r) {
            let t = &rd.target;
            let procsub = t.text().starts_with("<(") || t.text().starts_with(">(");
            match rd.op {
                RedirectionOp::Read if t.is_dynamic() && !procsub => {
                    return Some("reads a file named at run time");
                }
                RedirectionOp::Read
                    if t.text().starts_with('/') && !Path::new(t.text()).exists() =>
                {
                    return Some("reads a file that does not exist");
                }
                RedirectionOp::DupIn | RedirectionOp::DupOut if t.is_dynamic() => {
                    return Some("duplicates a descriptor named at run time");
                }
                _ => {}
            }
            let writes = matches!(
                rd.op,
                RedirectionOp::Write
                    | RedirectionOp::Append
                    | RedirectionOp::Clobber
                    | RedirectionOp::WriteAll
                    | RedirectionOp::AppendAll
                    | RedirectionOp::ReadWrite
                    | RedirectionOp::DupOut
            );
            if !writes {
                continue;
            }
            let safe_dev = matches!(t.text(), "/dev/null" | "/dev/stdout" | "/dev/stderr");
            let digits = rd.op == RedirectionOp::DupOut
                && (t.text() == "-" || t.text().bytes().all(|b| b.is_ascii_digit()));
            let relative = !t.is_dynamic()
                && !t.text().starts_with('/')
                && !t.text().contains("..")
                && !t.text().is_empty();
            if !(safe_dev || digits || relative) {
                return Some("writes outside the scratch directory");
            }
        }
    }
    None
}

fn parse_log(bytes: &[u8]) -> Vec<Vec<String>> {
    let mut fields = bytes
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut out = Vec::new();
    while let Some(n) = fields.next() {
        let Ok(n) = n.parse::<usize>() else { break };
        let argv: Vec<String> = fields.by_ref().take(n).collect();
        out.push(argv);
    }
    out
}

/// Compares what bash ran with the reading; `Err` describes a
/// disagreement.
fn compare(input: &str, r: &Reading, ran: &[Vec<String>]) -> Result<(), String> {
    // Statuses the stand-ins do not decide: tests, arithmetic, negation.
    let status_decides = ["[[", "((", "$((", "$[", "! "]
        .iter()
        .any(|t| input.contains(t));
    let cmds: Vec<&Command> = r
        .commands
        .iter()
        .filter(|c| !in_shell_script(r, c) && !c.words(r).is_empty())
        .collect();
    let pats: Vec<Vec<Pat>> = cmds.iter().map(|c| pattern(r, c)).collect();
    // Every command bash ran is in the reading.
    for argv in ran {
        if !pats.iter().any(|p| matches(p, argv)) {
            return Err(format!(
                "bash ran {argv:?}, which the reading does not have"
            ));
        }
    }
    // Without control flow, every command of the reading ran, once.
    let unconditional = !status_decides
        && cmds
            .iter()
            .all(|c| !c.conditional && c.connector != shell::Connector::Or);
    if unconditional {
        let mut left: Vec<&Vec<String>> = ran.iter().collect();
        // Literal patterns first, so a dynamic one does not take their argv.
        let mut order: Vec<usize> = (0..pats.len()).collect();
        order.sort_by_key(|&i| pats[i].iter().any(|p| matches!(p, Pat::Any)));
        for i in order {
            match left.iter().position(|a| matches(&pats[i], a)) {
                Some(k) => {
                    left.remove(k);
                }
                None => {
                    return Err(format!(
                        "the reading has `{}`, which bash did not run (bash ran {ran:?})",
                        cmds[i].display(r)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn run_bash(dir: &Path, inputs: &[&String]) -> Vec<(Vec<Vec<String>>, String)> {
    let cdir = dir.join("c");
    std::fs::create_dir_all(&cdir).expect("scratch dir");
    let mut driver = String::from(
        r#"set +H
W="$1"
DISABLE=$(enable -a | while read -r _ n; do case "$n" in enable|eval) ;; *) printf '%s ' "$n";; esac; done)
command_not_found_handle() {
  enable printf
  printf '%s\0' "$#" "$@" >> "$LOG"
}
run() {
  cd "$W/$1" || return
  LOG="$W/$1.log"
  c=$(<"$W/c/$1")
  ( enable -n $DISABLE; eval "enable -n eval"$'\n'"$c"; enable wait; wait ) </dev/null 2>"$W/$1.err"
  cd "$W"
}
HOME="$W"
PATH="$W/empty"
"#,
    );
    std::fs::create_dir_all(dir.join("empty")).expect("scratch dir");
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(cdir.join(i.to_string()), input).expect("case file");
        let home = dir.join(i.to_string());
        std::fs::create_dir_all(&home).expect("case dir");
        // The files its redirections read, and the folders they write to.
        let r = shell::read(input);
        for c in r.commands.iter().filter(|c| !in_shell_script(&r, c)) {
            for rd in c.redirections(&r) {
                let t = rd.target.text();
                if rd.target.is_dynamic() || t.starts_with('/') || t.contains("..") || t.is_empty()
                {
                    continue;
                }
                let path = home.join(t);
                if let Some(parent) = path.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if matches!(rd.op, RedirectionOp::Read | RedirectionOp::ReadWrite) && !path.exists()
                {
                    let _ = std::fs::write(&path, "");
                }
            }
        }
        driver.push_str(&format!("run {i}\n"));
    }
    let script = dir.join("driver.bash");
    std::fs::write(&script, driver).expect("driver");
    let mut child = Process::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg(&script)
        .arg(dir)
        .current_dir(dir)
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash runs");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            panic!("bash did not finish within 240 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (0..inputs.len())
        .map(|i| {
            let log = std::fs::read(dir.join(format!("{i}.log"))).unwrap_or_default();
            let err = std::fs::read_to_string(dir.join(format!("{i}.err"))).unwrap_or_default();
            (parse_log(&log), err)
        })
        .collect()
}

#[test]
fn readings_agree_with_bash() {
    if Process::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("skipping: bash is not installed");
        return;
    }
    let mut inputs: Vec<(String, String)> = case_inputs()
        .into_iter()
        .map(|i| ("case files".to_string(), i))
        .collect();
    if let Some(lines) = common::corpus_lines("tldr-commands.txt") {
        inputs.extend(
            lines
                .into_iter()
                .step_by(TLDR_STEP)
                .map(|l| ("tldr".to_string(), l)),
        );
    }
    let readings: Vec<Reading> = inputs.iter().map(|(_, i)| shell::read(i)).collect();
    let mut skipped: HashMap<(&str, &str), usize> = HashMap::new();
    let mut run_idx = Vec::new();
    for (k, ((src, input), r)) in inputs.iter().zip(&readings).enumerate() {
        match skip_reason(input, r) {
            Some(why) => *skipped.entry((src.as_str(), why)).or_default() += 1,
            None => run_idx.push(k),
        }
    }
    let dir = std::env::temp_dir().join(format!("toolgate-bash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let to_run: Vec<&String> = run_idx.iter().map(|&k| &inputs[k].1).collect();
    let results = run_bash(&dir, &to_run);
    let mut bad = Vec::new();
    let mut agree: HashMap<&str, (usize, usize)> = HashMap::new();
    for (&k, (ran, err)) in run_idx.iter().zip(&results) {
        let (src, input) = &inputs[k];
        let e = agree.entry(src.as_str()).or_default();
        e.1 += 1;
        let verdict =
            if err.contains("syntax error near") || err.contains("unexpected EOF while looking") {
                Err(format!("bash reports a syntax error: {}", err.trim()))
            } else {
                compare(input, &readings[k], ran)
            };
        match verdict {
            Ok(()) => e.0 += 1,
            Err(why) => bad.push(format!("{src}: {input:?}\n    {why}")),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut skipped: Vec<_> = skipped.into_iter().collect();
    skipped.sort();
    println!("bash differential:");
    for (src, (ok, n)) in &agree {
        println!("  {src}: {ok} of {n} run under bash agree");
    }
    for ((src, why), n) in &skipped {
        println!("  {src}: {n} not run ({why})");
    }
    assert!(
        agree.values().map(|v| v.1).sum::<usize>() >= 200,
        "too few commands ran under bash"
    );
    assert!(
        bad.is_empty(),
        "{} disagreements with bash:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
