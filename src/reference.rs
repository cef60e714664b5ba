//! The reference matcher: deliberately naive, checkable by eye.
//!
//! One small hand-written matcher per pattern kind and a loop over rules.
//! It is the oracle every compiled engine is tested against, so it is
//! written for clarity, not speed, and it uses no regex (the compiled
//! engine lowers patterns to regex; an oracle built the same way would
//! share its mistakes).
//!
//! Globs are matched by a dynamic programme over (pattern position, text
//! position) — quadratic, never exponential. Path patterns try every
//! leading run of the path's segments, at every start when unanchored.
//!
//! # Case folding
//!
//! Case-insensitive patterns (PowerShell commands, claude-code deny and ask
//! paths) compare characters by [`fold_char`]: a character's upper case,
//! then that character's lower case, where each is a single character;
//! otherwise the character itself. This agrees with Unicode simple case
//! folding (what the compiled engine's `(?i)` uses) on ASCII, Latin,
//! Greek (`Σ σ ς`), Cyrillic, the Kelvin and Ångström signs and `ſ`; the
//! Turkish dotted and dotless i (`İ`, `ı`) fold only to themselves, as in
//! simple folding. Rare characters whose full and simple mappings disagree
//! may differ; the tests pin the cases above.

use crate::error::{Error, ErrorKind};
use crate::eval::call::ToolCall;
use crate::rule::Rule;
use crate::rule::claude::canonical_tool;
use crate::rule::pattern::{
    Anchor, CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, PathPattern,
    Pattern, SegPiece, Segment, ToolMatch,
};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// What `match-rules` knows beyond the rule and the call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchContext {
    /// The session directory (`--cwd DIR`), absolute. Without it, relative
    /// call paths are relative to an unnamed session directory and
    /// absolute call paths match only `//` rules (SPEC §13 "Paths").
    pub cwd: Option<PathBuf>,
}

impl MatchContext {
    /// A context without a session directory.
    pub fn new() -> MatchContext {
        MatchContext::default()
    }

    /// A context whose session directory is `cwd` (absolute).
    pub fn with_cwd(cwd: impl Into<PathBuf>) -> MatchContext {
        MatchContext {
            cwd: Some(cwd.into()),
        }
    }
}

// ---------------------------------------------------------------------------
// Characters

/// The case-folded form of `c` (see the module documentation).
pub fn fold_char(c: char) -> char {
    fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
        let first = it.next()?;
        if it.next().is_some() {
            None
        } else {
            Some(first)
        }
    }
    // The Turkish i's have no simple case folding.
    if c == '\u{130}' || c == '\u{131}' {
        return c;
    }
    let upper = single(c.to_uppercase()).unwrap_or(c);
    single(upper.to_lowercase()).unwrap_or(upper)
}

/// Whether `a` and `b` are the same character, ignoring case when `ci`.
fn char_eq(a: char, b: char, ci: bool) -> bool {
    a == b || (ci && fold_char(a) == fold_char(b))
}

/// Whether `c` lies in one of `ranges`; ignoring case, whether any of its
/// case forms does.
pub(crate) fn in_ranges(c: char, ranges: &[(char, char)], ci: bool) -> bool {
    let inside = |x: char| ranges.iter().any(|&(lo, hi)| lo <= x && x <= hi);
    if inside(c) {
        return true;
    }
    if !ci {
        return false;
    }
    if c.is_ascii() {
        // An ASCII letter folds with its other case only, but for `k`
        // (also the Kelvin sign) and `s` (also the long s): no table, as
        // the evaluator asks this on its hot path.
        let (l, u) = (c.to_ascii_lowercase(), c.to_ascii_uppercase());
        return inside(l)
            || inside(u)
            || match l {
                'k' => inside('\u{212A}'),
                's' => inside('\u{17F}'),
                _ => false,
            };
    }
    let folded = fold_char(c);
    if inside(folded) {
        return true;
    }
    // Small classes are searched member by member; only a wide one asks
    // the table of every character's fold (built once, a few ms).
    let width: u32 = ranges
        .iter()
        .map(|&(lo, hi)| (hi as u32).saturating_sub(lo as u32).saturating_add(1))
        .fold(0, u32::saturating_add);
    if width <= 4096 {
        ranges
            .iter()
            .any(|&(lo, hi)| (lo..=hi).any(|x| fold_char(x) == folded))
    } else {
        fold_orbit(folded).iter().any(|&x| inside(x))
    }
}

