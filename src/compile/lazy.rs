//! The lazy engine: regex rules compiled on first need, for a process that
//! answers one call (a hook) and would otherwise spend most of its time
//! building automata it never walks.
//!
//! Building a [`LazyRules`] compiles nothing: each rule keeps its regex in
//! matching form (see [`super::lower`]) and the literal text every match
//! must start with (forward rules, the haystack followed by its
//! terminator) or end with (reverse rules, the haystack alone), or, for
//! the walks that restart inside the haystack (segments, anywhere), hold
//! somewhere. A query skips every rule whose literal does not fit the
//! haystack — a byte comparison — and compiles the others on first use with the bounded
//! per-rule engine of the fallback ([`super::strategy::build_slow`]), so
//! the answers are those of the fallback strategy, which the differential
//! tests hold to the reference.
//!
//! A regex too long to be certain to compile within the size limits is
//! compiled when the set is built (its errors fail the build as in the
//! other strategies). Should a lazily compiled rule fail anyway, it
//! matches every haystack its literal fits when it is a deny or ask rule
//! and none when it is an allow rule: a rule that cannot be read never
//! widens what is allowed.

use super::Config;
use super::Matches;
use super::matcher::{Slow, Walk};
use super::strategy::{self, BuildFailure};
use regex_automata::{Anchored, Input};
use std::sync::OnceLock;

/// Regexes up to this many bytes are compiled lazily: far below what
/// could reach the NFA size limit (the costliest piece, one any-character
/// class, is ~20 NFA states for 7 bytes of regex).
pub(crate) const LAZY_MAX_REGEX: usize = 4096;

/// One rule of a [`LazyRules`].
#[derive(Debug)]
pub(crate) struct LazyRule {
    pub(crate) id: u32,
    /// How its automaton is walked.
    pub(crate) walk: Walk,
    /// What a match must start with (forward) or end with (reversed), or
    /// hold (the other walks).
    pub(crate) lit: Box<[u8]>,
    /// The regex in matching form.
    pub(crate) src: Box<str>,
    /// Match when the regex cannot be compiled (deny and ask rules).
    pub(crate) fail_closed: bool,
    compiled: OnceLock<Option<Slow>>,
}

impl Clone for LazyRule {
    fn clone(&self) -> LazyRule {
        LazyRule {
            id: self.id,
            walk: self.walk,
            lit: self.lit.clone(),
            src: self.src.clone(),
            fail_closed: self.fail_closed,
            compiled: match self.compiled.get() {
                Some(c) => OnceLock::from(c.clone()),
                None => OnceLock::new(),
            },
        }
    }
}

impl LazyRule {
    /// A rule compiled on first need; `None` when its regex is too long to
    /// be deferred (compile it eagerly instead).
    pub(crate) fn new(id: u32, walk: Walk, src: &str, fail_closed: bool) -> Option<LazyRule> {
        if src.len() > LAZY_MAX_REGEX {
            return None;
        }
        let (prefix, suffix) = literal_ends(src);
        Some(LazyRule {
            id,
            walk,
            lit: if walk.reversed() { suffix } else { prefix }
                .into_bytes()
                .into_boxed_slice(),
            src: src.into(),
            fail_closed,
            compiled: OnceLock::new(),
        })
    }

    /// A rule read back from an image, with the literal recorded there
    /// (`None` when the regex is too long to be deferred).
    pub(crate) fn with_literal(
        id: u32,
        walk: Walk,
        src: &str,
        lit: &[u8],
        fail_closed: bool,
    ) -> Option<LazyRule> {
        if src.len() > LAZY_MAX_REGEX {
            return None;
        }
        Some(LazyRule {
            id,
            walk,
            lit: lit.into(),
            src: src.into(),
            fail_closed,
            compiled: OnceLock::new(),
        })
    }

    /// Whether the literal fits `hay` (`buf` is `hay` followed by `term`).
    #[inline]
    fn fits(&self, hay: &[u8], buf: &[u8], term: Option<u8>) -> bool {
        let lit = &self.lit[..];
        match self.walk {
            Walk::Fwd => {}
            Walk::Rev => return hay.ends_with(lit),
            // A match starts (or ends) somewhere inside: the literal is in
            // the haystack with its terminator.
            Walk::Seg | Walk::SegRev | Walk::Float => {
                return lit.is_empty() || buf.windows(lit.len()).any(|w| w == lit);
            }
        }
        if lit.len() <= hay.len() {
            return hay.starts_with(lit);
        }
        // The literal runs into the terminator.
        match (lit.split_last(), term) {
            (Some((last, head)), Some(t)) => {
                head.len() == hay.len() && *last == t && hay.starts_with(head)
            }
            _ => false,
        }
    }
}

