//! Typed patterns: what a rule matches inside the calls it governs.
//!
//! The parser resolves every dialect- and effect-dependent point into these
//! types (SPEC §3.3, §4.2, §8.4), so a matcher reads a pattern without
//! knowing where it came from. Two identical patterns match identically.

/// One piece of a command, tool-name or field glob.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GlobPiece {
    /// Characters that must appear as they are (never empty; adjacent
    /// literals are merged).
    Literal(String),
    /// `*`: any run of characters, spaces and newlines included, possibly
    /// empty.
    Star,
    /// `?`: exactly one character (tuff `mcp` patterns only).
    Question,
}

/// Which tool calls a rule governs, by tool name (SPEC §2, §6).
///
/// Which *other* tools a rule name covers (`Read(…)` also governs `Grep` in
/// `claude-code`) is decided by [`crate::Rule::governs`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolMatch {
    /// One tool by its canonical name (`Task` is written `Agent`).
    Name(String),
    /// `mcp__S` or `mcp__S__*`: every tool of MCP server `S`.
    McpServer(String),
    /// A glob over the whole tool name (`*`, `mcp__*`, `mcp__S__get_*`).
    Glob(Vec<GlobPiece>),
}

/// A command pattern (`Bash(spec)`, `PowerShell(spec)`, SPEC §3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CommandPattern {
    /// The shape of the pattern.
    pub form: CommandForm,
    /// Compare ignoring case (`PowerShell` only; Bash is case-sensitive in
    /// every dialect).
    pub case_insensitive: bool,
}

/// The three shapes of a command (or field) pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CommandForm {
    /// Only the identical text matches.
    Exact(String),
    /// `P:*` — `P` itself, or `P` followed by a space (U+0020) and anything.
    /// In `claude-code`, a glob `P *` with exactly one wildcard star is read
    /// as this form too (its trailing ` *` is optional there); `P` is then
    /// empty for `Bash( *)`. From `P:*`, `P` is never empty.
    Prefix(String),
    /// A glob anchored at both ends; `*` spans any characters.
    Glob(Vec<GlobPiece>),
    /// `P:*` in a deny or ask rule whose `P` holds wildcard stars
    /// (`Bash(rm -rf /*:*)`): text matching the glob `P` itself, or the
    /// glob `P` followed by a space (U+0020) and anything. The same text in
    /// an allow rule is read as [`CommandForm::Prefix`] with `P` literal
    /// (the narrower reading, Claude Code's own). Never built from an
    /// allow rule.
    PrefixGlob(Vec<GlobPiece>),
}

/// What a path rule's pattern is relative to (SPEC §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// `//x`: the filesystem root.
    Root,
    /// `~/x`: the home directory.
    Home,
    /// `/x`: the policy source's root (see SPEC §4.1 for each source).
    Source,
    /// `./x` or `x`: the session's project directory.
    Project,
}

/// One character-matching piece inside a path segment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SegPiece {
    /// Literal characters (never empty; adjacent literals are merged).
    Literal(String),
    /// `*`: any run of characters other than `/` (a leading dot included).
    Star,
    /// `?`: one character other than `/`.
    Question,
    /// `[...]` (`[!...]`, `[^...]` negated): one character other than `/`.
    Class {
        /// `[!…]` / `[^…]`.
        negated: bool,
        /// Inclusive ranges; a single character `c` is `(c, c)`.
        ranges: Vec<(char, char)>,
    },
}

/// One `/`-separated segment of a path pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// `**`: zero or more whole segments; as the *last* segment, one or
    /// more (`x/**` matches what is inside `x`, not `x`).
    DoubleStar,
    /// A segment matched piece by piece.
    Pieces(Vec<SegPiece>),
}

/// A gitignore-style path pattern relative to an anchor (SPEC §4.2).
///
/// A path (made absolute, `.`/`..` collapsed, then taken relative to the
/// anchor directory; outside it nothing matches) matches when some leading
/// run of its segments matches `segments` — anchored at the anchor directory
/// when `anchored`, else starting at any segment — so a pattern that matches
/// a directory covers everything in it. A trailing `/` in the rule was
/// lowered to a final [`Segment::DoubleStar`]; in `claude-code` a trailing
/// `/**` was removed (so `x/**` matches `x` too), and `anchored` was
/// computed before that removal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathPattern {
    /// What the segments are relative to.
    pub anchor: Anchor,
    /// The pattern's segments (never empty).
    pub segments: Vec<Segment>,
    /// Matched from the anchor directory only (`true`), or at any depth.
    pub anchored: bool,
    /// Compare ignoring case (Unicode simple case folding).
    pub case_insensitive: bool,
}

/// One label of a domain pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DomainLabel {
    /// A literal label, ASCII lower case (IDNs in punycode).
    Literal(String),
    /// `*`: exactly one label.
    Star,
}

/// A `WebFetch(domain:H)` pattern (SPEC §5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DomainPattern {
    /// `domain:*`: every host (and an unparsable URL, for deny and ask).
    Any,
    /// A host pattern.
    Host {
        /// `*.` in front: one or more labels before `labels` (not the apex).
        subdomains: bool,
        /// The labels, left to right, trailing `.` removed.
        labels: Vec<DomainLabel>,
    },
}

/// What a rule matches within the calls it governs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// A bare tool, `Tool()` or `Tool(*)`: every call of the governed tools.
    Any,
    /// A command pattern matched against command text.
    Command(CommandPattern),
    /// A path pattern matched against the call's path.
    Path(PathPattern),
    /// A domain pattern matched against the host of the call's URL.
    Domain(DomainPattern),
    /// A pattern over one top-level scalar input field (`Agent(T)` on
    /// `subagent_type`, `Skill(name)` on `skill`, `Tool(param:value)`).
    /// Strings compare as they are, numbers and booleans as their JSON text;
    /// a missing or non-scalar field never matches.
    Field {
        /// The input field's name.
        field: String,
        /// The pattern its value must match.
        form: CommandForm,
    },
    /// A tuff command token rule `[program, w1, …]` (SPEC §7.2).
    Tokens(Vec<String>),
    /// A specifier of a tool whose specifiers toolgate does not know how to
    /// match (`Write(x)` in `claude-code`, `Foo(bar)`): kept for `lint` and
    /// explanations, never matches.
    Opaque(String),
}
