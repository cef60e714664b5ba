//! `toolgate eval` (SPEC §10.2): JSONL calls in, JSONL decisions out, in
//! input order, one output line per input line.
//!
//! The input is read in chunks of [`CHUNK`] lines; each chunk is evaluated
//! in parallel (rayon), in blocks of lines each with its own output buffer,
//! while the chunk before it is written out (in order) and the next one
//! read, so memory stays flat however many calls there are.
//!
//! The common line is read in one pass into fields borrowed from it, and
//! its decision line written straight into its block's buffer. Any other
//! line (a known key null, of an unusual type or given twice; a line in
//! error) is read in full as a `serde_json::Value`, which words its
//! meaning and its errors; the two readings write the same bytes for
//! every line the first one takes.
//!
//! A line whose evaluation panics (a bug) gets an error line of its own and
//! the batch goes on. Debug builds (never release builds) honour
//! `TOOLGATE_EVAL_TEST_PANIC=N`, which panics on line N, and
//! `TOOLGATE_EVAL_TEST_FULL=1`, which reads every line in full, for the
//! end-to-end tests of those paths.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
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
pub const CHUNK: usize = 8_192;

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
        dirs: Option<&[&str]>,
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
        match dirs {
            Some(ds) => {
                for d in ds {
                    ctx = ctx.with_additional_dir(d)?;
                }
            }
            None => {
                for d in &self.add_dirs {
                    ctx = ctx.with_additional_dir(d)?;
                }
            }
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

/// A line's context keys (SPEC §10.2), as read from it; absent ones fall
/// back on the flags.
#[derive(Debug, Default)]
struct LineKeys<'a> {
    cwd: Option<&'a str>,
    project_dir: Option<&'a str>,
    home: Option<&'a str>,
    dirs: Option<Vec<&'a str>>,
    mode: Option<&'a str>,
    permission_mode: Option<&'a str>,
}

impl LineKeys<'_> {
    /// The line gives no context of its own.
    fn is_empty(&self) -> bool {
        self.cwd.is_none()
            && self.project_dir.is_none()
            && self.home.is_none()
            && self.dirs.is_none()
            && self.mode.is_none()
            && self.permission_mode.is_none()
    }

    /// The context (mode included) these keys give.
    fn context(&self, defaults: &Defaults, evaluator: &Evaluator) -> Result<EvalContext, Error> {
        let mode = match (self.mode, self.permission_mode) {
            (Some(m), _) | (None, Some(m)) => Some(m.parse::<PermissionMode>()?),
            (None, None) => defaults.mode,
        };
        let ctx = defaults.context(self.cwd, self.project_dir, self.home, self.dirs.as_deref())?;
        let ctx = evaluator.with_policy_dirs(ctx)?;
        Ok(ctx.with_mode(evaluator.effective_mode(mode)))
    }
}

/// The context (mode included) of one parsed line.
pub fn line_context(
    obj: &Map<String, Value>,
    defaults: &Defaults,
    evaluator: &Evaluator,
) -> Result<EvalContext, Error> {
    let bad_dirs = || {
        Error::new(
            ErrorKind::Call,
            "call line key \"additional_directories\" must be an array of strings",
        )
    };
    let mut keys = LineKeys {
        cwd: str_key(obj, "cwd")?,
        project_dir: str_key(obj, "project_dir")?,
        home: str_key(obj, "home")?,
        ..LineKeys::default()
    };
    keys.dirs = match obj.get("additional_directories") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| v.as_str().ok_or_else(bad_dirs))
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(bad_dirs()),
    };
    keys.mode = str_key(obj, "mode")?;
    keys.permission_mode = str_key(obj, "permission_mode")?;
    keys.context(defaults, evaluator)
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

impl<'a> RuleOut<'a> {
    fn of(d: &'a Decision<'_>) -> Option<RuleOut<'a>> {
        d.rule.map(|r| RuleOut {
            text: &r.rule.text,
            effect: r.rule.effect.as_str(),
            source: &r.rule.provenance.source,
            list: r.rule.provenance.list.as_str(),
            index: r.rule.provenance.index,
        })
    }
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
        rule: RuleOut::of(d),
        reason: d.reason(),
        id,
    }
}

/// A line's `id` as written out: its `tool_use_id`, or its line number.
enum Id<'a> {
    Line(u64),
    Text(&'a str),
}

