//! `toolgate test` as a process: passing, failing and malformed case files
//! (`tests/data/policytest/`), and the README's "Testing a policy" example
//! run exactly as it is printed there.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("test")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("toolgate runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/policytest")
}

fn run(file: &str) -> Run {
    run_in(&data(), &["--policy", "settings.json", file])
}

#[test]
fn a_passing_file_exits_0() {
    for file in ["pass.toml", "pass.jsonl"] {
        let r = run(file);
        assert_eq!(r.code, 0, "{file}:\n{}{}", r.stdout, r.stderr);
        assert!(!r.stdout.contains("FAIL"), "{}", r.stdout);
        assert!(r.stdout.ends_with(" passed, 0 failed\n"), "{}", r.stdout);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
    }
    let r = run_in(&data(), &["--policy", "settings.json", "-v", "pass.toml"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout.matches("\nok   pass.toml:").count() + 1,
        11,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("11 cases: 11 passed, 0 failed\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_tuff_rule_is_named_by_its_place() {
    let args = [
        "--policy",
        "settings.json",
        "--policy",
        "guard.toml",
        "tuff.toml",
    ];
    let r = run_in(&data(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "2 cases: 2 passed, 0 failed\n");
    // Without the tuff policy the token rule's case fails.
    let r = run("tuff.toml");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(
            "FAIL tuff.toml:6: Bash `git push origin main -f`\n    expected deny by rules[0]\n    got      allow by Bash(git *)"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn a_failing_file_exits_1_naming_each_failure() {
    let r = run("fail.toml");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let want = "\
FAIL fail.toml:9: Bash `git push -f origin main` (the short flag)
    expected deny
    got      allow by Bash(git *) (settings.json allow[0])
FAIL fail.toml:14: Bash `npm publish`
    expected ask by Bash(npm run *)
    got      ask by Bash(npm publish:*) (settings.json ask[0])
3 cases: 1 passed, 2 failed
";
    assert_eq!(r.stdout, want);
}

#[test]
fn a_malformed_file_exits_2_naming_line_and_column() {
    let r = run("malformed.toml");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "nothing runs: {}", r.stdout);
    for want in [
        "malformed.toml: line 4: column 10: unknown verdict \"maybe\"",
        "  expect = \"maybe\"\n           ^",
        "malformed.toml: line 9: column 1: unknown key \"colour\" in a case",
        "malformed.toml: line 11: column 1: a case needs a tool",
    ] {
        assert!(r.stderr.contains(want), "no {want:?} in\n{}", r.stderr);
    }
    let r = run("syntax.toml");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("syntax.toml: line 2: column 14: "),
        "{}",
        r.stderr
    );
    let r = run("malformed.jsonl");
    assert_eq!(r.code, 2);
    for want in [
        "malformed.jsonl: line 2: column 51: unknown verdict \"nope\"",
        "malformed.jsonl: line 3: column 1: a case needs an expect key",
        "malformed.jsonl: line 4: column 16: the line is not JSON",
    ] {
        assert!(r.stderr.contains(want), "no {want:?} in\n{}", r.stderr);
    }
    assert!(!r.stderr.contains("line 1:"), "{}", r.stderr);
}

#[test]
fn an_unreadable_policy_or_file_exits_2() {
    let r = run_in(&data(), &["--policy", "missing.json", "pass.toml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.json"), "{}", r.stderr);
    let r = run("missing.toml");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("missing.toml: cannot read the case file"),
        "{}",
        r.stderr
    );
    let r = run_in(&data(), &["pass.toml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no policy given"), "{}", r.stderr);
}

/// The fenced blocks of the README's "Testing a policy" section, in order.
fn readme_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme
        .find("\n## Testing a policy\n")
        .expect("a Testing a policy section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let section = &rest[..end];
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in section.lines() {
        if line.starts_with("```") {
            match cur.take() {
                Some(b) => blocks.push(b),
                None => cur = Some(String::new()),
            }
        } else if let Some(b) = &mut cur {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
}

#[test]
fn the_readme_example_runs_as_printed() {
    let blocks = readme_blocks();
    let [settings, cases, output, ..] = &blocks[..] else {
        panic!("expected three blocks, got {}", blocks.len());
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-policy-test");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.json"), settings).unwrap();
    std::fs::write(dir.join("policy-tests.toml"), cases).unwrap();
    let mut lines = output.lines();
    let command = lines.next().expect("a command line");
    let args: Vec<&str> = command
        .strip_prefix("$ toolgate test ")
        .expect("the command")
        .split(' ')
        .collect();
    let expected: String = lines.map(|l| format!("{l}\n")).collect();
    let r = run_in(&dir, &args);
    assert_eq!(r.stdout, expected, "{}", r.stderr);
    assert_eq!(r.code, 1);
    // With the fix the README gives, every case passes.
    let fixed = settings.replace(
        "\"deny\": [\"Bash(git push --force:*)\"",
        "\"deny\": [\"Bash(git push --force:*)\", \"Bash(git push -f:*)\"",
    );
    assert_ne!(&fixed, settings);
    std::fs::write(dir.join(".claude/settings.json"), fixed).unwrap();
    let r = run_in(&dir, &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "6 cases: 6 passed, 0 failed\n");
}
