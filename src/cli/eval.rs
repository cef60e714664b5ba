//! `toolgate eval` (SPEC §10.2): JSONL calls in, JSONL decisions out, in
//! input order, one output line per input line.
//!
//! The input is read in chunks of [`CHUNK`] lines; each chunk is evaluated
//! in parallel (rayon) while the chunk before it is written out (in order)
//! and the next one read, so memory stays flat however many calls there
//! are.
//!
//! A line whose evaluation panics (a bug) gets an error line of its own and
//! the batch goes on. Debug builds (never release builds) honour
//! `TOOLGATE_EVAL_TEST_PANIC=N`, which panics on line N, for the end-to-end
//! test of that path.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;
use serde_json::{Map, Value, json};
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::policy_args::{Compiling, PolicyArgs};
use crate::Error;
use crate::compile::Config;
use crate::error::ErrorKind;
use crate::eval::call::ToolCall;
use crate::eval::{Decision, EvalContext, Evaluator, Verdict};
use crate::policy::ClaudeRoots;
use crate::policy::cache::ImageCache;
use crate::policy::{LoadedPolicy, PermissionMode};

/// Lines per chunk: read, evaluated in parallel, written, then the next.
pub const CHUNK: usize = 8192;

/// Arguments of `eval`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub context: ContextArgs,
    /// Print verdict counts, hits per rule and the rules never hit to
    /// stderr.
    #[arg(long)]
    pub summary: bool,
    /// Do not use the image cache ($TOOLGATE_CACHE_DIR, else
    /// $XDG_CACHE_HOME/toolgate, else ~/.cache/toolgate): compile the
    /// policy on every run.
    #[arg(long)]
    pub no_cache: bool,
    /// The calls, one JSON object a line (stdin if absent or `-`).
    #[arg(value_name = "CALLS.jsonl")]
    pub calls: Option<PathBuf>,
}

/// The evaluation context flags `eval` and `explain` share (SPEC §10.2).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ContextArgs {
    /// The working directory of calls that give no `cwd` (default: the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// The project directory (anchor of `./x` and `x` rules) of calls that
    /// give no `project_dir` (default: --cwd, else the call's cwd).
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<String>,
    /// The home directory of calls that give no `home` (default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<String>,
    /// An additional working directory (repeatable), for calls that give
    /// no `additional_directories`.
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<String>,
    /// The permission mode of calls that give none (default, acceptEdits,
    /// plan, dontAsk, bypassPermissions; auto and manual are default).
    /// Without it (and without a settings defaultMode) a call no rule
    /// decides is "none".
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
}

/// The flags, checked once: what each line falls back on.
#[derive(Clone, Debug)]
pub struct Defaults {
    cwd: String,
    cwd_given: bool,
    project_dir: Option<String>,
    home: Option<String>,
    add_dirs: Vec<String>,
    mode: Option<PermissionMode>,
    /// The context of a line that gives no context keys of its own.
    base: Option<EvalContext>,
}

