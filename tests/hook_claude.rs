//! End-to-end: Claude Code, Codex and Cursor hook inputs piped through
//! `toolgate hook claude|codex|cursor` (the cases are
//! `tests/data/hook/<harness>.jsonl`), and the decision log.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hook")
}

/// `s` with `$DATA` replaced, in every string of a JSON value.
fn subst(v: &Value, data: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("$DATA", data)),
        Value::Array(a) => Value::Array(a.iter().map(|x| subst(x, data)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), subst(x, data))).collect())
        }
        other => other.clone(),
    }
}

/// The result of one hook process.
pub struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs `toolgate <args>` in `dir` with a clean environment plus `env`,
/// `stdin` written to it (kept open when `keep_open`).
pub fn run_hook(
    args: &[String],
    env: &[(String, String)],
    dir: &Path,
    stdin: Vec<u8>,
    keep_open: bool,
) -> Run {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env_clear()
        // The image cache stays out of the fixtures' home directories.
        .env(
            "TOOLGATE_CACHE_DIR",
            std::env::temp_dir().join(format!("toolgate-hook-cases-{}", std::process::id())),
        )
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolgate");
    let mut pipe = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // The hook may stop reading (input too long): a broken pipe is fine.
        let _ = pipe.write_all(&stdin);
        if keep_open {
            std::thread::sleep(Duration::from_secs(4));
        }
        drop(pipe);
    });
    let out = child.wait_with_output().expect("wait for toolgate");
    let elapsed = started.elapsed();
    if !keep_open {
        writer.join().expect("writer");
    }
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed,
    }
}

