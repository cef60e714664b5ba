//! `toolgate lint` as a process: text and JSON output, exit codes, policy
//! options. What each finding means is the case files' business
//! (`tests/lint_cases.rs`).

use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("lint")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("toolgate runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn errors_exit_1_with_a_caret_and_a_fix() {
    let r = run(&["--allow", "Bash(git:* push)"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let want = "error[misplaced-prefix]: <command line>: allow[0]: ";
    assert!(r.stdout.starts_with(want), "{}", r.stdout);
    assert!(
        r.stdout.contains("    Bash(git:* push)\n            ^\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    fix: write Bash(git * push)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("1 error, 0 warnings, 0 notes\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn findings_grouped_by_severity() {
    let r = run(&[
        "--allow",
        "Bash(npm test)",
        "--allow",
        "Bash(npm test)",
        "--allow",
        "Write(src/**)",
        "--allow",
        "Bash((ls)",
    ]);
    assert_eq!(r.code, 1);
    let at = |needle: &str| {
        r.stdout
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in\n{}", r.stdout))
    };
    assert!(at("error[parse-error]") < at("warning[unconsulted-specifier]"));
    assert!(at("warning[unconsulted-specifier]") < at("note[duplicate]"));
}

#[test]
fn warnings_only_exit_0() {
    let r = run(&["--deny", "Read(/etc/shadow)"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("warning[single-slash-path]"));
    assert!(
        r.stdout
            .contains("fix: for the absolute path write Read(//etc/shadow)")
    );
}

#[test]
fn json_for_machines() {
    let r = run(&[
        "--json",
        "--deny",
        "Bash(git *)",
        "--allow",
        "Bash(git push:*)",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    assert_eq!(v["errors"], 0);
    let shadowed: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "shadowed")
        .collect();
    assert_eq!(shadowed.len(), 1, "{}", r.stdout);
    let f = shadowed[0];
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["rule"]["text"], "Bash(git push:*)");
    assert_eq!(f["rule"]["list"], "allow");
    assert_eq!(f["rule"]["index"], 0);
    assert_eq!(f["rule"]["source"], "<command line>");
    assert_eq!(f["related"]["text"], "Bash(git *)");
}

#[test]
fn no_shadowing_leaves_the_automata_out() {
    let r = run(&[
        "--json",
        "--no-shadowing",
        "--deny",
        "Bash(git *)",
        "--allow",
        "Bash(git push:*)",
    ]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    assert!(
        !v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "shadowed")
    );
}

#[test]
fn policy_files_settings_and_tuff() {
    let r = run(&[
        "--policy",
        "tests/data/lint/files/settings.json",
        "--policy",
        "tests/data/lint/files/guard.toml",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let kinds: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["rule"]["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let settings = "tests/data/lint/files/settings.json".to_string();
    assert!(
        kinds.contains(&("misplaced-prefix".into(), settings.clone())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("single-slash-path".into(), settings.clone())),
        "{kinds:?}"
    );
    // The tuff token rule stops the `git push -f` spelling.
    assert!(!kinds.iter().any(|(k, _)| k == "deny-bypass"), "{kinds:?}");
}

#[test]
fn a_file_that_does_not_parse_is_one_error() {
    let r = run(&["--policy", "tests/data/lint/files/not-json.json"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .starts_with("error[load-error]: tests/data/lint/files/not-json.json: "),
        "{}",
        r.stdout
    );
    let r = run(&["--json", "--policy", "tests/data/lint/files/not-json.json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["kind"], "load-error");
    assert_eq!(f["source"], "tests/data/lint/files/not-json.json");
    assert!(f["rule"].is_null(), "{}", r.stdout);
}

#[test]
fn no_policy_exits_2() {
    let r = run(&[]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("lint needs a policy"), "{}", r.stderr);
}

#[test]
fn path_bypass_is_one_note_listing_the_rules() {
    let mut args = Vec::new();
    for rule in [
        "Bash(shutdown:*)",
        "Bash(rm -rf *)",
        "Bash(/usr/bin/curl *)",
        "Bash(docker *)",
        "Bash(*/docker*)",
        "Bash(a *)",
        "Bash(b *)",
        "Bash(c *)",
        "Bash(d *)",
    ] {
        args.extend(["--deny", rule]);
    }
    args.push("--json");
    let r = run(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let notes: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "path-bypass")
        .collect();
    assert_eq!(notes.len(), 1, "{}", r.stdout);
    let f = notes[0];
    assert_eq!(f["severity"], "note");
    assert_eq!(f["rule"]["index"], 0);
    assert_eq!(
        f["message"],
        "6 deny and ask rules never see a program named by its path under Claude Code \
         (`/usr/bin/shutdown` evades this one): Bash(shutdown:*) (deny[0]), \
         Bash(rm -rf *) (deny[1]), Bash(a *) (deny[5]), Bash(b *) (deny[6]), \
         Bash(c *) (deny[7]), and 1 more"
    );
}

#[test]
fn subcommand_bypass_is_one_note_listing_the_rules() {
    let mut args = Vec::new();
    for rule in [
        "Bash(rm -rf /)",
        "Bash(git push:*)",
        "Bash(kubectl delete *)",
        "Bash(git * reset --hard *)",
        "Bash(docker rm:*)",
        "Bash(docker --context *)",
    ] {
        args.extend(["--deny", rule]);
    }
    args.push("--json");
    let r = run(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let notes: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "subcommand-bypass")
        .collect();
    assert_eq!(notes.len(), 1, "{}", r.stdout);
    assert_eq!(notes[0]["severity"], "note");
    assert_eq!(
        notes[0]["message"],
        "2 deny and ask rules never see an option before the subcommand under Claude Code \
         (`git -C . push` evades this one): Bash(git push:*) (deny[1]), \
         Bash(kubectl delete *) (deny[2])"
    );
}
