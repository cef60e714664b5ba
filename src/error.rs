//! The one error type of the crate.
//!
//! Every error answers the caller's question: what was wrong (one lowercase
//! clause), where (source file, the rule's list and index or an input line,
//! and for rule text the column, rendered with a caret line), and what would
//! be accepted where that helps.

use std::fmt;

/// What went wrong, in broad classes a caller may want to tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A rule string (or a tuff rule) that does not parse.
    Rule,
    /// A rule that parses but that toolgate does not match: a
    /// `Tool(param:value)` rule on a primary field (`Bash(command:rm *)`),
    /// or a form an allow list may not hold (a field rule, a tool-name glob
    /// without a literal `mcp__<server>__` in front). Loaders warn and
    /// ignore such a rule instead of failing.
    Unsupported,
    /// A tool call (or a `match-rules` case) that is malformed.
    Call,
    /// A policy file that cannot be read or does not parse as a whole.
    Policy,
    /// A size or depth limit was crossed.
    Limit,
    /// A precompiled image that is stale, foreign or corrupt.
    Image,
    /// An input/output failure.
    Io,
}

/// Where an error happened. Every field is optional: fill in what is known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The file (or `<command line>`, `<stdin>` …) the input came from.
    pub source: Option<String>,
    /// The item within the source: `deny[3]`, `rule 2`, `case 4`, `line 17`.
    pub item: Option<String>,
    /// The text the column points into (a rule string), if any.
    pub text: Option<String>,
    /// The 0-based column, counted in characters of `text`.
    pub column: Option<usize>,
}

/// The crate's error: a kind, a one-clause message and a location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Location,
}

impl Error {
    /// A new error of `kind` with `message` (one lowercase clause).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            location: Location::default(),
        }
    }

    /// A rule-syntax error in `text` at character column `column`.
    pub fn rule(message: impl Into<String>, text: &str, column: usize) -> Error {
        let mut e = Error::new(ErrorKind::Rule, message);
        e.location.text = Some(text.to_string());
        e.location.column = Some(column);
        e
    }

    /// A rule in `text` that parses but cannot be matched (see
    /// [`ErrorKind::Unsupported`]), pointing at character column `column`.
    pub fn unsupported(message: impl Into<String>, text: &str, column: usize) -> Error {
        let mut e = Error::rule(message, text, column);
        e.kind = ErrorKind::Unsupported;
        e
    }

    /// Sets the source file (or stream name).
    pub fn with_source(mut self, source: impl Into<String>) -> Error {
        self.location.source = Some(source.into());
        self
    }

    /// Sets the item within the source (`deny[3]`, `case 4`, `line 7`).
    pub fn with_item(mut self, item: impl Into<String>) -> Error {
        self.location.item = Some(item.into());
        self
    }

    /// The class of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The one-clause message, without location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the error happened.
    pub fn location(&self) -> &Location {
        &self.location
    }
}

impl fmt::Display for Error {
    /// `source: item: message`, then for rule text the text and a caret line:
    ///
    /// ```text
    /// settings.json: deny[2]: unbalanced parenthesis in rule
    ///   Bash((ls)
    ///        ^
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = &self.location;
        if let Some(source) = &loc.source {
            write!(f, "{source}: ")?;
        }
        if let Some(item) = &loc.item {
            write!(f, "{item}: ")?;
        }
        if let Some(col) = loc.column {
            write!(f, "column {}: ", col + 1)?;
        }
        write!(f, "{}", self.message)?;
        if let (Some(text), Some(col)) = (&loc.text, loc.column) {
            // Control characters are shown escaped so the caret stays aligned.
            let mut shown = String::new();
            let mut caret_at = 0;
            for (i, c) in text.chars().enumerate() {
                if i == col {
                    caret_at = shown.chars().count();
                }
                if c.is_control() {
                    shown.extend(c.escape_default());
                } else {
                    shown.push(c);
                }
            }
            if col >= text.chars().count() {
                caret_at = shown.chars().count();
            }
            write!(f, "\n  {shown}\n  {}^", " ".repeat(caret_at))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_is_under_the_column() {
        let e = Error::rule("unbalanced parenthesis in rule", "Bash((ls)", 5)
            .with_source("settings.json")
            .with_item("deny[2]");
        assert_eq!(
            e.to_string(),
            "settings.json: deny[2]: column 6: unbalanced parenthesis in rule\n  Bash((ls)\n       ^"
        );
    }

    #[test]
    fn caret_after_escaped_control_characters() {
        let e = Error::rule("nul byte in rule", "a\tb\0", 3);
        assert_eq!(
            e.to_string(),
            "column 4: nul byte in rule\n  a\\tb\\u{0}\n      ^"
        );
    }
}
