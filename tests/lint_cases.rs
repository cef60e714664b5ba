//! Runs every case file of `tests/data/lint/`: a policy and the complete
//! list of findings lint must give for it (kind, rule item, severity).
//! All failures are reported at once.

use std::path::Path;

use toolgate::List;
use toolgate::lint::{LintInput, lint};

fn lists(policy: &toml::Value, input: &mut LintInput, source: &str) -> Result<(), String> {
    for list in [List::Allow, List::Ask, List::Deny] {
        let Some(entries) = policy.get(list.as_str()) else {
            continue;
        };
        let entries = entries
            .as_array()
            .ok_or_else(|| format!("policy.{} is not an array", list.as_str()))?;
        // TOML values to JSON values, as a settings file holds them.
        let json: Vec<serde_json::Value> = entries
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => serde_json::Value::String(s.clone()),
                toml::Value::Integer(i) => serde_json::Value::from(*i),
                other => serde_json::Value::String(other.to_string()),
            })
            .collect();
        input.add_list(source, list, &json);
    }
    Ok(())
}

fn run_case(
    dir: &Path,
    file: &Path,
    kinds: &mut std::collections::BTreeSet<String>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let case: toml::Value = toml::from_str(&text).map_err(|e| e.to_string())?;
    let mut input = LintInput::new();
    let source = "settings.json";
    if let Some(f) = case.get("file").and_then(|f| f.as_str()) {
        input.add_file(&dir.join(f));
    }
    if let Some(policy) = case.get("policy") {
        lists(policy, &mut input, source)?;
    }
    let mut expected: Vec<(String, String, String)> = Vec::new();
    if let Some(exp) = case.get("expect").and_then(|e| e.as_array()) {
        for e in exp {
            let field = |k: &str| {
                e.get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| format!("an expectation lacks {k}"))
            };
            let kind = field("kind")?;
            if toolgate::lint::Kind::from_name(&kind).is_none() {
                return Err(format!("unknown kind {kind:?} in the case file"));
            }
            kinds.insert(kind.clone());
            expected.push((kind, field("rule")?, field("severity")?));
        }
    }
    let report = lint(&input);
    let mut got: Vec<(String, String, String)> = report
        .findings()
        .iter()
        .map(|f| {
            (
                f.kind.name().to_string(),
                f.rule.item(),
                f.severity.as_str().to_string(),
            )
        })
        .collect();
    expected.sort();
    got.sort();
    if expected == got {
        return Ok(());
    }
    let missing: Vec<_> = expected.iter().filter(|e| !got.contains(e)).collect();
    let extra: Vec<_> = got.iter().filter(|g| !expected.contains(g)).collect();
    Err(format!(
        "missing {missing:?}\n    unexpected {extra:?}\n    report:\n{}",
        report.to_text()
    ))
}

#[test]
fn lint_case_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lint");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/lint")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no case files");
    let mut failures = Vec::new();
    let mut kinds_covered = std::collections::BTreeSet::new();
    for f in &files {
        if let Err(e) = run_case(&dir, f, &mut kinds_covered) {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    for k in toolgate::lint::Kind::ALL {
        if !kinds_covered.contains(k.name()) {
            failures.push(format!("no case file for the kind {}", k.name()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} case files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