impl Defaults {
    /// Checks the flags; `None` mode with no flag.
    pub fn new(args: &ContextArgs) -> Result<Defaults, Error> {
        let (cwd, cwd_given) = match &args.cwd {
            Some(c) => (c.clone(), true),
            None => {
                let dir = std::env::current_dir().map_err(|e| {
                    Error::new(
                        ErrorKind::Call,
                        format!("cannot read the current directory: {e}"),
                    )
                })?;
                let dir = dir.to_str().map(str::to_string).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Call,
                        "the current directory is not valid UTF-8 (give --cwd)",
                    )
                })?;
                (dir, false)
            }
        };
        let mode = args.mode.as_deref().map(str::parse).transpose()?;
        let home = args
            .home
            .clone()
            .or_else(|| std::env::var("HOME").ok().filter(|h| h.starts_with('/')));
        let mut d = Defaults {
            cwd,
            cwd_given,
            project_dir: args.project_dir.clone(),
            home,
            add_dirs: args.add_dir.clone(),
            mode,
            base: None,
        };
        // Check the flags now: a bad flag is an error for the whole run.
        d.base = Some(d.context(None, None, None, None)?);
        Ok(d)
    }

    /// The flags' permission mode.
    pub fn mode(&self) -> Option<PermissionMode> {
        self.mode
    }

    /// The context for a line's own values (SPEC §13: a line's value wins
    /// over the flag; the project directory is the line's `project_dir`,
    /// else `--project-dir`, else `--cwd`, else the line's `cwd`).
    fn context(
        &self,
        cwd: Option<&str>,
        project: Option<&str>,
        home: Option<&str>,
        dirs: Option<&[String]>,
    ) -> Result<EvalContext, Error> {
        if cwd.is_none() && project.is_none() && home.is_none() && dirs.is_none() {
            if let Some(b) = &self.base {
                return Ok(b.clone());
            }
        }
        let the_cwd = cwd.unwrap_or(&self.cwd);
        let mut ctx = EvalContext::new(the_cwd)?;
        let project = project
            .or(self.project_dir.as_deref())
            .or(if self.cwd_given {
                Some(self.cwd.as_str())
            } else {
                cwd
            });
        if let Some(p) = project {
            ctx = ctx.with_project_dir(p)?;
        }
        if let Some(h) = home.or(self.home.as_deref()) {
            ctx = ctx.with_home(h)?;
        }
        for d in dirs.unwrap_or(&self.add_dirs) {
            ctx = ctx.with_additional_dir(d)?;
        }
        Ok(ctx.with_follow_symlinks(false))
    }

    /// The base context (the flags alone).
    pub fn base(&self) -> Result<EvalContext, Error> {
        self.context(None, None, None, None)
    }
}

/// Loads the policy for a run: the project its settings and installed tuff
/// policies are looked up from is `--project-dir`, else `--cwd`, else the
/// current directory. The load's warnings go to stderr.
pub fn load_policy(policy: &PolicyArgs, ctx: &ContextArgs) -> Result<LoadedPolicy, Error> {
    if policy.is_empty() {
        return Err(Error::new(
            ErrorKind::Call,
            "no policy given (use --policy FILE, --claude-settings, --tuff ID or --allow/--ask/--deny RULE)",
        ));
    }
    let project = match ctx.project_dir.as_ref().or(ctx.cwd.as_ref()) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let loaded = policy.load(&project)?;
    // What was dropped or ignored while loading is said, never silent.
    for w in loaded.warnings() {
        eprintln!("toolgate: warning: {w}");
    }
    Ok(loaded)
}

/// The evaluator of a run: the policy of [`load_policy`], compiled — or a
/// precompiled image given alone, or the image cache's fresh entry (unless
/// `no_cache`). The load's warnings go to stderr.
pub fn load_evaluator(
    policy: &PolicyArgs,
    ctx: &ContextArgs,
    no_cache: bool,
) -> Result<(LoadedPolicy, Evaluator), Error> {
    if policy.is_empty() {
        return Err(Error::new(
            ErrorKind::Call,
            "no policy given (use --policy FILE, --claude-settings, --tuff ID or --allow/--ask/--deny RULE)",
        ));
    }
    let project = match ctx.project_dir.as_ref().or(ctx.cwd.as_ref()) {
        Some(p) => PathBuf::from(p),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let how = Compiling {
        config: Config::new(),
        engine: "default",
        cache: if no_cache {
            None
        } else {
            ImageCache::from_env()
        },
    };
    let roots = ClaudeRoots::system(project.clone());
    let (loaded, compiled) = policy.load_compiled(&roots, &[project], &how)?;
    for w in loaded.warnings() {
        eprintln!("toolgate: warning: {w}");
    }
    let evaluator = Evaluator::with_compiled(&loaded, compiled)?;
    Ok((loaded, evaluator))
}

/// One line's result, as the summary needs it.
struct Outcome {
    line: String,
    verdict: Option<Verdict>,
    /// The deciding rule's position in policy order.
    rule: Option<usize>,
}

/// A string-valued key of a line (an error when present and not a string).
fn str_key<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::new(
            ErrorKind::Call,
            format!("call line key {key:?} must be a string"),
        )),
    }
}