/// Writes the decision line of `d` (newline included) at the end of
/// `out`; `reason` is scratch space. On an error `out` may hold part of
/// the line.
///
/// The line is the bytes `serde_json` writes for [`DecisionOut`], put
/// together here field by field: the batch writes one per call. Strings
/// are escaped as `serde_json` escapes them ([`escape_into`]). (The
/// reason is written whole into `reason` first, then escaped in one
/// piece: escaping each piece `write_reason` writes costs more.) A test
/// checks the lines against the full reading's, which serialises
/// [`DecisionOut`].
fn write_decision(
    out: &mut Vec<u8>,
    d: &Decision<'_>,
    id: Id<'_>,
    reason: &mut String,
) -> Result<(), ()> {
    fn string(out: &mut Vec<u8>, s: &str) -> Result<(), ()> {
        out.push(b'"');
        escape_into(out, s)?;
        out.push(b'"');
        Ok(())
    }
    /// A number in decimal, as `serde_json` writes it. (Written by hand:
    /// the formatting machinery of `write!` costs more than the digits.)
    fn number(out: &mut Vec<u8>, mut n: u64) -> Result<(), ()> {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at = at.checked_sub(1).ok_or(())?;
            *digits.get_mut(at).ok_or(())? = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(digits.get(at..).ok_or(())?);
        Ok(())
    }
    reason.clear();
    d.write_reason(reason).map_err(|_| ())?;
    let head: &[u8] = match d.verdict {
        Verdict::Allow => b"{\"decision\":\"allow\"",
        Verdict::Ask => b"{\"decision\":\"ask\"",
        Verdict::Deny => b"{\"decision\":\"deny\"",
        Verdict::None => b"{\"decision\":\"none\"",
    };
    out.extend_from_slice(head);
    out.extend_from_slice(b",\"rule\":");
    match RuleOut::of(d) {
        None => out.extend_from_slice(b"null"),
        Some(r) => {
            out.extend_from_slice(b"{\"text\":");
            string(out, r.text)?;
            out.extend_from_slice(b",\"effect\":");
            string(out, r.effect)?;
            out.extend_from_slice(b",\"source\":");
            string(out, r.source)?;
            out.extend_from_slice(b",\"list\":");
            string(out, r.list)?;
            out.extend_from_slice(b",\"index\":");
            number(out, r.index as u64)?;
            out.push(b'}');
        }
    }
    out.extend_from_slice(b",\"reason\":");
    string(out, reason)?;
    out.extend_from_slice(b",\"id\":");
    match id {
        Id::Line(n) => number(out, n)?,
        Id::Text(t) => string(out, t)?,
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// True when `s` holds a byte JSON escapes in a string (as `serde_json`
/// writes strings: a control character, `"` or `\\`).
///
/// Eight bytes are tested at a time, as one `u64` (nearly every string
/// the batch writes has no such byte and is then copied as it is).
#[inline]
fn needs_escape(s: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTE: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASH: u64 = u64::from_ne_bytes([b'\\'; 8]);
    // The high bit of a byte of the result is set for some byte of `w`
    // below 0x20, or equal to `"` or `\\`, whenever there is one (the
    // usual test for a zero byte, `(x - 0x01…) & !x & 0x80…`, and for a
    // byte below n, `(x - n…) & !x & 0x80…`, exact as to whether any byte
    // is one).
    fn special(w: u64) -> u64 {
        let q = w ^ QUOTE;
        let b = w ^ BACKSLASH;
        ((w.wrapping_sub(ONES * 0x20) & !w)
            | (q.wrapping_sub(ONES) & !q)
            | (b.wrapping_sub(ONES) & !b))
            & HIGH
    }
    fn word(w: &[u8]) -> u64 {
        u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]))
    }
    if s.len() < 8 {
        return s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    }
    let mut words = s.chunks_exact(8);
    let mut any = 0;
    for w in &mut words {
        any |= special(word(w));
    }
    // The last eight bytes, overlapping the words before, cover the rest.
    if !words.remainder().is_empty() {
        any |= special(word(s.get(s.len() - 8..).unwrap_or_default()));
    }
    any != 0
}

/// Writes the contents of `s` as a JSON string (no quotes), escaped
/// exactly as `serde_json` escapes it: copied as it is when nothing needs
/// escaping, else through `serde_json` itself.
#[inline]
fn escape_into(out: &mut Vec<u8>, s: &str) -> Result<(), ()> {
    if !needs_escape(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
        return Ok(());
    }
    let start = out.len();
    serde_json::to_writer(&mut *out, s).map_err(|_| ())?;
    // Take off the quotes `serde_json` put around it.
    if out.len() < start + 2 || out.pop() != Some(b'"') || out.get(start) != Some(&b'"') {
        return Err(());
    }
    out.remove(start);
    Ok(())
}

/// A string of a line, borrowed from the line unless it holds escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'a>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Any JSON value, checked exactly as reading it into a
/// [`serde_json::Value`] checks it (strings' escapes, numbers' range,
/// nesting depth), then dropped. (`serde::de::IgnoredAny` checks less: a
/// line it accepts could be one the full reading rejects.)
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_none<E: de::Error>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Skip, D::Error> {
                Skip::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Skip)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
                while map.next_key::<Skip>()?.is_some() {
                    map.next_value::<Skip>()?;
                }
                Ok(Skip)
            }
        }
        d.deserialize_any(V)
    }
}

