//! The data-driven rule cases of `tests/data/rules/*.toml` (format in
//! `tests/data/README.md`), run against every engine: the reference
//! matcher and the `toolgate match-rules` binary. Every failure of every
//! file is collected and reported at once.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use toolgate::reference::{self, MatchContext};
use toolgate::rule::claude::parse_rule;
use toolgate::{Dialect, Effect, ErrorKind, List, Provenance, ToolCall};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    case: Vec<Case>,
}

/// One case of a file; see `tests/data/README.md`.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    rule: String,
    #[serde(default)]
    dialects: Option<Vec<String>>,
    #[serde(default)]
    effect: Option<String>,
    #[serde(default)]
    call: Option<CallSpec>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    matches: Option<Expect>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    column: Option<usize>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Deserialize, Clone, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct CallSpec {
    tool: String,
    #[serde(default)]
    input: serde_json::Map<String, serde_json::Value>,
    /// The input as JSON text, for what TOML cannot say (`null`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_json: Option<String>,
}

impl CallSpec {
    /// The input: `input_json` when given, else `input`.
    fn input(&self) -> serde_json::Map<String, serde_json::Value> {
        match &self.input_json {
            Some(text) => serde_json::from_str(text).expect("input_json is a JSON object"),
            None => self.input.clone(),
        }
    }
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Expect {
    Both(bool),
    PerDialect(BTreeMap<String, bool>),
}

/// What an engine answered for one (case, dialect).
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Matches(bool),
    Error {
        kind: ErrorKind,
        column: Option<usize>,
        message: String,
    },
}

/// One (case, dialect) to answer.
struct Job {
    /// `file.toml` case N.
    name: String,
    case: Case,
    dialect: Dialect,
    effect: Effect,
}

impl Job {
    fn expected(&self) -> Result<Option<bool>, String> {
        match (&self.case.matches, &self.case.error) {
            (Some(_), Some(_)) => Err("has both matches and error".into()),
            (None, None) => Err("has neither matches nor error".into()),
            (None, Some(_)) => Ok(None),
            (Some(Expect::Both(b)), None) => Ok(Some(*b)),
            (Some(Expect::PerDialect(m)), None) => m
                .get(self.dialect.as_str())
                .copied()
                .map(Some)
                .ok_or_else(|| format!("no expectation for dialect {}", self.dialect.as_str())),
        }
    }

    fn expected_kind(&self) -> ErrorKind {
        match self.case.kind.as_deref() {
            Some("call") => ErrorKind::Call,
            Some("unsupported") => ErrorKind::Unsupported,
            _ => ErrorKind::Rule,
        }
    }

    /// A failure message, if `got` is not what the case expects.
    fn check(&self, engine: &str, got: &Outcome) -> Option<String> {
        let describe = || {
            format!(
                "[{engine}] {} ({}, {}): rule {:?}, call {}",
                self.name,
                self.dialect.as_str(),
                self.effect.as_str(),
                self.case.rule,
                self.case
                    .call
                    .as_ref()
                    .map_or("none".to_string(), |c| serde_json::to_string(c).unwrap())
            )
        };
        let want = match self.expected() {
            Ok(w) => w,
            Err(e) => return Some(format!("{}: bad case: {e}", describe())),
        };
        match (want, got) {
            (Some(w), Outcome::Matches(g)) if w == *g => None,
            (Some(w), got) => Some(format!("{}: want {w}, got {got:?}", describe())),
            (
                None,
                Outcome::Error {
                    kind,
                    column,
                    message,
                },
            ) => {
                let wanted = self.case.error.as_deref().unwrap_or("");
                let mut problems = Vec::new();
                if *kind != self.expected_kind() {
                    problems.push(format!("kind {kind:?}, want {:?}", self.expected_kind()));
                }
                if self.case.column.is_some() && *column != self.case.column {
                    problems.push(format!("column {column:?}, want {:?}", self.case.column));
                }
                if !message.contains(wanted) {
                    problems.push(format!("message {message:?} lacks {wanted:?}"));
                }
                if problems.is_empty() {
                    None
                } else {
                    Some(format!("{}: {}", describe(), problems.join("; ")))
                }
            }
            (None, got) => Some(format!(
                "{}: want error {:?}, got {got:?}",
                describe(),
                self.case.error.as_deref().unwrap_or("")
            )),
        }
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules")
}

/// Every job of every file, and the problems found while reading them.
fn load_jobs() -> (Vec<Job>, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data/rules exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no case files in tests/data/rules");
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for path in files {
        let fname = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let file: File = match toml::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("{fname}: does not parse: {e}"));
                continue;
            }
        };
        for (i, case) in file.case.into_iter().enumerate() {
            let name = format!("{fname} case {i}");
            let dialects = case
                .dialects
                .clone()
                .unwrap_or_else(|| vec!["strict".into(), "claude-code".into()]);
            let effect = match case.effect.as_deref() {
                None | Some("deny") => Effect::Deny,
                Some("ask") => Effect::Ask,
                Some("allow") => Effect::Allow,
                Some(other) => {
                    problems.push(format!("{name}: unknown effect {other:?}"));
                    continue;
                }
            };
            if case.matches.is_some() && case.call.is_none() {
                problems.push(format!("{name}: matches without a call"));
                continue;
            }
            for d in dialects {
                let dialect = match d.as_str() {
                    "strict" => Dialect::Strict,
                    "claude-code" => Dialect::ClaudeCode,
                    other => {
                        problems.push(format!("{name}: unknown dialect {other:?}"));
                        continue;
                    }
                };
                jobs.push(Job {
                    name: name.clone(),
                    case: case.clone(),
                    dialect,
                    effect,
                });
            }
        }
    }
    (jobs, problems)
}

