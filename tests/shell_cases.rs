//! Runs every case file of `tests/data/shell/` (format in its README) and
//! reports all failing cases at once.

use serde::Deserialize;
use std::path::Path;
use toolgate::shell::{self, Reading};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(rename = "case")]
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    input: String,
    commands: Vec<String>,
    #[serde(default = "yes")]
    complete: bool,
    #[serde(default)]
    reasons: Option<Vec<String>>,
    #[serde(default)]
    depths: Option<Vec<u8>>,
    #[serde(default)]
    origins: Option<Vec<String>>,
    #[serde(default)]
    connectors: Option<Vec<String>>,
    #[serde(default)]
    conditional: Option<Vec<bool>>,
    #[serde(default)]
    kinds: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

fn yes() -> bool {
    true
}

fn name_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Every mismatch between a case and its reading.
fn check(case: &Case, r: &Reading) -> Vec<String> {
    let mut bad = Vec::new();
    let got: Vec<String> = r
        .commands
        .iter()
        .map(|c| c.display(r).to_string())
        .collect();
    if got != case.commands {
        bad.push(format!(
            "commands: expected {:?}, got {:?}",
            case.commands, got
        ));
    }
    if r.is_complete() != case.complete {
        let reasons: Vec<String> = r.incomplete.iter().map(|i| name_of(&i.reason)).collect();
        bad.push(format!(
            "complete: expected {}, got {} {:?}",
            case.complete,
            r.is_complete(),
            reasons
        ));
    }
    if let Some(want) = &case.reasons {
        let mut got: Vec<String> = r.incomplete.iter().map(|i| name_of(&i.reason)).collect();
        got.dedup();
        if &got != want {
            bad.push(format!("reasons: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &case.depths {
        let got: Vec<u8> = r.commands.iter().map(|c| c.depth).collect();
        if &got != want {
            bad.push(format!("depths: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &case.origins {
        let got: Vec<String> = r.commands.iter().map(|c| name_of(&c.origin)).collect();
        if &got != want {
            bad.push(format!("origins: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &case.connectors {
        let got: Vec<String> = r.commands.iter().map(|c| name_of(&c.connector)).collect();
        if &got != want {
            bad.push(format!("connectors: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &case.conditional {
        let got: Vec<bool> = r.commands.iter().map(|c| c.conditional).collect();
        if &got != want {
            bad.push(format!("conditional: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &case.kinds {
        // One string per command: the kind of each word, space-separated.
        let got: Vec<String> = r
            .commands
            .iter()
            .map(|c| {
                c.words(r)
                    .iter()
                    .map(|w| name_of(&w.kind))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        if &got != want {
            bad.push(format!("kinds: expected {want:?}, got {got:?}"));
        }
    }
    bad
}

#[test]
fn shell_case_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shell");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/shell exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    let mut total = 0;
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("case file is readable");
        let file: File = match toml::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{}: does not parse: {e}", path.display()));
                continue;
            }
        };
        for case in &file.cases {
            total += 1;
            let r = shell::read(&case.input);
            let bad = check(case, &r);
            if !bad.is_empty() {
                failures.push(format!(
                    "{} / {}: input {:?}\n    {}",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    case.name,
                    case.input,
                    bad.join("\n    ")
                ));
            }
        }
    }
    assert!(
        total >= 150,
        "only {total} shell cases; expected at least 150"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} shell cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
