//! `toolgate lint`: findings about a policy's rules — rules that do not
//! parse, that name unknown tools, that can never decide, that allow more
//! than they seem to, or that common spellings of a command get around.
//!
//! ```
//! use toolgate::lint::{LintInput, Severity};
//! use toolgate::List;
//!
//! let mut input = LintInput::new();
//! input.add_rule_text("settings.json", List::Deny, 0, "Bash(git *)");
//! input.add_rule_text("settings.json", List::Allow, 0, "Bash(git push:*)");
//! let report = toolgate::lint::lint(&input);
//! let shadowed: Vec<_> = report.findings().iter().filter(|f| f.kind.name() == "shadowed").collect();
//! assert_eq!(shadowed.len(), 1);
//! assert_eq!(shadowed[0].severity, Severity::Warning);
//! assert_eq!(shadowed[0].rule.item(), "allow[0]");
//! assert!(!report.has_errors());
//! ```
//!
//! Every finding names its rule (text, source, list, index), says what is
//! wrong in one clause, points a caret at the column where that helps, and
//! gives a one-line fix. Findings are grouped by severity: errors (the
//! policy does not say what its author meant, or fails to load), warnings
//! (it says something other than it seems to), notes (harmless, worth
//! tidying).
//!
//! Shadowing is decided exactly, pattern by pattern: a rule is shadowed
//! when a rule of higher precedence, governing the same calls, matches
//! every text it matches — language inclusion decided on small DFAs
//! (see the README's "Lint" section). Shadowing that only the evaluator's
//! reading of a command shows (a wrapper, a program path, a subcommand
//! form, a tuff token rule), or that crosses kinds (a command allow whose
//! file a `Read` deny covers), is reported apart, each finding confirmed
//! by evaluating a witness call.

mod checks;
mod input;
pub(crate) mod lower;
mod normal;
mod render;
mod shadow;

use std::fmt;
use std::sync::Arc;

pub use checks::KNOWN_TOOLS;
pub use input::LintInput;

use crate::rule::{List, Rule};

/// How serious a finding is. The order is the order of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The policy fails to load, or a rule cannot mean what it says.
    Error,
    /// A rule does something other than it seems to.
    Warning,
    /// Harmless, worth tidying.
    Note,
}

impl Severity {
    /// `"error"`, `"warning"` or `"note"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding is about. [`Kind::name`] is its stable name (in `--json`
/// and in case files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A source that cannot be read or does not parse as a whole.
    LoadError,
    /// A rule string that does not parse (a deny or ask rule fails the
    /// load; an allow rule is dropped).
    ParseError,
    /// An allow rule of a form allow lists may not hold: dropped.
    DroppedAllow,
    /// `Tool(param:value)` on a primary field: ignored.
    PrimaryField,
    /// `Bash(timeout:*)`-style: read as an input-field rule, most likely
    /// meant for the program.
    ParameterLooksLikeProgram,
    /// A tool name no known tool has.
    UnknownTool,
    /// An unknown tool name close to a known one.
    LikelyTypo,
    /// `:*` that is not at the very end (a literal `:` and a wildcard).
    MisplacedPrefix,
    /// A specifier Claude Code never consults (`Write(x)`, `Glob(x)`).
    UnconsultedSpecifier,
    /// `/x` that looks absolute but is relative to the settings' root.
    SingleSlashPath,
    /// A space inside a path glob.
    SpaceInPath,
    /// The same rule twice.
    Duplicate,
    /// The same rule in allow and in ask or deny.
    AllowAndDeny,
    /// A rule that can never decide: a rule of higher precedence matches
    /// everything it matches.
    Shadowed,
    /// A command rule that a rule of higher precedence covers only as the
    /// evaluator reads commands (wrappers, program paths, options before
    /// the subcommand, tuff token rules): confirmed by the evaluator.
    ShadowedNormalised,
    /// A command rule whose one command reads, writes or contacts what a
    /// `Read`, `Edit` or `WebFetch` rule of higher precedence covers:
    /// confirmed by the evaluator.
    ShadowedAcrossKinds,
    /// A rule of the same effect matches everything this one matches.
    Redundant,
    /// An allow rule that also allows a command worth denying.
    BroadAllow,
    /// A deny or ask rule that a spelling of its own command evades (flags
    /// reordered, split or spelled long).
    DenyBypass,
    /// Deny and ask rules that naming the program by its path
    /// (`/usr/bin/rm`) evades: one finding per policy, listing them.
    PathBypass,
    /// Deny and ask rules that an option before the subcommand (`git -C .
    /// push`) evades: one finding per policy, listing them.
    SubcommandBypass,
    /// A WebFetch deny that `curl`/`wget` get around without a Bash deny.
    WebFetchBypass,
}