/// An input field's value: a string borrowed from the line where it can
/// be, any other value as `serde_json` reads it.
enum Field<'a> {
    Str(Text<'a>),
    Other(Value),
}

impl Field<'_> {
    fn into_value(self) -> Value {
        match self {
            Field::Str(t) => Value::String(t.0.into_owned()),
            Field::Other(v) => v,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field<'a>, D::Error> {
        struct V;
        // Every value but a string is built as `serde_json::Value`'s own
        // reading builds it.
        impl<'de> Visitor<'de> for V {
            type Value = Field<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Text(Cow::Borrowed(s))))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Field<'de>, E> {
                Ok(Field::Str(Text(Cow::Owned(s.to_string()))))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Field<'de>, E> {
                Ok(Field::Str(Text(Cow::Owned(s))))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Field<'de>, E> {
                Ok(Field::Other(Value::Bool(b)))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Field<'de>, E> {
                Ok(Field::Other(Value::Number(n.into())))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Field<'de>, E> {
                Ok(Field::Other(Value::Number(n.into())))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Field<'de>, E> {
                Ok(Field::Other(
                    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Field<'de>, E> {
                Ok(Field::Other(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Field<'de>, E> {
                Ok(Field::Other(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Field<'de>, D::Error> {
                Field::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Field::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Field::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads a call's input object into the map of the call before, reusing
/// its memory: while the keys come in the order that map holds them (a
/// call of the same shape), each value replaces the one there (a
/// string's text copied into the string there); from the first key that
/// differs, the map keeps only the entries before it and takes the rest
/// as `serde_json` reads a map (a key given twice: the last value, at the
/// first place).
struct InputSeed<'m> {
    map: &'m mut Map<String, Value>,
}

/// The longest line whose input map is kept for the next call's.
const MAX_KEPT_INPUT: usize = 64 << 10;

/// Keeps the first `n` entries of `map`.
fn keep_first(map: &mut Map<String, Value>, n: usize) {
    if map.len() > n {
        let mut kept = 0;
        map.retain(|_, _| {
            kept += 1;
            kept <= n
        });
    }
}

impl<'de> DeserializeSeed<'de> for InputSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        struct V<'m> {
            map: &'m mut Map<String, Value>,
        }
        impl<'de> Visitor<'de> for V<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a call input as a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
                let map = self.map;
                let mut i = 0;
                let mut same = true;
                while let Some(key) = access.next_key::<Text<'de>>()? {
                    let mut value = Some(access.next_value::<Field<'de>>()?);
                    same = same
                        && match map.iter_mut().nth(i) {
                            Some((k, slot)) if *k == *key.0 => {
                                match (slot, value.take()) {
                                    (Value::String(s), Some(Field::Str(t))) => {
                                        s.clear();
                                        s.push_str(&t.0);
                                    }
                                    (slot, v) => *slot = v.map_or(Value::Null, Field::into_value),
                                }
                                true
                            }
                            _ => false,
                        };
                    if let Some(v) = value {
                        keep_first(map, i);
                        map.insert(key.0.into_owned(), v.into_value());
                    }
                    i += 1;
                }
                if same {
                    keep_first(map, i);
                }
                Ok(())
            }
        }
        d.deserialize_map(V { map: self.map })
    }
}

/// The keys of a call line the batch reads, in one pass over the line
/// and borrowed from it; every other key is checked and skipped.
///
/// Only the common line is read this way: a known key that is null, of
/// another type than the common one, or given twice fails the read, and
/// the line is then read in full (as a [`serde_json::Value`]), which
/// gives such lines their exact meaning or error.
#[derive(Default)]
struct Line<'a> {
    tool: Option<Text<'a>>,
    tool_name: Option<Text<'a>>,
    /// `input` was given: read into the map [`LineSeed`] holds.
    input: Option<()>,
    /// `tool_input` was given, likewise.
    tool_input: Option<()>,
    tool_use_id: Option<Text<'a>>,
    cwd: Option<Text<'a>>,
    project_dir: Option<Text<'a>>,
    home: Option<Text<'a>>,
    additional_directories: Option<Vec<Text<'a>>>,
    mode: Option<Text<'a>>,
    permission_mode: Option<Text<'a>>,
}

/// Reads a [`Line`], its call's input into `input` (see [`InputSeed`]). A
/// line with both `input` and `tool_input` fails the read.
struct LineSeed<'m> {
    input: &'m mut Map<String, Value>,
}

