//! `toolgate hook claude|codex|cursor` (SPEC §11): one hook call, failing
//! closed.
//!
//! The hook answers on the main thread: reading stdin, loading the policy,
//! deciding. A watchdog thread holds the time budget (`--budget-ms`, 2 s by
//! default, counted from the start of the process): it only sleeps, and
//! when the budget runs out before the main thread has answered it writes
//! the harness's refusal (a deny, the reason on stderr, exit code 2) and
//! ends the process. Whichever of the two claims the answer first writes
//! it; the other writes nothing. (The watchdog allocates nothing while it
//! waits, so the main thread keeps the one malloc arena, and the answer
//! needs no hand-over between threads.) A panic hook keeps panics to one
//! line on stderr, and the body is wrapped in `catch_unwind`: a panic or a
//! failure is a refusal, never a crash.
//!
//! Debug builds only (never release builds) honour two variables the
//! end-to-end tests use to reach the panic and time-budget paths:
//! `TOOLGATE_HOOK_TEST_PANIC` (`worker`: panic while deciding; `main`:
//! panic before the watchdog starts) and `TOOLGATE_HOOK_TEST_SLEEP_MS` (the
//! hook sleeps that long before deciding).

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use crate::Error;
use crate::ToolCall;
use crate::Verdict;
use crate::cli::policy_args::PolicyArgs;
use crate::compile::{Config, Policy};
use crate::error::ErrorKind;
use crate::eval::{EvalContext, Evaluator};
use crate::hook::{self, claude, codex, cursor, redact::redact};
use crate::policy::cache::ImageCache;
use crate::policy::image::DecidingImage;
use crate::policy::{ClaudeRoots, LoadedPolicy};

/// The harnesses a hook answers.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code's PreToolUse hook.
    Claude,
    /// OpenAI Codex's PreToolUse hook (it cannot ask: ask becomes deny).
    Codex,
    /// Cursor's beforeShellExecution, beforeReadFile or beforeMCPExecution
    /// hook (--event).
    Cursor,
}

/// The Cursor events a hook answers.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorEvent {
    /// A shell command.
    #[value(name = "beforeShellExecution")]
    BeforeShellExecution,
    /// A file read (cannot ask: ask becomes deny).
    #[value(name = "beforeReadFile")]
    BeforeReadFile,
    /// An MCP tool call.
    #[value(name = "beforeMCPExecution")]
    BeforeMcpExecution,
}

impl CursorEvent {
    /// The adapter's event.
    pub fn event(self) -> cursor::Event {
        match self {
            CursorEvent::BeforeShellExecution => cursor::Event::BeforeShellExecution,
            CursorEvent::BeforeReadFile => cursor::Event::BeforeReadFile,
            CursorEvent::BeforeMcpExecution => cursor::Event::BeforeMcpExecution,
        }
    }
}

impl Harness {
    fn as_str(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Cursor => "cursor",
        }
    }
}

/// Options of a hook (shared with `install`, which writes them into the
/// installed command).
#[derive(clap::Args, Clone, Debug)]
pub struct HookOpts {
    /// Where the rules come from.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Never answer allow (for policies that only narrow what the harness
    /// allows).
    #[arg(long)]
    pub no_allow: bool,
    /// The hook's own time budget in milliseconds; when it runs out the
    /// call is refused.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub budget_ms: u64,
    /// Append one JSON line per decision to FILE (secrets in the call
    /// redacted).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Do not use the image cache ($TOOLGATE_CACHE_DIR, else
    /// $XDG_CACHE_HOME/toolgate, else ~/.cache/toolgate): load and compile
    /// the policy on every call.
    #[arg(long)]
    pub no_cache: bool,
}

/// Arguments of `hook`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The harness asking.
    #[arg(value_enum)]
    pub harness: Harness,
    /// The Cursor event answered (cursor only).
    #[arg(long, value_enum, required_if_eq("harness", "cursor"))]
    pub event: Option<CursorEvent>,
    #[command(flatten)]
    pub opts: HookOpts,
}

/// What the hook found, before it is written in the harness's terms.
enum Outcome {
    /// Rules decided (or did not: [`Verdict::None`]).
    Decided {
        verdict: Verdict,
        reason: String,
        rule: Option<(String, String, String)>,
        facts: Facts,
    },
    /// The hook could not decide: refuse.
    Refused { why: String, facts: Facts },
}