/// Regex rules of one matcher, compiled on first need.
#[derive(Clone, Debug, Default)]
pub(crate) struct LazyRules {
    pub(crate) term: Option<u8>,
    pub(crate) rules: Vec<LazyRule>,
    /// The limits rules are compiled within.
    pub(crate) cfg: Config,
}

impl LazyRules {
    /// Whether no rule is deferred.
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Appends the ids of the deferred rules that match `hay`.
    pub(crate) fn find_into(&self, hay: &[u8], out: &mut Matches) {
        if self.rules.is_empty() {
            return;
        }
        out.buf.clear();
        out.buf.extend_from_slice(hay);
        out.buf.extend(self.term);
        for r in &self.rules {
            if !r.fits(hay, &out.buf, self.term) {
                continue;
            }
            let compiled = r
                .compiled
                .get_or_init(|| strategy::build_slow(&r.src, r.walk, r.id, &self.cfg).ok());
            let hit = match compiled {
                Some(s) => {
                    // As the fallback strategy walks it.
                    let h: &[u8] = if s.walk == Walk::Rev { hay } else { &out.buf };
                    s.re.is_match(Input::new(h).anchored(Anchored::Yes))
                }
                None => r.fail_closed,
            };
            if hit {
                out.ids.push(r.id);
            }
        }
    }
}

/// Splits lowered `(id, regex)` pairs: the ones deferred, and the ones too
/// long to defer, built now by the per-rule engine.
pub(crate) fn build(
    pats: &[(u32, Walk, &str)],
    term: Option<u8>,
    fail_closed: impl Fn(u32) -> bool,
    cfg: &Config,
) -> Result<(LazyRules, Vec<Slow>), BuildFailure> {
    let mut lazy = LazyRules {
        term,
        rules: Vec::new(),
        cfg: cfg.clone(),
    };
    let mut eager = Vec::new();
    for &(id, walk, re) in pats {
        match LazyRule::new(id, walk, re, fail_closed(id)) {
            Some(r) => lazy.rules.push(r),
            None => eager.push(strategy::build_slow(re, walk, id, cfg)?),
        }
    }
    Ok((lazy, eager))
}

