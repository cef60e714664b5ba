//! End-to-end: `toolgate install claude` on a fresh project and on one
//! with settings of its own, then the installed command run as Claude Code
//! runs it (through a shell, the hook input on stdin).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn toolgate(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .output()
        .expect("run toolgate")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("settings file")).expect("json")
}

/// Runs a hook command line the way Claude Code does: `sh -c`, stdin.
fn run_installed(command: &str, input: &Value, dir: &Path) -> Output {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("CLAUDE_PROJECT_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(input.to_string().as_bytes()).expect("write");
    drop(pipe);
    child.wait_with_output().expect("wait")
}

#[test]
fn install_on_a_fresh_project_then_run_it() {
    let proj = temp_dir("install-fresh");
    std::fs::write(
        proj.join("policy.json"),
        r#"{"permissions": {"deny": ["Bash(rm -rf *)"], "allow": ["Bash(ls *)"]}}"#,
    )
    .unwrap();
    let out = toolgate(
        &[
            "install",
            "claude",
            "--project",
            ".",
            "--policy",
            "policy.json",
        ],
        &proj,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("installed the toolgate hook in"),
        "{stdout}"
    );

    let file = proj.join(".claude/settings.json");
    let first = std::fs::read_to_string(&file).unwrap();
    let s = read_json(&file);
    let groups = s["hooks"]["PreToolUse"]
        .as_array()
        .expect("PreToolUse array");
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["matcher"], "*");
    let hook = &groups[0]["hooks"][0];
    assert_eq!(hook["type"], "command");
    assert!(hook.get("timeout").is_none());
    let command = hook["command"].as_str().unwrap().to_string();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_toolgate")).unwrap();
    let policy = std::path::absolute(proj.join("policy.json")).unwrap();
    assert_eq!(
        command,
        format!(
            "{} hook claude --policy {}",
            exe.display(),
            policy.display()
        )
    );

    // Idempotent: a second install changes nothing, byte for byte.
    let out = toolgate(
        &[
            "install",
            "claude",
            "--project",
            ".",
            "--policy",
            "policy.json",
        ],
        &proj,
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("already installed in"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // The installed command answers, from another directory.
    let sub = proj.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let input = serde_json::json!({"session_id": "s", "cwd": sub, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}, "tool_use_id": "t"});
    let out = run_installed(&command, &input, &sub);
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json answer");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let input =
        serde_json::json!({"cwd": sub, "tool_name": "Bash", "tool_input": {"command": "make"}});
    let out = run_installed(&command, &input, &sub);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&proj);
}

#[test]
fn install_keeps_other_settings_and_updates_its_entry() {
    let proj = temp_dir("install-merge");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let before = r#"{
  "model": "opus",
  "permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(ls *)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/guard.sh", "timeout": 5}]}]
  },
  "env": {"B": "1", "A": "2"}
}"#;
    std::fs::write(proj.join(".claude/settings.json"), before).unwrap();
    let out = toolgate(&["install", "claude", "--project", "."], &proj);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = read_json(&proj.join(".claude/settings.json"));
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "env"]);
    let env_keys: Vec<&String> = s["env"].as_object().unwrap().keys().collect();
    assert_eq!(env_keys, ["B", "A"]);
    assert_eq!(
        s["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "fmt.sh"
    );
    let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    assert_eq!(pre[0]["hooks"][0]["command"], "/opt/guard.sh");
    assert_eq!(pre[0]["hooks"][0]["timeout"], 5);
    let command = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        command.ends_with(" hook claude --claude-settings"),
        "{command}"
    );

    // Installing with other options updates the same entry.
    let out = toolgate(
        &[
            "install",
            "claude",
            "--project",
            ".",
            "--claude-settings",
            "--no-allow",
            "--deny",
            "Bash(curl *)",
        ],
        &proj,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("updated the toolgate hook in"));
    let s = read_json(&proj.join(".claude/settings.json"));
    let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2);
    let command = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        command.ends_with(" hook claude --claude-settings --deny 'Bash(curl *)' --no-allow"),
        "{command}"
    );
    // The hierarchy it names answers: the project's deny rule, through the hook.
    let input = serde_json::json!({"cwd": proj, "tool_name": "Read",
        "tool_input": {"file_path": proj.join(".env")}});
    let out = run_installed(command, &input, &proj);
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json answer");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let _ = std::fs::remove_dir_all(&proj);
}

