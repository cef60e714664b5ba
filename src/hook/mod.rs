//! Hook adapters: each harness's hook input read into a [`ToolCall`] with
//! its context, and a decision written as that harness's answer (SPEC §11).
//!
//! This module only translates JSON; deciding is [`crate::eval`]'s job, and
//! running a hook process (time budget, panics, policy loading) is the
//! command line's.
//!
//! Every adapter fails closed: input it cannot read is an [`Error`], which
//! the caller turns into the harness's refusal.
//!
//! [`ToolCall`]: crate::ToolCall

use std::io::Read;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};
pub(crate) use crate::eval::call::json_type;
use crate::eval::{EvalContext, Evaluator, Verdict};

pub mod claude;
pub mod codex;
pub mod cursor;
pub mod redact;

/// The most hook input read (8 MiB, as tuff reads): more is an error.
pub const MAX_INPUT: u64 = 8 * 1024 * 1024;

/// Reads all of `r`, at most [`MAX_INPUT`] bytes: longer input is an error,
/// not a truncated call.
pub fn read_input(r: impl Read) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    r.take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::new(ErrorKind::Call, format!("cannot read the hook input: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(Error::new(
            ErrorKind::Call,
            format!("the hook input is longer than {MAX_INPUT} bytes"),
        ));
    }
    Ok(buf)
}

/// Parses hook input bytes as one JSON object.
pub(crate) fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, Error> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorKind::Call,
            format!("the hook input is not valid json: {e}"),
        )
    })?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input must be a json object, not {}",
                json_type(&other)
            ),
        )),
    }
}

/// A required string field of hook input.
pub(crate) fn required_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, Error> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(Error::new(
            ErrorKind::Call,
            format!("the hook input has no {key} field"),
        )),
        Some(v) => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input's {key} must be a string, not {}",
                json_type(v)
            ),
        )),
    }
}

/// An optional string field of hook input (present with another type is an
/// error).
pub(crate) fn optional_str<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(obj, key).map(Some),
    }
}

/// A required object field of hook input.
pub(crate) fn required_object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a Map<String, Value>, Error> {
    match obj.get(key) {
        Some(Value::Object(m)) => Ok(m),
        None => Err(Error::new(
            ErrorKind::Call,
            format!("the hook input has no {key} field"),
        )),
        Some(v) => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input's {key} must be an object, not {}",
                json_type(v)
            ),
        )),
    }
}

/// A harness a hook answers, with its event (Cursor has two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code's `PreToolUse` hook.
    Claude,
    /// OpenAI Codex's `PreToolUse` hook (it cannot ask: ask becomes deny).
    Codex,
    /// Cursor's hook for one event.
    Cursor(cursor::Event),
}

/// What a hook writes: its answer on stdout (if any), why it refused on
/// stderr (if it did), and its exit code (0, or 2 for a refusal).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The answer, one JSON value (`None`: print nothing).
    pub stdout: Option<Value>,
    /// The refusal's reason (`None` on a decision).
    pub stderr: Option<String>,
    /// The exit code.
    pub code: u8,
}

/// The directories a hook call is decided in, beyond its input's `cwd`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dirs<'a> {
    /// The project directory (`None`: Cursor's first workspace root, or
    /// the input's `cwd`).
    pub project: Option<&'a str>,
    /// The home directory, if known.
    pub home: Option<&'a str>,
}