/// Every character other than `f` whose fold is `f`, for a folded `f`: the
/// characters a case-insensitive class must accept for any of them (`[K]`
/// with the Kelvin sign holds `k` and `K`). Built once by folding every
/// character of the planes that have case (none above U+1FFFF does).
fn fold_orbit(f: char) -> &'static [char] {
    static ORBITS: std::sync::OnceLock<std::collections::HashMap<char, Vec<char>>> =
        std::sync::OnceLock::new();
    let orbits = ORBITS.get_or_init(|| {
        let mut m: std::collections::HashMap<char, Vec<char>> = std::collections::HashMap::new();
        for d in (0..0x2_0000u32).filter_map(char::from_u32) {
            let g = fold_char(d);
            if g != d {
                m.entry(g).or_default().push(d);
            }
        }
        m
    });
    orbits.get(&f).map_or(&[], Vec::as_slice)
}

// ---------------------------------------------------------------------------
// The one glob engine: atoms against characters.

/// One step of a glob.
enum Atom<'a> {
    /// This character.
    Char(char),
    /// Any one character.
    One,
    /// Any run of characters, possibly empty.
    Any,
    /// One character in (or, negated, not in) the ranges.
    Class(bool, &'a [(char, char)]),
}

/// Whether `atoms` match all of `text`. `done[j]` holds "the atoms after
/// this one match `text[j..]`"; the atoms are taken from last to first.
fn atoms_match(atoms: &[Atom<'_>], text: &[char], ci: bool) -> bool {
    let n = text.len();
    let mut done = vec![false; n + 1];
    done[n] = true;
    for atom in atoms.iter().rev() {
        let mut here = vec![false; n + 1];
        for j in (0..=n).rev() {
            let one = |ok: bool| ok && j < n && done[j + 1];
            here[j] = match *atom {
                Atom::Char(c) => one(j < n && char_eq(c, text[j], ci)),
                Atom::One => one(true),
                Atom::Class(negated, ranges) => {
                    one(j < n && in_ranges(text[j], ranges, ci) != negated)
                }
                // Empty here, or one character and then still `Any`.
                Atom::Any => done[j] || (j < n && here[j + 1]),
            };
        }
        done = here;
    }
    done[0]
}

fn glob_atoms(pieces: &[GlobPiece]) -> Vec<Atom<'_>> {
    let mut atoms = Vec::new();
    for p in pieces {
        match p {
            GlobPiece::Literal(s) => atoms.extend(s.chars().map(Atom::Char)),
            GlobPiece::Star => atoms.push(Atom::Any),
            GlobPiece::Question => atoms.push(Atom::One),
        }
    }
    atoms
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// Whether `text` begins with `prefix` and then has a space (or ends).
fn prefix_match(prefix: &str, text: &str, ci: bool) -> bool {
    let p = chars(prefix);
    let t = chars(text);
    t.len() >= p.len()
        && p.iter().zip(&t).all(|(&a, &b)| char_eq(a, b, ci))
        && (t.len() == p.len() || t[p.len()] == ' ')
}

/// Whether `text` matches a command form (SPEC §3.1), ignoring case when
/// `ci`.
fn form_matches(form: &CommandForm, text: &str, ci: bool) -> bool {
    match form {
        CommandForm::Exact(s) => {
            let (a, b) = (chars(s), chars(text));
            a.len() == b.len() && a.iter().zip(&b).all(|(&x, &y)| char_eq(x, y, ci))
        }
        CommandForm::Prefix(p) => prefix_match(p, text, ci),
        CommandForm::Glob(pieces) => atoms_match(&glob_atoms(pieces), &chars(text), ci),
        CommandForm::PrefixGlob(pieces) => {
            let text = chars(text);
            let mut atoms = glob_atoms(pieces);
            if atoms_match(&atoms, &text, ci) {
                return true;
            }
            atoms.push(Atom::Char(' '));
            atoms.push(Atom::Any);
            atoms_match(&atoms, &text, ci)
        }
    }
}

// ---------------------------------------------------------------------------
// Haystack-level matchers

/// Whether a command text matches a command pattern (SPEC §3.1): the whole
/// text, as given.
pub fn command_matches(p: &CommandPattern, text: &str) -> bool {
    form_matches(&p.form, text, p.case_insensitive)
}

/// Whether a path matches a path pattern (SPEC §4.2). `rel` is normalised
/// and relative to the pattern's anchor directory: segments joined by `/`,
/// no leading `/`, no `.` or `..` segments. The anchor directory itself
/// (an empty `rel`) matches nothing.
pub fn path_matches(p: &PathPattern, rel: &str) -> bool {
    if rel.is_empty() {
        return false;
    }
    let segs: Vec<&str> = rel.split('/').collect();
    let starts = if p.anchored { 1 } else { segs.len() };
    for start in 0..starts {
        // Some leading run of the path from `start` matches: a pattern that
        // matches a directory covers everything in it.
        for end in start + 1..=segs.len() {
            if segments_match(&p.segments, &segs[start..end], p.case_insensitive) {
                return true;
            }
        }
    }
    false
}

/// Whether pattern segments match exactly these path segments.
fn segments_match(pat: &[Segment], segs: &[&str], ci: bool) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((Segment::DoubleStar, rest)) => {
            // Zero or more segments; as the last, one or more.
            let least = if rest.is_empty() { 1 } else { 0 };
            (least..=segs.len()).any(|k| segments_match(rest, &segs[k..], ci))
        }
        Some((Segment::Pieces(pieces), rest)) => match segs.split_first() {
            Some((first, others)) => {
                segment_matches(pieces, first, ci) && segments_match(rest, others, ci)
            }
            None => false,
        },
    }
}