impl<'de, 'm> DeserializeSeed<'de> for LineSeed<'m> {
    type Value = Line<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Line<'de>, D::Error> {
        struct V<'m> {
            input: &'m mut Map<String, Value>,
        }
        /// Fills a field once: a key given twice is for the full reading.
        fn put<T, E: de::Error>(slot: &mut Option<T>, v: T) -> Result<(), E> {
            if slot.is_some() {
                return Err(E::custom("a key given twice"));
            }
            *slot = Some(v);
            Ok(())
        }
        impl<'de> Visitor<'de> for V<'_> {
            type Value = Line<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a call as a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line<'de>, A::Error> {
                let mut l = Line::default();
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    match &*key.0 {
                        "tool" => put(&mut l.tool, map.next_value()?)?,
                        "tool_name" => put(&mut l.tool_name, map.next_value()?)?,
                        "input" | "tool_input" => {
                            if l.input.is_some() || l.tool_input.is_some() {
                                return Err(de::Error::custom("two inputs"));
                            }
                            map.next_value_seed(InputSeed {
                                map: &mut *self.input,
                            })?;
                            if &*key.0 == "input" {
                                l.input = Some(());
                            } else {
                                l.tool_input = Some(());
                            }
                        }
                        "tool_use_id" => put(&mut l.tool_use_id, map.next_value()?)?,
                        "cwd" => put(&mut l.cwd, map.next_value()?)?,
                        "project_dir" => put(&mut l.project_dir, map.next_value()?)?,
                        "home" => put(&mut l.home, map.next_value()?)?,
                        "additional_directories" => {
                            put(&mut l.additional_directories, map.next_value()?)?;
                        }
                        "mode" => put(&mut l.mode, map.next_value()?)?,
                        "permission_mode" => put(&mut l.permission_mode, map.next_value()?)?,
                        _ => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(l)
            }
        }
        d.deserialize_map(V { input: self.input })
    }
}

/// Decides a common line read as a [`Line`]: `None` when the line is not
/// one (see [`Line`]) or its call or context is malformed, for the full
/// reading to give its error. The id is the line's `tool_use_id`, if any.
///
/// `scratch` is the input map of the call before, its memory reused for
/// this call's input (see [`InputSeed`]); it is kept only after lines of
/// at most [`MAX_KEPT_INPUT`] bytes, so that a huge line's strings are not
/// held on to.
fn decide_common<'l, 'e>(
    raw: &'l [u8],
    defaults: &Defaults,
    prepared: Option<&EvalContext>,
    evaluator: &'e Evaluator,
    scratch: &mut Map<String, Value>,
) -> Option<(Decision<'e>, Option<Text<'l>>)> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    // The line is checked as UTF-8 once, whole, and read as text: reading
    // bytes, `serde_json` would check each string on its own, which costs
    // more than the one pass. (A line that is not UTF-8 is left to the
    // full reading, which words the error.)
    let line_text = std::str::from_utf8(raw).ok()?;
    let mut de = serde_json::Deserializer::from_str(line_text);
    let line: Line<'l> = LineSeed { input: scratch }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    // The input read must be the call's: `input` with `tool`,
    // `tool_input` with `tool_name`.
    let (tool, read, other) = match (line.tool, line.tool_name) {
        (Some(t), None) => (t, line.input, line.tool_input),
        (None, Some(t)) => (t, line.tool_input, line.input),
        _ => return None,
    };
    match (read, other) {
        (Some(()), None) => {}
        (None, None) => scratch.clear(),
        _ => return None,
    }
    let call = ToolCall::new(&tool.0, std::mem::take(scratch)).ok()?;
    fn text<'t>(t: &'t Option<Text<'_>>) -> Option<&'t str> {
        t.as_ref().map(|t| &*t.0)
    }
    let keys = LineKeys {
        cwd: text(&line.cwd),
        project_dir: text(&line.project_dir),
        home: text(&line.home),
        dirs: line
            .additional_directories
            .as_ref()
            .map(|ds| ds.iter().map(|d| &*d.0).collect()),
        mode: text(&line.mode),
        permission_mode: text(&line.permission_mode),
    };
    let own;
    let ctx = match prepared {
        Some(base) if keys.is_empty() => base,
        _ => {
            own = keys.context(defaults, evaluator).ok()?;
            &own
        }
    };
    let d = evaluator.decide(&call, ctx);
    if raw.len() <= MAX_KEPT_INPUT {
        *scratch = call.input;
    }
    Some((d.ok()?, line.tool_use_id))
}

/// One line's result from the full reading.
struct Outcome {
    line: String,
    verdict: Option<Verdict>,
    /// The deciding rule's position in policy order.
    rule: Option<usize>,
}

