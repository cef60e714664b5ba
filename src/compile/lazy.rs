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
//! Most deferred rules are no more than literals and runs of anything
//! (`Bash(npm ls:*)`, `Bash(wc -l src/*.json)`, `Read(./src/**)`): such a
//! rule is decided by comparing its literals with the haystack, in order
//! (see [`Glob`]), and never compiled; only the others are. The glob is
//! read from the regex itself, so it holds exactly what the regex holds,
//! and a regex it does not read whole is compiled as before.
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
use std::sync::{Arc, OnceLock};

/// Regexes up to this many bytes are compiled lazily: far below what
/// could reach the NFA size limit (the costliest piece, one any-character
/// class, is ~20 NFA states for 7 bytes of regex).
pub(crate) const LAZY_MAX_REGEX: usize = 4096;

/// Where a text lies in the [`LazyRules`] text: `(start, length)`.
type Span = (usize, usize);

/// One rule of a [`LazyRules`].
#[derive(Debug)]
pub(crate) struct LazyRule {
    pub(crate) id: u32,
    /// How its automaton is walked.
    pub(crate) walk: Walk,
    /// The regex in matching form (UTF-8, checked when it was stored),
    /// or, for a glob, its literals ([`encode_pieces`]).
    src: Span,
    /// Set when the rule is a glob: its tail.
    glob: Option<Tail>,
    /// What a match must start with (forward) or end with (reversed), or
    /// hold (the other walks).
    lit: Span,
    /// Match when the regex cannot be compiled (deny and ask rules).
    pub(crate) fail_closed: bool,
    compiled: OnceLock<Decider>,
}

/// How a deferred rule is decided once its literal has fitted a haystack.
#[derive(Clone, Debug)]
enum Decider {
    /// By comparing literals: the regex is a glob.
    Glob(Glob),
    /// By its compiled regex.
    Regex(Slow),
    /// Its regex does not compile: it matches when it fails closed.
    Failed,
}

impl Clone for LazyRule {
    fn clone(&self) -> LazyRule {
        LazyRule {
            id: self.id,
            walk: self.walk,
            lit: self.lit,
            src: self.src,
            glob: self.glob,
            fail_closed: self.fail_closed,
            compiled: match self.compiled.get() {
                Some(c) => OnceLock::from(c.clone()),
                None => OnceLock::new(),
            },
        }
    }
}

impl LazyRule {
    /// How the rule decides: as the glob it is stored as, or as the glob
    /// its regex reads as, else by the regex, compiled (once, on first
    /// need). `text` is its stored text (`None` if it could not be read).
    fn decider(&self, text: Option<&[u8]>, cfg: &Config) -> &Decider {
        self.compiled.get_or_init(|| {
            let Some(text) = text else {
                return Decider::Failed;
            };
            if let Some(tail) = self.glob {
                return match decode_pieces(text).and_then(|l| Glob::build(l, tail, self.walk)) {
                    Some(g) => Decider::Glob(g),
                    None => Decider::Failed,
                };
            }
            let Ok(src) = std::str::from_utf8(text) else {
                return Decider::Failed;
            };
            match Glob::of(src, self.walk) {
                Some(g) => Decider::Glob(g),
                None => match strategy::build_slow(src, self.walk, self.id, cfg) {
                    Ok(s) => Decider::Regex(s),
                    Err(_) => Decider::Failed,
                },
            }
        })
    }

    /// Whether the literal fits `hay` (`buf` is `hay` followed by `term`).
    #[inline]
    fn fits(&self, lit: &[u8], hay: &[u8], buf: &[u8], term: Option<u8>) -> bool {
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
    /// The rules' regexes and literals: their own, or the image they were
    /// read from, which they point into instead of being copied out.
    text: Arc<Vec<u8>>,
    /// The limits rules are compiled within.
    pub(crate) cfg: Config,
}

/// Adds deferred rules to a [`LazyRules`], their texts stored in one
/// buffer of their own or pointing into a shared one.
pub(crate) struct LazyBuilder {
    term: Option<u8>,
    rules: Vec<LazyRule>,
    /// The texts copied so far (`shared` unset).
    own: Vec<u8>,
    /// The buffer the texts lie in.
    shared: Option<Arc<Vec<u8>>>,
    cfg: Config,
}

impl LazyBuilder {
    /// Rules whose texts are copied into a buffer of their own.
    pub(crate) fn new(term: Option<u8>, cfg: &Config) -> LazyBuilder {
        LazyBuilder {
            term,
            rules: Vec::new(),
            own: Vec::new(),
            shared: None,
            cfg: cfg.clone(),
        }
    }

