//! `toolgate test FILE…`: a file of calls, each with the verdict (and
//! optionally the deciding rule) the policy must give it — a policy tested
//! in CI like code.
//!
//! Two formats, told apart by the file's extension:
//!
//! - **TOML** (any name but `*.jsonl`), written by people: one `[[case]]`
//!   table per call, with the call's fields as keys (`command = '…'` needs
//!   no JSON escaping inside a literal string), comments, and an optional
//!   `[context]` table every case starts from:
//!
//!   ```toml
//!   [context]
//!   cwd = "/home/me/app"
//!
//!   [[case]]
//!   command = "git push --force origin main"   # tool = "Bash" by default
//!   expect = "deny"
//!   rule = "Bash(git push --force:*)"
//!   ```
//!
//! - **JSONL** (`*.jsonl`), made by machines: one call a line in
//!   `toolgate eval`'s input shape (a recorded log line works as is), with
//!   `expect` (and optionally `rule`, `name`) added.
//!
//! Every failing case is printed with its file and line, the expected and
//! the actual verdict and deciding rule; then a summary. Exit code 0 when
//! every case passes, 1 when one fails, 2 when a file or the policy cannot
//! be read (every problem is named with its file, line and column).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value};

use super::eval::{ContextArgs, Defaults, line_context, load_policy};
use super::policy_args::PolicyArgs;
use crate::Error;
use crate::error::ErrorKind;
use crate::eval::call::ToolCall;
use crate::eval::{Decision, EvalContext, Evaluator, Verdict};
use crate::policy::jsonc::position;

/// Arguments of `test`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where the rules come from.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// What a case that says nothing of its context is evaluated in.
    #[command(flatten)]
    pub context: ContextArgs,
    /// Print every case, passing ones too.
    #[arg(long, short)]
    pub verbose: bool,
    /// The case files: TOML `[[case]]` tables, or JSONL (`*.jsonl`) calls
    /// with an `expect` key.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// The keys of a call's context, as `eval` reads them on a line.
const CONTEXT_KEYS: &[&str] = &[
    "cwd",
    "project_dir",
    "home",
    "additional_directories",
    "mode",
];

/// The call input fields a TOML case may give as top-level keys.
const INPUT_KEYS: &[&str] = &[
    "command",
    "file_path",
    "path",
    "notebook_path",
    "url",
    "subagent_type",
    "skill",
];

/// One case, read and checked.
#[derive(Debug)]
pub struct Case {
    /// `file:line` of the case.
    pub place: String,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// The call.
    pub call: ToolCall,
    /// Its context keys (the file's `[context]` with the case's own on top).
    pub context: Map<String, Value>,
    /// The verdict it must get.
    pub expect: Verdict,
    /// The rule that must decide it, if given: its text as written, or
    /// its place in its list (`deny[3]`, `rules[0]`).
    pub rule: Option<String>,
}

/// An error at byte `at` of the file `source` holding `text`.
fn error_at(source: &str, text: &str, at: usize, message: impl Into<String>) -> Error {
    let (line, line_text, column) = position(text, at);
    Error::new(ErrorKind::Call, message)
        .with_source(source)
        .with_item(format!("line {line}"))
        .with_text(line_text, column)
}

/// The first line of a parser's message, as one lowercase clause.
fn clause(msg: &str) -> String {
    let line = msg.lines().next().unwrap_or(msg).trim();
    let mut chars = line.chars();
    match chars.next() {
        Some(c) if c.is_uppercase() && !chars.clone().next().is_some_and(char::is_uppercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => line.to_string(),
    }
}

/// A JSON parser's message without its own "at line L column C".
fn json_clause(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    clause(&msg)
}

/// Reads the cases of one file (its format chosen by its extension).
/// Every problem is returned, not only the first.
pub fn read_cases(path: &Path) -> Result<Vec<Case>, Vec<Error>> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![
            Error::new(ErrorKind::Io, format!("cannot read the case file: {e}"))
                .with_source(&*source),
        ]
    })?;
    if path.extension().is_some_and(|e| e == "jsonl") {
        parse_jsonl(&source, &text)
    } else {
        parse_toml(&source, &text)
    }
}