fn list_of(effect: Effect) -> List {
    match effect {
        Effect::Deny => List::Deny,
        Effect::Ask => List::Ask,
        Effect::Allow => List::Allow,
    }
}

/// The reference matcher's answer.
fn reference_outcome(job: &Job) -> Outcome {
    let err = |e: toolgate::Error| Outcome::Error {
        kind: e.kind(),
        column: e.location().column,
        message: e.to_string(),
    };
    let provenance = Provenance::standalone(list_of(job.effect));
    let rule = match parse_rule(&job.case.rule, job.effect, job.dialect, provenance) {
        Ok(r) => r,
        Err(e) => return err(e),
    };
    let Some(spec) = &job.case.call else {
        // A parse-only case that parsed.
        return Outcome::Matches(true);
    };
    let call = match ToolCall::new(&spec.tool, spec.input()) {
        Ok(c) => c,
        Err(e) => return err(e),
    };
    let ctx = MatchContext {
        cwd: job.case.cwd.as_ref().map(PathBuf::from),
    };
    match reference::match_rule(&rule, &call, &ctx) {
        Ok(b) => Outcome::Matches(b),
        Err(e) => err(e),
    }
}

#[test]
fn reference_matcher() {
    let (jobs, mut failures) = load_jobs();
    for job in &jobs {
        if let Some(f) = job.check("reference", &reference_outcome(job)) {
            failures.push(f);
        }
    }
    report(jobs.len(), failures);
}

fn report(count: usize, failures: Vec<String>) {
    eprintln!("{count} (case, dialect) pairs checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// The CLI

/// Runs `toolgate match-rules` over `cases`; returns (exit code, stdout,
/// stderr).
fn run_cli(
    dialect: Dialect,
    cwd: Option<&str>,
    cases: &serde_json::Value,
) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("match-rules")
        .arg("--dialect")
        .arg(dialect.as_str());
    if let Some(d) = cwd {
        cmd.arg("--cwd").arg(d);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(cases.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn case_json(job: &Job) -> serde_json::Value {
    serde_json::json!({
        "rule": job.case.rule,
        "call": job.case.call.as_ref().map_or(
            serde_json::json!({"tool": "Bash", "input": {"command": ""}}),
            |c| serde_json::json!({"tool": c.tool, "input": c.input()}),
        ),
    })
}

/// The CLI reads rules as deny rules: it answers every deny case. Cases
/// expecting no error go in one batch per (dialect, cwd); each error case
/// runs alone (an error stops the run).
#[test]
fn match_rules_binary() {
    let (jobs, mut failures) = load_jobs();
    let jobs: Vec<&Job> = jobs.iter().filter(|j| j.effect == Effect::Deny).collect();
    let mut batches: BTreeMap<(&str, Option<String>), Vec<&Job>> = BTreeMap::new();
    let mut checked = 0;
    for job in &jobs {
        let unsupported = job.case.error.is_some() && job.expected_kind() == ErrorKind::Unsupported;
        if job.case.error.is_none() || unsupported {
            batches
                .entry((job.dialect.as_str(), job.case.cwd.clone()))
                .or_default()
                .push(job);
            continue;
        }
        checked += 1;
        let (code, stdout, stderr) = run_cli(
            job.dialect,
            job.case.cwd.as_deref(),
            &serde_json::Value::Array(vec![case_json(job)]),
        );
        let mut problems = Vec::new();
        if code != 2 {
            problems.push(format!("exit code {code}, want 2"));
        }
        if !stdout.is_empty() {
            problems.push(format!("stdout {stdout:?}, want nothing"));
        }
        if !stderr.contains("case 0") {
            problems.push(format!("stderr {stderr:?} does not name case 0"));
        }
        if let Some(col) = job.case.column {
            if !stderr.contains(&format!("column {}", col + 1)) {
                problems.push(format!("stderr {stderr:?} lacks column {}", col + 1));
            }
        }
        let wanted = job.case.error.as_deref().unwrap_or("");
        if !stderr.contains(wanted) {
            problems.push(format!("stderr {stderr:?} lacks {wanted:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "[cli] {} ({}): rule {:?}: {}",
                job.name,
                job.dialect.as_str(),
                job.case.rule,
                problems.join("; ")
            ));
        }
    }
    for ((dialect, cwd), batch) in batches {
        let dialect = if dialect == "strict" {
            Dialect::Strict
        } else {
            Dialect::ClaudeCode
        };
        let cases: Vec<serde_json::Value> = batch.iter().map(|j| case_json(j)).collect();
        let (code, stdout, stderr) =
            run_cli(dialect, cwd.as_deref(), &serde_json::Value::Array(cases));
        checked += batch.len();
        let answers: Option<Vec<bool>> = serde_json::from_str(&stdout).ok();
        match answers {
            Some(a) if code == 0 && a.len() == batch.len() => {
                for (job, got) in batch.iter().zip(a) {
                    // An unsupported rule answers false (with a warning).
                    let outcome = if job.case.error.is_some() {
                        if got {
                            Outcome::Matches(true)
                        } else {
                            Outcome::Error {
                                kind: ErrorKind::Unsupported,
                                column: job.case.column,
                                message: job.case.error.clone().unwrap_or_default(),
                            }
                        }
                    } else {
                        Outcome::Matches(got)
                    };
                    if let Some(f) = job.check("cli", &outcome) {
                        failures.push(f);
                    }
                }
            }
            _ => failures.push(format!(
                "[cli] batch {} cwd {cwd:?} of {} cases: exit {code}, stdout {stdout:?}, stderr {stderr:?}",
                dialect.as_str(),
                batch.len()
            )),
        }
    }
    report(checked, failures);
}