    /// Rules whose texts lie in `buf` (an image kept while they live):
    /// the texts given to [`LazyBuilder::push`] must be slices of it.
    pub(crate) fn sharing(term: Option<u8>, buf: &Arc<Vec<u8>>, n: usize) -> LazyBuilder {
        LazyBuilder {
            term,
            rules: Vec::with_capacity(n),
            own: Vec::new(),
            shared: Some(Arc::clone(buf)),
            cfg: Config::new(),
        }
    }

    /// Where `part` lies: in the shared buffer (`None` when it is not a
    /// slice of it), or copied to the end of the own one.
    fn place(&mut self, part: &[u8]) -> Option<Span> {
        match &self.shared {
            Some(buf) => {
                let at = (part.as_ptr() as usize).checked_sub(buf.as_ptr() as usize)?;
                (at.checked_add(part.len())? <= buf.len()).then_some((at, part.len()))
            }
            None => {
                let at = self.own.len();
                self.own.extend_from_slice(part);
                Some((at, part.len()))
            }
        }
    }

    /// Adds a rule, with the literal `lit` when given (read back from an
    /// image), else the one its regex gives. `None` when the regex is too
    /// long to be deferred (compile it eagerly instead), or when a shared
    /// buffer does not hold the texts.
    pub(crate) fn push(
        &mut self,
        id: u32,
        walk: Walk,
        src: &str,
        lit: Option<&[u8]>,
        fail_closed: bool,
    ) -> Option<()> {
        if src.len() > LAZY_MAX_REGEX {
            return None;
        }
        // A rule built here (not read back) is stored as its glob when it
        // is one.
        let glob = match &self.shared {
            None => parse_glob(src).filter(|(_, tail)| glob_walk_ok(*tail, walk)),
            Some(_) => None,
        };
        let (src_at, tail) = match glob {
            Some((lits, tail)) => {
                let at = self.own.len();
                encode_pieces(&lits, &mut self.own);
                ((at, self.own.len() - at), Some(tail))
            }
            None => (self.place(src.as_bytes())?, None),
        };
        let lit_at = match lit {
            Some(l) => self.place(l)?,
            None => {
                let (prefix, suffix) = literal_ends(src);
                let l = if walk.reversed() { suffix } else { prefix };
                self.place(l.as_bytes())?
            }
        };
        self.rules.push(LazyRule {
            id,
            walk,
            src: src_at,
            glob: tail,
            lit: lit_at,
            fail_closed,
            compiled: OnceLock::new(),
        });
        Some(())
    }

    /// Adds a rule read back from an image as a glob: its literals as
    /// stored (`pieces`), its tail, and the literal that must fit. `None`
    /// when the pieces are not literals as stored, the walk cannot walk
    /// the glob, or a shared buffer does not hold the texts.
    pub(crate) fn push_glob(
        &mut self,
        id: u32,
        walk: Walk,
        tail: Tail,
        pieces: &[u8],
        lit: &[u8],
        fail_closed: bool,
    ) -> Option<()> {
        if !pieces_valid(pieces) || !glob_walk_ok(tail, walk) {
            return None;
        }
        let src = self.place(pieces)?;
        let lit = self.place(lit)?;
        self.rules.push(LazyRule {
            id,
            walk,
            src,
            glob: Some(tail),
            lit,
            fail_closed,
            compiled: OnceLock::new(),
        });
        Some(())
    }

    /// The rules added.
    pub(crate) fn finish(self) -> LazyRules {
        LazyRules {
            term: self.term,
            rules: self.rules,
            text: self.shared.unwrap_or_else(|| Arc::new(self.own)),
            cfg: self.cfg,
        }
    }
}

impl LazyRules {
    /// Whether no rule is deferred.
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn bytes(&self, (at, len): Span) -> Option<&[u8]> {
        self.text.get(at..at.checked_add(len)?)
    }