fn strings(case: &Value, key: &str) -> Vec<String> {
    case.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks one case; returns what was wrong.
fn check(case: &Value, data: &str, harness: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut args = vec!["hook".to_string(), harness.to_string()];
    args.extend(strings(case, "args"));
    let mut env = vec![("HOME".to_string(), format!("{data}/home"))];
    if let Some(Value::Object(m)) = case.get("env") {
        for (k, v) in m {
            env.push((k.clone(), v.as_str().unwrap_or_default().to_string()));
        }
    }
    let dir = case
        .get("dir")
        .and_then(Value::as_str)
        .map_or_else(|| PathBuf::from(format!("{data}/proj")), PathBuf::from);
    let mut stdin = match (case.get("stdin"), case.get("stdin_raw")) {
        (Some(v), None) => v.to_string().into_bytes(),
        (None, Some(Value::String(s))) => s.clone().into_bytes(),
        _ => return vec!["a case needs stdin or stdin_raw".into()],
    };
    if let Some(n) = case.get("stdin_pad").and_then(Value::as_u64) {
        stdin.extend(std::iter::repeat_n(b' ', n as usize));
    }
    let keep_open = case.get("keep_stdin_open") == Some(&Value::Bool(true));
    let run = run_hook(&args, &env, &dir, stdin, keep_open);

    let want_exit = case.get("exit").and_then(Value::as_i64).map(|c| c as i32);
    if run.code != want_exit {
        bad.push(format!("exit code {:?}, want {:?}", run.code, want_exit));
    }
    let want = case.get("decision").and_then(Value::as_str);
    if run.stdout.trim().is_empty() {
        if let Some(w) = want {
            bad.push(format!("printed nothing, want {w}"));
        }
    } else {
        match serde_json::from_str::<Value>(&run.stdout) {
            Err(e) => bad.push(format!("stdout is not json ({e}): {:?}", run.stdout)),
            Ok(out) if harness == "cursor" => {
                let got = out["permission"].as_str();
                if got != want {
                    bad.push(format!("permission {got:?}, want {want:?}: {out}"));
                }
                let reason = out["agent_message"].as_str().unwrap_or("");
                if out.get("agent_message") != out.get("user_message") {
                    bad.push(format!("agent and user messages differ: {out}"));
                }
                for r in strings(case, "reason") {
                    if !reason.contains(&r) {
                        bad.push(format!("agent_message {reason:?} lacks {r:?}"));
                    }
                }
            }
            Ok(out) => {
                let hso = &out["hookSpecificOutput"];
                if hso["hookEventName"] != "PreToolUse" {
                    bad.push(format!("no hookEventName PreToolUse: {out}"));
                }
                let got = hso["permissionDecision"].as_str();
                if got != want {
                    bad.push(format!("decision {got:?}, want {want:?}: {out}"));
                }
                let reason = hso["permissionDecisionReason"].as_str().unwrap_or("");
                for r in strings(case, "reason") {
                    if !reason.contains(&r) {
                        bad.push(format!("reason {reason:?} lacks {r:?}"));
                    }
                }
                let keys: Vec<&String> = out.as_object().map_or(vec![], |o| o.keys().collect());
                if keys != ["hookSpecificOutput"] {
                    bad.push(format!("unexpected top-level keys {keys:?}"));
                }
            }
        }
    }
    for s in strings(case, "stderr") {
        if !run.stderr.contains(&s) {
            bad.push(format!("stderr {:?} lacks {s:?}", run.stderr));
        }
    }
    for s in strings(case, "no_stderr") {
        if run.stderr.contains(&s) {
            bad.push(format!("stderr {:?} holds {s:?}", run.stderr));
        }
    }
    if want_exit == Some(0) && !run.stderr.is_empty() {
        bad.push(format!("stderr on an answer: {:?}", run.stderr));
    }
    if let Some(ms) = case.get("max_ms").and_then(Value::as_u64) {
        if run.elapsed > Duration::from_millis(ms) {
            bad.push(format!("took {:?}, more than {ms} ms", run.elapsed));
        }
    }
    bad
}

#[test]
fn claude_hook_cases() {
    run_cases("claude", 50);
}

#[test]
fn codex_hook_cases() {
    run_cases("codex", 8);
}

#[test]
fn cursor_hook_cases() {
    run_cases("cursor", 20);
}

/// Runs every case of `tests/data/hook/<harness>.jsonl`; reports all
/// failures at once.
fn run_cases(harness: &str, at_least: usize) {
    let data_path = data_dir();
    let data = data_path.to_str().expect("utf-8 path").to_string();
    let text =
        std::fs::read_to_string(data_path.join(format!("{harness}.jsonl"))).expect("case file");
    let mut failures = Vec::new();
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        n += 1;
        let case: Value = match serde_json::from_str(line) {
            Ok(v) => subst(&v, &data),
            Err(e) => {
                failures.push(format!("line {}: not json: {e}", i + 1));
                continue;
            }
        };
        let name = case["name"].as_str().unwrap_or("?").to_string();
        for b in check(&case, &data, harness) {
            failures.push(format!("line {} ({name}): {b}", i + 1));
        }
    }
    assert!(n >= at_least, "only {n} cases read");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn decision_log_redacts_secrets() {
    let data = data_dir();
    let tmp = temp_dir("hook-log");
    let log = tmp.join("decisions.jsonl");
    let args: Vec<String> = [
        "hook",
        "claude",
        "--deny",
        "Bash(curl *)",
        "--log",
        log.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let env = [("HOME".to_string(), "/nonexistent-home".to_string())];
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz012345";
    let input = serde_json::json!({
        "cwd": data.join("proj"), "tool_name": "Bash", "session_id": "s9",
        "tool_use_id": "toolu_9",
        "tool_input": {"command": format!("curl -H 'Authorization: Bearer {secret}' https://api.github.com")},
    });
    let r = run_hook(&args, &env, &data, input.to_string().into_bytes(), false);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("\"deny\""), "{}", r.stdout);
    // A refusal is logged too.
    let r = run_hook(&args, &env, &data, b"not json".to_vec(), false);
    assert_eq!(r.code, Some(2));

    let text = std::fs::read_to_string(&log).expect("log written");
    assert!(!text.contains(secret), "secret in the log: {text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["decision"], "deny");
    assert_eq!(lines[0]["harness"], "claude");
    assert_eq!(lines[0]["tool"], "Bash");
    assert_eq!(lines[0]["tool_use_id"], "toolu_9");
    assert_eq!(lines[0]["rule"]["text"], "Bash(curl *)");
    assert_eq!(
        lines[0]["input"]["command"],
        "curl -H 'Authorization: Bearer ghp_[REDACTED]' https://api.github.com"
    );
    assert_eq!(lines[1]["decision"], "refused");
    assert!(
        lines[1]["reason"]
            .as_str()
            .unwrap()
            .contains("not valid json"),
        "{}",
        lines[1]
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A hook whose input never ends is refused by its watchdog when the
/// budget runs out: the deny answer, exit code 2, and the refusal in the
/// log, while the main thread is still blocked reading.
#[test]
fn the_watchdog_refuses_and_logs_when_the_budget_runs_out() {
    let data = data_dir();
    let tmp = temp_dir("hook-watchdog");
    let log = tmp.join("decisions.jsonl");
    let args: Vec<String> = [
        "hook",
        "claude",
        "--allow",
        "Bash(git status)",
        "--budget-ms",
        "300",
        "--log",
        log.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let input = serde_json::json!({
        "cwd": data.join("proj"), "tool_name": "Bash",
        "tool_input": {"command": "git status"},
    });
    let r = run_hook(&args, &[], &data, input.to_string().into_bytes(), true);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stdout.contains("\"deny\""), "{}", r.stdout);
    assert!(r.stderr.contains("time budget of 300 ms"), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(3), "{:?}", r.elapsed);
    let text = std::fs::read_to_string(&log).expect("log written");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["decision"], "refused");
    assert!(
        lines[0]["reason"]
            .as_str()
            .is_some_and(|s| s.contains("time budget")),
        "{}",
        lines[0]
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