#[test]
fn install_refuses_what_it_cannot_do() {
    let proj = temp_dir("install-refuse");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    // Settings that are not plain JSON are left alone.
    let odd = "{\n  // a comment\n  \"model\": \"opus\"\n}\n";
    std::fs::write(proj.join(".claude/settings.json"), odd).unwrap();
    let out = toolgate(&["install", "claude", "--project", "."], &proj);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(proj.join(".claude/settings.json")).unwrap(),
        odd
    );
    // A policy that does not load is not installed.
    std::fs::remove_file(proj.join(".claude/settings.json")).unwrap();
    let out = toolgate(
        &["install", "claude", "--project", ".", "--deny", "Bash((x)"],
        &proj,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not installed"));
    assert!(!proj.join(".claude/settings.json").exists());
    let _ = std::fs::remove_dir_all(&proj);
}

#[test]
fn install_codex_on_a_fresh_project_then_run_it() {
    let proj = temp_dir("install-codex");
    std::fs::create_dir_all(proj.join(".codex")).unwrap();
    let before = "model = \"o3\"\n";
    std::fs::write(proj.join(".codex/config.toml"), before).unwrap();
    let args = [
        "install",
        "codex",
        "--project",
        ".",
        "--ask",
        "Bash(git push *)",
    ];
    let out = toolgate(&args, &proj);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(proj.join(".codex/config.toml")).unwrap();
    assert!(text.starts_with(before), "{text}");
    let doc: toml::Table = toml::from_str(&text).expect("valid toml");
    let hook = &doc["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(hook["type"].as_str(), Some("command"));
    let command = hook["command"].as_str().unwrap().to_string();
    assert!(
        command.ends_with(" hook codex --ask 'Bash(git push *)'"),
        "{command}"
    );
    // Idempotent.
    let out = toolgate(&args, &proj);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("already installed in"));
    assert_eq!(
        std::fs::read_to_string(proj.join(".codex/config.toml")).unwrap(),
        text
    );
    // Codex cannot ask: the installed hook denies.
    let input = serde_json::json!({"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git push origin main"}, "tool_use_id": "c"});
    let out = run_installed(&command, &input, &proj);
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json answer");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let _ = std::fs::remove_dir_all(&proj);
}

#[test]
fn install_cursor_registers_both_events() {
    let proj = temp_dir("install-cursor");
    std::fs::create_dir_all(proj.join(".cursor")).unwrap();
    std::fs::write(
        proj.join(".cursor/hooks.json"),
        r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "fmt.sh"}]}}"#,
    )
    .unwrap();
    let args = [
        "install",
        "cursor",
        "--project",
        ".",
        "--deny",
        "Read(./.env)",
    ];
    let out = toolgate(&args, &proj);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = proj.join(".cursor/hooks.json");
    let first = std::fs::read_to_string(&file).unwrap();
    let doc = read_json(&file);
    let keys: Vec<&String> = doc["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "afterFileEdit",
            "beforeShellExecution",
            "beforeReadFile",
            "beforeMCPExecution"
        ]
    );
    let read = &doc["hooks"]["beforeReadFile"][0];
    assert_eq!(read["failClosed"], true);
    let command = read["command"].as_str().unwrap().to_string();
    assert!(
        command.ends_with(" hook cursor --deny 'Read(./.env)' --event beforeReadFile"),
        "{command}"
    );
    let out = toolgate(&args, &proj);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("already installed in"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);
    let input = serde_json::json!({"hook_event_name": "beforeReadFile", "workspace_roots": [proj],
        "file_path": proj.join(".env"), "content": "K=V"});
    let out = run_installed(&command, &input, &proj);
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json answer");
    assert_eq!(answer["permission"], "deny");
    let _ = std::fs::remove_dir_all(&proj);
}
