//! Runs every evaluation case file under `tests/data/eval/` against the
//! engine (`Evaluator`) and the reference evaluator, and reports every
//! failure at once. The format is described in `tests/data/eval/README.md`.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use toml::Value;
use toolgate::ToolCall;
use toolgate::eval::{EvalContext, Evaluator, Verdict};
use toolgate::policy::{LoadedPolicy, PermissionMode, SourceKind, SourceRoot};
use toolgate::reference_eval::ReferenceEvaluator;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval")
}

fn to_json(v: &Value) -> Json {
    serde_json::to_value(v).expect("a TOML value converts to JSON")
}

fn s<'a>(t: &'a Value, key: &str) -> Option<&'a str> {
    t.get(key).and_then(Value::as_str)
}

/// The policy of a case file: its `[[source]]` tables in order.
fn load_policy(doc: &Value, file: &str) -> Result<LoadedPolicy, String> {
    let mut p = LoadedPolicy::new();
    for (i, src) in doc
        .get("source")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = s(src, "name").map_or_else(|| format!("source{i}"), str::to_string);
        let root = match s(src, "root") {
            Some(r) => SourceRoot::Dir(PathBuf::from(r)),
            None => SourceRoot::Project,
        };
        let r = if let Some(text) = s(src, "tuff") {
            p.add_tuff_text(text, &name, None, SourceKind::Tuff, root)
                .map(|_| ())
        } else {
            let perms = |k: &str| -> Json { src.get(k).map_or(Json::Array(vec![]), to_json) };
            let mut permissions = serde_json::json!({
                "allow": perms("allow"), "ask": perms("ask"), "deny": perms("deny"),
            });
            if let Some(dirs) = src.get("additional_directories") {
                permissions["additionalDirectories"] = to_json(dirs);
            }
            if let Some(m) = s(src, "default_mode") {
                permissions["defaultMode"] = Json::String(m.to_string());
            }
            let text = serde_json::json!({ "permissions": permissions }).to_string();
            p.add_settings_text(&text, &name, None, SourceKind::Settings, root)
                .map(|_| ())
        };
        r.map_err(|e| format!("{file}: source {i} does not load: {e}"))?;
    }
    Ok(p)
}

fn context(
    defaults: Option<&Value>,
    case: &Value,
) -> Result<(EvalContext, Option<PermissionMode>), String> {
    let get = |k: &str| s(case, k).or_else(|| defaults.and_then(|d| s(d, k)));
    let cwd = get("cwd").unwrap_or("/project");
    let mut ctx = EvalContext::new(cwd).map_err(|e| e.to_string())?;
    if let Some(p) = get("project_dir") {
        ctx = ctx.with_project_dir(p).map_err(|e| e.to_string())?;
    }
    if let Some(h) = get("home") {
        ctx = ctx.with_home(h).map_err(|e| e.to_string())?;
    }
    let dirs = case
        .get("additional_dirs")
        .or_else(|| defaults.and_then(|d| d.get("additional_dirs")));
    for d in dirs.and_then(Value::as_array).into_iter().flatten() {
        ctx = ctx
            .with_additional_dir(d.as_str().unwrap_or_default())
            .map_err(|e| e.to_string())?;
    }
    let mode = match get("mode") {
        Some(m) => Some(m.parse::<PermissionMode>().map_err(|e| e.to_string())?),
        None => None,
    };
    Ok((ctx, mode))
}

fn call_of(case: &Value) -> Result<ToolCall, String> {
    if let Some(cmd) = s(case, "bash") {
        return ToolCall::from_json(
            &serde_json::json!({"tool": "Bash", "input": {"command": cmd}}),
        )
        .map_err(|e| e.to_string());
    }
    let call = case.get("call").ok_or("a case needs call or bash")?;
    let mut json = to_json(call);
    if let Some(text) = s(call, "input_json") {
        let input: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        json["input"] = input;
        if let Some(o) = json.as_object_mut() {
            o.remove("input_json");
        }
    }
    ToolCall::from_json(&json).map_err(|e| e.to_string())
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
    let policy = match load_policy(&doc, &file) {
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
        let setup = context(defaults, case).and_then(|(ctx, mode)| Ok((ctx, mode, call_of(case)?)));
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
