//! `toolgate match-rules` as a process (SPEC §10.1): input and output
//! shapes, exit codes, messages, options. The rule semantics themselves
//! are the case files' business (`tests/cases.rs`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("match-rules")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    // A run refused before it reads its input closes the pipe early: a
    // broken pipe here is part of what is tested, not a failure.
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A failing run: exit 2, nothing on stdout, stderr holding every `needle`.
fn assert_refused(r: &Run, needles: &[&str]) {
    assert_eq!(r.code, 2, "exit code; stderr {:?}", r.stderr);
    assert_eq!(r.stdout, "", "stdout must stay empty");
    for n in needles {
        assert!(r.stderr.contains(n), "stderr {:?} lacks {n:?}", r.stderr);
    }
}

#[test]
fn the_example_answers_as_it_expects() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rule-matcher.json");
    let cases: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let expected: Vec<bool> = cases
        .iter()
        .map(|c| {
            c["expect"]
                .as_bool()
                .expect("every example case has expect")
        })
        .collect();
    let r = run(&["examples/rule-matcher.json"], "");
    assert_eq!(r.code, 0, "stderr {:?}", r.stderr);
    let got: Vec<bool> = serde_json::from_str(&r.stdout).expect("a JSON array of booleans");
    assert_eq!(got, expected);
    assert!(r.stdout.ends_with('\n'));
}

#[test]
fn stdin_and_dash_read_the_same() {
    let input = r#"[{"rule": "Bash(ls *)", "call": {"tool": "Bash", "input": {"command": "ls -la"}}},
                    {"rule": "Bash(ls *)", "call": {"tool": "Bash", "input": {"command": "lsof"}}}]"#;
    let a = run(&[], input);
    let b = run(&["-"], input);
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert_eq!(a.stdout, "[true,false]\n");
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn empty_array_gives_empty_array() {
    let r = run(&[], "[]");
    assert_eq!((r.code, r.stdout.as_str()), (0, "[]\n"));
}

#[test]
fn default_dialect_is_strict() {
    let input = r#"[{"rule": "Bash(ls *)", "call": {"tool": "Bash", "input": {"command": "ls"}}},
                    {"rule": "Read(.env)", "call": {"tool": "Grep", "input": {"path": ".env"}}}]"#;
    assert_eq!(run(&[], input).stdout, "[false,false]\n");
    assert_eq!(
        run(&["--dialect", "strict"], input).stdout,
        "[false,false]\n"
    );
    assert_eq!(
        run(&["--dialect", "claude-code"], input).stdout,
        "[true,true]\n"
    );
}

#[test]
fn unknown_dialect_is_refused() {
    let r = run(&["--dialect", "tuff"], "[]");
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
}

#[test]
fn cwd_lets_absolute_paths_match_relative_rules() {
    let input = r#"[{"rule": "Read(src/**)", "call": {"tool": "Read", "input": {"file_path": "/p/src/a.rs"}}}]"#;
    assert_eq!(run(&[], input).stdout, "[false]\n");
    assert_eq!(run(&["--cwd", "/p"], input).stdout, "[true]\n");
    assert_eq!(run(&["--cwd", "/q"], input).stdout, "[false]\n");
}

#[test]
fn a_malformed_rule_names_case_column_and_caret() {
    let input = r#"[{"rule": "Bash(ls)", "call": {"tool": "Bash", "input": {"command": "ls"}}},
                    {"rule": "Bash((ls)", "call": {"tool": "Bash", "input": {"command": "ls"}}}]"#;
    let r = run(&[], input);
    assert_refused(
        &r,
        &[
            "case 1",
            "column 6",
            "unbalanced parenthesis",
            "Bash((ls)",
            "     ^",
        ],
    );
}

#[test]
fn a_file_name_is_named() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cases.json");
    std::fs::write(
        &file,
        r#"[{"rule": "Bash(ls)x", "call": {"tool": "Bash", "input": {"command": "ls"}}}]"#,
    )
    .unwrap();
    let r = run(&[file.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).ok();
    assert_refused(&r, &["cases.json", "case 0", "column 9", "text after"]);
}

#[test]
fn malformed_input_is_refused() {
    let cases: &[(&str, &[&str])] = &[
        ("", &["not JSON"]),
        ("[", &["not JSON"]),
        ("{}", &["JSON array"]),
        ("[3]", &["case 0", "must be an object"]),
        (
            r#"[{"call": {"tool": "Bash", "input": {}}}]"#,
            &["case 0", "no rule"],
        ),
        (
            r#"[{"rule": 3, "call": {"tool": "Bash"}}]"#,
            &["case 0", "rule must be a string"],
        ),
        (r#"[{"rule": "Bash"}]"#, &["case 0", "no call"]),
        (
            r#"[{"rule": "Bash", "call": []}]"#,
            &["case 0", "JSON object"],
        ),
        (
            r#"[{"rule": "Bash", "call": {"input": {}}}]"#,
            &["case 0", "needs a tool"],
        ),
        (
            r#"[{"rule": "Bash", "call": {"tool": "Bash", "input": "ls"}}]"#,
            &["case 0", "must be an object"],
        ),
        (
            r#"[{"rule": "Read(x)", "call": {"tool": "Read", "input": {"path": "x", "file_path": "x"}}}]"#,
            &["case 0", "both path and file_path"],
        ),
        (
            r#"[{"rule": "Bash(ls)", "call": {"tool": "Bash", "input": {"command": 1}}}]"#,
            &["case 0", "must be a string"],
        ),
        (
            r#"[{"rule": "Bash(ls)", "call": {"tool": "Bash", "input": {}}}]"#,
            &["case 0", "needs a string command"],
        ),
        (
            r#"[{"rule": "WebFetch(domain:x.com)", "call": {"tool": "WebFetch", "input": {"url": "::"}}}]"#,
            &["case 0", "does not parse"],
        ),
        (
            r#"[{"rule": "Bash", "call": {"tool": "Bash", "input": {}}},
                {"rule": "WebFetch(domain:x.com)", "call": {"tool": "WebFetch", "input": {"url": "mailto:a@x.com"}}}]"#,
            &["case 1", "has no host"],
        ),
    ];
    for (input, needles) in cases {
        let r = run(&[], input);
        assert_refused(&r, needles);
    }
}

#[test]
fn an_unsupported_rule_answers_false_with_a_warning() {
    let input = r#"[{"rule": "Bash(command:rm *)", "call": {"tool": "Bash", "input": {"command": "rm x"}}},
                    {"rule": "Bash(rm *)", "call": {"tool": "Bash", "input": {"command": "rm x"}}}]"#;
    let r = run(&[], input);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "[false,true]\n");
    assert!(r.stderr.contains("warning"), "{}", r.stderr);
    assert!(r.stderr.contains("case 0"), "{}", r.stderr);
}

#[test]
fn a_missing_file_is_refused() {
    let r = run(&["/nonexistent/cases.json"], "");
    assert_refused(&r, &["cannot read", "/nonexistent/cases.json"]);
}