/// Whether one path segment matches one pattern segment.
fn segment_matches(pieces: &[SegPiece], seg: &str, ci: bool) -> bool {
    let mut atoms = Vec::new();
    for p in pieces {
        match p {
            SegPiece::Literal(s) => atoms.extend(s.chars().map(Atom::Char)),
            SegPiece::Star => atoms.push(Atom::Any),
            SegPiece::Question => atoms.push(Atom::One),
            SegPiece::Class { negated, ranges } => atoms.push(Atom::Class(*negated, ranges)),
        }
    }
    atoms_match(&atoms, &chars(seg), ci)
}

/// Whether a host matches a domain pattern (SPEC §5). `host` is ASCII
/// lower case, IDNs in punycode, a trailing `.` stripped.
pub fn domain_matches(p: &DomainPattern, host: &str) -> bool {
    match p {
        DomainPattern::Any => true,
        DomainPattern::Host { subdomains, labels } => {
            let hl: Vec<&str> = host.split('.').collect();
            let skip = if *subdomains {
                // One or more labels in front: never the apex.
                if hl.len() <= labels.len() {
                    return false;
                }
                hl.len() - labels.len()
            } else {
                if hl.len() != labels.len() {
                    return false;
                }
                0
            };
            labels.iter().zip(&hl[skip..]).all(|(l, h)| match l {
                DomainLabel::Literal(s) => s.eq_ignore_ascii_case(h),
                DomainLabel::Star => !h.is_empty(),
            })
        }
    }
}

/// Whether a tool name matches a rule's tool part (SPEC §6). `Task` is
/// read as `Agent`. Which *other* tools a rule covers is
/// [`Rule::governs`]'s business.
pub fn tool_matches(t: &ToolMatch, tool: &str) -> bool {
    let tool = canonical_tool(tool);
    match t {
        ToolMatch::Name(n) => n == tool,
        ToolMatch::McpServer(s) => {
            let base = format!("mcp__{s}");
            tool == base || tool.starts_with(&format!("{base}__"))
        }
        ToolMatch::Glob(pieces) => atoms_match(&glob_atoms(pieces), &chars(tool), false),
    }
}

