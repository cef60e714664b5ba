//! Claude Code rule strings: `Tool` or `Tool(specifier)` → [`crate::Rule`].
//!
//! The parser is a hand-written scanner: the grammar is tiny, and its error
//! messages must point at a column, which no parser crate in the dependency
//! set does for this shape.
//!
//! Everything that depends on the dialect and on the effect is decided here
//! (SPEC §3.3, §4.2, §13), so the matchers downstream read a pattern
//! without knowing where it came from:
//!
//! - `Bash(X *)` with exactly one wildcard star is [`CommandForm::Prefix`]
//!   in `claude-code` (its trailing ` *` is optional there), a glob in
//!   `strict`;
//! - `P:*` is a prefix; a `P` holding wildcard stars is
//!   [`CommandForm::PrefixGlob`] for deny and ask, a literal prefix for
//!   allow;
//! - path patterns: anchors, the `./` and single-segment `dir/**` widening
//!   (deny and ask only), claude-code's stripped trailing `/**`, case
//!   folding of claude-code deny and ask rules;
//! - domains to lower-case punycode;
//! - `Tool(param:value)` rules, recognised when the text before `:` is a
//!   known input field of that tool ([`tool_fields`]).
//!
//! Rules that parse but cannot be matched (a primary field in
//! `Tool(param:value)`, forms an allow list may not hold) are errors of kind
//! [`crate::ErrorKind::Unsupported`]: a loader warns and ignores them.

use crate::error::Error;
use crate::rule::pattern::{
    Anchor, CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, PathPattern,
    Pattern, SegPiece, Segment, ToolMatch,
};
use crate::rule::{Dialect, Effect, Provenance, Rule};

/// The input fields of the tools toolgate knows, for `Tool(param:value)`
/// rules: `(primary fields, other fields)`. A primary field is the one the
/// tool's own specifier matches (`command`, `file_path`, `path`,
/// `notebook_path`, `url`); it is not matchable by a field rule.
///
/// Returns `None` for a tool whose fields are not known (MCP tools and
/// tools added after this table): their specifiers are never read as field
/// rules.
pub fn tool_fields(tool: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    const SHELL: &[&str] = &[
        "description",
        "timeout",
        "run_in_background",
        "dangerouslyDisableSandbox",
    ];
    Some(match tool {
        "Bash" | "PowerShell" => (&["command"], SHELL),
        "Read" => (&["file_path"], &["offset", "limit", "pages"]),
        "Write" => (&["file_path"], &["content"]),
        "Edit" => (&["file_path"], &["old_string", "new_string", "replace_all"]),
        "MultiEdit" => (&["file_path"], &["edits"]),
        "NotebookEdit" => (
            &["notebook_path"],
            &["new_source", "cell_id", "cell_type", "edit_mode"],
        ),
        "Glob" => (&["path"], &["pattern"]),
        "Grep" => (
            &["path"],
            &[
                "pattern",
                "glob",
                "output_mode",
                "type",
                "head_limit",
                "multiline",
                "-i",
                "-n",
                "-A",
                "-B",
                "-C",
            ],
        ),
        "WebFetch" => (&["url"], &["prompt"]),
        "WebSearch" => (&[], &["query", "allowed_domains", "blocked_domains"]),
        "Agent" => (
            &[],
            &[
                "prompt",
                "description",
                "subagent_type",
                "model",
                "run_in_background",
                "isolation",
                "name",
            ],
        ),
        "Skill" => (&[], &["skill", "args"]),
        _ => return None,
    })
}

/// The canonical name of a tool: `Task` is `Agent`, every other name is
/// itself. Applied to rule tool names and to call tool names alike.
pub fn canonical_tool(name: &str) -> &str {
    if name == "Task" { "Agent" } else { name }
}

/// Parses one Claude Code rule string.
///
/// `effect` is the list the rule stands in (deny, ask or allow);
/// `dialect` is [`Dialect::Strict`] or [`Dialect::ClaudeCode`]
/// ([`Dialect::Tuff`] reads as `Strict`). Errors name
/// `provenance.source`, `provenance.item()`, the rule text and the column.
///
/// ```
/// use toolgate::rule::claude::parse_rule;
/// use toolgate::{Dialect, Effect, List, Provenance};
///
/// let prov = Provenance::standalone(List::Deny);
/// let rule = parse_rule("Bash(npm run *)", Effect::Deny, Dialect::Strict, prov.clone()).unwrap();
/// assert!(rule.governs("Bash"));
/// let err = parse_rule("Bash((ls)", Effect::Deny, Dialect::Strict, prov).unwrap_err();
/// assert_eq!(err.location().column, Some(5));
/// ```
pub fn parse_rule(
    text: &str,
    effect: Effect,
    dialect: Dialect,
    provenance: Provenance,
) -> Result<Rule, Error> {
    let p = Parser {
        text,
        chars: text.chars().collect(),
        effect,
        dialect: if dialect == Dialect::Tuff {
            Dialect::Strict
        } else {
            dialect
        },
        provenance: &provenance,
    };
    let (tool, pattern) = p.parse()?;
    Ok(Rule {
        text: text.to_string(),
        effect,
        dialect,
        tool,
        pattern,
        provenance,
        reason: None,
    })
}