/// Evaluates one input line (1-based `n`) to its output line, reading it
/// in full: the reading of every line [`decide_common`] leaves, and the
/// one that words the errors.
///
/// `prepared` is the context of a line with no context keys of its own,
/// built once per run.
fn eval_line_full(
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
        let plain = !obj.keys().any(|k| KEYS.contains(&k.as_str()));
        let (call, ctx) = match prepared {
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
            .decide(&call, ctx)
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

/// How a batch reads its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    /// The common line in one pass ([`decide_common`]), others in full.
    Common,
    /// Every line in full (debug builds, for the test that the two agree).
    Full,
}

/// The verdicts in `--summary` order.
const VERDICTS: [Verdict; 4] = [Verdict::Allow, Verdict::Ask, Verdict::Deny, Verdict::None];

/// The output of consecutive lines of a chunk, written by one thread;
/// reused (buffers and all) chunk after chunk.
#[derive(Default)]
struct Block {
    /// The output lines, newlines included.
    out: Vec<u8>,
    /// Scratch space for a decision's reason.
    reason: String,
    /// The input map of the block's last call, reused for the next.
    input: Map<String, Value>,
    /// Lines per verdict, in [`VERDICTS`] order.
    verdicts: [u64; 4],
    /// Error lines.
    errors: u64,
    /// The deciding rule of each decided line that had one.
    hits: Vec<usize>,
}

impl Block {
    fn clear(&mut self) {
        // A block that once held a huge line gives the memory back.
        if self.out.capacity() > MAX_KEPT {
            self.out = Vec::new();
        }
        if self.reason.capacity() > MAX_KEPT {
            self.reason = String::new();
        }
        self.out.clear();
        self.verdicts = [0; 4];
        self.errors = 0;
        self.hits.clear();
    }

    fn count(&mut self, verdict: Option<Verdict>, rule: Option<usize>) {
        match verdict.and_then(|v| VERDICTS.iter().position(|&w| w == v)) {
            Some(i) => {
                if let Some(slot) = self.verdicts.get_mut(i) {
                    *slot += 1;
                }
            }
            None => self.errors += 1,
        }
        self.hits.extend(rule);
    }

    /// Evaluates line `n` and writes its output line.
    fn line(&mut self, raw: &[u8], n: u64, run: &Run<'_>) {
        let start = self.out.len();
        // A bug that panics on one line costs that line, never the batch:
        // the line gets an error (no verdict, so never an allow) and the
        // rest go on.
        let done = catch_unwind(AssertUnwindSafe(|| {
            if run.panic_on == Some(n) {
                panic!("test panic requested by TOOLGATE_EVAL_TEST_PANIC={n}");
            }
            if run.reading == Reading::Common {
                if let Some((d, id)) = decide_common(
                    raw,
                    run.defaults,
                    run.prepared,
                    run.evaluator,
                    &mut self.input,
                ) {
                    let id = id.as_ref().map_or(Id::Line(n), |t| Id::Text(&t.0));
                    if write_decision(&mut self.out, &d, id, &mut self.reason).is_ok() {
                        return (Some(d.verdict), d.rule.map(|r| r.index));
                    }
                    self.out.truncate(start);
                }
            }
            let o = eval_line_full(raw, n, run.defaults, run.prepared, run.evaluator);
            self.out.extend_from_slice(o.line.as_bytes());
            self.out.push(b'\n');
            (o.verdict, o.rule)
        }));
        let (verdict, rule) = done.unwrap_or_else(|_| {
            self.out.truncate(start);
            let o = internal_error(raw, n);
            self.out.extend_from_slice(o.line.as_bytes());
            self.out.push(b'\n');
            (None, None)
        });
        self.count(verdict, rule);
    }
}

/// What every line of a run shares (read only).
struct Run<'a> {
    defaults: &'a Defaults,
    prepared: Option<&'a EvalContext>,
    evaluator: &'a Evaluator,
    reading: Reading,
    /// Debug builds only: the line to panic on.
    panic_on: Option<u64>,
}

/// Lines per [`Block`]: the unit of work a thread takes.
const BLOCK: usize = 128;

/// Bytes of input after which a chunk ends even short of [`CHUNK`] lines.
const CHUNK_BYTES: usize = 8 << 20;

/// Buffers grown past this by a huge line are given back, not kept.
const MAX_KEPT: usize = 4 * CHUNK_BYTES;

/// Up to [`CHUNK`] input lines, in one buffer.
#[derive(Default)]
struct Chunk {
    data: Vec<u8>,
    /// Each line's span in `data`, its newline left out.
    lines: Vec<(usize, usize)>,
}