/// What the log says about the call.
#[derive(Default)]
struct Facts {
    tool: Option<String>,
    input: Option<Map<String, Value>>,
    cwd: Option<String>,
    session_id: Option<String>,
    tool_use_id: Option<String>,
}

fn refused(why: impl Into<String>) -> Outcome {
    Outcome::Refused {
        why: why.into(),
        facts: Facts::default(),
    }
}

/// Runs one hook call.
pub fn run(args: Args) -> ExitCode {
    let started = Instant::now();
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("toolgate: internal error: {msg}{at}");
    }));
    let harness = args.harness;
    let event = args.event.map(CursorEvent::event);
    let log = args.opts.log.clone();
    let answered = Arc::new(AtomicBool::new(false));
    let outcome = catch_unwind(AssertUnwindSafe(|| budgeted(args, started, &answered)))
        .unwrap_or_else(|_| refused("internal error (a panic); see stderr"));
    if answered.swap(true, Ordering::SeqCst) {
        // The watchdog refused the call already and is ending the process.
        loop {
            std::thread::park();
        }
    }
    let code = emit(harness, event, &outcome);
    if let Some(file) = log {
        write_log(&file, harness, &outcome, started.elapsed());
    }
    ExitCode::from(code)
}

/// Starts the watchdog of the time budget, then runs the hook body.
fn budgeted(args: Args, started: Instant, answered: &Arc<AtomicBool>) -> Outcome {
    if test_trigger("TOOLGATE_HOOK_TEST_PANIC").as_deref() == Some("main") {
        panic!("test panic requested by TOOLGATE_HOOK_TEST_PANIC=main");
    }
    let harness = args.harness;
    let event = args.event.map(CursorEvent::event);
    if let Err(e) = watchdog(
        harness,
        event,
        args.opts.log.clone(),
        started,
        Duration::from_millis(args.opts.budget_ms),
        Arc::clone(answered),
    ) {
        return refused(format!("cannot start the watchdog thread: {e}"));
    }
    catch_unwind(AssertUnwindSafe(|| decide(harness, event, &args.opts)))
        .unwrap_or_else(|_| refused("internal error (a panic); see stderr"))
}

/// Starts the thread that refuses the call when the budget, counted from
/// `started`, runs out before `answered` is claimed: it writes the refusal
/// (and the log line) and ends the process with its exit code.
fn watchdog(
    harness: Harness,
    event: Option<cursor::Event>,
    log: Option<PathBuf>,
    started: Instant,
    budget: Duration,
    answered: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let deadline = started.checked_add(budget);
    std::thread::Builder::new()
        .name("toolgate-watchdog".into())
        .spawn(move || {
            // No deadline (a budget past the end of time): nothing to watch.
            let Some(deadline) = deadline else { return };
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                std::thread::park_timeout(deadline - now);
            }
            if answered.swap(true, Ordering::SeqCst) {
                return;
            }
            let outcome = refused(format!(
                "no decision within the hook's time budget of {} ms",
                budget.as_millis()
            ));
            let code = emit(harness, event, &outcome);
            if let Some(file) = log {
                write_log(&file, harness, &outcome, started.elapsed());
            }
            std::process::exit(i32::from(code));
        })
        .map(drop)
}

/// A debug-build-only test trigger.
fn test_trigger(name: &str) -> Option<String> {
    if cfg!(debug_assertions) {
        std::env::var(name).ok()
    } else {
        None
    }
}

