//! Routing literal-led rules by their leading words.
//!
//! A literal-led rule (`git commit -m *`, `src/components/**`) can only
//! match a haystack that starts with its literal text. Its leading words —
//! the literal up to a separator (a space for commands, `/` for paths),
//! at most [`super::Config::route_depth`] of them — are its *key*, and a
//! query looks up each of its own leading word prefixes (`git`,
//! `git commit`) in a hash map from key to the small automata holding
//! those rules. So a query walks a few small automata instead of one big
//! trie holding every rule, and the small automata can stay dense (one
//! table lookup per byte) without a large total.
//!
//! Case-insensitive rules (deny and ask path rules in `claude-code`) are
//! routed too, by their key in ASCII lower case, in a map of their own: a
//! query folds its word prefixes before looking them up. Only keys of
//! ASCII text are routed. Under simple case folding (what regex-syntax
//! applies) an ASCII letter matches only its other ASCII case, except `k`
//! (also U+212A KELVIN SIGN) and `s` (also U+017F LONG S); the fold of a
//! query maps those two to `k` and `s`. ASCII punctuation, digits and the
//! separators have no other case.
//!
//! Rules whose literal holds no separator (`npm*`, `README`) are not
//! routed: they stay in the automata chosen by first byte. Path rules are
//! routed only when [`super::Config::path_route_depth`] asks for it: on
//! the benchmark sets, routed path automata were slower to query than the
//! unrouted ones (BENCHMARKS.md, "Compiled matchers").

use super::lazy::literal_ends;
use super::matcher::Auto;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast unkeyed hash for short byte strings (the routing keys and the
/// exact literals). Written here because the crates the project may use
/// offer only the standard library's SipHash, which costs several times as
/// much on the 10–60-byte strings a query hashes. Unkeyed is sound here:
/// the tables are built from the policy's own rules, and a query's
/// haystack only chooses which slot is probed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FastHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            h = (h.rotate_left(5) ^ tail_word(rest) ^ (rest.len() as u64) << 56).wrapping_mul(K);
        }
        self.0 = h;
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(K);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The table takes its slot from the low bits: mix the high ones in.
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (h >> 32)
    }
}

/// The up to 7 bytes of `rest` in one word, without a variable-length
/// copy: two overlapping 4-byte loads, or the first, middle and last byte
/// (distinct texts of one length give distinct words).
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let b = |i: usize| u64::from(rest.get(i).copied().unwrap_or(0));
    if n >= 4 {
        let w4 = |at: usize| {
            let mut w = [0u8; 4];
            if let Some(x) = rest.get(at..at + 4) {
                w.copy_from_slice(x);
            }
            u64::from(u32::from_le_bytes(w))
        };
        w4(0) | w4(n - 4) << 32
    } else if n > 0 {
        b(0) | b(n / 2) << 8 | b(n - 1) << 16
    } else {
        0
    }
}

/// The [`std::hash::BuildHasher`] of [`FastHasher`].
pub(crate) type FastHash = BuildHasherDefault<FastHasher>;

/// A hash map keyed by byte strings, with [`FastHash`].
pub(crate) type ByteMap<V> = HashMap<Box<[u8]>, V, FastHash>;

/// Where a routed rule is looked up: its key, and whether it is the
/// ASCII-lower-case key of a case-insensitive rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct RouteKey {
    pub(crate) folded: bool,
    pub(crate) key: Box<[u8]>,
}

/// The key of a forward regex in matching form (see [`super::lower`]):
/// its literal prefix up to the last separator among the first `depth`
/// ones; `None` when the literal holds no separator, or when the rule is
/// case-insensitive and that part is not ASCII.
pub(crate) fn route_key(re: &str, sep: u8, depth: usize) -> Option<RouteKey> {
    if depth == 0 {
        return None;
    }
    let (inner, folded) = match re.strip_prefix("(?i:").and_then(|r| r.strip_suffix(')')) {
        Some(inner) => (inner, true),
        None => (re, false),
    };
    // A regex with a flag group other than the whole case-insensitive
    // wrapper has no literal prefix `literal_ends` reads (it stops at `(`).
    let (lit, _) = literal_ends(inner);
    let lit = lit.as_bytes();
    let mut end = None;
    for (n, (i, _)) in lit
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == sep)
        .enumerate()
    {
        if n >= depth {
            break;
        }
        end = Some(i);
    }
    let key = lit.get(..end?)?;
    if folded {
        if !key.is_ascii() {
            return None;
        }
        return Some(RouteKey {
            folded,
            key: key.to_ascii_lowercase().into_boxed_slice(),
        });
    }
    Some(RouteKey {
        folded,
        key: key.into(),
    })
}