impl Chunk {
    /// Reads the next lines (at most [`CHUNK`], and no more once
    /// [`CHUNK_BYTES`] are read); true at the end of the input.
    ///
    /// The reader's buffer is taken whole: its complete lines are found
    /// with `memchr` (through `bstr`) and copied in one piece, rather than
    /// line by line.
    fn read(&mut self, reader: &mut impl BufRead) -> io::Result<bool> {
        use bstr::ByteSlice as _;
        if self.data.capacity() > MAX_KEPT {
            self.data = Vec::new();
        }
        self.data.clear();
        self.lines.clear();
        // Where the line being read starts in `data`.
        let mut start = 0;
        loop {
            let buf = reader.fill_buf()?;
            if buf.is_empty() {
                // The last line may lack its newline.
                if start < self.data.len() {
                    self.lines.push((start, self.data.len()));
                }
                return Ok(true);
            }
            let base = self.data.len();
            let mut at = 0;
            let mut full = false;
            while let Some(nl) = buf.get(at..).and_then(|rest| rest.find_byte(b'\n')) {
                let end = base + at + nl;
                self.lines.push((start, end));
                start = end + 1;
                at += nl + 1;
                if self.lines.len() >= CHUNK || start >= CHUNK_BYTES {
                    full = true;
                    break;
                }
            }
            let used = if full { at } else { buf.len() };
            self.data
                .extend_from_slice(buf.get(..used).unwrap_or_default());
            reader.consume(used);
            if full {
                return Ok(false);
            }
        }
    }

    fn clear(&mut self) {
        self.data.clear();
        self.lines.clear();
    }

    /// Evaluates every line (the first is line `first`) into `blocks`, one
    /// block per [`BLOCK`] lines, in parallel.
    fn eval(&self, first: u64, blocks: &mut [Block], run: &Run<'_>) {
        // Blocks are handed out one by one (`with_max_len`): rayon's default
        // splitting would run runs of blocks on one thread, and at the end
        // of the chunk the other threads would wait for that run.
        self.lines
            .par_chunks(BLOCK)
            .zip(blocks.par_iter_mut())
            .enumerate()
            .with_max_len(1)
            .for_each(|(b, (lines, block))| {
                block.clear();
                let from = first + (b * BLOCK) as u64;
                for (n, &(start, end)) in (from..).zip(lines) {
                    block.line(self.data.get(start..end).unwrap_or_default(), n, run);
                }
            });
    }
}

/// What a batch decided: the counts `--summary` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Lines read (each gave one output line).
    pub lines: u64,
    /// Lines that gave an error line.
    pub errors: u64,
    /// Lines decided allow, ask, deny and none, in that order.
    pub verdicts: [u64; 4],
    /// Calls decided by each rule, by the rule's position in policy order.
    pub hits: Vec<u64>,
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
    let totals = batch(
        input,
        io::stdout().lock(),
        evaluator,
        defaults,
        bar.as_ref(),
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if summary {
        eprint!("{}", render_summary(&totals, policy));
    }
    Ok(totals.errors > 0)
}

/// Decides every call line of `input` (SPEC §10.2) on the current rayon
/// pool and writes one output line per input line to `output`, in input
/// order: `toolgate eval` without its progress bar and summary. Memory
/// stays flat however many lines there are. An error only when reading or
/// writing fails (a line that cannot be read gives an error line).
pub fn eval_batch(
    input: impl Read,
    output: impl Write,
    evaluator: &Evaluator,
    defaults: &Defaults,
) -> io::Result<Totals> {
    batch(input, output, evaluator, defaults, None)
}