    /// The stored text of a rule: its regex (UTF-8), or for a glob its
    /// literals as stored.
    pub(crate) fn text(&self, r: &LazyRule) -> &[u8] {
        self.bytes(r.src).unwrap_or_default()
    }

    /// The tail of a rule stored as a glob.
    pub(crate) fn glob_tail(r: &LazyRule) -> Option<Tail> {
        r.glob
    }

    /// The literal of a rule.
    pub(crate) fn lit(&self, r: &LazyRule) -> &[u8] {
        self.bytes(r.lit).unwrap_or_default()
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
            if !r.fits(self.lit(r), hay, &out.buf, self.term) {
                continue;
            }
            // As the fallback strategy walks it.
            let h: &[u8] = if r.walk == Walk::Rev { hay } else { &out.buf };
            let hit = match r.decider(self.bytes(r.src), &self.cfg) {
                Decider::Glob(g) => g.is_match(h),
                Decider::Regex(s) => s.re.is_match(Input::new(h).anchored(Anchored::Yes)),
                Decider::Failed => r.fail_closed,
            };
            if hit {
                out.ids.push(r.id);
            }
        }
    }
}

/// `(?s-u:.)*` in a regex: a run of any bytes.
const RUN: &str = "(?s-u:.)*";
/// `(?s-u:.)`: any one byte (the last piece of `dir/**`).
const BYTE: &str = "(?s-u:.)";
/// `(?:\x{20}|$)`: a space or the end (the end of `Bash(x:*)`).
const WORD_END: &str = "(?:\\x{20}|$)";

/// What a glob asks of the haystack after its last literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GlobEnd {
    /// Nothing: a prefix of the haystack matches.
    Open,
    /// At least one more byte.
    Byte,
    /// The end of the haystack.
    End,
}

/// A deferred rule's regex read as literals separated by runs of any
/// bytes, searched as its walk searches it: `lits[0]` at the start of the
/// haystack (or anywhere after a leading run), each next literal after
/// the one before, and then what `end` asks. A regex ending in "a space or
/// the end" is two such globs (one of them with the space), either of
/// which matching is a match.
///
/// Deciding so is exact: with only runs of any bytes between the
/// literals, taking the leftmost occurrence of each literal after the
/// previous one leaves every later literal the most room, so the
/// literals occur in order if and only if the leftmost choices find them;
/// a literal that must end the haystack is then a suffix starting no
/// earlier than where the others left off. The differential tests hold
/// it to the regex (`tests/compile_diff.rs`, the lazy configuration, and
/// a property test below).
#[derive(Clone, Debug)]
struct Glob {
    /// Whether a run precedes the first literal (walks that search
    /// anywhere, and backward walks, which end at the haystack's end).
    lead: bool,
    /// One or two alternatives: the literals, and what follows the last.
    alts: Vec<(Vec<Vec<u8>>, GlobEnd)>,
}

impl Glob {
    /// The glob a regex (in matching form) is, when it is one, for a
    /// rule walked as `walk` (forward, anywhere, backward; `None` for the
    /// segment walks, which restart at every `/`).
    fn of(re: &str, walk: Walk) -> Option<Glob> {
        let (lits, tail) = parse_glob(re)?;
        Glob::build(lits, tail, walk)
    }

    /// The glob of literals `lits` (at least one) ending in `tail`, for a
    /// rule walked as `walk` (see [`Glob::of`]).
    fn build(lits: Vec<Vec<u8>>, tail: Tail, walk: Walk) -> Option<Glob> {
        let (lead, at_end) = match walk {
            Walk::Fwd => (false, false),
            Walk::Float => (true, false),
            // `.*(?:re)$`: the match ends where the haystack ends.
            Walk::Rev => (true, true),
            Walk::Seg | Walk::SegRev => return None,
        };
        if lits.is_empty() {
            return None;
        }
        let end = match (tail, at_end) {
            (Tail::Open, false) => GlobEnd::Open,
            (Tail::Byte, false) => GlobEnd::Byte,
            (Tail::End | Tail::Word, false) | (Tail::Open | Tail::End | Tail::Word, true) => {
                GlobEnd::End
            }
            // One byte before the end: left to the regex.
            (Tail::Byte, true) => return None,
        };
        let mut alts = Vec::with_capacity(2);
        if tail == Tail::Word {
            // The literal, then a space (and then anything, or for a
            // backward walk the end), or the literal at the end.
            let mut spaced = lits.clone();
            spaced.last_mut()?.push(b' ');
            let e = if at_end { GlobEnd::End } else { GlobEnd::Open };
            alts.push((spaced, e));
        }
        alts.push((lits, end));
        Some(Glob { lead, alts })
    }

