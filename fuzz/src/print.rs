//! A printer for the rule IR: renders a parsed Claude rule back to rule
//! text, canonically, so that the `rules` fuzz target can check that
//! parsing the printed text gives the same IR (`Rule.text`, the original,
//! is no round trip).
//!
//! The rendering depends on the rule's effect and dialect, as the parse
//! does (a `claude-code` `Bash(x *)` is a prefix, a `strict` one a glob).
//! Literal characters are escaped with `\` wherever a special reading is
//! possible. Path patterns have several spellings whose readings differ
//! only in the widening flags (`x/`, `x/**`, `./x`); the canonical one is
//! the first of a fixed list of spellings that reads back to the pattern.
//!
//! This file depends on `toolgate` alone: the regression tests of the main
//! package include it too.

use toolgate::rule::claude::parse_rule;
use toolgate::rule::{
    Anchor, CommandForm, DomainLabel, DomainPattern, GlobPiece, PathPattern, Pattern, SegPiece,
    Segment, ToolMatch,
};
use toolgate::{Dialect, Effect, List, Provenance, Rule};

/// Characters with a meaning in a command specifier (`\`, `(`, `)`, `*`):
/// written with a backslash in front.
fn command_literal(out: &mut String, s: &str) {
    for c in s.chars() {
        if matches!(c, '\\' | '(' | ')' | '*') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A command glob. A final star is written `**`, so that neither the
/// `P:*` form nor claude-code's optional trailing ` *` reads it.
fn command_glob(out: &mut String, pieces: &[GlobPiece]) {
    for (i, p) in pieces.iter().enumerate() {
        match p {
            GlobPiece::Literal(s) => command_literal(out, s),
            GlobPiece::Star if i + 1 == pieces.len() => out.push_str("**"),
            GlobPiece::Star => out.push('*'),
            // Never in a command glob; `?` is literal there.
            GlobPiece::Question => out.push('?'),
        }
    }
}

/// A command form as `Bash(…)` reads it. `space_prefix`: write a prefix as
/// `P *` (claude-code's reading, and `Skill`'s in every dialect) rather
/// than `P:*`, which a field name before the `:` would turn into a field
/// rule.
fn command_form(out: &mut String, form: &CommandForm, space_prefix: bool) {
    match form {
        CommandForm::Exact(s) => command_literal(out, s),
        CommandForm::Prefix(p) => {
            command_literal(out, p);
            out.push_str(if space_prefix { " *" } else { ":*" });
        }
        CommandForm::Glob(pieces) => command_glob(out, pieces),
        CommandForm::PrefixGlob(pieces) => {
            for p in pieces {
                match p {
                    GlobPiece::Literal(s) => command_literal(out, s),
                    GlobPiece::Star => out.push('*'),
                    GlobPiece::Question => out.push('?'),
                }
            }
            out.push_str(":*");
        }
    }
}

/// A field rule's value: stars glob, nothing else is special.
fn field_value(out: &mut String, form: &CommandForm) {
    match form {
        CommandForm::Exact(s) | CommandForm::Prefix(s) => command_literal(out, s),
        CommandForm::Glob(pieces) | CommandForm::PrefixGlob(pieces) => {
            for p in pieces {
                match p {
                    GlobPiece::Literal(s) => command_literal(out, s),
                    GlobPiece::Star => out.push('*'),
                    GlobPiece::Question => out.push('?'),
                }
            }
        }
    }
}

/// One character of a path pattern: everything but letters and digits is
/// escaped (a path specifier reads `\x` as a literal `x`).
fn path_char(out: &mut String, c: char) {
    if !c.is_alphanumeric() {
        out.push('\\');
    }
    out.push(c);
}

fn segment(out: &mut String, seg: &Segment) {
    match seg {
        Segment::DoubleStar => out.push_str("**"),
        Segment::Pieces(pieces) => {
            for p in pieces {
                match p {
                    SegPiece::Literal(s) => s.chars().for_each(|c| path_char(out, c)),
                    SegPiece::Star => out.push('*'),
                    SegPiece::Question => out.push('?'),
                    SegPiece::Class { negated, ranges } => {
                        out.push('[');
                        if *negated {
                            out.push('!');
                        }
                        for &(lo, hi) in ranges {
                            path_char(out, lo);
                            if hi != lo {
                                out.push('-');
                                path_char(out, hi);
                            }
                        }
                        out.push(']');
                    }
                }
            }
        }
    }
}

fn segments(segs: &[Segment]) -> String {
    let mut out = String::new();
    for (i, s) in segs.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        segment(&mut out, s);
    }
    out
}

/// The spellings of a path pattern, in order of preference.
fn path_spellings(p: &PathPattern) -> Vec<String> {
    let lead = match p.anchor {
        Anchor::Root => "//",
        Anchor::Home => "~/",
        Anchor::Source => "/",
        Anchor::Project => "",
    };
    let n = p.segments.len();
    let all = segments(&p.segments);
    let mut bodies = vec![all.clone()];
    if p.segments.last() == Some(&Segment::DoubleStar) && n >= 2 {
        // `x/`: a trailing slash reads as a final `**`.
        bodies.push(format!("{}/", segments(&p.segments[..n - 1])));
        bodies.push(format!("{all}/"));
    }
    // claude-code drops a final `/**` (and widens a single `x/**`).
    bodies.push(format!("{all}/**"));
    if n == 1 && p.segments[0] == Segment::DoubleStar {
        bodies.push(String::new());
    }
    if all == "*" {
        // `Read(*)` is a bare rule; a run of stars is one star.
        bodies.push("***".to_string());
    }
    let mut out = Vec::new();
    for body in &bodies {
        out.push(format!("{lead}{body}"));
        if p.anchor == Anchor::Project {
            out.push(format!("./{body}"));
        }
    }
    out
}

fn domain(p: &DomainPattern) -> String {
    let mut out = String::from("domain:");
    match p {
        DomainPattern::Any => out.push('*'),
        DomainPattern::Host { subdomains, labels } => {
            if *subdomains {
                out.push_str("*.");
            }
            for (i, l) in labels.iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                match l {
                    DomainLabel::Star => out.push('*'),
                    DomainLabel::Literal(s) => command_literal(&mut out, s),
                }
            }
        }
    }
    out
}