/// Answers one hook call: `bytes` as read from the hook's stdin, decided by
/// `evaluator` in `dirs`, written in the harness's terms. Input that cannot
/// be read, or a call that cannot be decided, gives the harness's refusal
/// (exit code 2). Paths are taken as written (symlinks are not followed);
/// modes are not resolved, and an allow is withheld in a permission mode
/// that may not answer it (SPEC §9.3, §11).
///
/// ```
/// use toolgate::eval::Evaluator;
/// use toolgate::hook::{Dirs, Harness, respond};
/// use toolgate::policy::LoadedPolicy;
/// use toolgate::Effect;
///
/// let mut policy = LoadedPolicy::new();
/// policy.add_rule(Effect::Deny, "Bash(rm *)")?;
/// let eval = Evaluator::new(&policy)?;
/// let r = respond(Harness::Claude, br#"{"cwd": "/p", "tool_name": "Bash",
///     "tool_input": {"command": "rm -rf x"}}"#, &eval, Dirs::default());
/// let answer = r.stdout.unwrap();
/// assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
/// assert_eq!(r.code, 0);
/// assert_eq!(respond(Harness::Claude, b"{", &eval, Dirs::default()).code, 2);
/// # Ok::<(), toolgate::Error>(())
/// ```
pub fn respond(harness: Harness, bytes: &[u8], evaluator: &Evaluator, dirs: Dirs) -> Reply {
    let decided = decide(harness, bytes, evaluator, dirs);
    match (harness, decided) {
        (Harness::Claude, Ok((verdict, reason))) => Reply {
            stdout: claude::answer(verdict, &format!("toolgate: {reason}")),
            stderr: None,
            code: 0,
        },
        (Harness::Codex, Ok((verdict, reason))) => Reply {
            stdout: codex::answer(verdict, &format!("toolgate: {reason}")),
            stderr: None,
            code: 0,
        },
        (Harness::Cursor(event), Ok((verdict, reason))) => Reply {
            stdout: Some(cursor::answer(
                verdict,
                &format!("toolgate: {reason}"),
                event,
            )),
            stderr: None,
            code: 0,
        },
        (Harness::Claude | Harness::Codex, Err(e)) => {
            let why = e.to_string();
            Reply {
                stdout: Some(claude::refusal(&why)),
                stderr: Some(why),
                code: 2,
            }
        }
        (Harness::Cursor(_), Err(e)) => {
            let why = e.to_string();
            Reply {
                stdout: Some(cursor::refusal(&why)),
                stderr: Some(why),
                code: 2,
            }
        }
    }
}

/// The verdict and reason of one hook call, or why it cannot be decided.
fn decide(
    harness: Harness,
    bytes: &[u8],
    evaluator: &Evaluator,
    dirs: Dirs,
) -> Result<(Verdict, String), Error> {
    let (call, cwd, project, may_allow) = match harness {
        Harness::Claude | Harness::Codex => {
            let i = claude::Input::parse(bytes)?;
            let may = i.may_allow();
            let project = dirs.project.unwrap_or(&i.cwd).to_string();
            (i.call, i.cwd, project, may)
        }
        Harness::Cursor(event) => {
            let i = cursor::Input::parse(bytes, event)?;
            let project = dirs.project.unwrap_or(&i.project).to_string();
            (i.call, i.cwd, project, true)
        }
    };
    let mut ctx = EvalContext::new(&cwd)?.with_project_dir(&project)?;
    if let Some(home) = dirs.home {
        ctx = ctx.with_home(home)?;
    }
    let ctx = evaluator.with_policy_dirs(ctx)?;
    let d = evaluator.decide(&call, &ctx)?;
    let reason = d.reason();
    if d.verdict == Verdict::Allow && !may_allow {
        return Ok((
            Verdict::None,
            format!("{reason}; withheld in this permission mode"),
        ));
    }
    Ok((d.verdict, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_capped() {
        let big = vec![b' '; MAX_INPUT as usize + 1];
        assert!(read_input(&big[..]).is_err());
        let ok = [b' '; 10];
        assert_eq!(read_input(&ok[..]).unwrap().len(), 10);
    }

    #[test]
    fn fields_have_types() {
        let m = parse_object(br#"{"a": "x", "b": 1, "c": {}}"#).unwrap();
        assert_eq!(required_str(&m, "a").unwrap(), "x");
        assert!(required_str(&m, "b").is_err());
        assert!(required_str(&m, "z").is_err());
        assert_eq!(optional_str(&m, "z").unwrap(), None);
        assert!(optional_str(&m, "b").is_err());
        assert!(required_object(&m, "c").is_ok());
        assert!(required_object(&m, "a").is_err());
        assert!(parse_object(b"[1]").is_err());
        assert!(parse_object(b"{").is_err());
    }
}
