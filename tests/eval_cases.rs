//! Runs every evaluation case file under `tests/data/eval/` against the
//! engine (`Evaluator`) and the reference evaluator, and reports every
//! failure at once. The format is described in `tests/data/eval/README.md`.

mod common;

use std::path::{Path, PathBuf};
use toml::Value;
use toolgate::eval::{Evaluator, Verdict};
use toolgate::reference_eval::ReferenceEvaluator;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval")
}

fn s<'a>(t: &'a Value, key: &str) -> Option<&'a str> {
    t.get(key).and_then(Value::as_str)
}

/// The outcome of one engine: verdict, deciding rule text, could.
type Got = (Verdict, Option<String>, bool);

fn run_file(path: &Path, failures: &mut Vec<String>) -> usize {
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(path).expect("a case file reads");
    let doc: Value = match toml::from_str(&text) {
        Ok(d) => d,
        Err(e) => {
            failures.push(format!("{file}: not TOML: {e}"));
            return 0;
        }
    };
    let policy = match common::eval_case_policy(&doc, &file) {
        Ok(p) => p,
        Err(e) => {
            failures.push(e);
            return 0;
        }
    };
    let engine = match Evaluator::new(&policy) {
        Ok(e) => e,
        Err(e) => {
            failures.push(format!("{file}: policy does not compile: {e}"));
            return 0;
        }
    };
    let reference = ReferenceEvaluator::new(&policy);
    let defaults = doc.get("context");
    let rules_checked = doc
        .get("rules_checked")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let cases = doc
        .get("case")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, case) in cases.iter().enumerate() {
        let label = format!(
            "{file} case {i}{}",
            s(case, "name")
                .or_else(|| s(case, "bash"))
                .map_or(String::new(), |n| format!(" ({n:?})"))
        );
        let setup = common::eval_case_context(defaults, case)
            .and_then(|(ctx, mode)| Ok((ctx, mode, common::eval_case_call(case)?)));
        let (ctx, mode, call) = match setup {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let ctx = match engine.with_policy_dirs(ctx.with_mode(engine.effective_mode(mode))) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        if let Some(want) = s(case, "error") {
            match engine.evaluate(&call, &ctx) {
                Err(e) if e.to_string().contains(want) => {}
                other => failures.push(format!(
                    "{label}: want an error with {want:?}, got {other:?}"
                )),
            }
            continue;
        }
        let verdicts: Result<Vec<Verdict>, _> = s(case, "verdict")
            .unwrap_or_default()
            .split(" or ")
            .map(str::parse)
            .collect();
        let verdicts = match verdicts {
            Ok(v) if !v.is_empty() => v,
            _ => {
                failures.push(format!("{label}: a case needs a verdict"));
                continue;
            }
        };
        let want_rule = s(case, "rule")
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        let want_could = case.get("could").and_then(Value::as_bool).unwrap_or(false);
        let want: Got = (verdicts[0], want_rule, want_could);
        let results: [(&str, Result<Got, String>); 2] = [
            (
                "engine",
                engine
                    .evaluate(&call, &ctx)
                    .map(|d| {
                        (
                            d.verdict,
                            d.rule_text().map(str::to_string),
                            d.rule.is_some_and(|r| r.how == toolgate::eval::How::Could),
                        )
                    })
                    .map_err(|e| e.to_string()),
            ),
            (
                "reference",
                reference
                    .evaluate(&call, &ctx)
                    .map(|d| {
                        (
                            d.verdict,
                            d.rule_text().map(str::to_string),
                            d.rule.is_some_and(|r| r.how == toolgate::eval::How::Could),
                        )
                    })
                    .map_err(|e| e.to_string()),
            ),
        ];
        for (who, got) in results {
            match got {
                Ok(g) if !rules_checked && verdicts.contains(&g.0) => {}
                Ok(g) if g == want => {}
                Ok(g) => {
                    let detail = engine
                        .evaluate(&call, &ctx)
                        .map(|d| d.reason())
                        .unwrap_or_default();
                    failures.push(format!(
                        "{label} [{who}]: got {} {:?}{}, want {} {:?}{} — {detail}",
                        g.0,
                        g.1,
                        if g.2 { " (could)" } else { "" },
                        s(case, "verdict").unwrap_or_default(),
                        want.1,
                        if want.2 { " (could)" } else { "" },
                    ))
                }
                Err(e) => failures.push(format!("{label} [{who}]: error {e}")),
            }
        }
    }
    cases.len()
}

#[test]
fn eval_case_files() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data/eval exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no case files");
    let mut failures = Vec::new();
    let mut total = 0;
    for f in &files {
        total += run_file(f, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} of {total} evaluation cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{total} evaluation cases passed");
}