impl Kind {
    /// Every kind, in report order within a severity.
    pub const ALL: &'static [Kind] = &[
        Kind::LoadError,
        Kind::ParseError,
        Kind::DroppedAllow,
        Kind::PrimaryField,
        Kind::ParameterLooksLikeProgram,
        Kind::UnknownTool,
        Kind::LikelyTypo,
        Kind::MisplacedPrefix,
        Kind::UnconsultedSpecifier,
        Kind::SingleSlashPath,
        Kind::SpaceInPath,
        Kind::Duplicate,
        Kind::AllowAndDeny,
        Kind::Shadowed,
        Kind::ShadowedNormalised,
        Kind::ShadowedAcrossKinds,
        Kind::Redundant,
        Kind::BroadAllow,
        Kind::DenyBypass,
        Kind::PathBypass,
        Kind::SubcommandBypass,
        Kind::WebFetchBypass,
    ];

    /// The kind's stable name (`shadowed`, `misplaced-prefix`, …).
    pub fn name(self) -> &'static str {
        match self {
            Kind::LoadError => "load-error",
            Kind::ParseError => "parse-error",
            Kind::DroppedAllow => "dropped-allow",
            Kind::PrimaryField => "primary-field",
            Kind::ParameterLooksLikeProgram => "parameter-looks-like-program",
            Kind::UnknownTool => "unknown-tool",
            Kind::LikelyTypo => "likely-typo",
            Kind::MisplacedPrefix => "misplaced-prefix",
            Kind::UnconsultedSpecifier => "unconsulted-specifier",
            Kind::SingleSlashPath => "single-slash-path",
            Kind::SpaceInPath => "space-in-path",
            Kind::Duplicate => "duplicate",
            Kind::AllowAndDeny => "allow-and-deny",
            Kind::Shadowed => "shadowed",
            Kind::ShadowedNormalised => "shadowed-normalised",
            Kind::ShadowedAcrossKinds => "shadowed-across-kinds",
            Kind::Redundant => "redundant",
            Kind::BroadAllow => "broad-allow",
            Kind::DenyBypass => "deny-bypass",
            Kind::PathBypass => "path-bypass",
            Kind::SubcommandBypass => "subcommand-bypass",
            Kind::WebFetchBypass => "webfetch-bypass",
        }
    }

    /// The kind of a stable name.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The severity findings of this kind have.
    pub fn severity(self) -> Severity {
        match self {
            Kind::LoadError | Kind::ParseError | Kind::MisplacedPrefix => Severity::Error,
            Kind::UnknownTool
            | Kind::Duplicate
            | Kind::Redundant
            | Kind::PathBypass
            | Kind::SubcommandBypass => Severity::Note,
            _ => Severity::Warning,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rule a finding is about: its text and where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleRef {
    /// The rule as written (a tuff rule: its rendering).
    pub text: String,
    /// Its source file (or `<command line>`).
    pub source: Arc<str>,
    /// Its list.
    pub list: List,
    /// Its 0-based index within the list.
    pub index: usize,
}

impl RuleRef {
    /// `deny[3]`.
    pub fn item(&self) -> String {
        format!("{}[{}]", self.list.as_str(), self.index)
    }

    pub(crate) fn of(rule: &Rule) -> RuleRef {
        RuleRef {
            text: rule.text.clone(),
            source: rule.provenance.source.clone(),
            list: rule.provenance.list,
            index: rule.provenance.index,
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What it is about.
    pub kind: Kind,
    /// How serious it is.
    pub severity: Severity,
    /// The rule it is about.
    pub rule: RuleRef,
    /// What is wrong, one lowercase clause.
    pub message: String,
    /// The 0-based character column in the rule text the caret points at.
    pub column: Option<usize>,
    /// How to fix it, one line.
    pub fix: String,
    /// The other rule involved (the shadowing rule, the first copy).
    pub related: Option<RuleRef>,
}

impl Finding {
    pub(crate) fn new(kind: Kind, rule: RuleRef, message: impl Into<String>) -> Finding {
        Finding {
            kind,
            severity: kind.severity(),
            rule,
            message: message.into(),
            column: None,
            fix: String::new(),
            related: None,
        }
    }

    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = fix.into();
        self
    }

    pub(crate) fn at(mut self, column: usize) -> Finding {
        self.column = Some(column);
        self
    }

    pub(crate) fn related(mut self, other: RuleRef) -> Finding {
        self.related = Some(other);
        self
    }
}

/// The findings of one lint run, grouped by severity, each group in
/// policy order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    findings: Vec<Finding>,
}

impl Report {
    /// The findings: errors, then warnings, then notes.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// How many findings have this severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// Whether there is at least one error (the exit code of `lint` is 1).
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// The report for a person: findings grouped by severity, carets under
    /// the columns, one fix line each, and a summary line.
    pub fn to_text(&self) -> String {
        render::text(self)
    }

    /// The report for machines: `{"findings": [...], "errors": n,
    /// "warnings": n, "notes": n}`; each finding has `kind`, `severity`,
    /// `source`, `rule` (`text`, `source`, `list`, `index`; `null` for a
    /// file that fails as a whole), `message`, `column`, `fix`, `related`.
    pub fn to_json(&self) -> serde_json::Value {
        render::json(self)
    }
}

/// The regular expression lint lowers a rule's pattern to for deciding
/// shadowing, matched against a whole haystack: the command text, the
/// path relative to the rule's anchor, the host, the field value, or (for
/// a bare rule) the tool name. `None` for patterns lint does not lower
/// (tuff token rules, opaque specifiers).
///
/// ```
/// use toolgate::rule::claude::parse_rule;
/// use toolgate::{Dialect, Effect, List, Provenance};
/// let r = parse_rule("Bash(git push:*)", Effect::Deny, Dialect::ClaudeCode,
///                    Provenance::standalone(List::Deny)).unwrap();
/// let re = toolgate::lint::lowered_regex(&r).unwrap();
/// assert!(re.contains("push"));
/// ```
pub fn lowered_regex(rule: &Rule) -> Option<String> {
    use crate::rule::Pattern;
    let l = match &rule.pattern {
        Pattern::Command(c) => lower::command(&c.form, c.case_insensitive),
        Pattern::Path(p) => lower::path(p),
        Pattern::Domain(d) => lower::domain(d),
        Pattern::Field { form, .. } => lower::command(form, false),
        Pattern::Any => lower::tool(&rule.tool),
        Pattern::Tokens(_) | Pattern::Opaque(_) => return None,
    };
    Some(l.regex)
}

/// Lints `input`: every check, shadowing included.
pub fn lint(input: &LintInput) -> Report {
    lint_with(input, &Config::new())
}

/// Which checks a lint run makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    shadowing: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// Every check.
    pub fn new() -> Config {
        Config { shadowing: true }
    }

    /// Whether to decide shadowed and redundant rules, pattern-level and
    /// through toolgate's reading of commands or across kinds (default:
    /// yes).
    pub fn shadowing(mut self, yes: bool) -> Config {
        self.shadowing = yes;
        self
    }
}

/// Lints `input` with the checks `config` chooses.
pub fn lint_with(input: &LintInput, config: &Config) -> Report {
    let mut findings = input.load_findings();
    let rules = input.rules();
    checks::per_rule(&input.entries, &mut findings);
    checks::duplicates(&rules, &mut findings);
    if config.shadowing {
        shadow::shadowing(&rules, &mut findings);
        normal::shadowing(&rules, &mut findings);
    }
    checks::broad_allows(&rules, &mut findings);
    checks::deny_bypasses(&rules, &mut findings);
    checks::webfetch_bypass(&rules, &mut findings);
    let pos = input.positions();
    findings.sort_by_key(|f| {
        let key = (f.rule.source.clone(), f.rule.list, f.rule.index);
        let at = pos.get(&key).copied().unwrap_or(usize::MAX);
        (f.severity, at, f.kind)
    });
    Report { findings }
}
