//! "Could match": a rule pattern unified against a text with holes
//! (SPEC §8.4, dynamic and glob words).
//!
//! A dynamic word (`$X`, `"$(…)"`) stands for any string, a glob word
//! (`*.md`) for the names the shell could expand it to. A deny or ask rule
//! that matches *some* value makes the action ask. (A rule that matches
//! *every* value already matches the word's source text, which every rule
//! sees literally: a rule's `*` covers it.)
//!
//! Both sides are sequences of atoms; the question is whether the two
//! languages intersect, answered by a search over pairs of positions —
//! `O(|text| · |pattern|)` states, never exponential. Hand-written: it
//! works on the rule IR directly, and no crate in the dependency set
//! intersects two patterns.

use crate::reference::{fold_char, in_ranges};
use crate::rule::{CommandForm, GlobPiece, PathPattern, SegPiece, Segment};

/// One atom of either side.
#[derive(Clone, Copy, Debug)]
pub(crate) enum U<'a> {
    /// This character.
    Ch(char),
    /// A run of characters (`/` included when `slash`), possibly empty.
    Star { slash: bool },
    /// One character (`/` included when `slash`).
    One { slash: bool },
    /// One character of a class (never `/`).
    Class(bool, &'a [(char, char)]),
    /// A hole of the text side: any run of characters (`/` included when
    /// `slash`); with `lead`, its first character is not a `.` (a shell
    /// glob at the start of a name).
    Hole { slash: bool, lead: bool },
}

fn eq(a: char, b: char, ci: bool) -> bool {
    a == b || (ci && fold_char(a) == fold_char(b))
}

/// Whether some string is in both the text side `t` (characters and
/// holes) and the pattern side `p` (characters, stars, ones, classes).
pub(crate) fn could(t: &[U<'_>], p: &[U<'_>], ci: bool) -> bool {
    let (n, m) = (t.len(), p.len());
    let idx = |i: usize, j: usize, s: bool| (i * (m + 1) + j) * 2 + usize::from(s);
    let mut seen = vec![false; (n + 1) * (m + 1) * 2];
    let mut stack = vec![(0usize, 0usize, false)];
    while let Some((i, j, s)) = stack.pop() {
        let k = idx(i, j, s);
        if seen[k] {
            continue;
        }
        seen[k] = true;
        if i == n && j == m {
            return true;
        }
        let mut push = |i: usize, j: usize, s: bool| {
            if !seen[idx(i, j, s)] {
                stack.push((i, j, s));
            }
        };
        let ta = t.get(i).copied();
        let pa = p.get(j).copied();
        if let Some(U::Hole { .. }) = ta {
            push(i + 1, j, false);
        }
        if let Some(U::Star { .. }) = pa {
            push(i, j + 1, s);
        }
        let (Some(ta), Some(pa)) = (ta, pa) else {
            continue;
        };
        match (ta, pa) {
            (U::Hole { slash, lead }, U::Ch(c))
                if (slash || c != '/') && !(lead && !s && c == '.') =>
            {
                push(i, j + 1, true)
            }
            (U::Hole { .. }, U::One { .. } | U::Class(..)) => push(i, j + 1, true),
            (U::Hole { .. }, U::Star { .. }) => push(i, j, true),
            (U::Ch(a), U::Ch(b)) if eq(a, b, ci) => push(i + 1, j + 1, false),
            (U::Ch(a), U::One { slash }) if slash || a != '/' => push(i + 1, j + 1, false),
            (U::Ch(a), U::Class(neg, ranges)) => {
                let inside = in_ranges(a, ranges, ci);
                if a != '/' && inside != neg {
                    push(i + 1, j + 1, false);
                }
            }
            (U::Ch(a), U::Star { slash }) if slash || a != '/' => push(i + 1, j, false),
            _ => {}
        }
    }
    false
}

/// The pattern-side variants of a command form (SPEC §3.1).
pub(crate) fn command_variants(form: &CommandForm) -> Vec<Vec<U<'static>>> {
    let glob = |pieces: &[GlobPiece]| -> Vec<U<'static>> {
        let mut v = Vec::new();
        for p in pieces {
            match p {
                GlobPiece::Literal(s) => v.extend(s.chars().map(U::Ch)),
                GlobPiece::Star => v.push(U::Star { slash: true }),
                GlobPiece::Question => v.push(U::One { slash: true }),
            }
        }
        v
    };
    let with_rest = |mut v: Vec<U<'static>>| {
        let base = v.clone();
        v.push(U::Ch(' '));
        v.push(U::Star { slash: true });
        vec![base, v]
    };
    match form {
        CommandForm::Exact(s) => vec![s.chars().map(U::Ch).collect()],
        CommandForm::Prefix(p) => with_rest(p.chars().map(U::Ch).collect()),
        CommandForm::Glob(pieces) => vec![glob(pieces)],
        CommandForm::PrefixGlob(pieces) => with_rest(glob(pieces)),
    }
}