    /// Whether the glob matches `h` (the haystack as its walk sees it).
    fn is_match(&self, h: &[u8]) -> bool {
        self.alts
            .iter()
            .any(|(lits, end)| glob_match(lits, self.lead, *end, h))
    }
}

/// What the regex of a glob asks after its last literal, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Nothing.
    Open,
    /// One more byte, any (`(?s-u:.)`).
    Byte,
    /// The end (`$`).
    End,
    /// A space or the end (`(?:\x{20}|$)`).
    Word,
}

impl Tail {
    /// The byte that stands for it in an image.
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            Tail::Open => 0,
            Tail::Byte => 1,
            Tail::End => 2,
            Tail::Word => 3,
        }
    }

    /// The tail an image byte stands for.
    pub(crate) fn from_byte(b: u8) -> Option<Tail> {
        Some(match b {
            0 => Tail::Open,
            1 => Tail::Byte,
            2 => Tail::End,
            3 => Tail::Word,
            _ => return None,
        })
    }
}

/// A regex in matching form read as a glob: its literals (split at each
/// run of any bytes; the first before any run, possibly empty) and its
/// tail. `None` when it holds anything else.
fn parse_glob(re: &str) -> Option<(Vec<Vec<u8>>, Tail)> {
    let mut lits: Vec<Vec<u8>> = vec![Vec::new()];
    let mut s = re;
    let tail = loop {
        if s.is_empty() {
            break Tail::Open;
        }
        if s == "$" {
            break Tail::End;
        }
        if s == WORD_END {
            break Tail::Word;
        }
        if s == BYTE {
            break Tail::Byte;
        }
        if let Some(rest) = s.strip_prefix(RUN) {
            lits.push(Vec::new());
            s = rest;
            continue;
        }
        let last = lits.last_mut()?;
        if let Some((c, len)) = strict_hex_escape(s) {
            let mut b = [0u8; 4];
            last.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            s = s.get(len..)?;
            continue;
        }
        let c = *s.as_bytes().first()?;
        if c.is_ascii_alphanumeric() || c == b'/' {
            last.push(c);
            s = s.get(1..)?;
            continue;
        }
        return None;
    };
    Some((lits, tail))
}

/// The literals of a glob as stored: each its length (u32, little-endian)
/// and its bytes.
fn encode_pieces(lits: &[Vec<u8>], out: &mut Vec<u8>) {
    for l in lits {
        out.extend_from_slice(&(l.len() as u32).to_le_bytes());
        out.extend_from_slice(l);
    }
}

/// The literals [`encode_pieces`] wrote; `None` unless `blob` is exactly
/// one or more of them.
fn decode_pieces(blob: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut rest = blob;
    while !rest.is_empty() {
        let (n, tail) = rest.split_at_checked(4)?;
        let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
        let (lit, tail) = tail.split_at_checked(n)?;
        out.push(lit.to_vec());
        rest = tail;
    }
    (!out.is_empty()).then_some(out)
}

/// Whether `blob` is one or more literals as [`encode_pieces`] writes
/// them (checked without copying them).
pub(crate) fn pieces_valid(blob: &[u8]) -> bool {
    let mut rest = blob;
    while !rest.is_empty() {
        let Some((n, tail)) = rest.split_at_checked(4) else {
            return false;
        };
        let n = u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize;
        match tail.get(n..) {
            Some(t) => rest = t,
            None => return false,
        }
    }
    !blob.is_empty()
}

/// Whether a glob ending in `tail` can be walked as `walk` (what
/// [`Glob::build`] accepts).
pub(crate) fn glob_walk_ok(tail: Tail, walk: Walk) -> bool {
    match walk {
        Walk::Fwd | Walk::Float => true,
        Walk::Rev => tail != Tail::Byte,
        Walk::Seg | Walk::SegRev => false,
    }
}

