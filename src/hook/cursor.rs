//! Cursor's `beforeShellExecution`, `beforeReadFile` and
//! `beforeMCPExecution` hooks (SPEC §11).
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
//! `beforeMCPExecution` gives `tool_name` (and `tool_input`, an object or
//! a JSON string, not consulted: MCP rules name tools only). A `tool_name`
//! of the form `MCP:server:tool` or `mcp__server__tool` is the call
//! `mcp__server__tool`. A bare tool name does not say which server it
//! belongs to, so it is decided for every server the policy could mean
//! ([`mcp_candidates`], [`combine_unknown_server`]): a rule that matches
//! whatever the server is decides as usual; a rule that matches only for
//! some servers makes a deny or an ask into an ask, and withholds an allow.

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
    /// `beforeMCPExecution`: an MCP tool call (`mcp__server__tool`).
    BeforeMcpExecution,
}

impl Event {
    /// The event's name as Cursor writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::BeforeShellExecution => "beforeShellExecution",
            Event::BeforeReadFile => "beforeReadFile",
            Event::BeforeMcpExecution => "beforeMCPExecution",
        }
    }

    /// Whether the event can answer ask.
    pub fn can_ask(self) -> bool {
        self != Event::BeforeReadFile
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
    /// For `beforeMCPExecution` with a bare tool name: the tool, whose
    /// server is unknown. `call` then names the server [`UNKNOWN_SERVER`].
    pub mcp_tool_of_unknown_server: Option<String>,
}

/// The server name of an MCP call whose server the input does not give: a
/// name no server has (`?` is not a character of server names), so only a
/// rule that matches every server matches it.
pub const UNKNOWN_SERVER: &str = "?";

/// The MCP tool a `tool_name` names: `(Some(server), tool)` for
/// `MCP:server:tool` and `mcp__server__tool`, `(None, tool)` for a bare
/// tool name.
fn mcp_tool_name(name: &str) -> Result<(Option<&str>, &str), Error> {
    let bad = || {
        Error::new(
            ErrorKind::Call,
            format!("the hook input's tool_name {name:?} is not an MCP tool name"),
        )
    };
    let split = if let Some(rest) = name.strip_prefix("MCP:") {
        Some(rest.split_once(':').ok_or_else(bad)?)
    } else if let Some(rest) = name.strip_prefix("mcp__") {
        Some(rest.split_once("__").ok_or_else(bad)?)
    } else {
        None
    };
    match split {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => Ok((Some(server), tool)),
        Some(_) => Err(bad()),
        None if name.is_empty() || name.contains(char::is_whitespace) => Err(bad()),
        None => Ok((None, name)),
    }
}

/// The servers to decide a tool of an unknown server for: [`UNKNOWN_SERVER`]
/// first (only rules matching every server match it), then, for each rule
/// on MCP tools, one server its server part matches (its literal text, its
/// wildcards left out). So every rule that could match the tool on some
/// server matches on at least one of these.
pub fn mcp_candidates<'a>(rules: impl IntoIterator<Item = &'a crate::Rule>) -> Vec<String> {
    use crate::rule::{GlobPiece, ToolMatch};
    let mut out = vec![UNKNOWN_SERVER.to_string()];
    for rule in rules {
        let server = match &rule.tool {
            ToolMatch::McpServer(s) => Some(s.clone()),
            ToolMatch::Glob(pieces) => {
                let mut text = String::new();
                for p in pieces {
                    match p {
                        GlobPiece::Literal(l) => text.push_str(l),
                        GlobPiece::Star => text.push('\u{0}'),
                        GlobPiece::Question => text.push('x'),
                    }
                }
                text.strip_prefix("mcp__").and_then(|rest| {
                    let server = rest.split("__").next().unwrap_or("");
                    let server = server.replace('\u{0}', "");
                    (!server.is_empty()).then_some(server)
                })
            }
            ToolMatch::Name(n) => n
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
                .map(|(s, _)| s.to_string()),
        };
        if let Some(s) = server.filter(|s| !out.contains(s)) {
            out.push(s);
        }
    }
    out
}