/// Whether a top-level scalar input field matches a form: strings as they
/// are, numbers and booleans as their JSON text; a missing, `null` or
/// non-scalar field never matches.
pub fn field_matches(field: &str, form: &CommandForm, input: &Map<String, Value>) -> bool {
    let text = match input.get(field) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => return false,
    };
    form_matches(form, &text, false)
}

// ---------------------------------------------------------------------------
// Call level: the match-rules semantics

fn call_error(message: String) -> Error {
    Error::new(ErrorKind::Call, message)
}

/// Does `rule` match `call`? The `match-rules` semantics (SPEC §10.1,
/// §4.1 last paragraph, §13 "Paths … In match-rules"):
///
/// - a rule that does not govern the call's tool does not match;
/// - command rules see the raw `command`, as given (no shell reading);
/// - path rules see the call's `file_path`/`path`/`notebook_path` (for
///   `Glob`, `Grep` and `LSP` without one, the session directory): `.` and
///   `..` collapsed; a relative path is relative to the session directory
///   and, when it climbs out, matches no relative rule; an absolute path
///   matches `//` rules, and relative rules only when `ctx.cwd` is given
///   and the path lies under it; `~` is the literal segment `~` on both
///   sides; `/x` rules are anchored at the session directory;
/// - domain rules see the host of `url`; a URL that does not parse or has
///   no host is an error;
/// - a field the rule needs that is missing or not a string is an error
///   (kind [`ErrorKind::Call`]).
pub fn match_rule(rule: &Rule, call: &ToolCall, ctx: &MatchContext) -> Result<bool, Error> {
    if !rule.governs(&call.tool) {
        return Ok(false);
    }
    match &rule.pattern {
        Pattern::Any => Ok(true),
        Pattern::Opaque(_) => Ok(false),
        Pattern::Command(p) => match call.command() {
            Some(text) => Ok(command_matches(p, text)),
            None => Err(call_error(format!(
                "a {} call needs a string command for rule {}",
                call.tool, rule.text
            ))),
        },
        Pattern::Field { field, form } => Ok(field_matches(field, form, &call.input)),
        Pattern::Domain(p) => {
            let Some(url) = call.url() else {
                return Err(call_error(format!(
                    "a {} call needs a string url for rule {}",
                    call.tool, rule.text
                )));
            };
            Ok(domain_matches(p, &host_of(url)?))
        }
        Pattern::Path(p) => {
            let path = match call.path() {
                Some(path) => path,
                None if matches!(call.tool.as_str(), "Glob" | "Grep" | "LSP") => ".",
                None => {
                    return Err(call_error(format!(
                        "a {} call needs a string file_path (or path) for rule {}",
                        call.tool, rule.text
                    )));
                }
            };
            path_rule_matches(p, path, ctx)
        }
        Pattern::Tokens(_) => Err(call_error(format!(
            "rule {} is a command token rule, which needs a shell reading",
            rule.text
        ))),
    }
}

/// The host of a URL as domain rules see it: ASCII lower case, IDNs in
/// punycode (the WHATWG parser of the `url` crate), trailing `.` stripped.
pub fn host_of(url: &str) -> Result<String, Error> {
    let parsed =
        url::Url::parse(url).map_err(|e| call_error(format!("url {url:?} does not parse: {e}")))?;
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => format!("[{a}]"),
        None => return Err(call_error(format!("url {url:?} has no host"))),
    };
    let host = host.strip_suffix('.').unwrap_or(&host).to_string();
    if host.is_empty() {
        return Err(call_error(format!("url {url:?} has no host")));
    }
    Ok(host)
}