/// [`eval_batch`], counting the lines on `bar`.
fn batch(
    input: impl Read,
    output: impl Write,
    evaluator: &Evaluator,
    defaults: &Defaults,
    bar: Option<&indicatif::ProgressBar>,
) -> io::Result<Totals> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut out = BufWriter::with_capacity(1 << 16, output);
    let mut sum = Totals {
        hits: vec![0; evaluator.policy().rule_count()],
        ..Totals::default()
    };
    let prepared = LineKeys::default().context(defaults, evaluator).ok();
    // Debug builds only: the end-to-end tests of a panicking line and of
    // the two readings agreeing.
    let debug_var = |name: &str| {
        if cfg!(debug_assertions) {
            std::env::var(name).ok()
        } else {
            None
        }
    };
    let run = Run {
        defaults,
        prepared: prepared.as_ref(),
        evaluator,
        reading: match debug_var("TOOLGATE_EVAL_TEST_FULL").as_deref() {
            Some("1") => Reading::Full,
            _ => Reading::Common,
        },
        panic_on: debug_var("TOOLGATE_EVAL_TEST_PANIC").and_then(|s| s.parse().ok()),
    };
    // Three stages overlap: while one chunk is evaluated (by the pool's
    // threads), this thread writes the output of the one before and reads
    // the next. Two chunks and their outputs are in flight at most, in
    // buffers reused from chunk to chunk: memory stays flat.
    let mut chunk = Chunk::default();
    let mut spare = Chunk::default();
    let mut eof = chunk.read(&mut reader)?;
    let mut blocks: Vec<Block> = Vec::new();
    let mut done: Vec<Block> = Vec::new();
    let mut done_len = 0;
    let mut first = 1u64;
    loop {
        let n_blocks = chunk.lines.len().div_ceil(BLOCK);
        if blocks.len() < n_blocks {
            blocks.resize_with(n_blocks, Block::default);
        }
        let next = rayon::in_place_scope(|scope| {
            let (chunk, blocks, run) = (&chunk, &mut blocks[..n_blocks], &run);
            scope.spawn(move |_| chunk.eval(first, blocks, run));
            write_blocks(&mut out, done.get(..done_len).unwrap_or_default(), &mut sum)?;
            if eof {
                return Ok(true);
            }
            spare.read(&mut reader)
        });
        let next_eof = next?;
        std::mem::swap(&mut blocks, &mut done);
        done_len = n_blocks;
        first += chunk.lines.len() as u64;
        if let Some(b) = bar {
            b.inc(chunk.lines.len() as u64);
        }
        if chunk.lines.is_empty() {
            break;
        }
        std::mem::swap(&mut chunk, &mut spare);
        if eof {
            chunk.clear();
        }
        eof = next_eof;
    }
    write_blocks(&mut out, done.get(..done_len).unwrap_or_default(), &mut sum)?;
    out.flush()?;
    Ok(sum)
}

/// Writes a chunk's output in order and counts its lines.
fn write_blocks(out: &mut impl Write, blocks: &[Block], sum: &mut Totals) -> io::Result<()> {
    for b in blocks {
        out.write_all(&b.out)?;
        sum.errors += b.errors;
        sum.lines += b.errors + b.verdicts.iter().sum::<u64>();
        for (s, n) in sum.verdicts.iter_mut().zip(b.verdicts) {
            *s += n;
        }
        for &i in &b.hits {
            if let Some(slot) = sum.hits.get_mut(i) {
                *slot += 1;
            }
        }
    }
    Ok(())
}