/// The verdict on a tool of an unknown server, from its verdicts on each of
/// [`mcp_candidates`] (the unknown server first): the unknown server's deny
/// stands (the rule matches every server); any other deny or ask, or a
/// verdict that differs between servers, asks; an allow on every server
/// allows. Returns the verdict and the index of the candidate whose
/// decision to report.
pub fn combine_unknown_server(verdicts: &[Verdict]) -> (Verdict, usize) {
    let Some(first) = verdicts.first() else {
        return (Verdict::Ask, 0);
    };
    if *first == Verdict::Deny {
        return (Verdict::Deny, 0);
    }
    if let Some(i) = verdicts
        .iter()
        .position(|v| matches!(v, Verdict::Deny | Verdict::Ask))
    {
        return (Verdict::Ask, i);
    }
    if verdicts.iter().all(|v| *v == Verdict::Allow) {
        return (Verdict::Allow, 0);
    }
    (Verdict::None, 0)
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
        let mut unknown = None;
        let mcp_name;
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
            Event::BeforeMcpExecution => {
                let name = required_str(&obj, "tool_name")?;
                let (server, tool) = mcp_tool_name(name)?;
                match obj.get("tool_input") {
                    Some(Value::Object(m)) => input = m.clone(),
                    Some(Value::String(s)) => {
                        if let Ok(Value::Object(m)) = serde_json::from_str(s) {
                            input = m;
                        }
                    }
                    _ => {}
                }
                if server.is_none() {
                    unknown = Some(tool.to_string());
                }
                mcp_name = format!("mcp__{}__{tool}", server.unwrap_or(UNKNOWN_SERVER));
                &mcp_name
            }
        };
        Ok(Input {
            call: ToolCall::new(tool, input)?,
            cwd: cwd.to_string(),
            project: project.to_string(),
            conversation_id: optional_str(&obj, "conversation_id")?.map(str::to_string),
            generation_id: optional_str(&obj, "generation_id")?.map(str::to_string),
            mcp_tool_of_unknown_server: unknown,
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

    #[test]
    fn mcp_names_and_candidate_servers() {
        assert_eq!(mcp_tool_name("MCP:gh:get").unwrap(), (Some("gh"), "get"));
        assert_eq!(
            mcp_tool_name("mcp__gh__get_x").unwrap(),
            (Some("gh"), "get_x")
        );
        assert_eq!(mcp_tool_name("get").unwrap(), (Option::None, "get"));
        for bad in ["", "MCP:gh", "MCP::x", "mcp__gh", "a b"] {
            assert!(mcp_tool_name(bad).is_err(), "{bad:?}");
        }
        let rules: Vec<crate::Rule> = [
            "mcp__gh__delete",
            "mcp__db",
            "mcp__*__drop",
            "mcp__git*__x",
            "Bash(ls)",
        ]
        .iter()
        .map(|t| {
            let p = crate::rule::Provenance::standalone(crate::rule::List::Deny);
            crate::rule::claude::parse_rule(
                t,
                crate::Effect::Deny,
                crate::rule::Dialect::ClaudeCode,
                p,
            )
            .unwrap()
        })
        .collect();
        assert_eq!(mcp_candidates(&rules), ["?", "gh", "db", "git"]);
        use Verdict::*;
        assert_eq!(combine_unknown_server(&[Deny, Deny]), (Deny, 0));
        assert_eq!(combine_unknown_server(&[None, Deny]), (Ask, 1));
        assert_eq!(combine_unknown_server(&[Allow, Ask]), (Ask, 1));
        assert_eq!(combine_unknown_server(&[Allow, Allow]), (Allow, 0));
        assert_eq!(combine_unknown_server(&[None, Allow]), (None, 0));
    }
}
