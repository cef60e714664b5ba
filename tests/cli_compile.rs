//! `toolgate compile` and precompiled images: an image answers exactly as
//! its sources do, keeps every rule's provenance and the load's warnings,
//! and a stale, foreign, corrupt or truncated image is refused with an
//! error naming it — by the hook (a deny, exit 2) and by `eval` (exit 2).

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use toolgate::compile::{Config, Policy};
use toolgate::policy::{LoadedPolicy, PolicyImage, SourceKind, SourceRoot};
use toolgate::{EvalContext, Evaluator, ToolCall};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-compile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn toolgate(args: &[&str], stdin: &str, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args)
        .current_dir(cwd)
        .env("TOOLGATE_CACHE_DIR", cwd.join("cache"))
        .env_remove("TOOLGATE_TEST_BUILD_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    // A refusal before reading stdin may close the pipe first.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn hook_input(cwd: &Path, command: &str) -> String {
    serde_json::json!({
        "session_id": "s", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": "t"
    })
    .to_string()
}

const SETTINGS: &str = r#"{"permissions": {
  "allow": ["Bash(git status)", "Bash(npm run *)", "Read(src/**)", 17],
  "ask": ["Bash(git push:*)"],
  "deny": ["Bash(rm -rf *)", "Read(.env)", "WebFetch(domain:*.evil.example)"]
}}"#;

const CALLS: &[&str] = &[
    r#"{"tool":"Bash","input":{"command":"git status"}}"#,
    r#"{"tool":"Bash","input":{"command":"npm run build && git push origin"}}"#,
    r#"{"tool":"Bash","input":{"command":"rm -rf /"}}"#,
    r#"{"tool":"Bash","input":{"command":"ls"}}"#,
    r#"{"tool":"Read","input":{"file_path":"src/a/b.rs"}}"#,
    r#"{"tool":"Read","input":{"file_path":".env"}}"#,
    r#"{"tool":"WebFetch","input":{"url":"https://a.evil.example/x"}}"#,
];

/// A project with `.claude/settings.json` and an image compiled from it.
fn compiled(name: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), SETTINGS).unwrap();
    let out = toolgate(
        &[
            "compile",
            "--policy",
            ".claude/settings.json",
            "-o",
            "policy.tgimage",
        ],
        "",
        &dir,
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("compiled 7 rules"), "{err}");
    // The dropped allow entry is warned about at compile time.
    assert!(err.contains("warning"), "{err}");
    (dir.clone(), dir.join("policy.tgimage"))
}