/// Reads JSONL cases: `eval`'s call lines with `expect` (and optionally
/// `rule`, `name`) added. Blank lines are skipped.
pub fn parse_jsonl(source: &str, text: &str) -> Result<Vec<Case>, Vec<Error>> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut offset = 0;
    for (n, line) in text.split('\n').enumerate() {
        let start = offset;
        offset += line.len() + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let at = |col: usize| start + line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                let col = e.column().saturating_sub(1);
                errors.push(error_at(
                    source,
                    text,
                    start + col.min(line.len()),
                    format!("the line is not JSON: {}", json_clause(&e)),
                ));
                continue;
            }
        };
        let Value::Object(mut obj) = value else {
            errors.push(error_at(
                source,
                text,
                at(0),
                "a case must be a JSON object",
            ));
            continue;
        };
        let key_at = |key: &str| {
            let quoted = format!("\"{key}\"");
            start + line.find(&quoted).unwrap_or(0)
        };
        let take_str = |obj: &mut Map<String, Value>, key: &str| match obj.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(error_at(
                source,
                text,
                key_at(key),
                format!("{key} must be a string"),
            )),
        };
        let expect = match take_str(&mut obj, "expect") {
            Ok(Some(s)) => match s.parse::<Verdict>() {
                Ok(v) => Some(v),
                Err(e) => {
                    errors.push(error_at(source, text, key_at("expect"), e.message()));
                    None
                }
            },
            Ok(None) => {
                errors.push(error_at(
                    source,
                    text,
                    at(0),
                    "a case needs an expect key (allow, ask, deny or none)",
                ));
                None
            }
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let rule = take_str(&mut obj, "rule").unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        let name = take_str(&mut obj, "name").unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        let call = match ToolCall::from_json(&Value::Object(obj.clone())) {
            Ok(c) => Some(c),
            Err(e) => {
                errors.push(error_at(source, text, at(0), e.message()));
                None
            }
        };
        let mut context = Map::new();
        for key in CONTEXT_KEYS {
            if let Some(v) = obj.get(*key) {
                context.insert(key.to_string(), v.clone());
            }
        }
        if let Some(v) = obj.get("permission_mode") {
            context.entry("mode").or_insert_with(|| v.clone());
        }
        if let (Some(call), Some(expect)) = (call, expect) {
            cases.push(Case {
                place: format!("{source}:{}", n + 1),
                name,
                call,
                context,
                expect,
                rule,
            });
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

type Spanned<T> = toml::Spanned<T>;
type DeTable<'i> = toml::de::DeTable<'i>;
type DeValue<'i> = toml::de::DeValue<'i>;

/// A TOML value as JSON (datetimes as their text).
fn json_of(v: &DeValue<'_>) -> Value {
    match v {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(i.to_string())),
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(f.to_string()), Value::Number),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(a) => Value::Array(a.iter().map(|x| json_of(x.get_ref())).collect()),
        DeValue::Table(t) => Value::Object(
            t.iter()
                .map(|(k, x)| (k.get_ref().to_string(), json_of(x.get_ref())))
                .collect(),
        ),
    }
}

/// Reads the context keys of a table (`[context]` or a case) into `out`.
fn context_key(
    source: &str,
    text: &str,
    key: &str,
    value: &Spanned<DeValue<'_>>,
    out: &mut Map<String, Value>,
) -> Result<(), Error> {
    let v = json_of(value.get_ref());
    let ok = match key {
        "additional_directories" => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        _ => v.is_string(),
    };
    if !ok {
        let what = if key == "additional_directories" {
            "an array of strings"
        } else {
            "a string"
        };
        return Err(error_at(
            source,
            text,
            value.span().start,
            format!("{key} must be {what}"),
        ));
    }
    if key == "mode" {
        if let Some(m) = v.as_str() {
            m.parse::<crate::policy::PermissionMode>()
                .map_err(|e| error_at(source, text, value.span().start, e.message()))?;
        }
    }
    out.insert(key.to_string(), v);
    Ok(())
}