/// The key of a word-prefix rule, and whether the rule also matches a
/// haystack that is the key itself. A word-prefix rule is a forward regex
/// in matching form that is a literal `L` followed by `(?:\x{20}|$)` (`L`
/// alone or `L`, a space and anything: `Bash(L:*)`), or a literal `L`
/// followed by a space (`L `, then anything). It matches exactly the
/// haystacks whose text before some space is `L` (and, in the first form,
/// the haystack `L`): with `L` holding fewer than `depth` spaces, the
/// query's lookup of its leading words finds it, and no automaton is
/// needed. `None` for any other regex, or when `sep` is not a space.
pub(crate) fn word_prefix(re: &str, sep: u8, depth: usize) -> Option<(Box<[u8]>, bool)> {
    const SPACE_OR_END: &str = "(?:\\x{20}|$)";
    if sep != b' ' {
        return None;
    }
    let (lit, _) = literal_ends(re);
    let mut written = String::with_capacity(re.len());
    super::lower::push_literal(&mut written, &lit);
    let rest = re.strip_prefix(written.as_str())?;
    let (key, whole) = if rest == SPACE_OR_END {
        (lit.as_bytes(), true)
    } else if rest.is_empty() {
        (lit.as_bytes().strip_suffix(b" ")?, false)
    } else {
        return None;
    };
    if key.iter().filter(|&&b| b == sep).count() >= depth {
        return None;
    }
    Some((key.into(), whole))
}

/// Appends `word` folded as the case-insensitive keys are: ASCII letters in
/// lower case, U+212A as `k`, U+017F as `s`, every other byte as it is.
pub(crate) fn fold_into(word: &[u8], out: &mut Vec<u8>) {
    if word.is_ascii() {
        // The common case, in bulk.
        let start = out.len();
        out.extend_from_slice(word);
        if let Some(tail) = out.get_mut(start..) {
            tail.make_ascii_lowercase();
        }
        return;
    }
    let mut i = 0;
    while let Some(&b) = word.get(i) {
        match (b, word.get(i + 1), word.get(i + 2)) {
            (0xE2, Some(0x84), Some(0xAA)) => {
                out.push(b'k');
                i += 3;
            }
            (0xC5, Some(0xBF), _) => {
                out.push(b's');
                i += 2;
            }
            _ => {
                out.push(b.to_ascii_lowercase());
                i += 1;
            }
        }
    }
}

/// What a key leads to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hit {
    /// Indices into [`Routes::autos`] of the automata to walk.
    pub(crate) autos: Box<[u32]>,
    /// Rules that match every haystack whose text before a separator is
    /// the key (word-prefix rules, see [`word_prefix`]).
    pub(crate) ids: Box<[u32]>,
}

/// The routed automata and word-prefix rules of one matcher.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    /// The byte that ends a word.
    pub(crate) sep: u8,
    /// How many leading words a query looks up at most.
    pub(crate) depth: u8,
    /// Key → what it leads to (case-sensitive rules).
    pub(crate) exact: ByteMap<Hit>,
    /// Folded key → what it leads to (case-insensitive rules).
    pub(crate) folded: ByteMap<Hit>,
    /// The automata, each anchored at the haystack's start.
    pub(crate) autos: Vec<Auto>,
}

/// At most this many distinct automata are remembered per query to skip
/// walking one twice (a repeat walk only costs time: ids are deduplicated
/// at the end).
const SEEN: usize = 16;

impl Routes {
    /// Whether no rule is routed.
    pub(crate) fn is_empty(&self) -> bool {
        self.autos.is_empty() && self.exact.is_empty() && self.folded.is_empty()
    }

