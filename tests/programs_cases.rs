//! Runs every case file of `tests/data/programs/` (format in its README)
//! through the reader and the reducer, and reports all failing cases at
//! once.

use serde::Deserialize;
use std::path::Path;
use toolgate::shell::files::{Access, FileUse};
use toolgate::shell::reduce::{self, Reduction, Role};
use toolgate::shell::{self, WordKind};

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
    #[serde(default)]
    invocations: Option<Vec<String>>,
    #[serde(default)]
    actions: Option<Vec<String>>,
    #[serde(default)]
    programs: Option<Vec<String>>,
    #[serde(default)]
    parents: Option<Vec<usize>>,
    #[serde(default)]
    forms: Option<Vec<String>>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    not_allow: Vec<String>,
    #[serde(default)]
    not_deny: Vec<String>,
    #[serde(default)]
    reads: Option<Vec<String>>,
    #[serde(default)]
    edits: Option<Vec<String>>,
    #[serde(default)]
    hosts: Option<Vec<String>>,
    #[serde(default)]
    exec: Option<Vec<String>>,
    #[serde(default)]
    gaps: Option<Vec<String>>,
    #[serde(default = "yes")]
    complete: bool,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

fn yes() -> bool {
    true
}

/// A file as the case files write it (see the README).
fn show_file(f: &FileUse) -> String {
    let mut s = match (&f.path, &f.expanded) {
        (Some(p), _) => p.to_string(),
        (None, Some(e)) => format!("«{}» → {e}", f.text),
        (None, None) => format!("«{}»", f.text),
    };
    if f.kind == WordKind::Glob && f.path.is_some() {
        s = format!("glob {s}");
    }
    if f.recursive {
        s.push_str(" (recursive)");
    }
    s
}

fn check(case: &Case, r: &Reduction) -> Vec<String> {
    let mut bad = Vec::new();
    let mut exact = |what: &str, want: &Option<Vec<String>>, got: Vec<String>| {
        if let Some(want) = want {
            if *want != got {
                bad.push(format!("{what}: expected {want:?}, got {got:?}"));
            }
        }
    };
    let inv = &r.invocations;
    exact(
        "invocations",
        &case.invocations,
        inv.iter()
            .map(|i| match i.role {
                Role::Wrapper => format!("wrapper {i}"),
                _ => i.to_string(),
            })
            .collect(),
    );
    exact(
        "actions",
        &case.actions,
        inv.iter()
            .filter(|i| i.role == Role::Command)
            .map(|i| i.to_string())
            .collect(),
    );
    exact(
        "programs",
        &case.programs,
        inv.iter().map(|i| i.program.base.to_string()).collect(),
    );
    let parents: Option<Vec<String>> = case
        .parents
        .as_ref()
        .map(|v| v.iter().map(usize::to_string).collect());
    exact(
        "parents",
        &parents,
        inv.iter()
            .map(|i| i.parent.map_or(0, |p| p + 1).to_string())
            .collect(),
    );
    exact(
        "forms",
        &case.forms,
        inv.iter().filter_map(|i| i.form.clone()).collect(),
    );
    let files = |a: Access| -> Vec<String> {
        inv.iter()
            .flat_map(|i| i.files.iter())
            .filter(|f| f.access == a)
            .map(show_file)
            .collect()
    };
    exact("reads", &case.reads, files(Access::Read));
    exact("edits", &case.edits, files(Access::Edit));
    exact(
        "hosts",
        &case.hosts,
        inv.iter()
            .flat_map(|i| i.hosts.iter())
            .map(|h| {
                if h.dynamic {
                    format!("«{}»", h.name)
                } else {
                    h.name.clone()
                }
            })
            .collect(),
    );
    exact(
        "exec",
        &case.exec,
        inv.iter().flat_map(|i| i.exec.iter().cloned()).collect(),
    );
    exact(
        "gaps",
        &case.gaps,
        inv.iter()
            .flat_map(|i| i.gaps.iter())
            .map(|g| {
                serde_json::to_value(g)
                    .ok()
                    .and_then(|v| v.get("gap").and_then(|g| g.as_str().map(str::to_string)))
                    .unwrap_or_default()
            })
            .collect(),
    );
    let cands: Vec<(&str, bool)> = inv
        .iter()
        .flat_map(|i| i.candidates.iter())
        .map(|c| (c.text.as_str(), c.for_allow))
        .collect();
    for d in &case.deny {
        if !cands.iter().any(|c| c.0 == d) {
            bad.push(format!("deny candidate missing: {d:?}"));
        }
    }
    for a in &case.allow {
        if !cands.iter().any(|c| c.0 == a && c.1) {
            bad.push(format!("allow candidate missing: {a:?}"));
        }
    }
    for a in &case.not_allow {
        if cands.iter().any(|c| c.0 == a && c.1) {
            bad.push(format!("allow candidate present: {a:?}"));
        }
    }
    for a in &case.not_deny {
        if cands.iter().any(|c| c.0 == a) {
            bad.push(format!("candidate present: {a:?}"));
        }
    }
    if r.is_complete() != case.complete {
        bad.push(format!(
            "complete: expected {}, got {}",
            case.complete,
            r.is_complete()
        ));
    }
    if !bad.is_empty() {
        let all: Vec<String> = cands
            .iter()
            .map(|c| format!("{}{}", if c.1 { "A " } else { "D " }, c.0))
            .collect();
        bad.push(format!("(candidates: {all:?})"));
    }
    bad
}

#[test]
fn program_case_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/programs");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/programs exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    let mut failures = Vec::new();
    let mut count = 0;
    for path in &entries {
        let text = std::fs::read_to_string(path).expect("case file is readable");
        let file: File = match toml::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        for case in &file.cases {
            count += 1;
            let reading = shell::read(&case.input);
            let r = reduce::invocations(&reading);
            let bad = check(case, &r);
            if !bad.is_empty() {
                failures.push(format!(
                    "{} / {}\n  input: {:?}\n  {}",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    case.name,
                    case.input,
                    bad.join("\n  ")
                ));
            }
        }
    }
    if count < 200 {
        failures.push(format!(
            "only {count} program cases (at least 200 expected)"
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {count} program cases fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
