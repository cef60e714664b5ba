//! `toolgate coverage` and `toolgate export claude` on the example tuff
//! policies of tests/data/tuff/, against their expected output.

use std::path::Path;
use std::process::Command;

const DATA: &str = "tests/data/tuff";

fn toolgate(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .output()
        .expect("runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(Path::new(DATA).join(name)).expect("expected output file")
}

#[test]
fn coverage_and_export_outputs() {
    let runs: &[(&[&str], &str)] = &[
        (
            &["coverage", "--policy", "infra-guardrails.toml"],
            "infra-guardrails.coverage-claude.txt",
        ),
        (
            &[
                "coverage",
                "--policy",
                "infra-guardrails.toml",
                "--harness",
                "cursor",
            ],
            "infra-guardrails.coverage-cursor.txt",
        ),
        (
            &[
                "coverage",
                "--policy",
                "infra-guardrails.toml",
                "--harness",
                "codex",
            ],
            "infra-guardrails.coverage-codex.txt",
        ),
        (
            &["coverage", "--policy", "infra-guardrails.toml", "--json"],
            "infra-guardrails.coverage-claude.json",
        ),
        (
            &["export", "claude", "--policy", "infra-guardrails.toml"],
            "infra-guardrails.export.json",
        ),
        (
            &["export", "claude", "--policy", "escapes.toml"],
            "escapes.export.json",
        ),
        (
            &["coverage", "--policy", "escapes.toml", "--harness", "codex"],
            "escapes.coverage-codex.txt",
        ),
    ];
    let mut failures = Vec::new();
    for (args, want) in runs {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.ends_with(".toml") {
                    format!("{DATA}/{a}")
                } else {
                    a.to_string()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, err, code) = toolgate(&args);
        if code != 0 || out != expected(want) {
            failures.push(format!(
                "{args:?} (exit {code}, {err}) gave:\n{out}\nexpected {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn export_merges_idempotently() {
    let dir = std::env::temp_dir().join(format!("toolgate-tuff-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let into = dir.join(".claude").join("settings.json");
    std::fs::create_dir_all(into.parent().unwrap()).unwrap();
    std::fs::copy(Path::new(DATA).join("settings-before.json"), &into).unwrap();
    let policy = format!("{DATA}/infra-guardrails.toml");
    let into_s = into.to_str().unwrap();
    let args = ["export", "claude", "--policy", &policy, "--into", into_s];
    let (out, _, code) = toolgate(&args);
    assert_eq!((code, out), (0, format!("{into_s}: added 6 rules\n")));
    let after = std::fs::read_to_string(&into).unwrap();
    assert_eq!(after, expected("settings-after.json"));
    let (out, _, code) = toolgate(&args);
    assert_eq!((code, out), (0, format!("{into_s}: up to date\n")));
    assert_eq!(std::fs::read_to_string(&into).unwrap(), after);
    // A new file is created with only the permissions block.
    let fresh = dir.join("new").join("settings.json");
    let fresh_s = fresh.to_str().unwrap();
    let (_, _, code) = toolgate(&["export", "claude", "--policy", &policy, "--into", fresh_s]);
    assert_eq!(code, 0);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fresh).unwrap()).unwrap();
    let printed: serde_json::Value =
        serde_json::from_str(&expected("infra-guardrails.export.json")).unwrap();
    assert_eq!(v, printed);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exported_rules_read_back_as_meant() {
    use serde_json::json;
    let call = |cmd: &str| {
        toolgate::ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": cmd}})).unwrap()
    };
    let text = expected("escapes.export.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ask = v["permissions"]["ask"].as_array().unwrap();
    assert!(toolgate::match_rule(ask[0].as_str().unwrap(), &call("echo x")).is_ok());
    assert!(toolgate::match_rule(ask[1].as_str().unwrap(), &call("rm -rf build")).unwrap());
    let ctx = toolgate::MatchContext::with_cwd("/p");
    let read = |rule: &str, path: &str| {
        let c =
            toolgate::ToolCall::from_json(&json!({"tool": "Read", "input": {"file_path": path}}))
                .unwrap();
        toolgate::match_rule_with(rule, &c, toolgate::Dialect::Strict, &ctx).unwrap()
    };
    let deny = v["permissions"]["deny"].as_array().unwrap();
    let (old, key) = (deny[0].as_str().unwrap(), deny[1].as_str().unwrap());
    assert!(read(old, "/p/config/(old)/key"));
    assert!(!read(old, "/p/config/old/key"));
    assert!(read(key, "/p/a/id_rsa"));
    assert!(!read(key, "/p/a/id_rsa.pub"));
    let push = "Bash(git push --force *)";
    let v: serde_json::Value =
        serde_json::from_str(&expected("infra-guardrails.export.json")).unwrap();
    assert_eq!(v["permissions"]["deny"][0], push);
    assert!(toolgate::match_rule(push, &call("git push --force origin")).unwrap());
}

#[test]
fn bad_policy_is_refused() {
    let (out, err, code) = toolgate(&["coverage", "--policy", "tests/data/tuff/absent.toml"]);
    assert_eq!((out.as_str(), code), ("", 2));
    assert!(
        err.contains("absent.toml") && err.contains("no such file"),
        "{err}"
    );
}
