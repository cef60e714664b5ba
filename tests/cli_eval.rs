//! `toolgate eval` as a process (SPEC §10.2): order, ids, error lines,
//! exit codes, context flags against per-line keys, `--summary`.

mod common;

use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

const POLICY: &str = "tests/data/batch/policy.json";

struct Run {
    code: i32,
    lines: Vec<Value>,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &str) -> Run {
    run_env(args, stdin.as_bytes(), &[])
}

fn run_env(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("eval")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HOME", "/home/tester")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    let mut stdin_pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // Write from a thread so a large input cannot deadlock on a full pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin_pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad output line {l:?}: {e}")))
        .collect();
    Run {
        code: out.status.code().unwrap_or(-1),
        lines,
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn bash(cmd: &str) -> String {
    json!({"tool": "Bash", "input": {"command": cmd}}).to_string()
}

fn input(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

#[test]
fn decisions_come_out_in_input_order_with_ids() {
    // Many more lines than one chunk, decisions alternating, so any
    // reordering across chunks or threads shows.
    let n = 20_000;
    let lines: Vec<String> = (0..n)
        .map(|i| match i % 3 {
            0 => bash(&format!("git log -n {i}")),
            1 => bash(&format!("curl https://example.com/{i}")),
            _ => bash(&format!("rm -rf build{i}")),
        })
        .collect();
    let r = run(&["--policy", POLICY, "--cwd", "/w"], &input(&lines));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.lines.len(), n);
    let mut bad = Vec::new();
    for (i, l) in r.lines.iter().enumerate() {
        let want = ["allow", "deny", "ask"][i % 3];
        if l["decision"] != want || l["id"] != json!(i + 1) {
            bad.push(format!("line {}: {l}", i + 1));
        }
    }
    assert!(
        bad.is_empty(),
        "{} wrong, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn output_line_shape() {
    let lines = [
        json!({"tool_name": "Bash", "tool_input": {"command": "git push --force origin main"},
               "tool_use_id": "toolu_01"})
        .to_string(),
        bash("npm install"),
    ];
    let r = run(&["--policy", POLICY, "--cwd", "/w"], &input(&lines));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.lines[0],
        json!({"decision": "deny",
               "rule": {"text": "Bash(git push --force:*)", "effect": "deny",
                        "source": "tests/data/batch/policy.json", "list": "deny", "index": 0},
               "reason": "denied by Bash(git push --force:*) (tests/data/batch/policy.json deny[0])",
               "id": "toolu_01"})
    );
    // No mode, no rule: none, with a null rule.
    assert_eq!(r.lines[1]["decision"], "none");
    assert_eq!(r.lines[1]["rule"], Value::Null);
    assert_eq!(r.lines[1]["id"], 2);
    // Fields in the order the contract writes them.
    let first = r.stdout.lines().next().unwrap();
    let pos = |k: &str| first.find(&format!("\"{k}\":")).unwrap();
    assert!(
        pos("decision") < pos("rule") && pos("rule") < pos("reason") && pos("reason") < pos("id")
    );
}

#[test]
fn broken_lines_give_error_lines_and_exit_1() {
    let lines = [
        bash("git status"),
        String::new(),
        "not json".to_string(),
        "[1, 2]".to_string(),
        json!({"tool": "Bash", "input": {"command": 7}}).to_string(),
        json!({"tool": "Bash", "input": {"command": "ls"}, "cwd": 3}).to_string(),
        json!({"tool": "Bash", "input": {"command": "ls"}, "mode": "sideways"}).to_string(),
        json!({"tool": "Bash", "input": {"command": "ls"}, "cwd": "relative"}).to_string(),
        json!({"tool": "Bash"}).to_string(),
        bash("git diff"),
    ];
    let r = run(&["--policy", POLICY, "--cwd", "/w"], &input(&lines));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.lines.len(), lines.len());
    assert_eq!(r.lines[0]["decision"], "allow");
    assert_eq!(r.lines[9]["decision"], "allow");
    let mut bad = Vec::new();
    for (i, l) in r.lines.iter().enumerate().take(9).skip(1) {
        let n = i + 1;
        let ok = l.get("decision").is_none()
            && l["error"]
                .as_str()
                .is_some_and(|e| e.starts_with(&format!("line {n}: ")))
            && l["id"] == json!(n);
        if !ok {
            bad.push(format!("line {n}: {l}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    // A line that is not UTF-8 is an error line too, and the run goes on.
    let mut raw = b"\xff\xfe\n".to_vec();
    raw.extend_from_slice(bash("git log").as_bytes());
    let r = run(
        &["--policy", POLICY, "--cwd", "/w"],
        &String::from_utf8_lossy(&raw),
    );
    assert_eq!(r.lines.len(), 2);
    assert_eq!(r.code, 1);
    assert_eq!(r.lines[1]["decision"], "allow");
}

#[test]
fn a_policy_that_cannot_be_loaded_exits_2_with_nothing_evaluated() {
    let r = run(&["--policy", "tests/data/batch/missing.json"], &bash("ls"));
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("missing.json"), "{}", r.stderr);
    let r = run(&["--deny", "Bash(rm"], &bash("ls"));
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    let r = run(&[], &bash("ls"));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no policy"), "{}", r.stderr);
    let r = run(&["--policy", POLICY, "--mode", "sideways"], &bash("ls"));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("sideways"), "{}", r.stderr);
}

#[test]
fn a_lines_context_wins_over_the_flags() {
    let read = |extra: Value| {
        let mut v = json!({"tool": "Read", "input": {"file_path": ".env"}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let edit = |path: &str, extra: Value| {
        let mut v = json!({"tool": "Edit", "input": {"file_path": path}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let lines = [
        // 1: the flags: cwd /w, project /w → /w/.env is the denied file.
        read(json!({})),
        // 2: the line's cwd moves the file, the project stays --project-dir.
        read(json!({"cwd": "/elsewhere"})),
        // 3: the line's project_dir moves the anchor to where the file is.
        read(json!({"cwd": "/elsewhere", "project_dir": "/elsewhere"})),
        // 4: no mode: an edit no rule decides is none ...
        edit("/w/src/a.rs", json!({})),
        // 5: ... the line's mode wins over --mode default (here acceptEdits).
        edit("/w/src/a.rs", json!({"mode": "acceptEdits"})),
        // 6: permission_mode (the hook shape's key) is a mode too.
        edit("/w/src/a.rs", json!({"permission_mode": "dontAsk"})),
        // 7: an additional directory of the line counts as a working
        //    directory under acceptEdits; the flag's does not apply then.
        edit(
            "/lib/x.rs",
            json!({"mode": "acceptEdits", "additional_directories": ["/lib"]}),
        ),
        edit(
            "/other/x.rs",
            json!({"mode": "acceptEdits", "additional_directories": ["/lib"]}),
        ),
        // 9: the flag's additional directory, no line key.
        edit("/other/x.rs", json!({"mode": "acceptEdits"})),
    ];
    let r = run(
        &[
            "--policy",
            POLICY,
            "--cwd",
            "/w",
            "--project-dir",
            "/w",
            "--add-dir",
            "/other",
        ],
        &input(&lines),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got: Vec<&str> = r
        .lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        got,
        [
            "deny", "allow", "deny", "none", "allow", "deny", "allow", "ask", "allow"
        ],
        "{:#?}",
        r.lines
    );
    // --mode is the default for lines without one.
    let r = run(
        &["--policy", POLICY, "--cwd", "/w", "--mode", "dontAsk"],
        &input(&[
            edit("/w/a", json!({})),
            edit("/w/a", json!({"mode": "acceptEdits"})),
        ]),
    );
    let got: Vec<&str> = r
        .lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["deny", "allow"]);
}

#[test]
fn home_comes_from_the_line_then_the_flag_then_the_environment() {
    let policy = ["--deny", "Read(~/.ssh/**)", "--cwd", "/w"];
    let read = |home: Option<&str>| {
        let mut v = json!({"tool": "Read", "input": {"file_path": "/home/tester/.ssh/id"}});
        if let Some(h) = home {
            v["home"] = json!(h);
        }
        v.to_string()
    };
    // $HOME is /home/tester in these runs.
    let r = run(&policy, &input(&[read(None), read(Some("/root"))]));
    let got: Vec<&str> = r
        .lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["deny", "none"]);
    let mut with_flag = policy.to_vec();
    with_flag.extend(["--home", "/root"]);
    let r = run(
        &with_flag,
        &input(&[read(None), read(Some("/home/tester"))]),
    );
    let got: Vec<&str> = r
        .lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["none", "deny"]);
}

#[test]
fn calls_from_a_file_or_stdin_agree() {
    let dir = std::env::temp_dir().join(format!("toolgate-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("calls.jsonl");
    let text = input(&[bash("git status"), bash("rm x"), bash("curl x")]);
    std::fs::write(&file, &text).unwrap();
    let a = run(
        &["--policy", POLICY, "--cwd", "/w", file.to_str().unwrap()],
        "",
    );
    let b = run(&["--policy", POLICY, "--cwd", "/w", "-"], &text);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.lines.len(), 3);
    // No trailing newline on the last line: still read.
    let c = run(&["--policy", POLICY, "--cwd", "/w"], text.trim_end());
    assert_eq!(c.stdout, a.stdout);
}

#[test]
fn summary_counts_verdicts_and_rule_hits() {
    let lines = [
        bash("git status"),
        bash("git log"),
        bash("rm -rf x"),
        bash("curl x"),
        bash("ls"),
        "oops".to_string(),
    ];
    let r = run(
        &["--policy", POLICY, "--cwd", "/w", "--summary"],
        &input(&lines),
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.lines.len(), 6);
    let s = &r.stderr;
    let want = [
        "6 calls",
        "  allow  2",
        "  ask    1",
        "  deny   1",
        "  none   1",
        "  error  1",
        "         2  Bash(git *) (tests/data/batch/policy.json allow[0])",
        "         1  Bash(rm *) (tests/data/batch/policy.json ask[0])",
        "         1  Bash(curl *) (tests/data/batch/policy.json deny[2])",
        "rules that decided no call: 5",
        "  Bash(npm test) (tests/data/batch/policy.json allow[1])",
    ];
    let missing: Vec<&&str> = want
        .iter()
        .filter(|w| !s.lines().any(|l| l == **w))
        .collect();
    assert!(missing.is_empty(), "missing {missing:?} in:\n{s}");
    // Without --summary, stderr stays quiet (and no progress bar off a
    // terminal).
    let r = run(&["--policy", POLICY, "--cwd", "/w"], &input(&lines));
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn the_worked_audit_in_the_readme_is_what_eval_prints() {
    let r = run(
        &[
            "--policy",
            "examples/audit/policy.json",
            "--cwd",
            "/proj",
            "--summary",
            "examples/audit/calls.jsonl",
        ],
        "",
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.lines.len(), 17);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    assert!(
        readme.contains(&r.stderr),
        "README's audit summary is stale; eval now prints:\n{}",
        r.stderr
    );
}

/// A line whose evaluation panics (a bug) loses that line only: it gets an
/// error line with its id, no verdict, and every other line is decided.
#[test]
fn a_panicking_line_is_an_error_line_not_a_lost_batch() {
    let calls = [
        bash("git status"),
        json!({"tool_use_id": "t2", "tool": "Bash", "input": {"command": "git status"}})
            .to_string(),
        bash("git push --force"),
    ];
    let r = run_env(
        &["--policy", POLICY, "--cwd", "/w"],
        input(&calls).as_bytes(),
        &[("TOOLGATE_EVAL_TEST_PANIC", "2")],
    );
    let lines = &r.lines;
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].get("decision").is_some(), "{}", lines[0]);
    assert_eq!(lines[1]["id"], "t2");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("internal error"),
        "{}",
        lines[1]
    );
    assert!(lines[1].get("decision").is_none(), "{}", lines[1]);
    assert_eq!(lines[2]["decision"], "deny", "{}", lines[2]);
    assert_eq!(r.code, 1);
}

/// Lines of every shape the batch reads in one pass (or hands to the full
/// reading): each must come out byte for byte as the full reading alone
/// writes it.
fn tricky_lines() -> Vec<String> {
    let mut lines: Vec<String> = [
        r#"{"tool":"Bash","input":{"command":"git status"}}"#,
        r#"{"tool_name":"Bash","tool_input":{"command":"git push --force origin"},"tool_use_id":"toolu_1","session_id":"s","hook_event_name":"PreToolUse","transcript_path":"/t"}"#,
        r#"{"tool_name":"Bash","tool_input":{"command":"terraform apply"},"permission_mode":"plan","cwd":"/w/sub"}"#,
        r#"{"tool":"Bash","input":{"command":"rm -rf x"},"mode":"bypassPermissions"}"#,
        r#"{"tool":"Bash","input":{"command":"ls $(cat x)"},"mode":"acceptEdits"}"#,
        r#"{"tool":"Bash","input":{"command":"ls $(cat x)"},"mode":"dontAsk"}"#,
        r#"{"tool":"Edit","input":{"file_path":"infra/main.tf"},"mode":"plan"}"#,
        r#"{"tool":"Read","input":{"file_path":".env"},"project_dir":"/w","home":"/h"}"#,
        r#"{"tool":"Read","input":{"file_path":"/x/secrets/k"},"additional_directories":["/x","/y"]}"#,
        r#"{"tool":"Read","input":{"file_path":"/x/k"},"additional_directories":[]}"#,
        r#"{"tool":"WebFetch","input":{"url":"https://docs.rs/x"}}"#,
        r#"{"tool":"mcp__github__delete_repo"}"#,
        r#"{"tool":"Task","input":{"subagent_type":"Explore"}}"#,
        r#"{"tool":"Skill","input":{"skill":"/commit"}}"#,
        // Escapes in keys and values; a string id with escapes.
        r#"{"t\u006fol":"Ba\u0073h","input":{"command":"git \"log\"\n\u00e9"},"tool_use_id":"a\"b\u2028"}"#,
        // Ids that are numbers, null, other types.
        r#"{"tool":"Bash","input":{"command":"ls"},"tool_use_id":12}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"tool_use_id":1.50e2}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"tool_use_id":null}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"tool_use_id":[1]}"#,
        // Known keys given twice, or null, or of another type.
        r#"{"tool":"Read","tool":"Bash","input":{"command":"git log"}}"#,
        r#"{"tool":"Bash","input":{"command":"rm x"},"input":{"command":"git log"}}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"cwd":"/a","cwd":"/b"}"#,
        r#"{"tool":null,"tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        r#"{"tool":"Bash","tool_name":"Bash","input":{"command":"ls"}}"#,
        r#"{"tool":"Bash","input":null}"#,
        r#"{"tool":"Bash","input":"ls"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"tool_input":"not an object"}"#,
        r#"{"tool_name":"Bash","tool_input":{"command":"ls"},"input":[1]}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"cwd":null,"mode":null,"home":null}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"additional_directories":null}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"additional_directories":["/a",3]}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"additional_directories":"/a"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"cwd":3}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"cwd":"relative"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"mode":"sideways"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"mode":"plan","permission_mode":"default"}"#,
        r#"{"tool":3,"input":{}}"#,
        r#"{"tool":"","input":{}}"#,
        r#"{"input":{}}"#,
        r#"{"tool":"Bash"}"#,
        r#"{"tool":"Bash","input":{"command":7}}"#,
        r#"{"tool":"Read","input":{"path":"a","file_path":"b"}}"#,
        r#"{"tool":"Bash","input":{"command":"ls","command":"rm x"}}"#,
        // Inputs of one shape in a row (the one-pass reading reuses the
        // last call's input), of other types, escaped keys, other orders,
        // many fields, a call that fails its checks between two good ones.
        r#"{"tool":"Skill","input":{"skill":"/commit"}}"#,
        r#"{"tool":"Skill","input":{"skill":"//commit"}}"#,
        r#"{"tool":"Bash","input":{"command":"git status","timeout":5000,"description":"x"}}"#,
        r#"{"tool":"Bash","input":{"command":"rm -rf /","timeout":"5","description":null}}"#,
        r#"{"tool":"Bash","input":{"command":7,"timeout":1,"description":"x"}}"#,
        r#"{"tool":"Bash","input":{"command":"git push","timeout":1.5,"description":{"a":[1,{"b":null}]}}}"#,
        r#"{"tool":"Bash","input":{"command":"git push","timeout":-0.0,"description":[true,false]}}"#,
        r#"{"tool":"Bash","input":{"description":"d","command":"git status"}}"#,
        r#"{"tool":"Bash","input":{"c\u006fmmand":"git status"}}"#,
        r#"{"tool":"Bash","input":{"command":"rm x"}}"#,
        r#"{"tool":"Bash","input":{"command":7,"command":"git status"}}"#,
        r#"{"tool":"Bash","input":{"command":"ls","x":"\ud800"}}"#,
        r#"{"tool":"Bash","input":{"command":"ls","n":18446744073709551616,"m":-9223372036854775809}}"#,
        r#"{"tool":"Bash","input":{"command":"ls","n":1e400}}"#,
        r#"{"tool":"Bash","input":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"command":"git status"}}"#,
        r#"{"tool":"Bash","input":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"command":"git status"}}"#,
        r#"{"tool":"Read","input":{"file_path":"/w/a","path":"/w/b"}}"#,
        r#"{"tool":"Read","input":{"file_path":"/w/.env","path":null}}"#,
        r#"{"tool":"Read","input":{"file_path":"/w/.env"}}"#,
        r#"{"tool":"Read","input":{"file_path":"/w/src/main.rs"}}"#,
        r#"{"tool":"Read","input":{}}"#,
        r#"{"tool":"Read","input":{"file_path":"/w/.env"},"tool_input":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}}"#,
        r#"{"tool":"Read","input":{"notebook_path":"/w/x","path":"/w/.env"}}"#,
        r#"{"tool":"Read","input":{"notebook_path":"/w/y"}}"#,
        r#"{"tool":"Read","input":{"notebook_path":"/w/.env","x":1,"notebook_path":"/w/z"}}"#,
        r#"{"tool":"Bash","input":{"command":"git status","description":"d","timeout":1}}"#,
        r#"{"tool":"Bash","input":{"command":"git status","description":"d"}}"#,
        r#"{"tool":"Bash","input":{"command":"rm x","description":"d","description":"e","command":"git status"}}"#,
        r#"{"tool":"Bash","tool_input":{"command":"git status"}}"#,
        r#"{"tool_name":"Bash","input":{"command":"rm x"},"tool_input":{"command":"git status"}}"#,
        r#"{"tool_name":"Bash","tool_input":{"command":"rm x"},"input":{"command":"git status"}}"#,
        // Other keys: every type, nested; values the full reading rejects.
        r#"{"tool":"Bash","input":{"command":"ls"},"x":[1,-2.5e3,true,false,null,{"a":{"b":[]}}],"y":"\t"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"x":"\ud800"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"x":1e400}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"\ud800":1}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"x":"\q"}"#,
        r#"{"tool":"Bash","input":{"command":"ls"},"x":01}"#,
        // Not an object, not JSON, trailing text, blank, a lone CR.
        r#"["Bash"]"#,
        r#""Bash""#,
        "null",
        "{",
        r#"{"tool":"Bash","input":{"command":"ls"}} x"#,
        r#"{"tool":"Bash","input":{"command":"ls"}}  "#,
        "",
        "   ",
        "{\"tool\":\"Bash\",\"input\":{\"command\":\"ls\"}}\r",
        "{\"tool\":\"Bash\",\"input\":{\"command\":\"ls\"}}\r\r",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // A line longer than the one-pass reading keeps input memory for,
    // then one of the same shape.
    lines.push(format!(
        r#"{{"tool":"Bash","input":{{"command":"git log {}"}}}}"#,
        "x".repeat(70_000)
    ));
    lines.push(r#"{"tool":"Bash","input":{"command":"rm x"}}"#.to_string());
    // Deep nesting, past serde_json's limit and just under it.
    for depth in [126, 127, 128, 200] {
        lines.push(format!(
            r#"{{"tool":"Bash","input":{{"command":"ls"}},"x":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ));
    }
    lines
}

#[test]
fn the_one_pass_reading_writes_what_the_full_reading_writes() {
    let mut lines = tricky_lines();
    // The tldr commands in both line shapes and every mode, when the
    // corpus is there.
    if let Some(commands) = common::corpus_lines("tldr-commands.txt") {
        let modes = [
            None,
            Some("default"),
            Some("plan"),
            Some("acceptEdits"),
            Some("dontAsk"),
            Some("bypassPermissions"),
        ];
        for (i, cmd) in commands.iter().enumerate().step_by(3) {
            let mut v = if i % 2 == 0 {
                json!({"tool": "Bash", "input": {"command": cmd}})
            } else {
                json!({"tool_name": "Bash", "tool_input": {"command": cmd},
                       "tool_use_id": format!("toolu_{i}"), "session_id": "s"})
            };
            if let Some(m) = modes[i % modes.len()] {
                v[if i % 2 == 0 {
                    "mode"
                } else {
                    "permission_mode"
                }] = json!(m);
            }
            lines.push(v.to_string());
        }
    }
    let text = input(&lines);
    let args = [
        "--policy",
        POLICY,
        "--policy",
        "tests/data/policy/tuff/ok-example.toml",
        "--cwd",
        "/w",
    ];
    let one_pass = run(&args, &text);
    let full = run_env(&args, text.as_bytes(), &[("TOOLGATE_EVAL_TEST_FULL", "1")]);
    assert_eq!(full.code, one_pass.code);
    assert_eq!(one_pass.lines.len(), lines.len(), "{}", one_pass.stderr);
    let differ: Vec<String> = lines
        .iter()
        .zip(one_pass.stdout.lines().zip(full.stdout.lines()))
        .filter(|(_, (a, b))| a != b)
        .map(|(l, (a, b))| format!("{l}\n  one pass: {a}\n  full:     {b}"))
        .collect();
    assert!(
        differ.is_empty(),
        "{} lines differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert_eq!(one_pass.stdout, full.stdout);
}

/// Bytes that are not UTF-8 — in a string, outside one, cut inside a
/// character — make error lines; the lines around them are decided; the
/// last line may lack its newline. (Sent as bytes, not through a `&str`.)
#[test]
fn lines_that_are_not_utf8_are_error_lines() {
    let mut raw = Vec::new();
    for line in [
        bash("git status").into_bytes(),
        b"{\"tool\":\"Bash\",\"input\":{\"command\":\"ls \xff\"}}".to_vec(),
        b"{\"tool\":\"Bash\",\"input\":{\"command\":\"ls\"}}\xfe".to_vec(),
        b"{\"tool\":\"Bash\",\"input\":{\"command\":\"caf\xc3\"}}".to_vec(),
        bash("caf\u{e9} git").into_bytes(),
    ] {
        raw.extend_from_slice(&line);
        raw.push(b'\n');
    }
    raw.extend_from_slice(bash("git diff").as_bytes());
    let r = run_env(&["--policy", POLICY, "--cwd", "/w"], &raw, &[]);
    assert_eq!(r.code, 1);
    assert!(!r.stdout.contains('\u{fffd}'), "the output is UTF-8");
    let lines = r.lines;
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[0]["decision"], "allow");
    for (i, l) in lines.iter().enumerate().take(4).skip(1) {
        let n = i + 1;
        assert_eq!(
            l["error"],
            json!(format!("line {n}: the line is not valid UTF-8")),
            "{l}"
        );
        assert_eq!(l["id"], json!(n));
    }
    assert!(lines[4].get("decision").is_some(), "{}", lines[4]);
    assert_eq!(lines[5]["decision"], "allow");
}