/// The context (mode included) of one parsed line.
pub fn line_context(
    obj: &Map<String, Value>,
    defaults: &Defaults,
    evaluator: &Evaluator,
) -> Result<EvalContext, Error> {
    let cwd = str_key(obj, "cwd")?;
    let project = str_key(obj, "project_dir")?;
    let home = str_key(obj, "home")?;
    let dirs: Option<Vec<String>> = match obj.get("additional_directories") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        Error::new(
                            ErrorKind::Call,
                            "call line key \"additional_directories\" must be an array of strings",
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => {
            return Err(Error::new(
                ErrorKind::Call,
                "call line key \"additional_directories\" must be an array of strings",
            ));
        }
    };
    let mode = match (str_key(obj, "mode")?, str_key(obj, "permission_mode")?) {
        (Some(m), _) | (None, Some(m)) => Some(m.parse::<PermissionMode>()?),
        (None, None) => defaults.mode,
    };
    let ctx = defaults.context(cwd, project, home, dirs.as_deref())?;
    let ctx = evaluator.with_policy_dirs(ctx)?;
    Ok(ctx.with_mode(evaluator.effective_mode(mode)))
}

/// The deciding rule of a decision line.
#[derive(serde::Serialize)]
pub struct RuleOut<'a> {
    /// The rule as written.
    pub text: &'a str,
    /// `allow`, `ask` or `deny`.
    pub effect: &'static str,
    /// The file it came from.
    pub source: &'a str,
    /// The list within the file (`rules` for tuff).
    pub list: &'static str,
    /// 0-based index within the list.
    pub index: usize,
}

/// One decision line, fields in the order SPEC §10.2 writes them.
#[derive(serde::Serialize)]
pub struct DecisionOut<'a> {
    /// The verdict.
    pub decision: &'static str,
    /// The deciding rule, if a rule decided.
    pub rule: Option<RuleOut<'a>>,
    /// One line saying why.
    pub reason: String,
    /// The call's `tool_use_id`, or its line number.
    pub id: Value,
}

/// The output line of a decision.
pub fn decision_out<'a>(d: &'a Decision<'_>, id: Value) -> DecisionOut<'a> {
    DecisionOut {
        decision: d.verdict.as_str(),
        rule: d.rule.map(|r| RuleOut {
            text: &r.rule.text,
            effect: r.rule.effect.as_str(),
            source: &r.rule.provenance.source,
            list: r.rule.provenance.list.as_str(),
            index: r.rule.provenance.index,
        }),
        reason: d.reason(),
        id,
    }
}

/// Evaluates one input line (1-based `n`) to its output line.
///
/// `prepared` is the context of a line with no context keys of its own,
/// built once per run.
fn eval_line(
    raw: &[u8],
    n: u64,
    defaults: &Defaults,
    prepared: Option<&EvalContext>,
    evaluator: &Evaluator,
) -> Outcome {
    let mut id = Value::from(n);
    let result = (|| -> Result<(String, Verdict, Option<usize>), String> {
        let text =
            std::str::from_utf8(raw).map_err(|_| "the line is not valid UTF-8".to_string())?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return Err("the line is blank (expected a call as a JSON object)".to_string());
        }
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("the line is not JSON: {e}"))?;
        if let Some(v @ (Value::String(_) | Value::Number(_))) = value.get("tool_use_id") {
            id = v.clone();
        }
        let Value::Object(obj) = &value else {
            // (`from_json` says what is wrong with it.)
            ToolCall::from_json(&value).map_err(|e| e.message().to_string())?;
            return Err("a call must be a JSON object".to_string());
        };
        const KEYS: [&str; 6] = [
            "cwd",
            "project_dir",
            "home",
            "additional_directories",
            "mode",
            "permission_mode",
        ];
        let own;
        // (A line holds few keys: one pass over them, not a lookup per
        // context key.)
        let plain = !obj.keys().any(|k| KEYS.contains(&k.as_str()));
        let (call, ctx) = match prepared {
            // The common line: its input moves into the call.
            Some(base) if plain => (
                ToolCall::from_json_value(value).map_err(|e| e.message().to_string())?,
                base,
            ),
            _ => {
                let call = ToolCall::from_json(&value).map_err(|e| e.message().to_string())?;
                own =
                    line_context(obj, defaults, evaluator).map_err(|e| e.message().to_string())?;
                (call, &own)
            }
        };
        let d = evaluator
            .evaluate(&call, ctx)
            .map_err(|e| e.message().to_string())?;
        let out = serde_json::to_string(&decision_out(&d, id.clone()))
            .map_err(|e| format!("cannot write the decision: {e}"))?;
        Ok((out, d.verdict, d.rule.map(|r| r.index)))
    })();
    match result {
        Ok((line, verdict, rule)) => Outcome {
            line,
            verdict: Some(verdict),
            rule,
        },
        Err(msg) => Outcome {
            line: json!({ "error": format!("line {n}: {msg}"), "id": id }).to_string(),
            verdict: None,
            rule: None,
        },
    }
}