/// The hook body: read, load, decide.
fn decide(harness: Harness, event: Option<cursor::Event>, opts: &HookOpts) -> Outcome {
    if let Some(ms) = test_trigger("TOOLGATE_HOOK_TEST_SLEEP_MS").and_then(|s| s.parse().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    if test_trigger("TOOLGATE_HOOK_TEST_PANIC").as_deref() == Some("worker") {
        panic!("test panic requested by TOOLGATE_HOOK_TEST_PANIC=worker");
    }
    let bytes = match hook::read_input(std::io::stdin().lock()) {
        Ok(b) => b,
        Err(e) => return refused(e.to_string()),
    };
    match (harness, event) {
        (Harness::Cursor, Some(event)) => decide_cursor(event, opts, &bytes),
        (Harness::Cursor, None) => refused("a cursor hook needs --event"),
        _ => decide_pre_tool_use(harness, opts, &bytes),
    }
}

/// Cursor's input.
fn decide_cursor(event: cursor::Event, opts: &HookOpts, bytes: &[u8]) -> Outcome {
    let input = match cursor::Input::parse(bytes, event) {
        Ok(i) => i,
        Err(e) => return refused(e.to_string()),
    };
    let facts = Facts {
        tool: Some(input.call.tool.clone()),
        input: Some(input.call.input.clone()),
        cwd: Some(input.cwd.clone()),
        session_id: input.conversation_id.clone(),
        tool_use_id: input.generation_id.clone(),
    };
    let project = PathBuf::from(&input.project);
    let mut starts = vec![project.clone(), PathBuf::from(&input.cwd)];
    if let Ok(dir) = std::env::current_dir() {
        starts.push(dir);
    }
    let result = match &input.mcp_tool_of_unknown_server {
        None => evaluate(opts, &input.call, &input.cwd, &project, &starts),
        Some(tool) => evaluate_with(opts, &input.cwd, &project, &starts, |ev, ctx| {
            // The server is unknown: decide for each server the policy
            // could mean, then combine (see `cursor::combine_unknown_server`).
            let mut decided = Vec::new();
            for server in cursor::mcp_candidates(ev.rules()) {
                let call =
                    ToolCall::new(&format!("mcp__{server}__{tool}"), input.call.input.clone())?;
                decided.push(decide_one(ev, &call, ctx)?);
            }
            let verdicts: Vec<Verdict> = decided.iter().map(|d| d.0).collect();
            let (verdict, at) = cursor::combine_unknown_server(&verdicts);
            let (_, reason, rule) = decided.swap_remove(at);
            let reason = if verdict == Verdict::Ask && verdicts.first() != Some(&Verdict::Ask) {
                format!("the MCP server of {tool:?} is not given, and on some server {reason}")
            } else {
                reason
            };
            Ok((verdict, reason, rule))
        }),
    };
    match result {
        Ok((verdict, reason, rule)) => {
            let (verdict, reason) = if verdict == Verdict::Allow && opts.no_allow {
                (Verdict::None, format!("{reason}; --no-allow withholds it"))
            } else {
                (verdict, reason)
            };
            Outcome::Decided {
                verdict,
                reason,
                rule,
                facts,
            }
        }
        Err(e) => Outcome::Refused {
            why: e.to_string(),
            facts,
        },
    }
}

/// Claude Code's and Codex's `PreToolUse` input (the same shape).
fn decide_pre_tool_use(harness: Harness, opts: &HookOpts, bytes: &[u8]) -> Outcome {
    let input = match claude::Input::parse(bytes) {
        Ok(i) => i,
        Err(e) => return refused(e.to_string()),
    };
    let facts = Facts {
        tool: Some(input.call.tool.clone()),
        input: Some(input.call.input.clone()),
        cwd: Some(input.cwd.clone()),
        session_id: input.session_id.clone(),
        tool_use_id: input.tool_use_id.clone(),
    };
    let project_var = match harness {
        Harness::Claude => env_dir("CLAUDE_PROJECT_DIR"),
        Harness::Codex | Harness::Cursor => None,
    };
    let project = project_var.unwrap_or_else(|| PathBuf::from(&input.cwd));
    let mut starts = vec![project.clone(), PathBuf::from(&input.cwd)];
    if let Ok(dir) = std::env::current_dir() {
        starts.push(dir);
    }
    let result = evaluate(opts, &input.call, &input.cwd, &project, &starts);
    let (verdict, reason, rule) = match result {
        Ok(v) => v,
        Err(e) => {
            return Outcome::Refused {
                why: e.to_string(),
                facts,
            };
        }
    };
    let (verdict, reason) = if verdict == Verdict::Allow && opts.no_allow {
        (Verdict::None, format!("{reason}; --no-allow withholds it"))
    } else if verdict == Verdict::Allow && !input.may_allow() {
        let mode = input.permission_mode.as_deref().unwrap_or("");
        (
            Verdict::None,
            format!("{reason}; withheld in permission mode {mode}"),
        )
    } else {
        (verdict, reason)
    };
    Outcome::Decided {
        verdict,
        reason,
        rule,
        facts,
    }
}

type Evaluated = (Verdict, String, Option<(String, String, String)>);

/// Loads the policy and decides the call: no policy logic of its own.
fn evaluate(
    opts: &HookOpts,
    call: &ToolCall,
    cwd: &str,
    project: &Path,
    tuff_starts: &[PathBuf],
) -> Result<Evaluated, Error> {
    evaluate_with(opts, cwd, project, tuff_starts, |ev, ctx| {
        decide_one(ev, call, ctx)
    })
}

/// One call's verdict, reason and deciding rule.
fn decide_one(
    evaluator: &Evaluator,
    call: &ToolCall,
    ctx: &EvalContext,
) -> Result<Evaluated, Error> {
    let d = evaluator.decide(call, ctx)?;
    let rule = d.rule.map(|r| {
        let p = &r.rule.provenance;
        (r.rule.text.clone(), p.source.to_string(), p.item())
    });
    Ok((d.verdict, d.reason(), rule))
}

/// Loads the policy, builds the context, and runs `decide` on them.
fn evaluate_with(
    opts: &HookOpts,
    cwd: &str,
    project: &Path,
    tuff_starts: &[PathBuf],
    decide: impl FnOnce(&Evaluator, &EvalContext) -> Result<Evaluated, Error>,
) -> Result<Evaluated, Error> {
    let evaluator = load_evaluator(opts, project, tuff_starts)?;
    let project_str = project.to_str().ok_or_else(|| {
        Error::new(
            ErrorKind::Call,
            format!(
                "the project directory {} is not valid utf-8",
                project.display()
            ),
        )
    })?;
    let mut ctx = EvalContext::new(cwd)?
        .with_project_dir(project_str)?
        .with_follow_symlinks(true);
    if let Some(home) = env_dir("HOME").and_then(|h| h.to_str().map(str::to_string)) {
        ctx = ctx.with_home(&home)?;
    }
    let ctx = evaluator.with_policy_dirs(ctx)?;
    let answer = decide(&evaluator, &ctx)?;
    // The process exits once the answer is out: freeing the policy's
    // thousands of allocations first would only delay it. (Kept, an
    // image's buffer, which its rules are decoded from, is never unmapped
    // either: with the watchdog thread alive that would also flush the
    // other core's address translations.)
    std::mem::forget(evaluator);
    Ok(answer)
}

/// A non-empty directory from the environment.
fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The evaluator of the hook's policy: the settings hierarchy of
/// `project`, the `--policy` files, the installed tuff policies (searched
/// from each of `tuff_starts` in turn), then the rules on the command line
/// — the order [`PolicyArgs::load`] uses. A precompiled image given alone
/// loads as it is; otherwise the image cache is used unless `--no-cache`.
/// An image (given or cached) is decoded to decide with only
/// ([`DecidingImage`]). A hook answers one call and exits: it compiles
/// with [`Config::one_shot`], which builds no automaton it will not walk.
///
/// The cache is looked in before a sole `--policy FILE` is opened to see
/// whether it is an image (unless it is named `*.tgimage`): an entry
/// exists only for a policy loaded from its sources, and its freshness
/// covers that file, so a file that has since become an image is a miss.
/// Either order gives the same answer; this one spares a hit the open.
fn load_evaluator(
    opts: &HookOpts,
    project: &Path,
    tuff_starts: &[PathBuf],
) -> Result<Evaluator, Error> {
    if opts.policy.is_empty() {
        return Err(Error::new(
            ErrorKind::Policy,
            "the hook has no policy: give --policy FILE, --claude-settings, --tuff ID \
             or --allow/--ask/--deny RULE",
        ));
    }
    let roots = ClaudeRoots::system(project.to_path_buf());
    let cache = if opts.no_cache {
        None
    } else {
        ImageCache::from_env()
    };
    // Made when first needed: an image named as one never needs it.
    let recipe = std::cell::OnceCell::new();
    let recipe = || {
        recipe
            .get_or_init(|| opts.policy.recipe(&roots, tuff_starts, ENGINE))
            .as_str()
    };
    let hit = || cache.as_ref()?.load_to_decide(recipe());
    let named_image = opts
        .policy
        .sole_file()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "tgimage"));
    if !named_image && let Some(image) = hit() {
        return image.into_evaluator();
    }
    if let Some((path, bytes)) = opts.policy.sole_image()? {
        let name = path.display().to_string();
        let image = DecidingImage::from_bytes(bytes, &name)?;
        image.check_fresh(&name)?;
        return image.into_evaluator();
    }
    if named_image && let Some(image) = hit() {
        return image.into_evaluator();
    }
    let load = || opts.policy.load_from(&roots, tuff_starts);
    let compile = |p: &LoadedPolicy| {
        Policy::builder()
            .configure(Config::one_shot())
            .build(p.rules().to_vec())
    };
    match &cache {
        Some(cache) => Ok(cache.build_evaluator(recipe(), load, compile)?.0),
        None => {
            let policy = load()?;
            let compiled = compile(&policy)?;
            let evaluator = Evaluator::with_compiled(&policy, compiled)?;
            std::mem::forget(policy);
            Ok(evaluator)
        }
    }
}

