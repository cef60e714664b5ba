//! Cursor's `beforeShellExecution` and `beforeReadFile` hooks (SPEC §11).
//!
//! Input on stdin: the common fields (`hook_event_name`,
//! `conversation_id`, `generation_id`, `workspace_roots`) and the event's
//! own: `command` and `cwd` for `beforeShellExecution`, `file_path` (and
//! `content`, ignored) for `beforeReadFile`. The working directory is
//! `cwd`, else the first workspace root; the project directory is the
//! workspace root holding it, else the first root, else the working
//! directory.
//!
//! Output, always JSON with exit code 0: `{"permission": "allow" | "deny" |
//! "ask", "user_message"?, "agent_message"?}`. No match answers allow, as
//! tuff does (Cursor's own approval is separate). `beforeReadFile` cannot
//! ask, so ask answers deny there. A refusal is a deny with exit code 2.
//!
//! `beforeMCPExecution` is not answered: its input names the tool but not
//! its server, so rules on `mcp__server__tool` could not be matched.

use serde_json::{Value, json};

use super::{json_type, optional_str, parse_object, required_str};
use crate::error::{Error, ErrorKind};
use crate::eval::Verdict;
use crate::eval::call::ToolCall;

/// The Cursor hook events toolgate answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `beforeShellExecution`: a shell command (a `Bash` call).
    BeforeShellExecution,
    /// `beforeReadFile`: a file read (a `Read` call); cannot ask.
    BeforeReadFile,
}

impl Event {
    /// The event's name as Cursor writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::BeforeShellExecution => "beforeShellExecution",
            Event::BeforeReadFile => "beforeReadFile",
        }
    }

    /// Whether the event can answer ask.
    pub fn can_ask(self) -> bool {
        self == Event::BeforeShellExecution
    }
}

/// One Cursor hook input, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The call: `Bash` with `command`, or `Read` with `file_path`.
    pub call: ToolCall,
    /// The working directory (absolute).
    pub cwd: String,
    /// The project directory (absolute).
    pub project: String,
    /// `conversation_id`, if any.
    pub conversation_id: Option<String>,
    /// `generation_id`, if any.
    pub generation_id: Option<String>,
}

fn absolute<'a>(what: &str, p: &'a str) -> Result<&'a str, Error> {
    if p.starts_with('/') {
        Ok(p)
    } else {
        Err(Error::new(
            ErrorKind::Call,
            format!("the hook input's {what} {p:?} is not an absolute path"),
        ))
    }
}

impl Input {
    /// Reads the input of `event`.
    ///
    /// ```
    /// use toolgate::hook::cursor::{Event, Input};
    /// let i = Input::parse(br#"{"hook_event_name": "beforeShellExecution",
    ///     "workspace_roots": ["/p"], "command": "ls", "cwd": "/p/src"}"#,
    ///     Event::BeforeShellExecution).unwrap();
    /// assert_eq!((i.call.command(), i.project.as_str()), (Some("ls"), "/p"));
    /// ```
    pub fn parse(bytes: &[u8], event: Event) -> Result<Input, Error> {
        let obj = parse_object(bytes)?;
        if let Some(name) = optional_str(&obj, "hook_event_name")? {
            if name != event.as_str() {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!(
                        "hook_event_name is {name:?}, but this hook was installed for {}",
                        event.as_str()
                    ),
                ));
            }
        }
        let mut roots = Vec::new();
        match obj.get("workspace_roots") {
            None | Some(Value::Null) => {}
            Some(Value::Array(a)) => {
                for r in a {
                    match r {
                        Value::String(s) => roots.push(absolute("workspace root", s)?),
                        other => {
                            return Err(Error::new(
                                ErrorKind::Call,
                                format!(
                                    "the hook input's workspace_roots must hold strings, not {}",
                                    json_type(other)
                                ),
                            ));
                        }
                    }
                }
            }
            Some(v) => {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!(
                        "the hook input's workspace_roots must be an array, not {}",
                        json_type(v)
                    ),
                ));
            }
        }
        let cwd = match optional_str(&obj, "cwd")?.filter(|c| !c.is_empty()) {
            Some(c) => absolute("cwd", c)?,
            None => *roots.first().ok_or_else(|| {
                Error::new(
                    ErrorKind::Call,
                    "the hook input has neither a cwd nor a workspace root",
                )
            })?,
        };
        let project = roots
            .iter()
            .find(|r| crate::paths::relative_to(cwd, r.trim_end_matches('/')).is_some())
            .or(roots.first())
            .copied()
            .unwrap_or(cwd);
        let mut input = serde_json::Map::new();
        let tool = match event {
            Event::BeforeShellExecution => {
                let c = required_str(&obj, "command")?;
                input.insert("command".into(), Value::String(c.to_string()));
                "Bash"
            }
            Event::BeforeReadFile => {
                let p = required_str(&obj, "file_path")?;
                input.insert("file_path".into(), Value::String(p.to_string()));
                "Read"
            }
        };
        Ok(Input {
            call: ToolCall::new(tool, input)?,
            cwd: cwd.to_string(),
            project: project.to_string(),
            conversation_id: optional_str(&obj, "conversation_id")?.map(str::to_string),
            generation_id: optional_str(&obj, "generation_id")?.map(str::to_string),
        })
    }
}