/// The `--summary` text.
fn render_summary(sum: &Totals, policy: &LoadedPolicy) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "{} calls", sum.lines);
    for (v, n) in VERDICTS.iter().zip(sum.verdicts) {
        let _ = writeln!(s, "  {:<6} {n}", v.as_str());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Effect;

    /// Every line of the input comes out of the chunks, in order, as
    /// `read_until` splits them, whatever the reader's buffer size (lines
    /// cross buffer ends), and a chunk stops at [`CHUNK`] lines.
    #[test]
    fn chunks_split_lines_as_read_until_does() {
        let long = "y".repeat(300);
        let inputs: Vec<String> = vec![
            String::new(),
            "\n".into(),
            "\n\n".into(),
            "a".into(),
            "a\n".into(),
            "a\nb".into(),
            "a\r\n\nbc\n\r\nd".into(),
            format!("{long}\nx\n{long}"),
            (0..CHUNK + 5).map(|i| format!("{i}\n")).collect(),
            (0..2 * CHUNK).map(|_| "\n").collect(),
        ];
        let mut failures = Vec::new();
        for input in &inputs {
            let mut want: Vec<&[u8]> = input.as_bytes().split(|&b| b == b'\n').collect();
            if input.is_empty() || input.ends_with('\n') {
                want.pop();
            }
            for cap in [1, 2, 3, 7, 64, 1 << 16] {
                let mut reader = BufReader::with_capacity(cap, input.as_bytes());
                let mut chunk = Chunk::default();
                let mut got: Vec<Vec<u8>> = Vec::new();
                let mut sizes = Vec::new();
                loop {
                    let eof = chunk.read(&mut reader).unwrap();
                    sizes.push(chunk.lines.len());
                    for &(a, b) in &chunk.lines {
                        got.push(chunk.data[a..b].to_vec());
                    }
                    if eof {
                        break;
                    }
                }
                if got != want || sizes.iter().any(|&n| n > CHUNK) {
                    failures.push(format!(
                        "{:?}… (buffer {cap}): {} lines in chunks of {sizes:?}, want {}",
                        input.get(..20).unwrap_or(input),
                        got.len(),
                        want.len()
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// A chunk ends at the first line end past [`CHUNK_BYTES`].
    #[test]
    fn a_chunk_stops_after_its_bytes() {
        let line = "z".repeat(1 << 20);
        let input: String = (0..10).map(|_| format!("{line}\n")).collect();
        let mut reader = BufReader::new(input.as_bytes());
        let mut chunk = Chunk::default();
        assert!(!chunk.read(&mut reader).unwrap());
        assert_eq!(chunk.lines.len(), CHUNK_BYTES / (line.len() + 1) + 1);
        let first = chunk.lines.len();
        assert!(chunk.read(&mut reader).unwrap());
        assert_eq!(first + chunk.lines.len(), 10);
    }

    /// The word-at-a-time test finds every byte JSON escapes, at every
    /// position of a word and of the padded last word, and nothing else.
    #[test]
    fn needs_escape_finds_exactly_the_bytes_json_escapes() {
        let escaped = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        let mut failures = Vec::new();
        for len in 1..=19 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'x'; len];
                    if let Some(slot) = s.get_mut(at) {
                        *slot = b;
                    }
                    // Neighbours that could carry a borrow into the byte.
                    if at > 0 {
                        s[at - 1] = 0x20;
                    }
                    if needs_escape(&s) != escaped(b) {
                        failures.push((len, at, b));
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "wrong for (len, at, byte): {failures:?}"
        );
        assert!(!needs_escape(b""));
        assert!(!needs_escape(
            "caf\u{e9} \u{1F600} ~\x7f !#[]{}/".as_bytes()
        ));
    }

    /// `escape_into` writes what `serde_json` writes between the quotes.
    #[test]
    fn escape_into_writes_serde_json_strings() {
        let cases = [
            "",
            "plain text, long enough for several words",
            "a\"b",
            "back\\slash",
            "\u{0}\u{1}\u{1f}\t\n\r\u{8}\u{c}",
            "caf\u{e9} \u{1F600}",
            "\u{7f}",
            "x\"",
            "\"\"\"\"\"\"\"\"\"",
        ];
        for s in cases {
            let mut out = b"prefix".to_vec();
            escape_into(&mut out, s).unwrap();
            let want = format!("prefix{}", serde_json::to_string(s).unwrap());
            let got = format!(
                "prefix\"{}\"",
                String::from_utf8(out[6..].to_vec()).unwrap()
            );
            assert_eq!(got, want, "{s:?}");
        }
    }

    /// The one-pass reading takes the common lines (so the test that it
    /// agrees with the full reading compares two readings, not one) and
    /// leaves the others to the full reading.
    #[test]
    fn the_one_pass_reading_takes_common_lines_and_leaves_the_rest() {
        let mut policy = LoadedPolicy::new();
        policy.add_rule(Effect::Allow, "Bash(git *)").unwrap();
        let evaluator = Evaluator::new(&policy).unwrap();
        let defaults = Defaults::new(&ContextArgs {
            cwd: Some("/w".into()),
            ..ContextArgs::default()
        })
        .unwrap();
        let prepared = LineKeys::default().context(&defaults, &evaluator).ok();
        let take = |line: &str| {
            decide_common(
                line.as_bytes(),
                &defaults,
                prepared.as_ref(),
                &evaluator,
                &mut Map::new(),
            )
            .map(|(d, id)| (d.verdict, id.map(|t| t.0.into_owned())))
        };
        let common = [
            (r#"{"tool":"Bash","input":{"command":"git log"}}"#, None),
            (
                r#"{"tool_name":"Bash","tool_input":{"command":"git log"},"tool_use_id":"t\"1","session_id":"s","x":{"y":[1,2.5,null]}}"#,
                Some("t\"1"),
            ),
            (
                r#"{"tool":"Bash","input":{"command":"git log"},"cwd":"/a","project_dir":"/a","home":"/h","additional_directories":["/b"],"mode":"plan"}"#,
                None,
            ),
            (
                "{\"t\\u006fol\":\"Bash\",\"input\":{\"command\":\"git log\"}}\r",
                None,
            ),
        ];
        for (line, id) in common {
            let got = take(line);
            assert!(got.is_some(), "not taken: {line}");
            assert_eq!(got.and_then(|g| g.1).as_deref(), id, "{line}");
        }
        assert_eq!(
            take(r#"{"tool":"Bash","input":{"command":"git log"}}"#).map(|g| g.0),
            Some(Verdict::Allow)
        );
        let left = [
            r#"{"tool":"Bash","tool":"Read","input":{"command":"git log"}}"#,
            r#"{"tool":null,"tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            r#"{"tool":"Bash","input":{"command":"ls"},"tool_use_id":7}"#,
            r#"{"tool":"Bash","input":{"command":"ls"},"cwd":null}"#,
            r#"{"tool":"Bash","input":{"command":"ls"},"x":"\ud800"}"#,
            r#"{"tool":"Bash","input":{"command":7}}"#,
            r#"{"tool":"Bash","input":{"command":"ls"},"mode":"sideways"}"#,
            r#"{"tool":"Bash","input":{"command":"ls"}} x"#,
            "[1]",
            "",
        ];
        for line in left {
            assert!(take(line).is_none(), "taken: {line}");
        }
    }
}