/// The output line of a line whose evaluation panicked: an error carrying
/// the line's `tool_use_id` when it has one.
fn internal_error(raw: &[u8], n: u64) -> Outcome {
    let id = serde_json::from_slice::<Value>(raw)
        .ok()
        .and_then(|v| match v.get("tool_use_id") {
            Some(v @ (Value::String(_) | Value::Number(_))) => Some(v.clone()),
            _ => None,
        })
        .unwrap_or_else(|| Value::from(n));
    Outcome {
        line: json!({
            "error": format!("line {n}: internal error while deciding (a bug in toolgate; the call was not decided)"),
            "id": id,
        })
        .to_string(),
        verdict: None,
        rule: None,
    }
}

/// Counts for `--summary`.
#[derive(Default)]
struct Summary {
    lines: u64,
    errors: u64,
    verdicts: HashMap<&'static str, u64>,
    hits: Vec<u64>,
}

/// Runs `eval`.
pub fn run(args: Args) -> ExitCode {
    let (policy, evaluator) = match load_evaluator(&args.policy, &args.context, args.no_cache) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("toolgate: {e}");
            return ExitCode::from(2);
        }
    };
    let defaults = match Defaults::new(&args.context) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("toolgate: {e}");
            return ExitCode::from(2);
        }
    };
    let input: Box<dyn Read> = match args.calls.as_deref() {
        None => Box::new(io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(io::stdin().lock()),
        Some(p) => match File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("toolgate: cannot read {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    match stream(input, &policy, &evaluator, &defaults, args.summary) {
        Ok(true) => ExitCode::from(1),
        Ok(false) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolgate: {e}");
            ExitCode::from(2)
        }
    }
}

