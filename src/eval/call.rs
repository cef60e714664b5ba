//! A tool call: a tool name and its input, checked once on the way in.

use crate::error::{Error, ErrorKind};
use serde_json::{Map, Value};

/// The input fields that, when present, must hold a string (SPEC §13
/// "Which calls a rule governs", "Call lines").
pub const STRING_FIELDS: &[&str] = &[
    "command",
    "file_path",
    "path",
    "notebook_path",
    "url",
    "subagent_type",
    "skill",
];

/// One tool call: what the agent asks to run.
///
/// Built by [`ToolCall::new`] or read from JSON by [`ToolCall::from_json`],
/// which check it (SPEC §13):
///
/// - the tool name is kept as written (names are case-sensitive), except
///   that `Task` is read as `Agent`;
/// - a call with both `path` and `file_path` is malformed;
/// - `command`, `file_path`, `path`, `notebook_path`, `url`,
///   `subagent_type` and `skill`, when present, must be strings
///   ([`STRING_FIELDS`]); empty strings are ordinary values;
/// - a `Skill` call's `skill` loses one leading `/` (as the rule side does).
///
/// A field a rule needs but the call lacks is reported by the matcher, not
/// here: a call is only malformed for a rule that reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The canonical tool name (`Bash`, `Read`, `mcp__github__get_issue` …).
    pub tool: String,
    /// The tool's input, as given (apart from the `Skill` point above).
    pub input: Map<String, Value>,
}

impl ToolCall {
    /// A checked call of `tool` with `input`.
    ///
    /// ```
    /// use toolgate::eval::call::ToolCall;
    /// let input = serde_json::json!({"command": "ls"});
    /// let call = ToolCall::new("Bash", input.as_object().unwrap().clone()).unwrap();
    /// assert_eq!(call.command(), Some("ls"));
    /// ```
    pub fn new(tool: &str, mut input: Map<String, Value>) -> Result<ToolCall, Error> {
        if tool.is_empty() {
            return Err(Error::new(ErrorKind::Call, "empty tool name in call"));
        }
        if tool.contains('\0') {
            return Err(Error::new(ErrorKind::Call, "nul byte in call tool name"));
        }
        if input.contains_key("path") && input.contains_key("file_path") {
            return Err(Error::new(
                ErrorKind::Call,
                "call input has both path and file_path (give one)",
            ));
        }
        // (One pass over the input's few keys finds whether any check
        // fails; the checks then run in their order for the message.)
        let bad = input
            .iter()
            .any(|(k, v)| !v.is_string() && STRING_FIELDS.contains(&k.as_str()));
        for &field in STRING_FIELDS.iter().filter(|_| bad) {
            if let Some(v) = input.get(field) {
                if !v.is_string() {
                    return Err(Error::new(
                        ErrorKind::Call,
                        format!(
                            "call input field {field:?} must be a string, not {}",
                            json_type(v)
                        ),
                    ));
                }
            }
        }
        let tool = crate::rule::claude::canonical_tool(tool).to_string();
        if tool == "Skill" {
            if let Some(Value::String(s)) = input.get_mut("skill") {
                if let Some(rest) = s.strip_prefix('/') {
                    *s = rest.to_string();
                }
            }
        }
        Ok(ToolCall { tool, input })
    }