/// A path rule against a call path, in `match-rules` (see [`match_rule`]).
fn path_rule_matches(p: &PathPattern, path: &str, ctx: &MatchContext) -> Result<bool, Error> {
    // The path as an absolute path (when it can be one) and relative to
    // the session directory (when it lies inside it).
    let (abs, rel) = crate::paths::session_forms(path, ctx.cwd.as_deref()).map_err(call_error)?;
    Ok(match p.anchor {
        Anchor::Root => abs.is_some_and(|a| path_matches(p, a.trim_start_matches('/'))),
        Anchor::Home => rel.is_some_and(|r| match r.split_once('/') {
            Some(("~", rest)) => path_matches(p, rest),
            _ => false,
        }),
        Anchor::Source | Anchor::Project => rel.is_some_and(|r| path_matches(p, &r)),
    })
}

/// The indices of the rules that match `call`, in order: the loop over
/// rules every engine is compared with.
pub fn matching_rules(
    rules: &[Rule],
    call: &ToolCall,
    ctx: &MatchContext,
) -> Result<Vec<usize>, Error> {
    let mut out = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        if match_rule(rule, call, ctx)? {
            out.push(i);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        let same = [
            ('a', 'A'),
            ('z', 'Z'),
            ('é', 'É'),
            ('ß', 'ẞ'),
            ('σ', 'Σ'),
            ('ς', 'Σ'),
            ('ς', 'σ'),
            ('k', '\u{212A}'),
            ('å', '\u{212B}'),
            ('s', 'ſ'),
            ('ж', 'Ж'),
            ('ǆ', 'ǅ'),
            ('ǅ', 'Ǆ'),
        ];
        for (a, b) in same {
            assert!(char_eq(a, b, true), "{a} {b}");
            assert!(!char_eq(a, b, false), "{a} {b} case-sensitive");
        }
        let differ = [
            ('i', 'ı'),
            ('I', 'İ'),
            ('i', 'İ'),
            ('a', 'b'),
            ('1', '!'),
            ('ß', 's'),
        ];
        for (a, b) in differ {
            assert!(!char_eq(a, b, true), "{a} {b}");
        }
    }

    /// A case-insensitive class holds every character that folds like one
    /// of its members: `[K]` (Kelvin sign) holds `k` and `K`, `[a-z]`
    /// holds the Kelvin sign and the long s, as regex's `(?i)` does.
    #[test]
    fn case_insensitive_classes_hold_the_whole_fold() {
        let kelvin = [('\u{212A}', '\u{212A}')];
        for c in ['k', 'K', '\u{212A}'] {
            assert!(in_ranges(c, &kelvin, true), "{c}");
        }
        assert!(!in_ranges('k', &kelvin, false));
        for c in ['\u{212A}', '\u{17F}', 'Q'] {
            assert!(in_ranges(c, &[('a', 'z')], true), "{c}");
        }
        assert!(in_ranges('å', &[('\u{212B}', '\u{212B}')], true));
        // A wide class: through the table of folds.
        assert!(in_ranges('å', &[('\u{2000}', '\u{3000}')], true));
        assert!(!in_ranges('é', &[('\u{2000}', '\u{3000}')], true));
        assert!(in_ranges('\u{3C2}', &[('\u{3A3}', '\u{3A3}')], true));
        assert!(!in_ranges('ı', &[('i', 'i')], true));
        assert!(!in_ranges('b', &[('a', 'a')], true));
    }

    /// `fold_char` against the `regex` crate's `(?i)` (simple case
    /// folding) on Latin, Greek, Cyrillic, Armenian, Latin Extended
    /// Additional, Greek Extended, letterlike symbols and Cherokee: for
    /// every character and each of its case forms, both agree on whether
    /// the two are the same ignoring case.
    #[test]
    fn folding_agrees_with_regex_simple_case_folding() {
        let ranges = [
            (0x20u32, 0x600u32),
            (0x1E00, 0x2000),
            (0x2100, 0x2150),
            (0x13A0, 0x13F8),
            (0xAB70, 0xABC0),
        ];
        let mut bad = Vec::new();
        for (lo, hi) in ranges {
            for c in (lo..hi).filter_map(char::from_u32) {
                let mut forms: Vec<char> = vec![fold_char(c)];
                forms.extend(c.to_lowercase());
                forms.extend(c.to_uppercase());
                let re = regex::Regex::new(&format!("(?i)^{}$", regex::escape(&c.to_string())))
                    .expect("a regex of one character");
                for d in forms {
                    let ours = char_eq(c, d, true);
                    let theirs = re.is_match(&d.to_string());
                    if ours != theirs {
                        bad.push(format!(
                            "{c:?} (U+{:04X}) vs {d:?} (U+{:04X}): ours {ours}, regex {theirs}",
                            c as u32, d as u32
                        ));
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{} disagreements:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }

    #[test]
    fn globs() {
        let g = |pieces: Vec<GlobPiece>, text: &str| {
            atoms_match(&glob_atoms(&pieces), &chars(text), false)
        };
        use GlobPiece::*;
        let lit = |s: &str| Literal(s.to_string());
        assert!(g(vec![lit("npm run "), Star], "npm run build"));
        assert!(!g(vec![lit("npm run "), Star], "npmrun"));
        assert!(g(vec![lit("npm"), Star], "npm"));
        assert!(g(vec![Star], ""));
        assert!(g(vec![Star, lit(" install")], "npm install"));
        assert!(!g(vec![Star, lit(" install")], "install"));
        assert!(g(vec![lit("a"), Question, lit("c")], "abc"));
        assert!(!g(vec![lit("a"), Question, lit("c")], "ac"));
        assert!(g(
            vec![lit("git "), Star, lit(" main")],
            "git push origin main"
        ));
        assert!(!g(vec![lit("git "), Star, lit(" main")], "git main"));
        assert!(g(vec![lit("x"), Star], "x\ny"));
        // Many stars stay fast (quadratic).
        let many: Vec<GlobPiece> = (0..200).flat_map(|_| [lit("a"), Star]).collect();
        assert!(!g(many, &"a".repeat(150)));
    }

    /// The command glob engine agrees with a regex translation of the same
    /// pattern (a second, independent implementation).
    fn regex_of(pieces: &[GlobPiece]) -> String {
        let mut re = String::from("(?s)^");
        for p in pieces {
            match p {
                GlobPiece::Literal(s) => re.push_str(&regex::escape(s)),
                GlobPiece::Star => re.push_str(".*"),
                GlobPiece::Question => re.push('.'),
            }
        }
        re
    }

    fn pieces_strategy() -> impl proptest::strategy::Strategy<Value = Vec<GlobPiece>> {
        use proptest::prelude::*;
        proptest::collection::vec(
            prop_oneof![
                "[ab .]{1,3}".prop_map(GlobPiece::Literal),
                Just(GlobPiece::Star),
                Just(GlobPiece::Question),
            ],
            0..6,
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn command_forms_agree_with_regex(pieces in pieces_strategy(), text in "[ab .\n]{0,8}") {
            let glob = regex::Regex::new(&format!("{}$", regex_of(&pieces))).unwrap();
            let prefix_glob = regex::Regex::new(&format!("{}(?: .*)?$", regex_of(&pieces))).unwrap();
            proptest::prop_assert_eq!(
                form_matches(&CommandForm::Glob(pieces.clone()), &text, false),
                glob.is_match(&text)
            );
            proptest::prop_assert_eq!(
                form_matches(&CommandForm::PrefixGlob(pieces.clone()), &text, false),
                prefix_glob.is_match(&text)
            );
            let lit: String = pieces.iter().map(|p| match p {
                GlobPiece::Literal(s) => s.as_str(),
                _ => "",
            }).collect();
            let prefix = regex::Regex::new(&format!("(?s)^{}(?: .*)?$", regex::escape(&lit))).unwrap();
            proptest::prop_assert_eq!(
                form_matches(&CommandForm::Prefix(lit.clone()), &text, false),
                prefix.is_match(&text)
            );
        }

        /// Path patterns agree with a regex translation: `**` as a run of
        /// whole segments, a leading run of the path, any start when
        /// unanchored.
        #[test]
        fn path_patterns_agree_with_regex(
            segs in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(Segment::DoubleStar),
                    proptest::strategy::Strategy::prop_map("[ab]{1,2}", |s| Segment::Pieces(vec![SegPiece::Literal(s)])),
                    proptest::strategy::Just(Segment::Pieces(vec![SegPiece::Star])),
                    proptest::strategy::Just(Segment::Pieces(vec![SegPiece::Literal("a".into()), SegPiece::Question])),
                    proptest::strategy::Just(Segment::Pieces(vec![SegPiece::Class { negated: true, ranges: vec![('a', 'a')] }])),
                ],
                1..4,
            ),
            anchored in proptest::bool::ANY,
            path in proptest::collection::vec("[ab]{1,2}", 1..5),
        ) {
            let mut re = String::from("^");
            if !anchored {
                re.push_str("(?:[^/]+/)*");
            }
            let n = segs.len();
            for (i, s) in segs.iter().enumerate() {
                let last = i + 1 == n;
                match s {
                    Segment::DoubleStar if last => re.push_str("[^/]+(?:/[^/]+)*"),
                    Segment::DoubleStar => re.push_str("(?:[^/]+/)*"),
                    Segment::Pieces(ps) => {
                        for p in ps {
                            match p {
                                SegPiece::Literal(l) => re.push_str(&regex::escape(l)),
                                SegPiece::Star => re.push_str("[^/]*"),
                                SegPiece::Question => re.push_str("[^/]"),
                                SegPiece::Class { negated, ranges } => {
                                    re.push('[');
                                    if *negated {
                                        re.push_str("^/");
                                    }
                                    for &(lo, hi) in ranges {
                                        re.push(lo);
                                        re.push('-');
                                        re.push(hi);
                                    }
                                    re.push(']');
                                }
                            }
                        }
                        if !last {
                            re.push('/');
                        }
                    }
                }
            }
            re.push_str("(?:/.*)?$");
            let regex = regex::Regex::new(&re).unwrap();
            let rel = path.join("/");
            let p = PathPattern { anchor: Anchor::Project, segments: segs.clone(), anchored, case_insensitive: false };
            proptest::prop_assert_eq!(path_matches(&p, &rel), regex.is_match(&rel), "regex {}", re);
        }

        /// No rule and no call input panics `match_rule`: it answers or
        /// returns an error.
        #[test]
        fn match_rule_never_panics(
            rule in proptest::sample::select(vec![
                "Bash(ls *)", "Bash(a*:*)", "Read(./src/**)", "Read(//e/**)", "Read(~/.ssh/*)",
                "Read([!a]?)", "Edit(/x/)", "WebFetch(domain:*.a.b)", "WebFetch(domain:*)",
                "Agent(model:*)", "Skill(x:*)", "mcp__a", "*", "PowerShell(İ*)",
            ]),
            tool in proptest::sample::select(vec!["Bash", "Read", "Edit", "Grep", "WebFetch", "Agent", "Skill", "mcp__a__b", "PowerShell"]),
            value in r"[a-z./~:\[\]@*İı ]{0,12}",
            cwd in proptest::option::of(r"/[a-z]{0,3}"),
        ) {
            use crate::rule::claude::parse_rule;
            use crate::rule::{Dialect, Effect, List, Provenance};
            let mut input = Map::new();
            for k in ["command", "file_path", "url", "model", "skill"] {
                input.insert(k.to_string(), Value::String(value.clone()));
            }
            let call = ToolCall::new(tool, input).unwrap();
            let ctx = MatchContext { cwd: cwd.map(PathBuf::from) };
            for dialect in [Dialect::Strict, Dialect::ClaudeCode] {
                let r = parse_rule(rule, Effect::Deny, dialect, Provenance::standalone(List::Deny)).unwrap();
                let _ = match_rule(&r, &call, &ctx);
            }
        }
    }
}
