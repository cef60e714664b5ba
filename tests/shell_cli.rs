//! `toolgate explain --bash`: the examples of the README's "Reading shell
//! commands" section run as shown, and `--json` has the documented shape.

use std::process::Command;

fn toolgate(args: &[String]) -> (String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .output()
        .expect("toolgate runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.success(),
    )
}

#[test]
fn readme_examples_print_what_the_readme_shows() {
    let readme = include_str!("../README.md");
    let section = readme
        .split("## Reading shell commands")
        .nth(1)
        .expect("the README has the section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut checked = 0;
    for block in section.split("```console\n").skip(1) {
        let block = block.split("```").next().unwrap_or("");
        for example in block.split("$ ").skip(1) {
            let (cmd, expected) = example.split_once('\n').unwrap_or((example, ""));
            // The command line is read by the shell reader itself.
            let reading = toolgate::shell::read(cmd);
            assert!(reading.is_complete(), "{cmd}");
            let words: Vec<String> = reading.commands[0]
                .words(&reading)
                .iter()
                .map(|w| w.text().to_string())
                .collect();
            let dashdash = words
                .iter()
                .position(|w| w == "--")
                .expect("cargo run -- …");
            let (stdout, ok) = toolgate(&words[dashdash + 1..]);
            assert!(ok, "{cmd} failed");
            if !expected.is_empty() {
                assert_eq!(stdout, expected, "output of {cmd}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} README examples found");
}

#[test]
fn json_has_the_documented_keys() {
    let (out, ok) = toolgate(&[
        "explain".into(),
        "--bash".into(),
        "cat <<'EOF' | sh\nls >> log\nEOF".into(),
        "--json".into(),
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["complete"], true);
    let cmds = v["commands"].as_array().expect("commands");
    assert_eq!(cmds.len(), 3);
    for key in [
        "script",
        "span",
        "words",
        "assignments",
        "redirections",
        "connector",
        "origin",
        "depth",
        "conditional",
    ] {
        assert!(cmds[0].get(key).is_some(), "command has {key}");
    }
    assert_eq!(cmds[0]["redirections"][0]["op"], "here_doc");
    assert_eq!(cmds[0]["redirections"][0]["body"]["text"], "ls >> log\n");
    assert_eq!(cmds[1]["connector"], "pipe");
    assert_eq!(cmds[2]["origin"], "script");
    assert_eq!(cmds[2]["redirections"][0]["op"], "append");
    assert_eq!(cmds[2]["words"][0]["kind"], "literal");
    assert_eq!(v["scripts"][1]["kind"], "piped");
    assert_eq!(v["scripts"][1]["parent"], 0);
    let (out, _) = toolgate(&[
        "explain".into(),
        "--bash".into(),
        "ls &&".into(),
        "--json".into(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["complete"], false);
    assert_eq!(v["incomplete"][0]["reason"], "empty_command");
    assert_eq!(v["incomplete"][0]["span"]["start"], 3);
}

#[test]
fn explain_without_a_command_is_an_error() {
    let (_, ok) = toolgate(&["explain".into()]);
    assert!(!ok);
}