/// The literal text a command form starts with (before any wildcard).
pub(crate) fn command_literal_prefix(form: &CommandForm) -> &str {
    match form {
        CommandForm::Exact(s) | CommandForm::Prefix(s) => s,
        CommandForm::Glob(p) | CommandForm::PrefixGlob(p) => match p.first() {
            Some(GlobPiece::Literal(s)) => s,
            _ => "",
        },
    }
}

/// The most variants a path pattern is expanded to (its non-final `**`
/// segments double them); beyond, a pattern is taken to could-match.
const MAX_PATH_VARIANTS: usize = 64;

/// The pattern-side variants of a path pattern over a path relative to
/// its anchor (SPEC §4.2): at any depth when unanchored, covering what is
/// below a match; `None` when there would be too many.
pub(crate) fn path_variants(p: &PathPattern) -> Option<Vec<Vec<U<'_>>>> {
    let mut out: Vec<Vec<U<'_>>> = vec![Vec::new()];
    let n = p.segments.len();
    for (k, seg) in p.segments.iter().enumerate() {
        let last = k + 1 == n;
        match seg {
            Segment::DoubleStar if last => {
                for v in &mut out {
                    v.push(U::Star { slash: true });
                    v.push(U::One { slash: false });
                }
            }
            Segment::DoubleStar => {
                // Zero or more whole segments, each followed by `/`.
                let mut more = out.clone();
                for v in &mut more {
                    v.push(U::Star { slash: true });
                    v.push(U::Ch('/'));
                }
                out.extend(more);
                if out.len() > MAX_PATH_VARIANTS {
                    return None;
                }
            }
            Segment::Pieces(pieces) => {
                for v in &mut out {
                    for piece in pieces {
                        match piece {
                            SegPiece::Literal(s) => v.extend(s.chars().map(U::Ch)),
                            SegPiece::Star => v.push(U::Star { slash: false }),
                            SegPiece::Question => v.push(U::One { slash: false }),
                            SegPiece::Class { negated, ranges } => {
                                v.push(U::Class(*negated, ranges))
                            }
                        }
                    }
                    if !last {
                        v.push(U::Ch('/'));
                    }
                }
            }
        }
    }
    let mut all = Vec::new();
    for v in out {
        let mut below = v.clone();
        below.push(U::Ch('/'));
        below.push(U::Star { slash: true });
        for body in [v, below] {
            if !p.anchored {
                let mut deep = vec![U::Star { slash: true }, U::Ch('/')];
                deep.extend(body.iter().copied());
                all.push(deep);
            }
            all.push(body);
        }
    }
    Some(all)
}

/// Text-side atoms of a command candidate: the text, with every
/// occurrence of each hole text (a dynamic or glob word's source) made a
/// hole.
pub(crate) fn text_with_holes<'a>(text: &str, holes: &[String]) -> Vec<U<'a>> {
    let mut out = Vec::new();
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for h in holes {
            if !h.is_empty() && rest.starts_with(h.as_str()) {
                out.push(U::Hole {
                    slash: true,
                    lead: false,
                });
                rest = &rest[h.len()..];
                continue 'outer;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(U::Ch(c));
        }
        rest = chars.as_str();
    }
    out
}

/// Text-side atoms of a glob path (relative to an anchor): `*`, `?` and
/// `[…]` are holes within a name, not matching a leading `.`.
pub(crate) fn glob_path_atoms<'a>(rel: &str) -> Vec<U<'a>> {
    let mut out = Vec::new();
    let mut at_start = true;
    let mut chars = rel.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => out.push(U::Hole {
                slash: false,
                lead: at_start,
            }),
            '[' => {
                // A class: skip to its `]` (a leading `]` or `!]` is part of it).
                let mut first = true;
                while let Some(&d) = chars.peek() {
                    chars.next();
                    if d == ']' && !first {
                        break;
                    }
                    if d != '!' && d != '^' {
                        first = false;
                    }
                }
                out.push(U::Hole {
                    slash: false,
                    lead: at_start,
                });
            }
            '\\' => {
                if let Some(d) = chars.next() {
                    out.push(U::Ch(d));
                }
            }
            c => out.push(U::Ch(c)),
        }
        at_start = c == '/';
    }
    out
}