    /// A call from JSON: `{"tool": …, "input": {…}}` (the `match-rules` and
    /// `eval` shape) or a hook input `{"tool_name": …, "tool_input": {…}}`.
    /// Other keys are ignored; a missing input is an empty one.
    ///
    /// ```
    /// use toolgate::eval::call::ToolCall;
    /// let v = serde_json::json!({"tool_name": "Task", "tool_input": {"subagent_type": "Explore"}});
    /// assert_eq!(ToolCall::from_json(&v).unwrap().tool, "Agent");
    /// ```
    pub fn from_json(value: &Value) -> Result<ToolCall, Error> {
        let Value::Object(obj) = value else {
            return Err(Error::new(
                ErrorKind::Call,
                format!("a call must be a JSON object, not {}", json_type(value)),
            ));
        };
        let (tool_key, input_key) = match (obj.contains_key("tool"), obj.contains_key("tool_name"))
        {
            (true, false) => ("tool", "input"),
            (false, true) => ("tool_name", "tool_input"),
            (true, true) => {
                return Err(Error::new(
                    ErrorKind::Call,
                    "a call has both tool and tool_name (give one)",
                ));
            }
            (false, false) => {
                return Err(Error::new(
                    ErrorKind::Call,
                    "a call needs a tool (or tool_name) field",
                ));
            }
        };
        let tool = match obj.get(tool_key) {
            Some(Value::String(s)) => s.as_str(),
            other => {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!(
                        "call field {tool_key} must be a string, not {}",
                        other.map_or("missing", json_type)
                    ),
                ));
            }
        };
        let input = match obj.get(input_key) {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(v) => {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!(
                        "call field {input_key} must be an object, not {}",
                        json_type(v)
                    ),
                ));
            }
        };
        ToolCall::new(tool, input)
    }

    /// [`ToolCall::from_json`], taking the value: its input is moved into
    /// the call, not copied. Same checks, same errors.
    pub fn from_json_value(mut value: Value) -> Result<ToolCall, Error> {
        let taken = match &mut value {
            Value::Object(obj) => {
                let key = if obj.contains_key("tool") {
                    "input"
                } else {
                    "tool_input"
                };
                match obj.get_mut(key) {
                    Some(Value::Object(m)) => Some(std::mem::take(m)),
                    _ => None,
                }
            }
            _ => None,
        };
        // The rest of the value is checked as `from_json` checks it (an
        // empty input in place of the one taken), then the input.
        let call = ToolCall::from_json(&value)?;
        match taken {
            Some(input) => ToolCall::new(&call.tool, input),
            None => Ok(call),
        }
    }

    /// A string input field, if present.
    pub fn str_field(&self, field: &str) -> Option<&str> {
        self.input.get(field).and_then(Value::as_str)
    }

    /// The `command` input (Bash, PowerShell, Monitor).
    pub fn command(&self) -> Option<&str> {
        self.str_field("command")
    }

    /// The path the call is about: `file_path`, else `path`, else
    /// `notebook_path`.
    pub fn path(&self) -> Option<&str> {
        self.str_field("file_path")
            .or_else(|| self.str_field("path"))
            .or_else(|| self.str_field("notebook_path"))
    }

    /// The `url` input (WebFetch).
    pub fn url(&self) -> Option<&str> {
        self.str_field("url")
    }
}

/// A JSON value's type, for messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn taking_the_value_checks_as_borrowing_it() {
        for v in [
            json!({"tool": "Bash", "input": {"command": "ls"}}),
            json!({"tool_name": "Task", "tool_input": {"subagent_type": "x"}}),
            json!({"tool": "Skill", "input": {"skill": "/a"}}),
            json!({"tool": "Read", "input": {"path": "a", "file_path": "b"}}),
            json!({"tool": "Read", "input": {"file_path": 3, "path": []}}),
            json!({"tool": "Bash", "input": "ls"}),
            json!({"tool": "Bash"}),
            json!({"tool": "", "input": {"command": 1}}),
            json!({"tool": "Bash", "tool_name": "Bash", "input": {}}),
            json!({"input": {}}),
            json!([1]),
        ] {
            let a = ToolCall::from_json(&v).map_err(|e| e.message().to_string());
            let b = ToolCall::from_json_value(v.clone()).map_err(|e| e.message().to_string());
            assert_eq!(a, b, "{v}");
        }
    }

    #[test]
    fn shapes_and_errors() {
        let ok = |v: Value| ToolCall::from_json(&v);
        assert_eq!(
            ok(json!({"tool": "Bash", "input": {"command": "ls"}}))
                .unwrap()
                .tool,
            "Bash"
        );
        assert_eq!(
            ok(json!({"tool": "Task", "input": {}})).unwrap().tool,
            "Agent"
        );
        assert_eq!(
            ok(json!({"tool_name": "Read", "tool_input": {"file_path": "a"}, "cwd": "/"}))
                .unwrap()
                .path(),
            Some("a")
        );
        assert_eq!(ok(json!({"tool": "WebSearch"})).unwrap().input.len(), 0);
        let skill = ok(json!({"tool": "Skill", "input": {"skill": "/commit"}})).unwrap();
        assert_eq!(skill.str_field("skill"), Some("commit"));
        let bad = [
            json!([]),
            json!({"input": {}}),
            json!({"tool": 3, "input": {}}),
            json!({"tool": "", "input": {}}),
            json!({"tool": "Bash", "input": []}),
            json!({"tool": "Bash", "tool_name": "Bash"}),
            json!({"tool": "Read", "input": {"path": "a", "file_path": "b"}}),
            json!({"tool": "Bash", "input": {"command": ["ls"]}}),
            json!({"tool": "Read", "input": {"file_path": null}}),
            json!({"tool": "WebFetch", "input": {"url": 1}}),
        ];
        for v in bad {
            let e = ok(v.clone()).expect_err(&v.to_string());
            assert_eq!(e.kind(), ErrorKind::Call, "{v}");
        }
    }
}