/// Reads TOML cases: an optional `[context]` table and `[[case]]` tables.
pub fn parse_toml(source: &str, text: &str) -> Result<Vec<Case>, Vec<Error>> {
    let doc = DeTable::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        vec![error_at(source, text, at, clause(e.message()))]
    })?;
    let mut errors = Vec::new();
    let mut base = Map::new();
    let mut tables: Vec<&Spanned<DeValue<'_>>> = Vec::new();
    for (key, value) in doc.get_ref().iter() {
        match key.get_ref().as_ref() {
            "context" => match value.get_ref() {
                DeValue::Table(t) => {
                    for (k, v) in t.iter() {
                        let name = k.get_ref().as_ref();
                        if !CONTEXT_KEYS.contains(&name) {
                            errors.push(error_at(
                                source,
                                text,
                                k.span().start,
                                format!(
                                    "unknown context key {name:?} (expected {})",
                                    CONTEXT_KEYS.join(", ")
                                ),
                            ));
                        } else if let Err(e) = context_key(source, text, name, v, &mut base) {
                            errors.push(e);
                        }
                    }
                }
                _ => errors.push(error_at(
                    source,
                    text,
                    value.span().start,
                    "context must be a table",
                )),
            },
            "case" => match value.get_ref() {
                DeValue::Array(a) => tables.extend(a.iter()),
                _ => errors.push(error_at(
                    source,
                    text,
                    value.span().start,
                    "case must be an array of tables ([[case]])",
                )),
            },
            other => errors.push(error_at(
                source,
                text,
                key.span().start,
                format!("unknown key {other:?} (expected [context] or [[case]])"),
            )),
        }
    }
    // The file's cwd is its cases' project, as `--cwd` is (a case that
    // moves to a subdirectory stays in the same project).
    if let (Some(cwd), None) = (base.get("cwd").cloned(), base.get("project_dir")) {
        base.insert("project_dir".to_string(), cwd);
    }
    if tables.is_empty() && errors.is_empty() {
        errors.push(error_at(source, text, 0, "the file holds no [[case]]"));
    }
    let mut cases = Vec::new();
    for table in tables {
        match toml_case(source, text, table, &base) {
            Ok(c) => cases.push(c),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

fn toml_case(
    source: &str,
    text: &str,
    table: &Spanned<DeValue<'_>>,
    base: &Map<String, Value>,
) -> Result<Case, Vec<Error>> {
    let DeValue::Table(t) = table.get_ref() else {
        return Err(vec![error_at(
            source,
            text,
            table.span().start,
            "a case must be a table",
        )]);
    };
    // The case's line: its `[[case]]` header (an inline table: its start).
    let at = table.span().start;
    let (line, _, _) = position(text, at);
    let mut errors = Vec::new();
    let mut context = base.clone();
    let mut input = Map::new();
    let mut tool: Option<String> = None;
    let mut name = None;
    let mut expect: Option<Verdict> = None;
    let mut rule = None;
    let string = |v: &Spanned<DeValue<'_>>, key: &str| -> Result<String, Error> {
        v.get_ref().as_str().map(str::to_string).ok_or_else(|| {
            error_at(
                source,
                text,
                v.span().start,
                format!("{key} must be a string"),
            )
        })
    };
    for (k, v) in t.iter() {
        let key = k.get_ref().as_ref();
        let result = match key {
            "name" => string(v, key).map(|s| name = Some(s)),
            "tool" => string(v, key).map(|s| tool = Some(s)),
            "expect" => string(v, key).and_then(|s| {
                s.parse::<Verdict>()
                    .map(|x| expect = Some(x))
                    .map_err(|e| error_at(source, text, v.span().start, e.message()))
            }),
            "rule" => string(v, key).map(|s| rule = Some(s)),
            "input" => match json_of(v.get_ref()) {
                Value::Object(m) => {
                    input.extend(m);
                    Ok(())
                }
                _ => Err(error_at(
                    source,
                    text,
                    v.span().start,
                    "input must be a table",
                )),
            },
            k if INPUT_KEYS.contains(&k) => {
                input.insert(k.to_string(), json_of(v.get_ref()));
                Ok(())
            }
            k if CONTEXT_KEYS.contains(&k) => context_key(source, text, k, v, &mut context),
            other => Err(error_at(
                source,
                text,
                k.span().start,
                format!(
                    "unknown key {other:?} in a case (expected tool, {}, input, {}, expect, rule or name)",
                    INPUT_KEYS.join(", "),
                    CONTEXT_KEYS.join(", ")
                ),
            )),
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    if expect.is_none() && !t.iter().any(|(k, _)| k.get_ref() == "expect") {
        errors.push(error_at(
            source,
            text,
            at,
            "a case needs expect = \"allow\", \"ask\", \"deny\" or \"none\"",
        ));
    }
    let tool = tool.or_else(|| {
        if input.contains_key("command") {
            Some("Bash".to_string())
        } else if input.contains_key("url") {
            Some("WebFetch".to_string())
        } else {
            None
        }
    });
    let call = match &tool {
        None => {
            errors.push(error_at(
                source,
                text,
                at,
                "a case needs a tool (only command and url imply one: Bash, WebFetch)",
            ));
            None
        }
        Some(tool) => match ToolCall::new(tool, input) {
            Ok(c) => Some(c),
            Err(e) => {
                errors.push(error_at(source, text, at, e.message()));
                None
            }
        },
    };
    match (call, expect) {
        (Some(call), Some(expect)) if errors.is_empty() => Ok(Case {
            place: format!("{source}:{line}"),
            name,
            call,
            context,
            expect,
            rule,
        }),
        _ => Err(errors),
    }
}

/// The call, shown in a line.
fn describe(call: &ToolCall) -> String {
    let field = call
        .command()
        .or_else(|| call.url())
        .or_else(|| call.path())
        .or_else(|| call.str_field("notebook_path"))
        .or_else(|| call.str_field("subagent_type"))
        .or_else(|| call.str_field("skill"));
    match field {
        Some(f) => format!("{} `{}`", call.tool, f.escape_debug()),
        None if call.input.is_empty() => call.tool.clone(),
        None => format!("{} {}", call.tool, Value::Object(call.input.clone())),
    }
}

/// A verdict with its deciding rule, for the report.
fn verdict_text(verdict: Verdict, rule: Option<&str>) -> String {
    match rule {
        Some(r) => format!("{verdict} by {r}"),
        None => verdict.to_string(),
    }
}

fn decided(d: &Decision<'_>) -> String {
    let mut s = verdict_text(d.verdict, d.rule_text());
    if let Some(r) = d.rule {
        let p = &r.rule.provenance;
        let _ = write!(s, " ({} {})", p.source, p.item());
    } else {
        let _ = write!(s, " ({})", d.reason());
    }
    s
}

/// What became of one case.
#[derive(Debug)]
pub enum Outcome {
    /// The verdict (and the rule, when given) are as expected.
    Pass,
    /// They are not: the report lines.
    Fail(String),
}

/// Runs one case against the evaluator.
pub fn check(case: &Case, ctx: &EvalContext, evaluator: &Evaluator) -> Result<Outcome, Error> {
    let d = evaluator.evaluate(&case.call, ctx)?;
    let verdict_ok = d.verdict == case.expect;
    let rule_ok = match &case.rule {
        None => true,
        // The rule's text, or its place (`deny[3]`, a tuff policy's
        // `rules[0]`): no rule text looks like a place.
        Some(r) => d
            .rule
            .is_some_and(|x| x.rule.text == *r || x.rule.provenance.item() == *r),
    };
    if verdict_ok && rule_ok {
        return Ok(Outcome::Pass);
    }
    let mut s = String::new();
    let name = case
        .name
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let _ = writeln!(s, "FAIL {}: {}{name}", case.place, describe(&case.call));
    let _ = writeln!(
        s,
        "    expected {}",
        verdict_text(case.expect, case.rule.as_deref())
    );
    let _ = writeln!(s, "    got      {}", decided(&d));
    Ok(Outcome::Fail(s))
}

/// Runs `test`.
pub fn run(args: Args) -> ExitCode {
    let policy = match load_policy(&args.policy, &args.context) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("toolgate: {e}");
            return ExitCode::from(2);
        }
    };
    let setup = Evaluator::new(&policy).and_then(|e| Ok((e, Defaults::new(&args.context)?)));
    let (evaluator, defaults) = match setup {
        Ok(both) => both,
        Err(e) => {
            eprintln!("toolgate: {e}");
            return ExitCode::from(2);
        }
    };
    // Read every file and every context first: a malformed file runs
    // nothing, and every problem is named at once.
    let mut cases: Vec<(Case, EvalContext)> = Vec::new();
    let mut problems: Vec<Error> = Vec::new();
    for file in &args.files {
        match read_cases(file) {
            Ok(cs) => {
                for c in cs {
                    match line_context(&c.context, &defaults, &evaluator) {
                        Ok(ctx) => cases.push((c, ctx)),
                        Err(e) => {
                            problems.push(e.with_source(c.place.clone()));
                        }
                    }
                }
            }
            Err(mut es) => problems.append(&mut es),
        }
    }
    if !problems.is_empty() {
        for e in &problems {
            eprintln!("toolgate: {e}");
        }
        return ExitCode::from(2);
    }
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut broken = false;
    for (case, ctx) in &cases {
        match check(case, ctx, &evaluator) {
            Ok(Outcome::Pass) => {
                passed += 1;
                if args.verbose {
                    println!("ok   {}: {}", case.place, describe(&case.call));
                }
            }
            Ok(Outcome::Fail(text)) => {
                failed += 1;
                print!("{text}");
            }
            Err(e) => {
                broken = true;
                eprintln!("toolgate: {}: {e}", case.place);
            }
        }
    }
    let plural = if cases.len() == 1 { "" } else { "s" };
    println!(
        "{} case{plural}: {passed} passed, {failed} failed",
        cases.len()
    );
    if broken {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