/// The answer for `verdict` on `event`: always JSON. Allow and no match
/// answer allow; ask answers deny where the event cannot ask.
///
/// ```
/// use toolgate::{Verdict, hook::cursor::{Event, answer}};
/// assert_eq!(answer(Verdict::None, "x", Event::BeforeShellExecution)["permission"], "allow");
/// assert_eq!(answer(Verdict::Ask, "x", Event::BeforeShellExecution)["permission"], "ask");
/// assert_eq!(answer(Verdict::Ask, "x", Event::BeforeReadFile)["permission"], "deny");
/// ```
pub fn answer(verdict: Verdict, reason: &str, event: Event) -> Value {
    match verdict {
        Verdict::Allow | Verdict::None => json!({"permission": "allow"}),
        Verdict::Deny => with_messages("deny", reason),
        Verdict::Ask if event.can_ask() => with_messages("ask", reason),
        Verdict::Ask => with_messages("deny", &format!("{}: {reason}", super::codex::CANNOT_ASK)),
    }
}

/// The refusal: a deny naming why the hook could not decide (printed with
/// exit code 2).
pub fn refusal(why: &str) -> Value {
    with_messages("deny", &format!("toolgate refused the call: {why}"))
}

fn with_messages(permission: &str, reason: &str) -> Value {
    json!({"permission": permission, "user_message": reason, "agent_message": reason})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_events_and_refuses_the_rest() {
        let r = Input::parse(
            br#"{"hook_event_name": "beforeReadFile", "conversation_id": "c",
                 "generation_id": "g", "workspace_roots": ["/a", "/p"],
                 "file_path": "/p/.env", "content": "K=V", "attachments": []}"#,
            Event::BeforeReadFile,
        )
        .unwrap();
        assert_eq!(r.call.tool, "Read");
        assert_eq!((r.cwd.as_str(), r.project.as_str()), ("/a", "/a"));
        for (bad, ev) in [
            (
                r#"{"command": "ls", "cwd": "/p", "hook_event_name": "beforeReadFile"}"#,
                Event::BeforeShellExecution,
            ),
            (r#"{"command": "ls"}"#, Event::BeforeShellExecution),
            (
                r#"{"command": 1, "cwd": "/p"}"#,
                Event::BeforeShellExecution,
            ),
            (r#"{"cwd": "/p"}"#, Event::BeforeShellExecution),
            (
                r#"{"command": "ls", "cwd": "p"}"#,
                Event::BeforeShellExecution,
            ),
            (
                r#"{"command": "ls", "workspace_roots": "/p"}"#,
                Event::BeforeShellExecution,
            ),
            (r#"{"workspace_roots": ["/p"]}"#, Event::BeforeReadFile),
        ] {
            assert!(Input::parse(bad.as_bytes(), ev).is_err(), "{bad}");
        }
    }
}