/// Where the literals `lits`, in order, leave off in `h` (the first at
/// the start unless `lead`), each taken at its leftmost occurrence after
/// the one before.
fn glob_prefix(lits: &[Vec<u8>], lead: bool, h: &[u8]) -> Option<usize> {
    use bstr::ByteSlice;
    let mut pos = 0usize;
    for (i, l) in lits.iter().enumerate() {
        if i == 0 && !lead {
            if !h.starts_with(l) {
                return None;
            }
            pos = l.len();
        } else {
            let at = h.get(pos..)?.find(l)?;
            pos = pos.checked_add(at)?.checked_add(l.len())?;
        }
    }
    Some(pos)
}

/// Whether `lits` (separated by runs of any bytes, preceded by one when
/// `lead`), followed by what `end` asks, match a prefix of `h`.
fn glob_match(lits: &[Vec<u8>], lead: bool, end: GlobEnd, h: &[u8]) -> bool {
    match end {
        GlobEnd::Open => glob_prefix(lits, lead, h).is_some(),
        GlobEnd::Byte => glob_prefix(lits, lead, h).is_some_and(|p| p < h.len()),
        GlobEnd::End => {
            let Some((last, init)) = lits.split_last() else {
                return false;
            };
            if init.is_empty() && !lead {
                return h == &last[..];
            }
            // The last literal follows a run: a suffix of `h`, starting
            // where the others left off or later.
            glob_prefix(init, lead, h)
                .is_some_and(|p| h.len() >= p.saturating_add(last.len()) && h.ends_with(last))
        }
    }
}

/// `\x{H…}` at the start of `s`, as the regex syntax reads it: one to six
/// hex digits naming a character. The character and the escape's length.
fn strict_hex_escape(s: &str) -> Option<(char, usize)> {
    let rest = s.strip_prefix("\\x{")?;
    let end = rest.find('}')?;
    let digits = rest.get(..end)?;
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let code = u32::from_str_radix(digits, 16).ok()?;
    Some((char::from_u32(code)?, 3 + end + 1))
}