    /// Collects the word-prefix rules and walks the automata of every key
    /// `hay` (followed by `term`) starts with; `fold` is scratch.
    #[inline]
    pub(crate) fn find_into(
        &self,
        hay: &[u8],
        term: Option<u8>,
        fold: &mut Vec<u8>,
        out: &mut Vec<u32>,
    ) {
        let mut seen = [u32::MAX; SEEN];
        let mut n_seen = 0usize;
        let mut walk = |ix: &[u32], out: &mut Vec<u32>| {
            for &i in ix {
                if seen[..n_seen.min(SEEN)].contains(&i) {
                    continue;
                }
                if let Some(s) = seen.get_mut(n_seen) {
                    *s = i;
                }
                n_seen += 1;
                if let Some(a) = self.autos.get(i as usize) {
                    a.walk(hay, term, out);
                }
            }
        };
        let mut from = 0;
        for _ in 0..self.depth {
            let end = match hay
                .get(from..)
                .and_then(|r| r.iter().position(|&b| b == self.sep))
            {
                Some(i) => from + i,
                // The terminator ends the last word.
                None if term == Some(self.sep) => hay.len(),
                None => break,
            };
            let Some(word) = hay.get(..end) else { break };
            if let Some(hit) = self.exact.get(word) {
                out.extend_from_slice(&hit.ids);
                walk(&hit.autos, out);
            }
            if !self.folded.is_empty() {
                fold.clear();
                fold_into(word, fold);
                if let Some(hit) = self.folded.get(&fold[..]) {
                    out.extend_from_slice(&hit.ids);
                    walk(&hit.autos, out);
                }
            }
            if end >= hay.len() {
                break;
            }
            from = end + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_lowered_shapes() {
        let k = |re: &str, sep: u8, depth: usize| {
            route_key(re, sep, depth).map(|k| (k.folded, String::from_utf8(k.key.into()).unwrap()))
        };
        let s = |x: &str| Some((false, x.to_string()));
        assert_eq!(k("git\\x{20}push(?:\\x{20}|$)", b' ', 2), s("git"));
        assert_eq!(
            k("git\\x{20}commit\\x{20}\\x{2D}m\\x{20}", b' ', 2),
            s("git commit")
        );
        assert_eq!(
            k("git\\x{20}commit\\x{20}\\x{2D}m\\x{20}", b' ', 1),
            s("git")
        );
        assert_eq!(k("git(?:\\x{20}|$)", b' ', 2), None);
        assert_eq!(k("src/(?s-u:.)", b'/', 2), s("src"));
        assert_eq!(k("a/b/c/(?s-u:.)", b'/', 2), s("a/b"));
        assert_eq!(
            k("(?i:Src/Main/(?-u:[^/])*)", b'/', 3),
            Some((true, "src/main".to_string()))
        );
        assert_eq!(k("(?i:\\x{E9}/a/)", b'/', 3), None);
        assert_eq!(k("(?i:a)(?i:b/)", b'/', 3), None);
        assert_eq!(k("x/", b'/', 0), None);
    }

    #[test]
    fn word_prefixes_of_lowered_shapes() {
        let k = |re: &str, depth: usize| {
            word_prefix(re, b' ', depth)
                .map(|(k, whole)| (String::from_utf8(k.into()).unwrap(), whole))
        };
        let w = |x: &str, whole: bool| Some((x.to_string(), whole));
        assert_eq!(k("git(?:\\x{20}|$)", 2), w("git", true));
        assert_eq!(k("git\\x{20}commit(?:\\x{20}|$)", 2), w("git commit", true));
        assert_eq!(k("git\\x{20}commit(?:\\x{20}|$)", 1), None);
        assert_eq!(k("git\\x{20}", 1), w("git", false));
        assert_eq!(k("(?:\\x{20}|$)", 1), w("", true));
        assert_eq!(k("\\x{E9}\\x{20}x(?:\\x{20}|$)", 2), w("é x", true));
        // Not a literal and a word end only.
        assert_eq!(k("git\\x{20}commit", 2), None);
        assert_eq!(k("git(?:\\x{20}|$)x", 2), None);
        assert_eq!(k("git$", 2), None);
        assert_eq!(k("g(?s:.)t\\x{20}", 2), None);
        assert_eq!(k("(?i:git(?:\\x{20}|$))", 2), None);
        assert_eq!(k("git\\x{20}(?s-u:.)*\\x{20}x$", 2), None);
        assert_eq!(word_prefix("git(?:\\x{20}|$)", b'/', 2), None);
        assert_eq!(k("git(?:\\x{20}|$)", 0), None);
    }

    #[test]
    fn folds_the_two_non_ascii_cases() {
        let mut out = Vec::new();
        fold_into("ſRC/\u{212A}ey/É".as_bytes(), &mut out);
        assert_eq!(out, "src/key/É".as_bytes());
    }

    #[test]
    fn fast_hash_spreads_short_keys() {
        use std::hash::BuildHasher;
        let b = FastHash::default();
        let mut low = std::collections::HashSet::new();
        for i in 0..1024u32 {
            low.insert(b.hash_one(format!("k{i}").as_bytes()) & 1023);
        }
        // A good spread leaves few of 1024 slots taken twice.
        assert!(low.len() > 550, "{}", low.len());
    }
}