/// One character of a specifier after unescaping.
#[derive(Clone, Copy, Debug)]
struct Tok {
    c: char,
    /// Written with a backslash in front: never special.
    escaped: bool,
    /// Column (in characters) of the character, or of its backslash.
    col: usize,
}

impl Tok {
    fn is(&self, c: char) -> bool {
        !self.escaped && self.c == c
    }
}

fn tok_text(toks: &[Tok]) -> String {
    toks.iter().map(|t| t.c).collect()
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<char>,
    effect: Effect,
    dialect: Dialect,
    provenance: &'a Provenance,
}

impl Parser<'_> {
    fn locate(&self, e: Error) -> Error {
        e.with_source(&*self.provenance.source)
            .with_item(self.provenance.item())
    }

    fn err(&self, message: impl Into<String>, col: usize) -> Error {
        self.locate(Error::rule(message, self.text, col))
    }

    fn unsupported(&self, message: impl Into<String>, col: usize) -> Error {
        self.locate(Error::unsupported(message, self.text, col))
    }

    fn parse(&self) -> Result<(ToolMatch, Pattern), Error> {
        let chars = &self.chars;
        if let Some(i) = chars.iter().position(|&c| c == '\0') {
            return Err(self.err("nul byte in rule", i));
        }
        // The tool name: [A-Za-z0-9_*-]+ up to the first `(` or the end.
        let mut open = None;
        for (i, &c) in chars.iter().enumerate() {
            if c == '(' {
                open = Some(i);
                break;
            }
            if !(c.is_ascii_alphanumeric() || c == '_' || c == '*' || c == '-') {
                let what = if c.is_whitespace() {
                    "whitespace".to_string()
                } else {
                    format!("character {c:?}")
                };
                return Err(self.err(
                    format!("{what} in tool name (tool names are [A-Za-z0-9_*-]+)"),
                    i,
                ));
            }
        }
        let name_end = open.unwrap_or(chars.len());
        if name_end == 0 {
            return Err(self.err("empty tool name", 0));
        }
        let raw_name: String = chars[..name_end].iter().collect();
        let name = canonical_tool(&raw_name).to_string();

        let Some(open) = open else {
            return Ok((self.tool_match(&name, 0, true)?, Pattern::Any));
        };
        let (raw, toks_cmd) = self.specifier(open)?;
        let spec_col = open + 1;
        let any = raw.is_empty() || raw == "*";
        let tool = self.tool_match(&name, open, any)?;
        if any {
            return Ok((tool, Pattern::Any));
        }
        let ToolMatch::Name(_) = tool else {
            // `mcp__S(x)`: a server rule with a specifier no one reads.
            return Ok((tool, Pattern::Opaque(raw)));
        };

        if let Some(p) = self.field_rule(&name, &toks_cmd)? {
            return Ok((tool, p));
        }
        let pattern = match name.as_str() {
            "Bash" => Pattern::Command(CommandPattern {
                form: self.command_form(&toks_cmd, true)?,
                case_insensitive: false,
            }),
            "PowerShell" => Pattern::Command(CommandPattern {
                form: self.command_form(&toks_cmd, true)?,
                case_insensitive: true,
            }),
            "Read" | "Edit" => Pattern::Path(self.path(spec_col)?),
            "Write" | "MultiEdit" | "NotebookEdit" => {
                if self.dialect == Dialect::ClaudeCode {
                    Pattern::Opaque(raw)
                } else {
                    Pattern::Path(self.path(spec_col)?)
                }
            }
            "WebFetch" => Pattern::Domain(self.domain(&toks_cmd)?),
            "Agent" => Pattern::Field {
                field: "subagent_type".to_string(),
                form: CommandForm::Exact(tok_text(&toks_cmd)),
            },
            "Skill" => {
                let toks = match toks_cmd.first() {
                    Some(t) if t.is('/') => &toks_cmd[1..],
                    _ => &toks_cmd[..],
                };
                if toks.is_empty() {
                    return Err(self.err("empty skill name", spec_col));
                }
                Pattern::Field {
                    field: "skill".to_string(),
                    form: self.skill_form(toks)?,
                }
            }
            _ => Pattern::Opaque(raw),
        };
        Ok((tool, pattern))
    }

    /// The specifier between the `(` at `open` and the final `)`: its raw
    /// text and its characters unescaped the command way. Checks balance.
    fn specifier(&self, open: usize) -> Result<(String, Vec<Tok>), Error> {
        let chars = &self.chars;
        let n = chars.len();
        // The last character must be an unescaped `)`.
        let ends_with_close = n > open + 1 && chars[n - 1] == ')' && {
            let mut k = 0;
            while n >= 2 + k && n - 2 - k > open && chars[n - 2 - k] == '\\' {
                k += 1;
            }
            k % 2 == 0
        };
        if !ends_with_close {
            // Is there an unescaped `)` with text after it?
            let mut i = open + 1;
            let mut last_close = None;
            while i < n {
                match chars[i] {
                    '\\' => i += 1,
                    ')' => last_close = Some(i),
                    _ => {}
                }
                i += 1;
            }
            return Err(match last_close {
                Some(c) if c + 1 < n => self.err("text after the closing parenthesis", c + 1),
                _ => self.err("missing closing parenthesis", n),
            });
        }
        let close = n - 1;
        let raw: String = chars[open + 1..close].iter().collect();
        let mut toks = Vec::new();
        let mut opens: Vec<usize> = Vec::new();
        let mut i = open + 1;
        while i < close {
            let c = chars[i];
            if c == '\\' && i + 1 < close {
                let next = chars[i + 1];
                if matches!(next, '(' | ')' | '\\' | '*') {
                    toks.push(Tok {
                        c: next,
                        escaped: true,
                        col: i,
                    });
                    i += 2;
                    continue;
                }
                // Any other `\x` stays `\x`: the backslash is literal.
                toks.push(Tok {
                    c,
                    escaped: true,
                    col: i,
                });
                i += 1;
                continue;
            }
            match c {
                '(' => opens.push(i),
                // The guard pops the matching `(` when there is one.
                ')' if opens.pop().is_none() => {
                    return Err(self.err("unbalanced parenthesis in rule", i));
                }
                _ => {}
            }
            toks.push(Tok {
                c,
                escaped: false,
                col: i,
            });
            i += 1;
        }
        if let Some(&col) = opens.last() {
            return Err(self.err("unbalanced parenthesis in rule", col));
        }
        Ok((raw, toks))
    }

    /// The specifier unescaped the path way (`\x` is a literal `x`).
    fn path_toks(&self, spec_col: usize) -> Vec<Tok> {
        let close = self.chars.len().saturating_sub(1);
        let mut toks = Vec::new();
        let mut i = spec_col;
        while i < close {
            let c = self.chars[i];
            if c == '\\' && i + 1 < close {
                toks.push(Tok {
                    c: self.chars[i + 1],
                    escaped: true,
                    col: i,
                });
                i += 2;
            } else {
                toks.push(Tok {
                    c,
                    escaped: false,
                    col: i,
                });
                i += 1;
            }
        }
        toks
    }

    /// Which calls the tool part names. `any`: the rule has no specifier.
    fn tool_match(&self, name: &str, open: usize, any: bool) -> Result<ToolMatch, Error> {
        let server_of = |name: &str| -> Option<(String, Option<String>)> {
            let rest = name.strip_prefix("mcp__")?;
            match rest.find("__") {
                Some(i) => Some((rest[..i].to_string(), Some(rest[i + 2..].to_string()))),
                None => Some((rest.to_string(), None)),
            }
        };
        if name.contains('*') {
            // The tool name starts the text, so its first `*` is the text's.
            let star_col = self.chars.iter().position(|&c| c == '*').unwrap_or(0);
            if !any {
                return Err(self.err("a tool-name glob takes no specifier", open));
            }
            let literal_server = matches!(
                server_of(name),
                Some((ref s, Some(_))) if !s.is_empty() && !s.contains('*')
            );
            if self.effect == Effect::Allow && !literal_server {
                return Err(self.unsupported(
                    "a tool-name glob in an allow rule must start with a literal mcp__<server>__",
                    star_col,
                ));
            }
            if let Some((s, Some(t))) = server_of(name) {
                if t == "*" && !s.is_empty() && !s.contains('*') {
                    return Ok(ToolMatch::McpServer(s));
                }
            }
            return Ok(ToolMatch::Glob(glob_pieces(
                name.chars().map(|c| (c, c == '*')),
            )));
        }
        if let Some((s, None)) = server_of(name) {
            if !s.is_empty() {
                return Ok(ToolMatch::McpServer(s));
            }
        }
        Ok(ToolMatch::Name(name.to_string()))
    }

    /// `Tool(param:value)`, when the text before the first `:` is a known
    /// input field of the tool.
    fn field_rule(&self, tool: &str, toks: &[Tok]) -> Result<Option<Pattern>, Error> {
        let Some((primary, others)) = tool_fields(tool) else {
            return Ok(None);
        };
        let Some(colon) = toks.iter().position(|t| t.is(':')) else {
            return Ok(None);
        };
        let field = tok_text(&toks[..colon]);
        let col = toks.first().map_or(0, |t| t.col);
        if primary.contains(&field.as_str()) {
            return Err(self.unsupported(
                format!(
                    "the input field {field:?} is matched by the {tool} specifier itself, \
                     not by a field rule; this rule never matches"
                ),
                col,
            ));
        }
        if !others.contains(&field.as_str()) {
            return Ok(None);
        }
        if self.effect == Effect::Allow {
            return Err(self.unsupported(
                "an input-field rule (Tool(param:value)) may stand in deny and ask lists only",
                col,
            ));
        }
        let mut value = &toks[colon + 1..];
        while let Some(t) = value.first() {
            if t.c == ' ' && !t.escaped {
                value = &value[1..];
            } else {
                break;
            }
        }
        let form = if value.iter().any(|t| t.is('*')) {
            CommandForm::Glob(glob_pieces(value.iter().map(|t| (t.c, t.is('*')))))
        } else {
            CommandForm::Exact(tok_text(value))
        };
        Ok(Some(Pattern::Field { field, form }))
    }

    /// A `Bash(…)`/`PowerShell(…)` specifier: prefix, glob or exact (§3.1).
    fn command_form(&self, toks: &[Tok], optional_tail: bool) -> Result<CommandForm, Error> {
        let n = toks.len();
        let star = |t: &Tok| t.is('*');
        if n >= 2 && star(&toks[n - 1]) && toks[n - 2].c == ':' {
            let p = &toks[..n - 2];
            if p.is_empty() {
                return Err(self.err("empty prefix before `:*`", toks[n - 2].col));
            }
            if !p.iter().any(star) || self.effect == Effect::Allow {
                return Ok(CommandForm::Prefix(tok_text(p)));
            }
            return Ok(CommandForm::PrefixGlob(glob_pieces(
                p.iter().map(|t| (t.c, star(t))),
            )));
        }
        let stars = toks.iter().filter(|t| star(t)).count();
        if stars == 0 {
            return Ok(CommandForm::Exact(tok_text(toks)));
        }
        if optional_tail
            && self.dialect == Dialect::ClaudeCode
            && stars == 1
            && n >= 2
            && star(&toks[n - 1])
            && toks[n - 2].c == ' '
        {
            return Ok(CommandForm::Prefix(tok_text(&toks[..n - 2])));
        }
        Ok(CommandForm::Glob(glob_pieces(
            toks.iter().map(|t| (t.c, star(t))),
        )))
    }

    /// `Skill(name)`: exact; `name:*` and `name *` are prefixes in every
    /// dialect (SPEC §13); other stars glob.
    fn skill_form(&self, toks: &[Tok]) -> Result<CommandForm, Error> {
        let n = toks.len();
        let stars = toks.iter().filter(|t| t.is('*')).count();
        if stars == 1 && n >= 2 && toks[n - 1].is('*') && toks[n - 2].c == ' ' {
            return Ok(CommandForm::Prefix(tok_text(&toks[..n - 2])));
        }
        self.command_form(toks, false)
    }

    /// `WebFetch(domain:H)` (SPEC §5, §13 "Domains").
    fn domain(&self, toks: &[Tok]) -> Result<DomainPattern, Error> {
        let text = tok_text(toks);
        let Some(host) = text.strip_prefix("domain:") else {
            return Err(self.err(
                "a WebFetch rule takes a domain:HOST specifier",
                toks.first().map_or(0, |t| t.col),
            ));
        };
        let toks = &toks[7..];
        let end_col = self.chars.len().saturating_sub(1);
        if host == "*" {
            return Ok(DomainPattern::Any);
        }
        if host.is_empty() {
            return Err(self.err("empty host after domain:", end_col));
        }
        // Strip one trailing `.`, then a leading `*.`.
        let mut toks = toks;
        if toks.last().is_some_and(|t| t.c == '.') {
            toks = &toks[..toks.len() - 1];
        }
        if toks.len() == 1 && toks[0].is('*') {
            return Ok(DomainPattern::Any);
        }
        let mut subdomains = false;
        if toks.len() >= 2 && toks[0].is('*') && toks[1].c == '.' {
            subdomains = true;
            toks = &toks[2..];
        }
        if toks.is_empty() {
            return Err(self.err("empty host after domain:", end_col));
        }
        if let Some(t) = toks.iter().find(|t| t.c.is_whitespace()) {
            return Err(self.err("whitespace in host", t.col));
        }
        // Split into labels, remembering where each starts.
        let mut labels: Vec<&[Tok]> = Vec::new();
        let mut start = 0;
        for (i, t) in toks.iter().enumerate() {
            if t.c == '.' {
                labels.push(&toks[start..i]);
                start = i + 1;
            }
        }
        labels.push(&toks[start..]);
        let col_of = |l: &[Tok], fallback: usize| l.first().map_or(fallback, |t| t.col);
        for (k, l) in labels.iter().enumerate() {
            if l.is_empty() {
                let col = if k == 0 {
                    toks[0].col
                } else {
                    labels[k - 1].last().map_or(toks[0].col, |t| t.col + 1)
                };
                return Err(self.err("empty label in host", col));
            }
            if l.iter().any(|t| t.c == '*') && !(l.len() == 1 && l[0].is('*')) {
                let col = l
                    .iter()
                    .find(|t| t.c == '*')
                    .map_or(col_of(l, 0), |t| t.col);
                return Err(self.err("`*` must be a whole label of the host", col));
            }
        }
        let has_star = labels.iter().any(|l| l.len() == 1 && l[0].is('*'));
        let mut out = Vec::new();
        if !has_star {
            let whole = tok_text(toks);
            let ascii = self.host_to_ascii(&whole, toks[0].col)?;
            for l in ascii.split('.') {
                out.push(DomainLabel::Literal(l.to_string()));
            }
        } else {
            for l in &labels {
                if l.len() == 1 && l[0].is('*') {
                    out.push(DomainLabel::Star);
                    continue;
                }
                let ascii = self.host_to_ascii(&tok_text(l), l[0].col)?;
                for part in ascii.split('.') {
                    out.push(DomainLabel::Literal(part.to_string()));
                }
            }
        }
        if out
            .iter()
            .any(|l| matches!(l, DomainLabel::Literal(s) if s.is_empty()))
        {
            return Err(self.err("empty label in host", toks[0].col));
        }
        Ok(DomainPattern::Host {
            subdomains,
            labels: out,
        })
    }

    /// A host (or one label of it) in ASCII lower case, IDNs in punycode,
    /// through the WHATWG host parser of the `url` crate.
    fn host_to_ascii(&self, host: &str, col: usize) -> Result<String, Error> {
        if host.contains("://") || host.contains('/') {
            return Err(self.err("domain: takes a host name, not a URL", col));
        }
        match url::Host::parse(host) {
            Ok(url::Host::Domain(d)) => Ok(d.to_ascii_lowercase()),
            // A numeric label parses as an IPv4 address; a label alone keeps
            // its text.
            Ok(url::Host::Ipv4(a)) => {
                if host.contains('.') {
                    Ok(a.to_string())
                } else {
                    Ok(host.to_ascii_lowercase())
                }
            }
            Ok(url::Host::Ipv6(a)) => Ok(format!("[{a}]")),
            Err(e) => Err(self.err(format!("invalid host: {e}"), col)),
        }
    }

    /// A path specifier (SPEC §4, §13 "Paths").
    fn path(&self, spec_col: usize) -> Result<PathPattern, Error> {
        let toks = self.path_toks(spec_col);
        let mut rest: &[Tok] = &toks;
        if let Some(t) = rest.first() {
            if t.is('!') {
                return Err(self.err(
                    "a path rule cannot be negated with a leading `!` (write `\\!` for a literal `!`)",
                    t.col,
                ));
            }
        }
        let at = |r: &[Tok], i: usize, c: char| r.get(i).is_some_and(|t| t.is(c));
        let mut stripped_dot = false;
        let anchor = if at(rest, 0, '/') && at(rest, 1, '/') {
            rest = &rest[2..];
            Anchor::Root
        } else if at(rest, 0, '~') && at(rest, 1, '/') {
            rest = &rest[2..];
            Anchor::Home
        } else if at(rest, 0, '/') {
            rest = &rest[1..];
            Anchor::Source
        } else if at(rest, 0, '.') && at(rest, 1, '/') {
            rest = &rest[2..];
            stripped_dot = true;
            Anchor::Project
        } else {
            Anchor::Project
        };
        let case_insensitive = self.dialect == Dialect::ClaudeCode && self.effect.widens();
        // Split at every `/`: an escaped `\/` is a literal `/`, and a
        // literal `/` in a path separates names (as in git's wildmatch), so
        // that no segment holds a `/` no path name can match.
        let mut slices: Vec<&[Tok]> = Vec::new();
        let mut start = 0;
        for (i, t) in rest.iter().enumerate() {
            if t.c == '/' {
                slices.push(&rest[start..i]);
                start = i + 1;
            }
        }
        slices.push(&rest[start..]);
        let trailing = slices.len() > 1 && slices.last().is_some_and(|s| s.is_empty());
        if trailing {
            slices.pop();
        }
        slices.retain(|s| !s.is_empty());
        if slices.is_empty() {
            // `//`, `/`, `~/`, `./`: everything under the anchor.
            return Ok(PathPattern {
                anchor,
                segments: vec![Segment::DoubleStar],
                anchored: true,
                case_insensitive,
            });
        }
        let mut segments = Vec::new();
        for s in &slices {
            if s.len() == 2 && s[0].is('*') && s[1].is('*') {
                segments.push(Segment::DoubleStar);
                continue;
            }
            if s.len() == 1 && s[0].is('.') {
                continue;
            }
            if s.len() == 2 && s[0].is('.') && s[1].is('.') {
                return Err(self.err("a path pattern cannot contain a `..` segment", s[0].col));
            }
            segments.push(Segment::Pieces(self.seg_pieces(s)?));
        }
        if segments.is_empty() {
            segments.push(Segment::DoubleStar);
        }
        // Anchored by its shape when a `/` stands between two names; a `.`
        // segment names nothing (`././x` is `./x`, `a/.` is `a`).
        let shape_anchored = slices
            .iter()
            .filter(|s| !(s.len() == 1 && s[0].is('.')))
            .count()
            > 1;
        let ends_in_dirstar =
            !trailing && segments.len() > 1 && segments.last() == Some(&Segment::DoubleStar);
        let single_segment_dirstar =
            ends_in_dirstar && segments.len() == 2 && segments[0] != Segment::DoubleStar;
        if trailing && segments.last() != Some(&Segment::DoubleStar) {
            segments.push(Segment::DoubleStar);
        }
        if self.dialect == Dialect::ClaudeCode && ends_in_dirstar {
            // Claude Code strips a trailing `/**`: `x/**` also matches `x`.
            segments.pop();
        }
        let anchored = anchor != Anchor::Project
            || (stripped_dot && self.effect == Effect::Allow)
            || (shape_anchored
                && !(self.dialect == Dialect::ClaudeCode
                    && self.effect.widens()
                    && single_segment_dirstar));
        Ok(PathPattern {
            anchor,
            segments,
            anchored,
            case_insensitive,
        })
    }

    /// The pieces of one path segment: `*`, `?`, `[…]`, literals.
    fn seg_pieces(&self, toks: &[Tok]) -> Result<Vec<SegPiece>, Error> {
        let mut out: Vec<SegPiece> = Vec::new();
        let push_lit = |out: &mut Vec<SegPiece>, c: char| {
            if let Some(SegPiece::Literal(s)) = out.last_mut() {
                s.push(c);
            } else {
                out.push(SegPiece::Literal(c.to_string()));
            }
        };
        let mut i = 0;
        while i < toks.len() {
            let t = toks[i];
            if t.is('*') {
                if out.last() != Some(&SegPiece::Star) {
                    out.push(SegPiece::Star);
                }
                i += 1;
            } else if t.is('?') {
                out.push(SegPiece::Question);
                i += 1;
            } else if t.is('[') {
                match self.class(&toks[i..])? {
                    Some((piece, used)) => {
                        out.push(piece);
                        i += used;
                    }
                    None => {
                        push_lit(&mut out, '[');
                        i += 1;
                    }
                }
            } else {
                push_lit(&mut out, t.c);
                i += 1;
            }
        }
        Ok(out)
    }

    /// A character class starting at `toks[0]` (`[`): the piece and the
    /// number of tokens it used, or `None` when it is not closed (then the
    /// `[` is literal, as in gitignore).
    fn class(&self, toks: &[Tok]) -> Result<Option<(SegPiece, usize)>, Error> {
        let mut i = 1;
        let mut negated = false;
        if toks.get(i).is_some_and(|t| t.is('!') || t.is('^')) {
            negated = true;
            i += 1;
        }
        let first = i;
        let mut close = None;
        let mut j = i;
        while j < toks.len() {
            if toks[j].is(']') && j > first {
                close = Some(j);
                break;
            }
            j += 1;
        }
        let Some(close) = close else {
            return Ok(None);
        };
        let members = &toks[first..close];
        let mut ranges = Vec::new();
        let mut k = 0;
        while k < members.len() {
            let lo = members[k];
            if k + 2 < members.len() && members[k + 1].is('-') {
                let hi = members[k + 2];
                if hi.c < lo.c {
                    return Err(self.err(
                        format!("invalid range {}-{} in character class", lo.c, hi.c),
                        lo.col,
                    ));
                }
                ranges.push((lo.c, hi.c));
                k += 3;
            } else {
                ranges.push((lo.c, lo.c));
                k += 1;
            }
        }
        Ok(Some((SegPiece::Class { negated, ranges }, close + 1)))
    }
}