/// Streams the calls through the evaluator; `Ok(true)` when a line had an
/// error.
fn stream(
    input: Box<dyn Read>,
    policy: &LoadedPolicy,
    evaluator: &Evaluator,
    defaults: &Defaults,
    summary: bool,
) -> io::Result<bool> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let bar = if io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {human_pos} calls in {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        Some(b)
    } else {
        None
    };
    let mut sum = Summary {
        hits: vec![0; policy.rules().len()],
        ..Summary::default()
    };
    let prepared = line_context(&Map::new(), defaults, evaluator).ok();
    // Debug builds only: the end-to-end test of a panicking line.
    let panic_on: Option<u64> = if cfg!(debug_assertions) {
        std::env::var("TOOLGATE_EVAL_TEST_PANIC")
            .ok()
            .and_then(|s| s.parse().ok())
    } else {
        None
    };
    // Three stages overlap: while one chunk is evaluated (every thread but
    // the one doing I/O), the results of the one before are written and
    // the next is read. Two chunks are in flight at most: memory stays flat.
    let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
    let mut spare: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
    let mut eof = read_chunk(&mut reader, &mut chunk)?;
    let mut done: Vec<Outcome> = Vec::new();
    let mut first = 1u64;
    loop {
        let mut results: Vec<Outcome> = Vec::new();
        let next = rayon::in_place_scope(|scope| {
            let (chunk, results) = (&chunk, &mut results);
            let prepared = prepared.as_ref();
            scope.spawn(move |_| {
                *results = chunk
                    .par_iter()
                    .enumerate()
                    .map(|(i, raw)| {
                        let n = first + i as u64;
                        // A bug that panics on one line costs that line,
                        // never the batch: the line gets an error (no
                        // verdict, so never an allow) and the rest go on.
                        catch_unwind(AssertUnwindSafe(|| {
                            if panic_on == Some(n) {
                                panic!("test panic requested by TOOLGATE_EVAL_TEST_PANIC={n}");
                            }
                            eval_line(raw, n, defaults, prepared, evaluator)
                        }))
                        .unwrap_or_else(|_| internal_error(raw, n))
                    })
                    .collect();
            });
            write_outcomes(&mut out, &done, &mut sum)?;
            if eof {
                return Ok(true);
            }
            read_chunk(&mut reader, &mut spare)
        });
        let next_eof = next?;
        done = results;
        first += chunk.len() as u64;
        if let Some(b) = &bar {
            b.inc(chunk.len() as u64);
        }
        if chunk.is_empty() {
            break;
        }
        std::mem::swap(&mut chunk, &mut spare);
        if eof {
            chunk.clear();
        }
        eof = next_eof;
    }
    write_outcomes(&mut out, &done, &mut sum)?;
    out.flush()?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if summary {
        eprint!("{}", render_summary(&sum, policy));
    }
    Ok(sum.errors > 0)
}

/// Reads up to [`CHUNK`] lines into `chunk` (its buffers reused); true at
/// the end of the input.
fn read_chunk(reader: &mut impl BufRead, chunk: &mut Vec<Vec<u8>>) -> io::Result<bool> {
    let mut n = 0;
    while n < CHUNK {
        if chunk.len() == n {
            chunk.push(Vec::new());
        }
        let Some(buf) = chunk.get_mut(n) else { break };
        buf.clear();
        if reader.read_until(b'\n', buf)? == 0 {
            chunk.truncate(n);
            return Ok(true);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        n += 1;
    }
    chunk.truncate(n);
    Ok(false)
}

/// Writes a chunk's output lines in order and counts them.
fn write_outcomes(out: &mut impl Write, results: &[Outcome], sum: &mut Summary) -> io::Result<()> {
    for r in results {
        out.write_all(r.line.as_bytes())?;
        out.write_all(b"\n")?;
        sum.lines += 1;
        match r.verdict {
            Some(v) => *sum.verdicts.entry(v.as_str()).or_default() += 1,
            None => sum.errors += 1,
        }
        if let Some(slot) = r.rule.and_then(|i| sum.hits.get_mut(i)) {
            *slot += 1;
        }
    }
    Ok(())
}

/// The `--summary` text.
fn render_summary(sum: &Summary, policy: &LoadedPolicy) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "{} calls", sum.lines);
    for v in ["allow", "ask", "deny", "none"] {
        let _ = writeln!(s, "  {v:<6} {}", sum.verdicts.get(v).copied().unwrap_or(0));
    }
    let _ = writeln!(s, "  {:<6} {}", "error", sum.errors);
    let mut hit: Vec<(usize, u64)> = sum
        .hits
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, n)| n > 0)
        .collect();
    hit.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let name = |i: usize| match policy.rules().get(i) {
        Some(r) => format!(
            "{} ({} {})",
            r.text,
            r.provenance.source,
            r.provenance.item()
        ),
        None => format!("rule {i}"),
    };
    let _ = writeln!(s, "deciding rules, by calls decided:");
    if hit.is_empty() {
        let _ = writeln!(s, "  (none)");
    }
    for (i, n) in &hit {
        let _ = writeln!(s, "  {n:>8}  {}", name(*i));
    }
    let never: Vec<usize> = (0..sum.hits.len()).filter(|&i| sum.hits[i] == 0).collect();
    let _ = writeln!(s, "rules that decided no call: {}", never.len());
    for i in never {
        let _ = writeln!(s, "  {}", name(i));
    }
    s
}