/// The hook's matcher configuration by name, part of its cache key.
const ENGINE: &str = "one-shot";

/// Writes the outcome in the harness's terms; returns the exit code.
fn emit(harness: Harness, event: Option<cursor::Event>, outcome: &Outcome) -> u8 {
    let event = event.unwrap_or(cursor::Event::BeforeReadFile);
    let (stdout, stderr, code) = match (harness, outcome) {
        (
            Harness::Cursor,
            Outcome::Decided {
                verdict, reason, ..
            },
        ) => (
            Some(cursor::answer(
                *verdict,
                &format!("toolgate: {reason}"),
                event,
            )),
            None,
            0,
        ),
        (Harness::Cursor, Outcome::Refused { why, .. }) => {
            (Some(cursor::refusal(why)), Some(why.as_str()), 2)
        }
        (
            Harness::Claude,
            Outcome::Decided {
                verdict, reason, ..
            },
        ) => (
            claude::answer(*verdict, &format!("toolgate: {reason}")),
            None,
            0,
        ),
        (
            Harness::Codex,
            Outcome::Decided {
                verdict, reason, ..
            },
        ) => (
            codex::answer(*verdict, &format!("toolgate: {reason}")),
            None,
            0,
        ),
        (Harness::Claude | Harness::Codex, Outcome::Refused { why, .. }) => {
            (Some(claude::refusal(why)), Some(why.as_str()), 2)
        }
    };
    if let Some(why) = stderr {
        eprintln!("toolgate: refused: {why}");
    }
    if let Some(v) = stdout {
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{v}").and_then(|()| out.flush());
        if written.is_err() {
            // The harness cannot read the answer; exit 2 still blocks.
            return 2;
        }
    }
    code
}

