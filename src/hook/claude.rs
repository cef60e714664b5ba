//! Claude Code's `PreToolUse` hook (SPEC §11).
//!
//! Input on stdin:
//!
//! ```json
//! {"session_id": "…", "cwd": "/home/me/app", "permission_mode": "default",
//!  "hook_event_name": "PreToolUse", "tool_name": "Bash",
//!  "tool_input": {"command": "npm test"}, "tool_use_id": "toolu_…"}
//! ```
//!
//! `tool_name` (a string), `tool_input` (an object) and `cwd` (an absolute
//! path) are required; `hook_event_name`, when present, must be
//! `PreToolUse`; `permission_mode`, `session_id` and `tool_use_id`, when
//! present, must be strings. Other fields are ignored.
//!
//! Output on a decision (exit code 0):
//!
//! ```json
//! {"hookSpecificOutput": {"hookEventName": "PreToolUse",
//!  "permissionDecision": "deny", "permissionDecisionReason": "…"}}
//! ```
//!
//! and nothing when no rule decided. A refusal is the deny answer with exit
//! code 2: Claude Code blocks the call on either.

use serde_json::{Value, json};

use super::{optional_str, parse_object, required_object, required_str};
use crate::error::{Error, ErrorKind};
use crate::eval::Verdict;
use crate::eval::call::ToolCall;

/// One `PreToolUse` hook input, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The call.
    pub call: ToolCall,
    /// The session's working directory (absolute).
    pub cwd: String,
    /// `permission_mode` as sent, if any.
    pub permission_mode: Option<String>,
    /// `tool_use_id`, if any.
    pub tool_use_id: Option<String>,
    /// `session_id`, if any.
    pub session_id: Option<String>,
}

impl Input {
    /// Reads hook input bytes.
    ///
    /// ```
    /// use toolgate::hook::claude::Input;
    /// let i = Input::parse(br#"{"cwd": "/p", "hook_event_name": "PreToolUse",
    ///     "tool_name": "Bash", "tool_input": {"command": "ls"}}"#).unwrap();
    /// assert_eq!(i.call.command(), Some("ls"));
    /// assert!(Input::parse(br#"{"cwd": "/p", "tool_name": "Bash"}"#).is_err());
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Input, Error> {
        let obj = parse_object(bytes)?;
        if let Some(event) = optional_str(&obj, "hook_event_name")? {
            if event != "PreToolUse" {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!("hook_event_name is {event:?}: this hook answers PreToolUse only"),
                ));
            }
        }
        let tool = required_str(&obj, "tool_name")?;
        let input = required_object(&obj, "tool_input")?;
        let cwd = required_str(&obj, "cwd")?;
        if !cwd.starts_with('/') {
            return Err(Error::new(
                ErrorKind::Call,
                format!("the hook input's cwd {cwd:?} is not an absolute path"),
            ));
        }
        let call = ToolCall::new(tool, input.clone())?;
        Ok(Input {
            call,
            cwd: cwd.to_string(),
            permission_mode: optional_str(&obj, "permission_mode")?.map(str::to_string),
            tool_use_id: optional_str(&obj, "tool_use_id")?.map(str::to_string),
            session_id: optional_str(&obj, "session_id")?.map(str::to_string),
        })
    }

    /// Whether an allow may be answered in this input's mode: not in
    /// `plan` (SPEC §9.3), and not in a mode this version does not know
    /// (withholding an allow leaves the call to Claude Code).
    pub fn may_allow(&self) -> bool {
        match self.permission_mode.as_deref() {
            None => true,
            Some(m) => m != "plan" && m.parse::<crate::policy::PermissionMode>().is_ok(),
        }
    }
}

/// The answer for `verdict`: `Some(json)` for allow, ask and deny, `None`
/// (print nothing) for [`Verdict::None`].
///
/// ```
/// use toolgate::{Verdict, hook::claude::answer};
/// let a = answer(Verdict::Deny, "denied by Bash(rm *)").unwrap();
/// assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
/// assert!(answer(Verdict::None, "no rule decided").is_none());
/// ```
pub fn answer(verdict: Verdict, reason: &str) -> Option<Value> {
    let decision = match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Deny => "deny",
        Verdict::None => return None,
    };
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }))
}

/// The refusal: a deny naming why the hook could not decide (printed with
/// exit code 2).
pub fn refusal(why: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": format!("toolgate refused the call: {why}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Input, Error> {
        Input::parse(s.as_bytes())
    }

    #[test]
    fn reads_the_documented_shape() {
        let i = parse(
            r#"{"session_id": "s", "transcript_path": "/t", "cwd": "/home/u/p",
                "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "npm test",
                "description": "d", "timeout": 120000}, "tool_use_id": "toolu_1"}"#,
        )
        .unwrap();
        assert_eq!(i.call.tool, "Bash");
        assert_eq!(i.cwd, "/home/u/p");
        assert_eq!(i.tool_use_id.as_deref(), Some("toolu_1"));
        assert!(i.may_allow());
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            r#"{"cwd": "/p", "tool_input": {}}"#,
            r#"{"cwd": "/p", "tool_name": 3, "tool_input": {}}"#,
            r#"{"cwd": "/p", "tool_name": "Bash", "tool_input": "ls"}"#,
            r#"{"tool_name": "Bash", "tool_input": {}}"#,
            r#"{"cwd": "p", "tool_name": "Bash", "tool_input": {}}"#,
            r#"{"cwd": "/p", "tool_name": "Bash", "tool_input": {}, "hook_event_name": "PostToolUse"}"#,
            r#"{"cwd": "/p", "tool_name": "Bash", "tool_input": {}, "permission_mode": 1}"#,
            r#"[]"#,
            r#"{"cwd""#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plan_and_unknown_modes_withhold_allow() {
        let base = r#"{"cwd": "/p", "tool_name": "Read", "tool_input": {}, "permission_mode": "#;
        for (mode, may) in [
            ("\"plan\"", false),
            ("\"someNewMode\"", false),
            ("\"acceptEdits\"", true),
            ("null", true),
        ] {
            let i = parse(&format!("{base}{mode}}}")).unwrap();
            assert_eq!(i.may_allow(), may, "{mode}");
        }
    }
}