/// Glob pieces from `(char, is_wildcard_star)`: adjacent literals merged,
/// runs of stars merged (they match the same texts).
fn glob_pieces(chars: impl Iterator<Item = (char, bool)>) -> Vec<GlobPiece> {
    let mut out: Vec<GlobPiece> = Vec::new();
    for (c, star) in chars {
        if star {
            if out.last() != Some(&GlobPiece::Star) {
                out.push(GlobPiece::Star);
            }
        } else if let Some(GlobPiece::Literal(s)) = out.last_mut() {
            s.push(c);
        } else {
            out.push(GlobPiece::Literal(c.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::List;
    use GlobPiece::Star;

    fn parse(text: &str, effect: Effect, dialect: Dialect) -> Result<Rule, Error> {
        parse_rule(text, effect, dialect, Provenance::standalone(List::Deny))
    }

    fn lit(s: &str) -> GlobPiece {
        GlobPiece::Literal(s.to_string())
    }

    fn seg(s: &str) -> Segment {
        Segment::Pieces(vec![SegPiece::Literal(s.to_string())])
    }

    fn cmd(form: CommandForm) -> Pattern {
        Pattern::Command(CommandPattern {
            form,
            case_insensitive: false,
        })
    }

    const S: Dialect = Dialect::Strict;
    const C: Dialect = Dialect::ClaudeCode;
    const D: Effect = Effect::Deny;
    const A: Effect = Effect::Allow;

    /// The IR each form lowers to: what a compiled engine reads.
    #[test]
    fn ir_of_each_form() {
        let path = |anchor, segments, anchored, ci| {
            Pattern::Path(PathPattern {
                anchor,
                segments,
                anchored,
                case_insensitive: ci,
            })
        };
        let cases: Vec<(&str, Effect, Dialect, Pattern)> = vec![
            ("Bash", D, S, Pattern::Any),
            ("Bash()", D, S, Pattern::Any),
            ("Bash(*)", D, C, Pattern::Any),
            ("Bash(ls)", D, S, cmd(CommandForm::Exact("ls".into()))),
            ("Bash(ls:*)", D, S, cmd(CommandForm::Prefix("ls".into()))),
            ("Bash(ls *)", D, C, cmd(CommandForm::Prefix("ls".into()))),
            (
                "Bash(ls *)",
                D,
                S,
                cmd(CommandForm::Glob(vec![lit("ls "), Star])),
            ),
            (
                "Bash(a**b)",
                D,
                S,
                cmd(CommandForm::Glob(vec![lit("a"), Star, lit("b")])),
            ),
            (
                "Bash(* x *)",
                D,
                C,
                cmd(CommandForm::Glob(vec![Star, lit(" x "), Star])),
            ),
            (r"Bash(a\*b)", D, S, cmd(CommandForm::Exact("a*b".into()))),
            (
                "Bash(a*:*)",
                D,
                S,
                cmd(CommandForm::PrefixGlob(vec![lit("a"), Star])),
            ),
            ("Bash(a*:*)", A, S, cmd(CommandForm::Prefix("a*".into()))),
            (
                "Bash(git:* x)",
                D,
                S,
                cmd(CommandForm::Glob(vec![lit("git:"), Star, lit(" x")])),
            ),
            (
                "PowerShell(ls)",
                D,
                S,
                Pattern::Command(CommandPattern {
                    form: CommandForm::Exact("ls".into()),
                    case_insensitive: true,
                }),
            ),
            (
                "Read(.env)",
                D,
                S,
                path(Anchor::Project, vec![seg(".env")], false, false),
            ),
            (
                "Read(.env)",
                D,
                C,
                path(Anchor::Project, vec![seg(".env")], false, true),
            ),
            (
                "Read(.env)",
                A,
                C,
                path(Anchor::Project, vec![seg(".env")], false, false),
            ),
            (
                "Read(./a)",
                D,
                S,
                path(Anchor::Project, vec![seg("a")], false, false),
            ),
            (
                "Read(./a)",
                A,
                S,
                path(Anchor::Project, vec![seg("a")], true, false),
            ),
            (
                "Read(a/b)",
                D,
                S,
                path(Anchor::Project, vec![seg("a"), seg("b")], true, false),
            ),
            (
                "Read(src/**)",
                D,
                S,
                path(
                    Anchor::Project,
                    vec![seg("src"), Segment::DoubleStar],
                    true,
                    false,
                ),
            ),
            (
                "Read(src/**)",
                D,
                C,
                path(Anchor::Project, vec![seg("src")], false, true),
            ),
            (
                "Read(src/**)",
                A,
                C,
                path(Anchor::Project, vec![seg("src")], true, false),
            ),
            (
                "Read(a/b/**)",
                D,
                C,
                path(Anchor::Project, vec![seg("a"), seg("b")], true, true),
            ),
            (
                "Read(secrets/)",
                D,
                C,
                path(
                    Anchor::Project,
                    vec![seg("secrets"), Segment::DoubleStar],
                    false,
                    true,
                ),
            ),
            (
                "Read(././a)",
                D,
                C,
                path(Anchor::Project, vec![seg("a")], false, true),
            ),
            (
                "Read(a/.)",
                D,
                S,
                path(Anchor::Project, vec![seg("a")], false, false),
            ),
            (
                r"Read(a\/b)",
                D,
                S,
                path(Anchor::Project, vec![seg("a"), seg("b")], true, false),
            ),
            (
                "Read(//etc/x)",
                D,
                S,
                path(Anchor::Root, vec![seg("etc"), seg("x")], true, false),
            ),
            (
                "Read(~/x)",
                D,
                S,
                path(Anchor::Home, vec![seg("x")], true, false),
            ),
            (
                "Read(/x)",
                D,
                S,
                path(Anchor::Source, vec![seg("x")], true, false),
            ),
            (
                "Read(/**)",
                D,
                C,
                path(Anchor::Source, vec![Segment::DoubleStar], true, true),
            ),
            (
                "Read(//)",
                D,
                S,
                path(Anchor::Root, vec![Segment::DoubleStar], true, false),
            ),
            (
                "Read(*.[!a-c]?)",
                D,
                S,
                path(
                    Anchor::Project,
                    vec![Segment::Pieces(vec![
                        SegPiece::Star,
                        SegPiece::Literal(".".into()),
                        SegPiece::Class {
                            negated: true,
                            ranges: vec![('a', 'c')],
                        },
                        SegPiece::Question,
                    ])],
                    false,
                    false,
                ),
            ),
            ("Write(x)", D, C, Pattern::Opaque("x".into())),
            (
                "Write(x)",
                D,
                S,
                path(Anchor::Project, vec![seg("x")], false, false),
            ),
            (
                "WebFetch(domain:*)",
                D,
                S,
                Pattern::Domain(DomainPattern::Any),
            ),
            (
                "WebFetch(domain:*.Ex.COM.)",
                D,
                S,
                Pattern::Domain(DomainPattern::Host {
                    subdomains: true,
                    labels: vec![
                        DomainLabel::Literal("ex".into()),
                        DomainLabel::Literal("com".into()),
                    ],
                }),
            ),
            (
                "WebFetch(domain:a.*.bücher.de)",
                D,
                S,
                Pattern::Domain(DomainPattern::Host {
                    subdomains: false,
                    labels: vec![
                        DomainLabel::Literal("a".into()),
                        DomainLabel::Star,
                        DomainLabel::Literal("xn--bcher-kva".into()),
                        DomainLabel::Literal("de".into()),
                    ],
                }),
            ),
            (
                "Agent(Explore)",
                D,
                S,
                Pattern::Field {
                    field: "subagent_type".into(),
                    form: CommandForm::Exact("Explore".into()),
                },
            ),
            (
                "Agent(model:op*)",
                D,
                S,
                Pattern::Field {
                    field: "model".into(),
                    form: CommandForm::Glob(vec![lit("op"), Star]),
                },
            ),
            (
                "Skill(/x:*)",
                D,
                S,
                Pattern::Field {
                    field: "skill".into(),
                    form: CommandForm::Prefix("x".into()),
                },
            ),
            ("Foo(bar)", D, S, Pattern::Opaque("bar".into())),
        ];
        let mut bad = Vec::new();
        for (text, effect, dialect, want) in cases {
            match parse(text, effect, dialect) {
                Ok(r) if r.pattern == want => {}
                got => bad.push(format!(
                    "{text} ({effect}, {dialect:?}): got {got:?}, want {want:?}"
                )),
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn tool_parts() {
        let cases: Vec<(&str, Effect, ToolMatch)> = vec![
            ("Task", D, ToolMatch::Name("Agent".into())),
            ("mcp__gh", D, ToolMatch::McpServer("gh".into())),
            ("mcp__gh__*", A, ToolMatch::McpServer("gh".into())),
            ("mcp__gh__get", D, ToolMatch::Name("mcp__gh__get".into())),
            (
                "mcp__gh__get_*",
                A,
                ToolMatch::Glob(vec![lit("mcp__gh__get_"), Star]),
            ),
            ("*", D, ToolMatch::Glob(vec![Star])),
            ("mcp__*", D, ToolMatch::Glob(vec![lit("mcp__"), Star])),
        ];
        for (text, effect, want) in cases {
            let got = parse(text, effect, S).map(|r| r.tool);
            assert_eq!(got.as_ref(), Ok(&want), "{text}");
        }
    }

    #[test]
    fn errors_carry_provenance() {
        let prov = Provenance {
            source: "settings.json".into(),
            list: List::Ask,
            index: 4,
        };
        let e = parse_rule("Bash(ls", Effect::Ask, C, prov).unwrap_err();
        assert_eq!(e.location().source.as_deref(), Some("settings.json"));
        assert_eq!(e.location().item.as_deref(), Some("ask[4]"));
        assert_eq!(e.location().text.as_deref(), Some("Bash(ls"));
        assert_eq!(e.location().column, Some(7));
        assert_eq!(e.kind(), crate::ErrorKind::Rule);
        let e = parse("Bash(command:x)", D, C).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unsupported);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// No input panics the parser; every error points inside the text
        /// (or just past its end).
        #[test]
        fn parser_never_panics(text in r"(Bash|Read|WebFetch|Agent|Skill|mcp__a__|\*)?[()\\*:/.~!?\[\]^a-c \-_x0-9é]{0,16}\)?") {
            for dialect in [S, C] {
                for effect in [D, Effect::Ask, A] {
                    if let Err(e) = parse(&text, effect, dialect) {
                        let col = e.location().column.expect("a column");
                        proptest::prop_assert!(col <= text.chars().count());
                        proptest::prop_assert_eq!(e.location().text.as_deref(), Some(text.as_str()));
                    }
                }
            }
        }

        /// Text from the WebFetch and path shapes never panics either.
        #[test]
        fn domains_and_paths_never_panic(host in r"[a-zA-Z0-9*.\-\[\]:éü]{0,12}", path in r"[a-z*?\[\]!^/.~\\-]{0,12}") {
            let _ = parse(&format!("WebFetch(domain:{host})"), D, C);
            let _ = parse(&format!("Read({path})"), D, C);
            let _ = parse(&format!("Edit({path})"), A, S);
        }
    }
}