/// The literal text every match of the regex `re` (matching form, as
/// [`super::lower`] writes it) starts with and ends with. Conservative: a
/// construct it does not know ends the literal, and a top-level
/// alternation empties both.
pub(crate) fn literal_ends(re: &str) -> (String, String) {
    // Top-level items, in one pass: the literal characters before the
    // first other item, and those after the last one.
    let mut ends = Ends {
        prefix: String::new(),
        open: true,
        suffix: String::new(),
    };
    // Whether the last item was a literal (a quantifier would take it).
    let mut last_literal = false;
    let b = re.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    let mut class = 0usize;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' {
            // `\x{H}` is a character; any other escape is not understood.
            let lit = re.get(i..).and_then(parse_hex_escape);
            let top = depth == 0 && class == 0;
            match lit {
                Some((ch, len)) => {
                    if top {
                        ends.item(Some(ch));
                        last_literal = true;
                    }
                    i += len;
                }
                None => {
                    if top {
                        ends.item(None);
                        last_literal = false;
                    }
                    i += 2;
                }
            }
            continue;
        }
        if class > 0 {
            match c {
                b'[' => class += 1,
                b']' => class -= 1,
                _ => {}
            }
            if class == 0 && depth == 0 {
                ends.item(None);
                last_literal = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'[' => class = 1,
            b'(' => depth += 1,
            b')' => {
                if depth == 0 {
                    return (String::new(), String::new());
                }
                depth -= 1;
                if depth == 0 {
                    ends.item(None);
                    last_literal = false;
                }
            }
            b'|' if depth == 0 => return (String::new(), String::new()),
            b'*' | b'+' | b'?' | b'{' if depth == 0 => {
                // A quantifier makes the item before it optional.
                if last_literal {
                    ends.suffix.pop();
                    if ends.open {
                        ends.prefix.pop();
                    }
                }
                ends.item(None);
                last_literal = false;
            }
            _ if depth == 0 => {
                if c.is_ascii() && !b".^$#&-~ \t\n\r".contains(&c) {
                    ends.item(Some(c as char));
                    last_literal = true;
                } else if !c.is_ascii() {
                    // A whole UTF-8 character as it is.
                    let ch = re.get(i..).and_then(|s| s.chars().next());
                    ends.item(ch);
                    last_literal = ch.is_some();
                    i += ch.map_or(1, char::len_utf8);
                    continue;
                } else {
                    ends.item(None);
                    last_literal = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if depth != 0 || class != 0 {
        return (String::new(), String::new());
    }
    (ends.prefix, ends.suffix)
}

/// The literal ends of a regex being scanned.
struct Ends {
    prefix: String,
    /// No other item was seen yet.
    open: bool,
    suffix: String,
}

impl Ends {
    /// A top-level item: a literal character, or anything else (`None`).
    fn item(&mut self, ch: Option<char>) {
        match ch {
            Some(c) => {
                if self.open {
                    self.prefix.push(c);
                }
                self.suffix.push(c);
            }
            None => {
                self.open = false;
                self.suffix.clear();
            }
        }
    }
}

/// `\x{H…}` at the start of `s`: the character and the escape's length.
pub(crate) fn parse_hex_escape(s: &str) -> Option<(char, usize)> {
    let rest = s.strip_prefix("\\x{")?;
    let end = rest.find('}')?;
    let code = u32::from_str_radix(rest.get(..end)?, 16).ok()?;
    Some((char::from_u32(code)?, 3 + end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_ends_of_lowered_shapes() {
        let cases: &[(&str, &str, &str)] = &[
            ("git\\x{20}push(?:\\x{20}|$)", "git push", ""),
            ("go\\x{20}vet$", "go vet", ""),
            ("(?s-u:.)*\\x{2E}example\\x{2E}com", "", ".example.com"),
            ("src/(?-u:[^/])*\\x{2E}rs/", "src/", ".rs/"),
            ("(?i:git\\x{20}push)", "", ""),
            ("a|b", "", ""),
            ("ab*c", "a", "c"),
            ("x[^\\x{2F}]y", "x", "y"),
            ("\\x{E9}t\\x{E9}(?s-u:.)*", "été", ""),
            ("\\d", "", ""),
            ("a(b", "", ""),
        ];
        for (re, pre, suf) in cases {
            let (p, s) = literal_ends(re);
            assert_eq!((p.as_str(), s.as_str()), (*pre, *suf), "{re}");
        }
    }

    #[test]
    fn a_rule_that_cannot_compile_fails_closed() {
        // An NFA limit nothing fits: the deny rule (fail closed) matches
        // what its literal fits, the allow rule nothing.
        let cfg = Config::new().nfa_size_limit(1);
        let pats = [
            (0, Walk::Fwd, "git\\x{20}(?s-u:.)*x"),
            (1, Walk::Fwd, "git(?s-u:.)*"),
        ];
        let (lazy, eager) = build(&pats, None, |id| id == 0, &cfg).unwrap();
        assert!(eager.is_empty());
        let mut m = Matches::new();
        lazy.find_into(b"git status", &mut m);
        assert_eq!(m.ids, [0]);
        m.ids.clear();
        lazy.find_into(b"ls", &mut m);
        assert!(m.ids.is_empty());
    }

    #[test]
    fn a_literal_may_run_into_the_terminator() {
        let fits = |r: &LazyRule, hay: &[u8], term: Option<u8>| {
            let mut buf = hay.to_vec();
            buf.extend(term);
            r.fits(hay, &buf, term)
        };
        let r = LazyRule::new(0, Walk::Fwd, "src/", false).unwrap();
        assert!(fits(&r, b"src", Some(b'/')));
        assert!(fits(&r, b"src/a", Some(b'/')));
        assert!(!fits(&r, b"src", None));
        assert!(!fits(&r, b"sr", Some(b'/')));
        let r = LazyRule::new(0, Walk::Rev, "(?s-u:.)*\\x{2E}com", false).unwrap();
        assert!(fits(&r, b"a.com", None));
        assert!(!fits(&r, b"a.org", None));
        // A segment walk: the literal anywhere in the haystack.
        let r = LazyRule::new(0, Walk::Seg, "secrets/", false).unwrap();
        assert!(fits(&r, b"a/b/secrets", Some(b'/')));
        assert!(!fits(&r, b"a/b/secretsrc", Some(b'/')));
    }
}
