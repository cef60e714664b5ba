//! `toolgate explain` with a policy (SPEC §10.3): the reading, the actions,
//! every matching rule, the decision and the deciding rule, as text and as
//! JSON; plain text (no colour codes) off a terminal.

use serde_json::Value;
use std::process::Command;

const POLICY: &str = "tests/data/batch/policy.json";

fn explain(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("explain")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("toolgate runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bash_call_shows_reading_actions_rules_and_decision() {
    let (code, out, err) = explain(&[
        "--policy",
        POLICY,
        "--cwd",
        "/w",
        "--bash",
        "sudo git push --force origin main && cat .env",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = [
        "reading:",
        "wrapper: sudo git push --force origin main",
        "run sudo git push --force origin main  → denied",
        "deny  Bash(git push --force:*)  matches (tests/data/batch/policy.json deny[0])",
        "read /w/.env",
        "deny  Read(./.env)  matches (tests/data/batch/policy.json deny[1])",
        "decision: deny",
        "rule: Bash(git push --force:*) (matches) in tests/data/batch/policy.json, list deny, index 0",
    ];
    let missing: Vec<&&str> = want.iter().filter(|w| !out.contains(**w)).collect();
    assert!(missing.is_empty(), "missing {missing:?} in:\n{out}");
    assert!(!out.contains('\x1b'), "colour off a terminal:\n{out}");
}

#[test]
fn a_json_call_with_its_own_mode() {
    let call = r#"{"tool":"Edit","input":{"file_path":"src/a.rs"},"mode":"acceptEdits"}"#;
    let (code, out, err) = explain(&["--policy", POLICY, "--cwd", "/w", call]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("edit /w/src/a.rs  → mode-allowed"), "{out}");
    assert!(out.contains("decision: allow"), "{out}");
    assert!(out.contains("mode acceptEdits"), "{out}");
    // The hook shape reads the same.
    let call = r#"{"tool_name":"Read","tool_input":{"file_path":".env"}}"#;
    let (_, out, _) = explain(&["--policy", POLICY, "--cwd", "/w", call]);
    assert!(out.contains("decision: deny"), "{out}");
    assert!(out.contains("list deny, index 1"), "{out}");
}

#[test]
fn json_output() {
    let (code, out, err) = explain(&[
        "--policy",
        POLICY,
        "--cwd",
        "/w",
        "--json",
        "--bash",
        "rm -rf build",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["rule"]["text"], "Bash(rm *)");
    assert_eq!(v["rule"]["list"], "ask");
    assert_eq!(v["rule"]["index"], 0);
    assert!(v["reading"].is_object());
    // A dynamic word: the deny rule that could match it is the reported
    // rule.
    let (_, out, _) = explain(&[
        "--policy",
        POLICY,
        "--cwd",
        "/w",
        "--json",
        "--bash",
        "rm -rf $DIR",
    ]);
    let d: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["rule"]["text"], "Read(./.env)");
    let runs: Vec<&Value> = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "run")
        .collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["outcome"], "asked");
    assert!(
        runs[0]["matches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["text"] == "Bash(rm *)" && m["source"] == POLICY),
        "{out}"
    );
}

#[test]
fn bad_calls_and_policies_exit_2() {
    let (code, out, err) = explain(&["--policy", POLICY, "not json"]);
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.contains("not JSON"), "{err}");
    let (code, _, err) = explain(&["--policy", POLICY, r#"{"tool":"Bash","input":{}}"#]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = explain(&["--policy", "tests/data/batch/missing.json", "--bash", "ls"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.json"), "{err}");
    // Without a policy, --bash still shows the reading alone.
    let (code, out, _) = explain(&["--bash", "ls | wc -l"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("invocations:") && !out.contains("decision:"),
        "{out}"
    );
}

/// A reader that goes away early (`toolgate explain … | head -1`) ends the
/// command quietly: no panic message, the usual exit code.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    // Far more than a pipe buffer holds, so the write meets the closed pipe.
    let cmd: String = (0..6000).map(|i| format!("echo {i}; ")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["explain", "--bash", &cmd])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("toolgate ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}