/// Appends the decision to the log; a log that cannot be written is
/// reported on stderr and changes nothing.
fn write_log(file: &Path, harness: Harness, outcome: &Outcome, elapsed: Duration) {
    let time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let (decision, reason, rule, facts) = match outcome {
        Outcome::Decided {
            verdict,
            reason,
            rule,
            facts,
        } => (verdict.as_str(), reason.as_str(), rule.as_ref(), facts),
        Outcome::Refused { why, facts } => ("refused", why.as_str(), None, facts),
    };
    let mut line = json!({
        "time": time,
        "harness": harness.as_str(),
        "decision": decision,
        "reason": redact(reason),
    });
    if let Some((text, source, item)) = rule {
        line["rule"] = json!({"text": text, "source": source, "item": item});
    }
    if let Some(t) = &facts.tool {
        line["tool"] = json!(t);
    }
    if let Some(i) = &facts.input {
        line["input"] = redact_value(&Value::Object(i.clone()));
    }
    for (key, v) in [
        ("cwd", &facts.cwd),
        ("session_id", &facts.session_id),
        ("tool_use_id", &facts.tool_use_id),
    ] {
        if let Some(v) = v {
            line[key] = json!(v);
        }
    }
    line["elapsed_us"] = json!(elapsed.as_micros() as u64);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = written {
        eprintln!("toolgate: cannot write the log {}: {e}", file.display());
    }
}

/// Every string in `v` redacted.
fn redact_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(redact(s)),
        Value::Array(a) => Value::Array(a.iter().map(redact_value).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), redact_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