/// Splits lowered `(id, regex)` pairs: the ones deferred, and the ones too
/// long to defer, built now by the per-rule engine.
pub(crate) fn build(
    pats: &[(u32, Walk, &str)],
    term: Option<u8>,
    fail_closed: impl Fn(u32) -> bool,
    cfg: &Config,
) -> Result<(LazyRules, Vec<Slow>), BuildFailure> {
    let mut lazy = LazyBuilder::new(term, cfg);
    let mut eager = Vec::new();
    for &(id, walk, re) in pats {
        if lazy.push(id, walk, re, None, fail_closed(id)).is_none() {
            eager.push(strategy::build_slow(re, walk, id, cfg)?);
        }
    }
    Ok((lazy.finish(), eager))
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
        // what its literal fits, the allow rule nothing. (Their `?`, one
        // character, keeps them from being read as globs.)
        let cfg = Config::new().nfa_size_limit(1);
        let pats = [
            (0, Walk::Fwd, "git\\x{20}(?s:.)x"),
            (1, Walk::Fwd, "git(?s:.)"),
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
        let rule = |walk, re: &str| {
            let (l, eager) = build(&[(0, walk, re)], None, |_| false, &Config::new()).unwrap();
            assert!(eager.is_empty());
            l
        };
        let fits = |l: &LazyRules, hay: &[u8], term: Option<u8>| {
            let mut buf = hay.to_vec();
            buf.extend(term);
            l.rules.iter().all(|r| r.fits(l.lit(r), hay, &buf, term))
        };
        let r = rule(Walk::Fwd, "src/");
        assert!(fits(&r, b"src", Some(b'/')));
        assert!(fits(&r, b"src/a", Some(b'/')));
        assert!(!fits(&r, b"src", None));
        assert!(!fits(&r, b"sr", Some(b'/')));
        let r = rule(Walk::Rev, "(?s-u:.)*\\x{2E}com");
        assert!(fits(&r, b"a.com", None));
        assert!(!fits(&r, b"a.org", None));
        // A segment walk: the literal anywhere in the haystack.
        let r = rule(Walk::Seg, "secrets/");
        assert!(fits(&r, b"a/b/secrets", Some(b'/')));
        assert!(!fits(&r, b"a/b/secretsrc", Some(b'/')));
    }

    /// A regex in matching form built from glob pieces (0: `a`, 1: `b`,
    /// 2: a space, 3: `é`, 4: `/`, 5: a run) and an end (0: none, 1: `$`,
    /// 2: a space or the end, 3: one byte).
    fn glob_regex(pieces: &[u8], end: u8) -> String {
        let mut re = String::new();
        for p in pieces {
            re.push_str(match p % 6 {
                0 => "a",
                1 => "b",
                2 => "\\x{20}",
                3 => "\\x{E9}",
                4 => "/",
                _ => RUN,
            });
        }
        re.push_str(match end % 4 {
            0 => "",
            1 => "$",
            2 => WORD_END,
            _ => BYTE,
        });
        re
    }

    #[test]
    fn glob_shapes_are_read_and_others_left_to_the_regex() {
        let is_glob = |re: &str, walk| Glob::of(re, walk).is_some();
        assert!(is_glob("go\\x{20}vet(?:\\x{20}|$)", Walk::Fwd));
        assert!(is_glob("wc\\x{20}(?s-u:.)*\\x{2E}json$", Walk::Fwd));
        assert!(is_glob("src/(?s-u:.)", Walk::Fwd));
        assert!(is_glob("\\x{2E}com", Walk::Rev));
        assert!(!is_glob("src/(?s-u:.)", Walk::Rev));
        assert!(!is_glob("(?i:git)", Walk::Fwd));
        assert!(!is_glob("a(?s:.)b", Walk::Fwd));
        assert!(!is_glob("a(?-u:[^/])*b/", Walk::Fwd));
        assert!(!is_glob("a/", Walk::Seg));
        assert!(!is_glob("a$b", Walk::Fwd));
        // The escapes the regex syntax reads, and no others.
        assert!(!is_glob("\\x{+20}", Walk::Fwd));
        assert!(!is_glob("\\x{D800}", Walk::Fwd));
        assert!(!is_glob("\\x{}", Walk::Fwd));
    }

    proptest::proptest! {
        /// Stored literals are checked at load exactly as they decode, and
        /// come back as written.
        #[test]
        fn stored_glob_literals_check_as_they_decode(
            blob in proptest::collection::vec(proptest::prop_oneof![0u8..3, proptest::num::u8::ANY], 0..24),
            lits in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..5), 1..4),
        ) {
            proptest::prop_assert_eq!(pieces_valid(&blob), decode_pieces(&blob).is_some());
            let mut out = Vec::new();
            encode_pieces(&lits, &mut out);
            proptest::prop_assert!(pieces_valid(&out));
            proptest::prop_assert_eq!(decode_pieces(&out), Some(lits));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn a_glob_decides_as_its_regex(
            pieces in proptest::collection::vec(0u8..6, 0..7),
            end in 0u8..4,
            walk in 0u8..3,
            term in proptest::option::of(proptest::sample::select(vec![b'/', b' '])),
            hays in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec!["a", "b", " ", "é", "/"]), 0..9),
                1..12,
            ),
        ) {
            let re = glob_regex(&pieces, end);
            let walk = [Walk::Fwd, Walk::Float, Walk::Rev][usize::from(walk)];
            let slow = strategy::build_slow(&re, walk, 0, &Config::new()).unwrap();
            if let Some(glob) = Glob::of(&re, walk) {
                for hay in &hays {
                    let hay = hay.concat();
                    let mut buf = hay.as_bytes().to_vec();
                    buf.extend(term);
                    let h: &[u8] = if walk == Walk::Rev { hay.as_bytes() } else { &buf };
                    let want = slow.re.is_match(Input::new(h).anchored(Anchored::Yes));
                    proptest::prop_assert_eq!(glob.is_match(h), want, "{} {:?} on {:?}", re, walk, hay);
                }
            } else {
                // Only a byte before the end of a backward walk is left.
                proptest::prop_assert!(walk == Walk::Rev && end % 4 == 3, "{} {:?}", re, walk);
            }
        }
    }
}