fn tool(t: &ToolMatch) -> String {
    match t {
        ToolMatch::Name(n) => n.clone(),
        ToolMatch::McpServer(s) => format!("mcp__{s}"),
        // A final star is written `**`: `mcp__S__*` is the server rule.
        ToolMatch::Glob(pieces) => pieces
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                GlobPiece::Literal(s) => s.as_str(),
                GlobPiece::Star if i + 1 == pieces.len() => "**",
                GlobPiece::Star => "*",
                GlobPiece::Question => "?",
            })
            .collect(),
    }
}

/// The specifier of a rule whose pattern has one spelling (`None` for a
/// bare rule), or `Err` with the spellings to try (paths).
fn specifier(rule: &Rule) -> Result<Option<String>, Vec<String>> {
    let name = match &rule.tool {
        ToolMatch::Name(n) => n.as_str(),
        _ => "",
    };
    let claude = rule.dialect == Dialect::ClaudeCode;
    let mut out = String::new();
    match &rule.pattern {
        Pattern::Any => return Ok(None),
        Pattern::Opaque(raw) => out.push_str(raw),
        Pattern::Command(c) => command_form(&mut out, &c.form, claude),
        Pattern::Path(p) => return Err(path_spellings(p)),
        Pattern::Domain(d) => out = domain(d),
        Pattern::Field { field, form } => match (name, field.as_str(), form) {
            ("Agent", "subagent_type", CommandForm::Exact(v)) if !v.is_empty() => {
                command_literal(&mut out, v)
            }
            ("Skill", "skill", f) if f != &CommandForm::Exact(String::new()) => {
                out.push('/');
                command_form(&mut out, f, true);
            }
            _ => {
                out.push_str(field);
                out.push(':');
                field_value(&mut out, form);
            }
        },
        // Tuff command rules have no Claude rule text.
        Pattern::Tokens(_) => return Err(Vec::new()),
    }
    Ok(Some(out))
}

/// Parses `text` as `rule` was parsed (effect, dialect, provenance).
pub fn reparse(rule: &Rule, text: &str) -> Result<Rule, toolgate::Error> {
    parse_rule(text, rule.effect, rule.dialect, rule.provenance.clone())
}

/// Whether two rules have the same meaning: tool and pattern (the text
/// differs, by design).
pub fn same_ir(a: &Rule, b: &Rule) -> bool {
    a.tool == b.tool && a.pattern == b.pattern
}

/// The canonical text of a rule parsed from Claude rule text, or `None`
/// when no spelling reads back to the same IR (a finding: the IR holds a
/// pattern no rule text means).
pub fn render(rule: &Rule) -> Option<String> {
    let t = tool(&rule.tool);
    let candidates = match specifier(rule) {
        Ok(None) => vec![t],
        Ok(Some(spec)) => vec![format!("{t}({spec})")],
        Err(specs) => specs.into_iter().map(|s| format!("{t}({s})")).collect(),
    };
    candidates
        .into_iter()
        .find(|text| reparse(rule, text).is_ok_and(|r| same_ir(rule, &r)))
}

/// The first candidate spelling, whether or not it reads back (for
/// messages).
pub fn first_spelling(rule: &Rule) -> String {
    let t = tool(&rule.tool);
    match specifier(rule) {
        Ok(None) => t,
        Ok(Some(spec)) => format!("{t}({spec})"),
        Err(specs) => match specs.first() {
            Some(s) => format!("{t}({s})"),
            None => t,
        },
    }
}