/// Text-side atoms of a dynamic path word's source text: quotes dropped,
/// each expansion (`$NAME`, `${…}`, `$(…)`, `` `…` ``) a hole that may
/// span directories. A leading `~user` (or `~+`, `~-`) is a hole too: some
/// directory, absolute; a leading `~` or `~/` is left as it is (its
/// expansion is known and checked on its own).
pub(crate) fn dynamic_path_atoms<'a>(src: &str) -> Vec<U<'a>> {
    let hole = U::Hole {
        slash: true,
        lead: false,
    };
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    if b.first() == Some(&'~') && !matches!(b.get(1), None | Some('/')) {
        i = 1;
        while i < b.len() && b[i] != '/' {
            i += 1;
        }
        out.push(hole);
    }
    while i < b.len() {
        let c = b[i];
        match c {
            '"' | '\'' => i += 1,
            '`' => {
                i += 1;
                while i < b.len() && b[i] != '`' {
                    i += 1;
                }
                i += 1;
                out.push(hole);
            }
            '$' => {
                i += 1;
                match b.get(i) {
                    Some('{') | Some('(') => {
                        let (open, close) = if b[i] == '{' { ('{', '}') } else { ('(', ')') };
                        let mut depth = 0usize;
                        while i < b.len() {
                            if b[i] == open {
                                depth += 1;
                            } else if b[i] == close {
                                depth = depth.saturating_sub(1);
                                if depth == 0 {
                                    i += 1;
                                    break;
                                }
                            }
                            i += 1;
                        }
                    }
                    _ => {
                        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                            i += 1;
                        }
                        if i < b.len() && "@*#?$!-0123456789".contains(b[i]) {
                            i += 1;
                        }
                    }
                }
                if !matches!(out.last(), Some(U::Hole { .. })) {
                    out.push(hole);
                }
            }
            '*' | '?' => {
                out.push(hole);
                i += 1;
            }
            '\\' => {
                if let Some(&d) = b.get(i + 1) {
                    out.push(U::Ch(d));
                }
                i += 2;
            }
            c => {
                out.push(U::Ch(c));
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::claude::parse_rule;
    use crate::rule::{Dialect, Effect, List, Pattern, Provenance};

    fn path_could(rule: &str, rel: &str) -> bool {
        let r = parse_rule(
            rule,
            Effect::Deny,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        )
        .unwrap();
        let Pattern::Path(p) = &r.pattern else {
            panic!("{rule}")
        };
        let t = glob_path_atoms(rel);
        path_variants(p)
            .unwrap()
            .iter()
            .any(|v| could(&t, v, p.case_insensitive))
    }

    fn cmd_could(rule: &str, text: &str, holes: &[&str]) -> bool {
        let r = parse_rule(
            rule,
            Effect::Deny,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        )
        .unwrap();
        let Pattern::Command(p) = &r.pattern else {
            panic!("{rule}")
        };
        let holes: Vec<String> = holes.iter().map(|s| s.to_string()).collect();
        let t = text_with_holes(text, &holes);
        command_variants(&p.form)
            .iter()
            .any(|v| could(&t, v, false))
    }

    #[test]
    fn paths() {
        assert!(path_could("Read(.env)", ".en*"));
        assert!(path_could("Read(.env)", "sub/.en*"));
        assert!(!path_could("Read(.env)", "docs/*.md"));
        assert!(
            !path_could("Read(.env)", "*"),
            "a glob does not expand to dot files"
        );
        assert!(path_could("Read(*.pem)", "keys/*"));
        assert!(path_could("Read(secrets/**)", "secrets/*"));
        assert!(!path_could("Read(/secrets/**)", "public/*"));
        // Unanchored in a deny rule: `public/secrets` is a name `*` can take.
        assert!(path_could("Read(secrets/**)", "public/*"));
        assert!(path_could("Read(./a/**/b.txt)", "a/x/*/b.txt"));
        assert!(path_could("Read(/etc/passwd)", "etc/pass*"));
        assert!(!path_could("Read(/etc/passwd)", "etc/shad*"));
    }

    #[test]
    fn commands() {
        assert!(cmd_could("Bash(rm -rf /*)", "rm -rf $X", &["$X"]));
        assert!(cmd_could(
            "Bash(git push --force:*)",
            "git push $F",
            &["$F"]
        ));
        assert!(!cmd_could(
            "Bash(git push --force:*)",
            "git pull $F",
            &["$F"]
        ));
        assert!(cmd_could(
            "Bash(curl evil.com)",
            "curl $(echo)",
            &["$(echo)"]
        ));
        assert!(!cmd_could("Bash(npm publish)", "npm run $X", &["$X"]));
    }

    #[test]
    fn dynamic_paths() {
        let t = dynamic_path_atoms("\"$DIR\"/notes.md");
        let r = parse_rule(
            "Read(.env)",
            Effect::Deny,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        )
        .unwrap();
        let Pattern::Path(p) = &r.pattern else {
            panic!()
        };
        // `$DIR` could be `x/.env`: a directory named `.env` is covered.
        assert!(path_variants(p).unwrap().iter().any(|v| could(&t, v, true)));
        let t = dynamic_path_atoms("notes-$N.md");
        let anchored = parse_rule(
            "Read(/etc/passwd)",
            Effect::Deny,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        )
        .unwrap();
        let Pattern::Path(q) = &anchored.pattern else {
            panic!()
        };
        assert!(!path_variants(q).unwrap().iter().any(|v| could(&t, v, true)));
        let t = dynamic_path_atoms("$F");
        assert!(path_variants(p).unwrap().iter().any(|v| could(&t, v, true)));
    }
}