#[test]
fn an_image_answers_as_its_sources_do() {
    let (dir, _) = compiled("same");
    let calls = CALLS.join("\n");
    let from_settings = toolgate(
        &["eval", "--no-cache", "--policy", ".claude/settings.json"],
        &calls,
        &dir,
        &[],
    );
    let from_image = toolgate(&["eval", "--policy", "policy.tgimage"], &calls, &dir, &[]);
    assert!(from_settings.status.success());
    assert_eq!(text(&from_image.stdout), text(&from_settings.stdout));
    // Provenance survives: the deciding rule's file, list and index.
    let first = text(&from_image.stdout);
    assert!(
        first.contains(r#""source":".claude/settings.json","list":"allow","index":0"#),
        "{first}"
    );
    // So do the load's warnings.
    assert!(text(&from_image.stderr).contains("warning"));
    let verdicts: Vec<String> = text(&from_image.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["decision"].to_string())
        .collect();
    assert_eq!(
        verdicts,
        [
            "\"allow\"",
            "\"ask\"",
            "\"deny\"",
            "\"none\"",
            "\"allow\"",
            "\"deny\"",
            "\"deny\""
        ]
    );
    // The hook, and an image combined with a rule on the command line.
    let out = toolgate(
        &["hook", "claude", "--policy", "policy.tgimage"],
        &hook_input(&dir, "git status"),
        &dir,
        &[],
    );
    assert!(text(&out.stdout).contains(r#""permissionDecision":"allow""#));
    let out = toolgate(
        &[
            "hook",
            "claude",
            "--policy",
            "policy.tgimage",
            "--deny",
            "Bash(git status)",
        ],
        &hook_input(&dir, "git status"),
        &dir,
        &[],
    );
    assert!(
        text(&out.stdout).contains(r#""permissionDecision":"deny""#),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn explain_and_lint_read_an_image() {
    let (dir, _) = compiled("others");
    let out = toolgate(
        &[
            "explain",
            "--policy",
            "policy.tgimage",
            "--bash",
            "git status",
        ],
        "",
        &dir,
        &[],
    );
    assert!(
        text(&out.stdout).contains("decision: allow"),
        "{}",
        text(&out.stdout)
    );
    let out = toolgate(&["lint", "--policy", "policy.tgimage"], "", &dir, &[]);
    let said = text(&out.stdout);
    assert!(!said.contains("load-error"), "{said}");
    assert!(said.contains("0 errors"), "{said}");
}

/// Runs the hook and `eval` on a broken image: both refuse, naming it.
fn refused(dir: &Path, env: &[(&str, &str)], why: &str) {
    let out = toolgate(
        &["hook", "claude", "--policy", "policy.tgimage"],
        &hook_input(dir, "git status"),
        dir,
        env,
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains(r#""permissionDecision":"deny""#),
        "{stdout}"
    );
    assert!(
        stderr.contains("policy.tgimage") && stderr.contains(why),
        "{why}: {stderr}"
    );
    let out = toolgate(&["eval", "--policy", "policy.tgimage"], CALLS[0], dir, env);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));
}

#[test]
fn a_stale_image_is_refused() {
    let (dir, _) = compiled("stale");
    std::fs::write(
        dir.join(".claude/settings.json"),
        SETTINGS.replace("git status", "git stash"),
    )
    .unwrap();
    refused(&dir, &[], "settings.json changed");
    std::fs::remove_file(dir.join(".claude/settings.json")).unwrap();
    refused(&dir, &[], "can no longer be read");
}

#[test]
fn a_new_settings_file_makes_a_discovered_image_stale() {
    let dir = temp_dir("discovered");
    let home = dir.join("home");
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), SETTINGS).unwrap();
    let home_s = home.to_str().unwrap();
    let env = [("HOME", home_s)];
    let out = toolgate(
        &["compile", "--claude-settings", "-o", "policy.tgimage"],
        "",
        &dir,
        &env,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = toolgate(
        &["hook", "claude", "--policy", "policy.tgimage"],
        &hook_input(&dir, "git status"),
        &dir,
        &env,
    );
    assert!(text(&out.stdout).contains("allow"), "{}", text(&out.stderr));
    std::fs::write(dir.join(".claude/settings.local.json"), "{}").unwrap();
    refused(&dir, &env, "settings.local.json appeared");
}

#[test]
fn a_foreign_image_is_refused() {
    let (dir, _) = compiled("foreign");
    refused(
        &dir,
        &[("TOOLGATE_TEST_BUILD_ID", "another build")],
        "another toolgate build",
    );
}

#[test]
fn a_corrupt_or_truncated_image_is_refused() {
    let (dir, image) = compiled("corrupt");
    let good = std::fs::read(&image).unwrap();
    let mut flipped = good.clone();
    let i = flipped.len() / 2;
    flipped[i] ^= 1;
    std::fs::write(&image, &flipped).unwrap();
    refused(&dir, &[], "corrupt");
    std::fs::write(&image, &good[..good.len() - 1]).unwrap();
    refused(&dir, &[], "truncated");
    let mut version = good.clone();
    version[16] = 99;
    std::fs::write(&image, &version).unwrap();
    refused(&dir, &[], "format version 99");
}

/// The README shows what `compile` prints and how a stale image is
/// refused: the same words the binary prints.
#[test]
fn readme_shows_what_compile_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let (dir, _) = compiled("readme");
    let out = toolgate(
        &[
            "compile",
            "--policy",
            ".claude/settings.json",
            "-o",
            "policy.tgimage",
        ],
        "",
        &dir,
        &[],
    );
    let said = text(&out.stderr);
    let line = said.lines().last().unwrap();
    let upto_size = &line[..line.rfind('(').unwrap()];
    assert!(readme.contains(upto_size), "README lacks {upto_size:?}");
    std::fs::write(dir.join(".claude/settings.json"), "{}").unwrap();
    let out = toolgate(&["eval", "--policy", "policy.tgimage"], CALLS[0], &dir, &[]);
    let said = text(&out.stderr)
        .replace(dir.to_str().unwrap(), "/home/me/app")
        .trim()
        .to_string();
    assert!(readme.contains(&said), "README lacks {said:?}");
}

#[test]
fn compile_errors_name_the_problem() {
    let dir = temp_dir("errors");
    let out = toolgate(&["compile", "-o", "x.tgimage"], "", &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("compile needs a policy"));
    let out = toolgate(
        &["compile", "--deny", "Bash(rm", "-o", "x.tgimage"],
        "",
        &dir,
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("<command line>"));
    assert!(!dir.join("x.tgimage").exists());
}

/// Every corpus policy survives the round trip through bytes: the same
/// policy (rules, provenance, warnings) and the same decisions; every
/// truncation of one image is refused without a panic.
#[test]
fn corpus_policies_round_trip() {
    let Some(lines) = common::corpus_lines("claude-policies.jsonl") else {
        return;
    };
    let commands = common::corpus_lines("agent-approved-bash-commands.txt").unwrap_or_default();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (n, line) in lines.iter().enumerate() {
        let v: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        let settings = serde_json::json!({"permissions": {
            "allow": v["allow"], "ask": v["ask"], "deny": v["deny"]}});
        let mut loaded = LoadedPolicy::new();
        if loaded
            .add_settings_text(
                &settings.to_string(),
                &format!("policy-{n}.json"),
                None,
                SourceKind::Settings,
                SourceRoot::Project,
            )
            .is_err()
        {
            continue;
        }
        let compiled = Policy::builder()
            .configure(Config::one_shot())
            .build(loaded.rules().to_vec())
            .unwrap();
        let image = PolicyImage::new("recipe", loaded.clone(), compiled);
        let bytes = image.to_bytes().unwrap();
        let back = match PolicyImage::from_bytes(&bytes, "img") {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("line {}: {e}", n + 1));
                continue;
            }
        };
        if back.policy() != &loaded {
            failures.push(format!("line {}: the policy differs", n + 1));
            continue;
        }
        let (p, c) = back.into_parts();
        let a = Evaluator::with_config(&loaded, Config::new()).unwrap();
        let b = Evaluator::with_compiled(&p, c).unwrap();
        let ctx = EvalContext::new("/tmp/project").unwrap();
        for cmd in commands.iter().skip(n % 7).step_by(29) {
            let mut input = serde_json::Map::new();
            input.insert("command".into(), serde_json::json!(cmd));
            let call = ToolCall::new("Bash", input).unwrap();
            let (x, y) = (a.evaluate(&call, &ctx), b.evaluate(&call, &ctx));
            let key = |d: &toolgate::Decision<'_>| {
                (d.verdict, d.rule.as_ref().map(|r| r.rule.text.clone()))
            };
            match (x, y) {
                (Ok(x), Ok(y)) if key(&x) == key(&y) => checked += 1,
                (Err(_), Err(_)) => {}
                _ => failures.push(format!("line {}: {cmd:?} decided differently", n + 1)),
            }
        }
        if n == 0 {
            for cut in (0..bytes.len()).step_by(97) {
                if PolicyImage::from_bytes(&bytes[..cut], "img").is_ok() {
                    failures.push(format!("a {cut}-byte truncation loaded"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 500, "only {checked} decisions compared");
}

/// The hook looks in the image cache before it opens a sole `--policy
/// FILE` to see whether it is an image: a file cached as settings that
/// has since been replaced by an image is a miss, and the image decides;
/// replaced by settings again, the settings do.
#[test]
fn a_cached_settings_file_replaced_by_an_image_is_decided_by_the_image() {
    let dir = temp_dir("replaced");
    let policy = dir.join("policy.json");
    std::fs::write(
        &policy,
        r#"{"permissions": {"allow": ["Bash(git status)"]}}"#,
    )
    .unwrap();
    let other = dir.join("other.json");
    std::fs::write(&other, r#"{"permissions": {"deny": ["Bash(git status)"]}}"#).unwrap();
    let hook = |file: &str| {
        let out = toolgate(
            &["hook", "claude", "--policy", file],
            &hook_input(&dir, "git status"),
            &dir,
            &[],
        );
        (text(&out.stdout), out.status.code())
    };
    let first = hook("policy.json");
    assert!(first.0.contains(r#""allow""#), "{first:?}");
    assert_eq!(hook("policy.json"), first, "from the cache");
    let out = toolgate(
        &["compile", "--policy", "other.json", "-o", "other.tgimage"],
        "",
        &dir,
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::copy(dir.join("other.tgimage"), &policy).unwrap();
    let (answer, code) = hook("policy.json");
    assert!(answer.contains(r#""deny""#), "{answer}");
    assert!(answer.contains("other.json"), "{answer}");
    assert_eq!(code, Some(0));
    std::fs::write(
        &policy,
        r#"{"permissions": {"allow": ["Bash(git status)"]}}"#,
    )
    .unwrap();
    assert_eq!(hook("policy.json"), first);
}

/// An image named `*.tgimage` is opened first; one such name that holds
/// settings is still loaded as settings, through the cache.
#[test]
fn settings_named_like_an_image_load_as_settings() {
    let dir = temp_dir("named");
    std::fs::write(
        dir.join("p.tgimage"),
        r#"{"permissions": {"allow": ["Bash(git status)"]}}"#,
    )
    .unwrap();
    let run = || {
        let out = toolgate(
            &["hook", "claude", "--policy", "p.tgimage"],
            &hook_input(&dir, "git status"),
            &dir,
            &[],
        );
        text(&out.stdout)
    };
    assert!(run().contains(r#""allow""#));
    let entries = std::fs::read_dir(dir.join("cache")).unwrap().count();
    assert_eq!(entries, 1);
    assert!(run().contains(r#""allow""#));
}