/// Checks the IR invariants the pattern types document: literals never
/// empty, adjacent literals merged, runs of stars merged, path segments
/// never empty, domain labels ASCII lower case and non-empty. Returns the
/// first violation.
pub fn ir_invariants(rule: &Rule) -> Result<(), String> {
    fn glob(pieces: &[GlobPiece], what: &str) -> Result<(), String> {
        if pieces.is_empty() {
            return Err(format!("empty {what} glob"));
        }
        for w in pieces.windows(2) {
            match w {
                [GlobPiece::Literal(_), GlobPiece::Literal(_)] => {
                    return Err(format!("adjacent literals in {what} glob"));
                }
                [GlobPiece::Star, GlobPiece::Star] => {
                    return Err(format!("adjacent stars in {what} glob"));
                }
                _ => {}
            }
        }
        if pieces
            .iter()
            .any(|p| matches!(p, GlobPiece::Literal(s) if s.is_empty()))
        {
            return Err(format!("empty literal in {what} glob"));
        }
        Ok(())
    }
    fn form(f: &CommandForm) -> Result<(), String> {
        match f {
            CommandForm::Exact(_) | CommandForm::Prefix(_) => Ok(()),
            CommandForm::Glob(p) => {
                glob(p, "command")?;
                if !p.contains(&GlobPiece::Star) {
                    return Err("a command glob without a star".into());
                }
                Ok(())
            }
            CommandForm::PrefixGlob(p) => glob(p, "prefix"),
        }
    }
    if let ToolMatch::Glob(p) = &rule.tool {
        glob(p, "tool")?;
    }
    match &rule.pattern {
        Pattern::Command(c) => form(&c.form)?,
        Pattern::Field { form: f, .. } => form(f)?,
        Pattern::Path(p) => {
            if p.segments.is_empty() {
                return Err("a path pattern without segments".into());
            }
            for s in &p.segments {
                if let Segment::Pieces(pieces) = s {
                    if pieces.is_empty() {
                        return Err("an empty path segment".into());
                    }
                    for w in pieces.windows(2) {
                        match w {
                            [SegPiece::Literal(_), SegPiece::Literal(_)] => {
                                return Err("adjacent literals in a path segment".into());
                            }
                            [SegPiece::Star, SegPiece::Star] => {
                                return Err("adjacent stars in a path segment".into());
                            }
                            _ => {}
                        }
                    }
                    for p in pieces {
                        match p {
                            SegPiece::Literal(s) if s.is_empty() || s.contains('/') => {
                                return Err(format!("bad literal {s:?} in a path segment"));
                            }
                            SegPiece::Class { ranges, .. } if ranges.is_empty() => {
                                return Err("an empty character class".into());
                            }
                            SegPiece::Class { ranges, .. }
                                if ranges.iter().any(|(lo, hi)| hi < lo) =>
                            {
                                return Err("a reversed range in a character class".into());
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        Pattern::Domain(DomainPattern::Host { labels, .. }) => {
            if labels.is_empty() {
                return Err("a host without labels".into());
            }
            for l in labels {
                if let DomainLabel::Literal(s) = l {
                    if s.is_empty() || s.contains('.') || s.chars().any(|c| c.is_uppercase()) {
                        return Err(format!("bad host label {s:?}"));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The effect and dialect a fuzz input's first byte selects.
pub fn mode(b: u8) -> (Effect, Dialect) {
    let effect = match b % 3 {
        0 => Effect::Deny,
        1 => Effect::Ask,
        _ => Effect::Allow,
    };
    let dialect = if (b / 3) % 2 == 0 {
        Dialect::Strict
    } else {
        Dialect::ClaudeCode
    };
    (effect, dialect)
}

/// The whole `rules` property for one rule text: parsing never panics; an
/// error points inside the text; a parsed rule satisfies the IR invariants,
/// renders, and its rendering parses to the same IR, and renders to
/// itself. `Err` describes a failure.
pub fn check_rule(text: &str, effect: Effect, dialect: Dialect) -> Result<(), String> {
    let prov = Provenance::standalone(List::Deny);
    let rule = match parse_rule(text, effect, dialect, prov) {
        Ok(r) => r,
        Err(e) => {
            let len = text.chars().count();
            return match e.location().column {
                Some(c) if c > len => Err(format!("error column {c} past the end ({len}): {e}")),
                _ => Ok(()),
            };
        }
    };
    ir_invariants(&rule).map_err(|m| format!("{m}: {:?}", rule.pattern))?;
    let Some(printed) = render(&rule) else {
        let first = first_spelling(&rule);
        let again = reparse(&rule, &first).map(|r| (r.tool, r.pattern));
        return Err(format!(
            "no spelling reads back to the IR\n  IR:      {:?} {:?}\n  printed: {first}\n  re-read: {again:?}",
            rule.tool, rule.pattern
        ));
    };
    // `render` found `printed` reading back; the canonical text of the
    // re-read rule is the same text.
    let again = reparse(&rule, &printed).map_err(|e| e.to_string())?;
    match render(&again) {
        Some(t) if t == printed => Ok(()),
        other => Err(format!(
            "printing is not canonical: {printed:?} then {other:?}"
        )),
    }
}
