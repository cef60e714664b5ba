//! Values that bash runs as code.
//!
//! Bash evaluates the *value* of a variable as an arithmetic expression in
//! arithmetic contexts (`$((x))`, `((x))`, `$[x]`, `let`, array subscripts,
//! `${s:x}`, `[[ x -eq 1 ]]`, `declare -i`), and an arithmetic expression
//! may hold an array subscript with a command substitution in it. So
//! `x='a[$(rm -rf ~)]'; echo $((x))` runs `rm -rf ~` although no word of it
//! is a command; `${!x}` (indirection) and `${x@P}` (prompt expansion) do
//! the same with a value. Positional parameters are values the caller
//! chooses (`bash -c 'echo $(($1))' _ 'a[$(…)]'`).
//!
//! The reader cannot know such values, so it looks for the pattern instead:
//! a variable used in one of those contexts whose value the command itself
//! sets to anything but an integer (an assignment, `read`, `mapfile`,
//! `printf -v`, `getopts`, a `for` list), or a positional parameter there,
//! makes the reading incomplete ([`Reason::ValueRunsCode`]). It works on
//! the scripts' text and over-approximates (quotes are not told apart), so
//! it can only make a reading incomplete, never complete. Commands with
//! none of `((`, `$[`, `[`, `${` and no `let` or declaration word skip it
//! after one pass over their bytes.
//!
//! [`Reason::ValueRunsCode`]: super::Reason::ValueRunsCode

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::packed::Searcher;

use super::parse::{byte_set, run_outside};

/// The most places that can start a context (a `$`, `(` or `[`, a `let`
/// or declaration word) looked at in one reading's scripts, once a value
/// may be set, each context found counting [`CONTEXT_PLACES`] more: past
/// it a value is taken to run as code, which keeps the check's time
/// bounded (it can only make a reading incomplete).
pub const MAX_PLACES: usize = 4096;
/// What a context found counts against [`MAX_PLACES`] beside its place:
/// its names are read and looked up, and the values set to them sought.
pub const CONTEXT_PLACES: usize = 7;

/// The first use of a value as code in `scripts`: the script's index and
/// the span of the context.
///
/// Linear in the scripts' text: when no script can set a value or pass a
/// positional parameter, substring searches end it; otherwise each script
/// that might evaluate a value has its contexts found in one pass (from
/// one place that can start one to the next); the names in them are read
/// in one pass over the union of the contexts (a byte covered by many
/// contexts is read once); and only when a name is used there at all are
/// the scripts scanned for the values they set, in one more pass each.
pub(crate) fn find(scripts: &[super::Script]) -> Option<(usize, Range<usize>)> {
    // Each script's tables, built once for both passes.
    let mut tables: Vec<Option<Tables>> = Vec::new();
    // Nested scripts first: their text is also part of their parent's, and
    // the innermost reading names the place in the script that holds it.
    let mut found: Vec<Found> = Vec::new();
    let mut wanted: Names = Names::default();
    let mut positional = false;
    // The places that can start a context looked at, in every script.
    let mut places = 0;
    let evaluating: Vec<usize> = (0..scripts.len())
        .rev()
        .filter(|&k| scripts.get(k).is_some_and(|s| might_evaluate(&s.text)))
        .collect();
    if evaluating.is_empty() || !scripts.iter().any(|s| may_set_or_pass(s.text.as_bytes())) {
        return None;
    }
    for k in evaluating {
        let Some(s) = scripts.get(k) else { continue };
        let b = s.text.as_bytes();
        let mut t = Tables::default();
        let contexts = match collect_contexts(&s.text, &mut t, &mut places) {
            Ok(c) => c,
            // Too many places to look at: taken as found (it can only
            // make the reading incomplete).
            Err(at) => return Some((k, at..at)),
        };
        if tables.is_empty() {
            tables.resize_with(scripts.len(), || None);
        }
        if let Some(slot) = tables.get_mut(k) {
            *slot = Some(t);
        }
        if contexts.is_empty() {
            continue;
        }
        let covered = union(&contexts, b.len());
        let mut last = "";
        for r in &covered {
            let text = s.text.get(r.clone()).unwrap_or("");
            for (_, id) in idents(text) {
                if is_positional(id) {
                    // A positional parameter needs no assignment.
                    positional = true;
                } else if id != last {
                    wanted.insert(id);
                    last = id;
                }
            }
        }
        found.push(Found {
            script: k,
            contexts,
            covered,
        });
    }
    if wanted.is_empty() && !positional {
        return None;
    }
    let mut tainted: Names = Names::default();
    if !wanted.is_empty() {
        for (k, s) in scripts.iter().enumerate() {
            let mut t = tables.get_mut(k).and_then(Option::take).unwrap_or_default();
            collect_taint(&s.text, &mut t, &wanted, &mut tainted);
        }
    }
    if tainted.is_empty() && !positional {
        return None;
    }
    found.into_iter().find_map(|f| {
        let text = &scripts.get(f.script)?.text;
        f.covered.iter().find_map(|r| {
            let (at, _) = idents(text.get(r.clone())?)
                .find(|(_, id)| is_positional(id) || tainted.contains(id))?;
            Some((f.script, context_at(&f.contexts, r.start + at)))
        })
    })
}

/// Whether `b` may give a context a value that runs: an assignment (an
/// `=`), a word that sets a variable (`read`, `mapfile`, `readarray`,
/// `getopts`, `printf`, `for`, `select`), or a positional parameter (`$1`,
/// `${1}`, `${!1}`, `$@`, `$*`). Without one in any script no context can
/// hold a name [`collect_taint`] marks, nor a positional parameter; a few
/// substring searches over the text tell.
fn may_set_or_pass(b: &[u8]) -> bool {
    use bstr::ByteSlice;
    if b.find_byte(b'=').is_some() {
        return true;
    }
    let setter = match searcher(&SETTERS, SETTER_WORDS) {
        Some(ac) => ac.find(b).is_some(),
        None => SETTER_WORDS.iter().any(|w| b.find(w).is_some()),
    };
    setter
        || b.find_byte(b'$')
            .is_some_and(|d| positional_in(b.get(d..).unwrap_or(&[])))
}

/// Words that set a variable (`readarray` holds `read`).
const SETTER_WORDS: &[&str] = &["read", "mapfile", "getopts", "printf", "for", "select"];
static SETTERS: OnceLock<Option<Searcher>> = OnceLock::new();

/// `let` and the declaration words.
const CONTEXT_WORDS: &[&str] = &["let", "declare", "typeset", "local", "export", "readonly"];

/// A SIMD searcher for all of `words` in one pass (built at the first
/// use; `None` where there is none, when the callers search word by
/// word).
fn searcher(
    cell: &'static OnceLock<Option<Searcher>>,
    words: &[&str],
) -> Option<&'static Searcher> {
    cell.get_or_init(|| {
        let mut builder = aho_corasick::packed::Config::new().builder();
        builder.extend(words);
        builder.build()
    })
    .as_ref()
}

/// Whether `b` writes a positional parameter: a `$` followed by a digit,
/// `@` or `*`, or by `{` (and `!`) and one. The `$` are found 8 bytes at a
/// time (as cheap where they stand close together as where they are far
/// apart).
fn positional_in(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let at = |d: usize| {
        let mut k = d + 1;
        if b.get(k) == Some(&b'{') {
            k += 1;
            if b.get(k) == Some(&b'!') {
                k += 1;
            }
        }
        b.get(k)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'@' | b'*'))
    };
    let word = |k: usize| {
        b.get(k..k + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_le_bytes)
    };
    let mut chunks = b.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let x = <[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes) ^ (ONES * u64::from(b'$'));
        // The top bit of each byte that is `$` (a byte of `x` that is 0),
        // exactly: no carry crosses a byte.
        let mut dollars = !(((x & LOW) + LOW) | x | LOW);
        // The parameter's name is 1 to 3 bytes after its `$`: none of
        // those 8 + 3 bytes is a digit, `@` or `*`, none of these `$`
        // writes one.
        if dollars != 0
            && let (Some(p), Some(q)) = (word(base + 1), word(base + 3))
            && !names_one(p)
            && !names_one(q)
        {
            dollars = 0;
        }
        while dollars != 0 {
            if at(base + (dollars.trailing_zeros() / 8) as usize) {
                return true;
            }
            dollars &= dollars - 1;
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .enumerate()
        .any(|(k, &c)| c == b'$' && at(base + k))
}

/// Whether one of the 8 bytes of `w` is a digit, `@` or `*` (the
/// one-byte names of positional parameters), exactly: no carry crosses a
/// byte.
fn names_one(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let equal = |c: u8| {
        let x = w ^ (ONES * u64::from(c));
        !(((x & LOW) + LOW) | x | LOW)
    };
    // Bytes below 0x80 from `0` (0x30) on and not from `:` (0x3a) on.
    let y = w & LOW;
    let digits = (y + ONES * 0x50) & !(y + ONES * 0x46) & !w & HIGH;
    (digits | equal(b'@') | equal(b'*')) != 0
}

/// A script's contexts (in the order found) and their union.
struct Found {
    script: usize,
    contexts: Vec<Range<usize>>,
    covered: Vec<Range<usize>>,
}

/// A set of variable names, hashed cheaply: the names are short and
/// come from the command itself, and a set built from one command's text
/// cannot grow past that text's size, so a keyed hash buys nothing here.
type Names<'a> = HashSet<&'a str, BuildHasherDefault<NameHasher>>;

/// A multiply-rotate hash over 8 bytes at a time (std has no fast
/// unkeyed hasher, and the allowed crates none that is public).
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            if let Some(dst) = w.get_mut(..rest.len()) {
                dst.copy_from_slice(rest);
            }
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The union of `spans` (each clamped to `len`), as sorted, disjoint
/// ranges (touching ones joined), so that any number of nested or
/// overlapping contexts costs one pass over the text.
fn union(spans: &[Range<usize>], len: usize) -> Vec<Range<usize>> {
    let mut sorted: Vec<Range<usize>> = spans
        .iter()
        .map(|s| s.start.min(len)..s.end.min(len))
        .filter(|s| s.start < s.end)
        .collect();
    // Found in the order of the text, all but a few.
    if !sorted.is_sorted_by_key(|s| s.start) {
        sorted.sort_unstable_by_key(|s| s.start);
    }
    let mut out: Vec<Range<usize>> = Vec::new();
    for s in sorted {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// The first context (in the order found) that holds position `at`.
fn context_at(contexts: &[Range<usize>], at: usize) -> Range<usize> {
    contexts
        .iter()
        .find(|c| c.contains(&at))
        .or(contexts.first())
        .cloned()
        .unwrap_or(at..at)
}

/// Bytes [`might_evaluate`] stops at: those that start a context, and
/// those after which a word starts.
static MIGHT_STOP: [bool; 256] = byte_set(b"[($ \t\n;&|{!`");

/// Whether `s` may hold a context at all: one of `((`, `$[`, `${`, `[`
/// (`[[`, a subscript), or `let` or a declaration word (`declare`,
/// `typeset`, `local`, `export`, `readonly`) at the start of a word and
/// followed by a blank or the end. One pass over the bytes, skipping runs
/// that can hold none (most commands hold none); by substring searches
/// for a long text.
fn might_evaluate(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() > 256 {
        // Substring searches, fast over long text whatever it holds.
        use bstr::ByteSlice;
        return b.find_byte(b'[').is_some()
            || b.find("((").is_some()
            || b.find("${").is_some()
            || ["let", "declare", "typeset", "local", "export", "readonly"]
                .iter()
                .any(|w| {
                    b.find_iter(w)
                        .any(|i| word_start(b, i) && declaration_or_let(b, i))
                });
    }
    if declaration_or_let(b, 0) {
        return true;
    }
    let mut i = 0;
    while i < b.len() {
        i += run_outside(b.get(i..).unwrap_or(&[]), &MIGHT_STOP);
        let Some(&c) = b.get(i) else { break };
        let next = b.get(i + 1).copied();
        match c {
            b'[' => return true,
            b'(' if next == Some(b'(') => return true,
            b'$' if matches!(next, Some(b'[' | b'{')) => return true,
            b'$' => {}
            // A word starts after this byte: most are no such word.
            _ => {
                if matches!(next, Some(b'l' | b'd' | b't' | b'e' | b'r'))
                    && declaration_or_let(b, i + 1)
                {
                    return true;
                }
            }
        }
        i += 1;
    }
    false
}

/// Whether `let` or a declaration word stands at `i`, followed by a blank
/// or the end (the caller knows that a word starts there).
fn declaration_or_let(b: &[u8], i: usize) -> bool {
    let len = match b.get(i..).unwrap_or(&[]) {
        [b'l', b'e', b't', ..] => 3,
        [b'l', b'o', b'c', b'a', b'l', ..] => 5,
        [b'e', b'x', b'p', b'o', b'r', b't', ..] => 6,
        [b'd', b'e', b'c', b'l', b'a', b'r', b'e', ..] => 7,
        [b't', b'y', b'p', b'e', b's', b'e', b't', ..] => 7,
        [b'r', b'e', b'a', b'd', b'o', b'n', b'l', b'y', ..] => 8,
        _ => return false,
    };
    b.get(i + len).is_none_or(|c| matches!(c, b' ' | b'\t'))
}

/// Where `let` or a declaration word starts a word of `b` and is followed
/// by a blank or the end, in order.
fn context_words(b: &[u8]) -> Vec<usize> {
    use bstr::ByteSlice;
    let ends_word = |k: usize, len: usize| {
        word_start(b, k) && b.get(k + len).is_none_or(|c| matches!(c, b' ' | b'\t'))
    };
    let mut out: Vec<usize> = Vec::new();
    if b.len() <= 256 {
        // A short text: each word start looked at.
        out.extend((0..b.len()).filter(|&k| word_start(b, k) && declaration_or_let(b, k)));
        return out;
    }
    // One substring search a word: each looks for the word's rarest
    // bytes, which a text of other words (`read read …`) seldom holds.
    for w in CONTEXT_WORDS {
        out.extend(b.find_iter(w).filter(|&k| ends_word(k, w.len())));
    }
    if !out.is_sorted() {
        out.sort_unstable();
    }
    out
}

/// The length of the name at `i` (0 when none starts there).
fn ident_len(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if is_ident_start(c) => b
            .get(i..)
            .unwrap_or(&[])
            .iter()
            .position(|&c| !is_ident(c))
            .unwrap_or(b.len() - i),
        _ => 0,
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether position `i` starts a word (start of text, or after a blank or
/// an operator character).
fn word_start(b: &[u8], i: usize) -> bool {
    i == 0
        || matches!(
            b.get(i - 1),
            Some(b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b'{' | b'!' | b'`')
        )
}

/// How the shell reads each byte: outside quotes, inside double quotes
/// (only `$` expansions are live there), or not at all (single quotes,
/// escaped characters, comments).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zone {
    Plain,
    Double,
    Dead,
}

/// Bytes that change the zone outside quotes, and inside double quotes.
static ZONE_STOP: [bool; 256] = byte_set(b"\\\"'#");
static DOUBLE_STOP: [bool; 256] = byte_set(b"\\\"");

/// How far past the byte asked about a run of plain bytes is read ahead
/// at once.
const ZONE_AHEAD: usize = 256;

/// The zone of each byte of a text, found as far as asked: a forward pass
/// that stops past the last byte asked about and goes on from there at
/// the next question.
#[derive(Default)]
struct Zones {
    /// The zone of each byte before the pass's position (its length).
    zone: Vec<Zone>,
    /// Whether the pass is inside double quotes.
    double: bool,
}

impl Zones {
    /// Reads on until the zone of byte `k` is known (or the text ends).
    fn reach(&mut self, b: &[u8], k: usize) {
        use bstr::ByteSlice;
        let n = b.len();
        let out = &mut self.zone;
        let push = |out: &mut Vec<Zone>, end: usize, z: Zone| {
            let end = end.min(n);
            if end > out.len() {
                out.resize(end, z);
            }
        };
        while out.len() <= k && out.len() < n {
            let i = out.len();
            // Runs are read up to a little past `k`: the run goes on the
            // same way at the next question.
            let limit = n.min(k.saturating_add(ZONE_AHEAD).max(i + 1));
            let rest = b.get(i..limit).unwrap_or(&[]);
            if self.double {
                // Plain bytes inside double quotes, in one run.
                let run = run_outside(rest, &DOUBLE_STOP);
                push(out, i + run, Zone::Double);
                let i = i + run;
                if i >= limit {
                    continue;
                }
                match b.get(i) {
                    Some(b'\\') => {
                        push(out, i + 1, Zone::Double);
                        push(out, i + 2, Zone::Dead);
                    }
                    Some(_) => {
                        // The closing quote.
                        push(out, i + 1, Zone::Double);
                        self.double = false;
                    }
                    None => {}
                }
                continue;
            }
            let run = run_outside(rest, &ZONE_STOP);
            push(out, i + run, Zone::Plain);
            let i = i + run;
            if i >= limit {
                continue;
            }
            match b.get(i) {
                Some(b'\\') => push(out, i + 2, Zone::Dead),
                Some(b'"') => {
                    self.double = true;
                    push(out, i + 1, Zone::Double);
                }
                Some(b'\'') => {
                    let end = b
                        .get(i + 1..)
                        .and_then(|r| r.find_byte(b'\''))
                        .map_or(n, |p| i + 1 + p);
                    push(out, end + 1, Zone::Dead);
                }
                Some(b'#') if word_start(b, i) => {
                    let end = b
                        .get(i..)
                        .and_then(|r| r.find_byte(b'\n'))
                        .map_or(n, |p| i + p);
                    push(out, end, Zone::Dead);
                }
                Some(_) => push(out, i + 1, Zone::Plain),
                None => {}
            }
        }
    }

    fn get(&mut self, b: &[u8], k: usize) -> Zone {
        if k >= self.zone.len() {
            self.reach(b, k);
        }
        self.zone.get(k).copied().unwrap_or(Zone::Dead)
    }
}

/// A script's text with what its scans look up, each in one pass: every
/// scan below is then linear in the text, however its brackets nest or fail
/// to close (a scan that searched forward from each of 30,000 unclosed `${`
/// would be quadratic). Each table is read only as far as asked.
#[derive(Default)]
struct Tables {
    zone: Zones,
    /// The closing partners of the brackets read so far.
    close: Partners,
    /// At each index: the first index at or after it that ends a simple
    /// command (an unquoted `;`, `&`, `|`, newline or `)`), and the first
    /// that ends an assignment's value (that or an unquoted blank), or the
    /// length. Built at the first question.
    ends: Option<(Vec<u32>, Vec<u32>)>,
}

impl Tables {
    fn zone(&mut self, b: &[u8], k: usize) -> Zone {
        self.zone.get(b, k)
    }

    /// The closing partner of the bracket at `open` (the text's length when
    /// it has none).
    fn closing(&mut self, b: &[u8], open: usize) -> usize {
        self.close.of(b, open)
    }

    /// The end of a simple command's text starting at `from`: the first
    /// unquoted separator.
    fn command_end(&mut self, b: &[u8], from: usize) -> usize {
        let (command, _) = self.ends(b);
        command.get(from).map_or(b.len(), |&e| e as usize)
    }

    /// The end of an assignment's value starting at `from`.
    fn value_end(&mut self, b: &[u8], from: usize) -> usize {
        let (_, value) = self.ends(b);
        value.get(from).map_or(b.len(), |&e| e as usize)
    }

    fn ends(&mut self, b: &[u8]) -> &(Vec<u32>, Vec<u32>) {
        if self.ends.is_none() {
            self.zone.reach(b, b.len());
        }
        let zone = &self.zone.zone;
        self.ends.get_or_insert_with(|| {
            let n = u32::try_from(b.len()).unwrap_or(u32::MAX);
            let mut command = vec![n; b.len()];
            let mut value = vec![n; b.len()];
            let (mut cmd, mut val) = (n, n);
            for (k, &c) in b.iter().enumerate().rev() {
                if zone.get(k) == Some(&Zone::Plain) {
                    let here = u32::try_from(k).unwrap_or(n);
                    match c {
                        b';' | b'&' | b'|' | b'\n' | b')' => {
                            cmd = here;
                            val = here;
                        }
                        b' ' | b'\t' => val = here,
                        _ => {}
                    }
                }
                if let (Some(c), Some(v)) = (command.get_mut(k), value.get_mut(k)) {
                    *c = cmd;
                    *v = val;
                }
            }
            (command, value)
        })
    }
}

/// The partners of the opening `(`, `[` and `{` of a text (nested pairs
/// of the same kind counted, quotes not told apart), found by one forward
/// pass with a stack per kind that reads only until the partner asked
/// about is found.
#[derive(Default)]
struct Partners {
    /// At an opening bracket the pass has closed: its partner's index (an
    /// index past the bracket, so never 0); 0 elsewhere. Empty until the
    /// first question.
    close: Vec<u32>,
    /// The brackets the pass has opened and not closed, per kind.
    open: [Vec<u32>; 3],
    /// Where the pass is.
    at: usize,
}

impl Partners {
    /// The partner of the bracket at `open`, or the text's length.
    fn of(&mut self, b: &[u8], open: usize) -> usize {
        static BRACKETS: [bool; 256] = byte_set(b"()[]{}");
        let n = b.len();
        if open >= n {
            return n;
        }
        if self.close.is_empty() {
            self.close = vec![0; n];
        }
        loop {
            match self.close.get(open) {
                Some(&c) if c != 0 => return c as usize,
                _ => {}
            }
            if self.at >= n {
                return n;
            }
            let k = self.at + run_outside(b.get(self.at..).unwrap_or(&[]), &BRACKETS);
            self.at = k + 1;
            let Some(&c) = b.get(k) else {
                return n;
            };
            let (kind, opens) = match c {
                b'(' => (0, true),
                b'[' => (1, true),
                b'{' => (2, true),
                b')' => (0, false),
                b']' => (1, false),
                b'}' => (2, false),
                _ => continue,
            };
            let Some(stack) = self.open.get_mut(kind) else {
                continue;
            };
            let at = u32::try_from(k).unwrap_or(u32::MAX);
            if opens {
                stack.push(at);
            } else if let Some(o) = stack.pop()
                && let Some(slot) = self.close.get_mut(o as usize)
            {
                *slot = at;
            }
        }
    }
}

/// The whitespace-separated words of `s[from..end]` (as
/// `split_ascii_whitespace` cuts them), with where each starts.
fn words_at(s: &str, from: usize, end: usize) -> impl Iterator<Item = (usize, &str)> {
    let b = s.as_bytes();
    let end = end.min(b.len());
    let mut i = from;
    std::iter::from_fn(move || {
        while i < end && b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if i >= end {
            return None;
        }
        let start = i;
        while i < end && !b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        Some((start, s.get(start..i)?))
    })
}

/// The contexts of `s` that evaluate a value, in one pass over it that
/// goes from one `$`, `(`, `[` or context word to the next (each
/// context's end comes from the tables or from a search that the next
/// contexts reuse). Contexts may nest and overlap: [`find`] reads their
/// union.
/// `Err` with the place it stopped at when more than [`MAX_PLACES`] places
/// (counted in `places`, over every script) were looked at.
fn collect_contexts(
    s: &str,
    t: &mut Tables,
    places: &mut usize,
) -> Result<Vec<Range<usize>>, usize> {
    use bstr::ByteSlice;
    let b = s.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    // The next `]]` and the next comparison operator at or after the
    // cursor, found once for all the `[[` before them.
    let mut next_close: Option<usize> = None;
    let mut next_op: Option<usize> = None;
    // The end of the command whose declaration options were last looked
    // at: a later declaration word in it sees a part of the same words.
    let mut declared_to = 0;
    // Where the scan is: the bytes before it are read (or jumped over as
    // part of a context's opening or a name).
    let mut i = 0;
    // Only `$`, `(`, `[` and names start a context, and a name only as
    // `let` or a declaration word at the start of a word followed by a
    // blank or the end, or before a `[` (found at the `[`). No byte inside
    // a name starts one. The scan goes from one such place to the next.
    let words = context_words(b);
    let mut words = words.iter().copied().peekable();
    // Where the last search for the next context byte started, and what
    // it found.
    let mut found_byte: Option<(usize, Option<usize>)> = None;
    let mut counted = 0;
    loop {
        *places += 1 + CONTEXT_PLACES * (out.len() - counted);
        counted = out.len();
        if *places > MAX_PLACES {
            return Err(i.min(n));
        }
        while words.next_if(|&w| w < i).is_some() {}
        // The next `$`, `(` or `[`: found again only once the scan has
        // passed the one found last (declaration words between them would
        // otherwise search the same rest of the text again and again).
        let byte = match found_byte {
            Some((from, k)) if from <= i && k.is_none_or(|k| k >= i) => k,
            _ => {
                let k = b
                    .get(i..)
                    .and_then(|r| r.find_byteset(b"$(["))
                    .map(|k| i + k);
                found_byte = Some((i, k));
                k
            }
        };
        let word = words.peek().copied();
        if let Some(w) = word
            && byte.is_none_or(|k| w < k)
        {
            // `let` or a declaration word: a context when unquoted.
            i = w;
            if t.zone(b, i) != Zone::Plain {
                i += 1;
                continue;
            }
            let len = ident_len(b, i);
            let name = b.get(i..i + len).unwrap_or(&[]);
            if name == b"let" {
                out.push(i + 3..t.command_end(b, i + 3));
            } else if i >= declared_to {
                let end = t.command_end(b, i);
                declared_to = end;
                if words_at(s, i, end)
                    .any(|(_, w)| w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
                {
                    out.push(i..end);
                }
            }
            i += len.max(1);
            continue;
        }
        let Some(k) = byte else { break };
        let from = i;
        i = k;
        let Some(&c) = b.get(i) else { break };
        if c == b'[' {
            // A name that ends here, read from its start (not jumped
            // over): `a[x]=…`, a subscript on the left of an assignment,
            // when the name starts a word and is unquoted.
            let run = b
                .get(from..i)
                .map_or(0, |r| r.iter().rev().take_while(|&&c| is_ident(c)).count());
            let start = i - run;
            let whole = start > from || from == 0 || b.get(from - 1).is_none_or(|&c| !is_ident(c));
            if run > 0
                && whole
                && b.get(start).is_some_and(|&c| is_ident_start(c))
                && word_start(b, start)
                && t.zone(b, start) == Zone::Plain
            {
                let end = t.closing(b, i);
                if matches!(b.get(end + 1), Some(b'=' | b'+')) {
                    out.push(i..(end + 1).min(n));
                }
            }
        }
        let z = t.zone(b, i);
        if z == Zone::Dead || (z == Zone::Double && c != b'$') {
            i += 1;
            continue;
        }
        let next = b.get(i + 1).copied();
        match c {
            b'$' if next == Some(b'(') && b.get(i + 2) == Some(&b'(') => {
                // `$((…))`.
                let end = t.closing(b, i + 2);
                out.push(i + 1..(end + 2).min(n));
                i += 3;
                continue;
            }
            b'(' if z == Zone::Plain && next == Some(b'(') => {
                // The `((…))` command.
                let end = t.closing(b, i + 1);
                out.push(i..(end + 2).min(n));
                i += 2;
                continue;
            }
            b'$' if next == Some(b'[') => {
                let end = t.closing(b, i + 1);
                out.push(i..(end + 1).min(n));
                i += 2;
                continue;
            }
            b'$' if next == Some(b'{') => {
                parameter(b, t, i, &mut out);
                i += 2;
                continue;
            }
            _ => {}
        }
        if z == Zone::Plain && c == b'[' && next == Some(b'[') && word_start(b, i) {
            if next_close.is_none_or(|p| p < i) {
                next_close = Some(find_at(b, i, b"]]"));
            }
            if next_op.is_none_or(|p| p < i) {
                next_op = Some(comparison_at(b, i));
            }
            let end = next_close.unwrap_or(n);
            if next_op.is_some_and(|p| p + 3 <= end) {
                out.push(i..end);
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    Ok(out)
}

/// The contexts of the `${…}` at `i`: an indirection, a prompt expansion,
/// a subscript or an offset.
fn parameter(b: &[u8], t: &mut Tables, i: usize, out: &mut Vec<Range<usize>>) {
    let n = b.len();
    let end = t.closing(b, i + 1);
    let inner = b.get(i + 2..end.min(n)).unwrap_or(&[]);
    let bang = inner.first() == Some(&b'!');
    let name_at = usize::from(bang);
    let name_len = inner
        .get(name_at..)
        .unwrap_or(&[])
        .iter()
        .take_while(|c| is_ident(**c))
        .count();
    if name_len == 0 {
        return;
    }
    let after = inner.get(name_at + name_len).copied();
    let next = inner.get(name_at + name_len + 1).copied();
    if bang && !matches!(after, Some(b'*' | b'@')) {
        // `${!x}`, `${!x[…]}`: indirection through x's value.
        out.push(i..(end + 1).min(n));
    } else if after == Some(b'@') && next == Some(b'P') {
        // `${x@P}`: prompt expansion of x's value.
        out.push(i..(end + 1).min(n));
    } else {
        // The subscript of `${a[x]}`, or the offset and length of
        // `${s:x:y}` (not `${s:-…}` and the like): not the name itself.
        let at = i + 2 + name_at + name_len;
        if after == Some(b'[') {
            out.push(at..(t.closing(b, at) + 1).min(n));
        } else if after == Some(b':') && !matches!(next, Some(b'-' | b'=' | b'?' | b'+')) {
            out.push(at..(end + 1).min(n));
        }
    }
}

/// The first index at or after `from` where `needle` starts, or the length.
fn find_at(b: &[u8], from: usize, needle: &[u8]) -> usize {
    use bstr::ByteSlice;
    b.get(from..)
        .and_then(|r| r.find(needle))
        .map_or(b.len(), |k| from + k)
}

/// The first index at or after `from` where one of `-eq -ne -lt -le -gt
/// -ge` starts, or the length.
fn comparison_at(b: &[u8], from: usize) -> usize {
    use bstr::ByteSlice;
    let mut k = from;
    while let Some(p) = b.get(k..).and_then(|r| r.find_byte(b'-')) {
        let at = k + p;
        if matches!(
            b.get(at + 1..at + 3),
            Some(b"eq" | b"ne" | b"lt" | b"le" | b"gt" | b"ge")
        ) {
            return at;
        }
        k = at + 1;
    }
    b.len()
}

/// The names an evaluated text refers to, with where each starts: `$x`,
/// `${x…}`, bare `x`, `$1`, `$@`, `$*`.
fn idents(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if c == b'$' {
                i += 1;
                if i < b.len() && b[i] == b'{' {
                    i += 1;
                    if i < b.len() && b[i] == b'!' {
                        i += 1;
                    }
                }
                if i < b.len() && (b[i].is_ascii_digit() || b[i] == b'@' || b[i] == b'*') {
                    let s = i;
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() && b[s].is_ascii_digit() {
                        i += 1;
                    }
                    return Some((s, text.get(s..i)?));
                }
                continue;
            }
            if is_ident_start(c) && (i == 0 || !is_ident(b[i - 1])) {
                let s = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                return Some((s, text.get(s..i)?));
            }
            i += 1;
        }
        None
    })
}

fn is_positional(id: &str) -> bool {
    id == "@"
        || id == "*"
        || (id.bytes().all(|c| c.is_ascii_digit()) && !id.is_empty() && id != "0")
}

/// An integer literal, quoted or not.
fn is_int(v: &str) -> bool {
    let v = v.trim_matches(|c| c == '\'' || c == '"');
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit())
}

/// An integer literal or a brace range of them (`{1..5}`).
fn is_int_item(v: &str) -> bool {
    if is_int(v) {
        return true;
    }
    let Some(inner) = v.strip_prefix('{').and_then(|v| v.strip_suffix('}')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split("..").collect();
    (2..=3).contains(&parts.len()) && parts.iter().all(|p| is_int(p))
}

/// Whether evaluating `v` as arithmetic can only compute: digits,
/// operators and blanks (quotes dropped), no name, subscript or expansion.
fn is_inert(v: &str) -> bool {
    v.bytes()
        .all(|c| c.is_ascii_digit() || b" \t+-*/%()<>=!&|^~?:,.'\"".contains(&c))
}

/// The names whose value the command sets to anything that could refer to
/// a name or a subscript when evaluated.
fn collect_taint<'a>(s: &'a str, t: &mut Tables, wanted: &Names<'_>, out: &mut Names<'a>) {
    let b = s.as_bytes();
    let ident = |w: &str| w.bytes().next().is_some_and(is_ident_start) && w.bytes().all(is_ident);
    // What the last look at a command's words found, so that a later
    // command word in the same words (`read read read …`) reuses it
    // instead of reading them again (which would be quadratic):
    // `read` and the like: the end of the words whose names are in.
    let mut read_to = 0;
    // `printf`: the end of the words looked at, the first `-v` there and
    // the name after it.
    let mut printf_seen: Option<(usize, Option<usize>, Option<&'a str>)> = None;
    // `for`: where the list looked at starts and stops (`do` or the
    // command end), and its last word that is not an integer.
    let mut for_seen: Option<(usize, usize, Option<usize>)> = None;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if !is_ident_start(c) {
            i += 1;
            continue;
        }
        let len = ident_len(b, i);
        if t.zone(b, i) != Zone::Plain
            || i.checked_sub(1)
                .and_then(|p| b.get(p))
                .is_some_and(|&p| is_ident(p) || p == b'-')
        {
            // No later byte of this name starts one.
            i += len.max(1);
            continue;
        }
        let start = i;
        i += len;
        let Some(name) = s.get(start..i) else {
            continue;
        };
        let mut j = i;
        if b.get(j) == Some(&b'[') {
            j = t.closing(b, j) + 1;
        }
        if b.get(j) == Some(&b'+') {
            j += 1;
        }
        if b.get(j) == Some(&b'=')
            && b.get(j + 1) != Some(&b'=')
            && b.get(start.wrapping_sub(1)) != Some(&b'$')
        {
            let v_start = j + 1;
            let v_end = t.value_end(b, v_start);
            if wanted.contains(name) && !is_inert(s.get(v_start..v_end).unwrap_or("")) {
                out.insert(name);
            }
            continue;
        }
        if !word_start(b, start) {
            continue;
        }
        match name {
            // The words after a later one of these in the same words are
            // among the words already taken.
            "read" | "mapfile" | "readarray" | "getopts" if i >= read_to => {
                let end = t.command_end(b, i);
                read_to = end;
                out.extend(
                    words_at(s, i, end)
                        .map(|(_, w)| w)
                        .filter(|w| ident(w) && wanted.contains(w)),
                );
            }
            "printf" => {
                let end = t.command_end(b, i);
                // A `-v` right after the name (`printf-v x`) is the first
                // word; other words start after a blank, where they start
                // for an earlier `printf` too.
                let glued = b.get(i..i + 2) == Some(b"-v")
                    && (i + 2 == end || b.get(i + 2).is_some_and(u8::is_ascii_whitespace));
                let var = if glued {
                    words_at(s, i + 2, end).next().map(|(_, w)| w)
                } else {
                    match printf_seen {
                        // The first `-v` at or after `i` is the one found
                        // before when `i` comes before it (or none, as
                        // before, in the same words).
                        Some((to, v, var)) if i < to && v.is_none_or(|v| i < v) => var,
                        _ => {
                            let mut words = words_at(s, i, end);
                            let v = words.find(|(_, w)| *w == "-v").map(|(k, _)| k);
                            let var = v.and_then(|_| words.next()).map(|(_, w)| w);
                            printf_seen = Some((end, v, var));
                            var
                        }
                    }
                };
                if let Some(var) = var {
                    out.insert(var);
                }
            }
            // A variable name needs a blank before it (after a glued
            // character the first word is no name).
            "for" | "select" if b.get(i).is_some_and(u8::is_ascii_whitespace) => {
                let end = t.command_end(b, i);
                let mut words = words_at(s, i, end);
                let var = words.next().map(|(_, w)| w).filter(|w| ident(w));
                let in_list = words.next().is_some_and(|(_, w)| w == "in");
                if let Some(var) = var {
                    // The list's words, up to `do`: all integers unless one
                    // after its first word is not (a later `for` in the
                    // same words looks at a part of the same list).
                    let all_int = in_list && {
                        let first = words.next().map_or(end, |(k, _)| k);
                        let seen =
                            for_seen.filter(|&(from, stop, _)| from <= first && first <= stop);
                        let last_bad = match seen {
                            Some((_, _, bad)) => bad,
                            None => {
                                let mut stop = end;
                                let mut bad = None;
                                for (k, w) in words_at(s, first, end) {
                                    if w == "do" {
                                        stop = k;
                                        break;
                                    }
                                    if !is_int_item(w) {
                                        bad = Some(k);
                                    }
                                }
                                for_seen = Some((first, stop, bad));
                                bad
                            }
                        };
                        last_bad.is_none_or(|k| k < first)
                    };
                    if !all_int {
                        out.insert(var);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    fn runs_code(cmd: &str) -> bool {
        crate::shell::read(cmd)
            .incomplete
            .iter()
            .any(|i| i.reason == crate::shell::Reason::ValueRunsCode)
    }

    /// A small deterministic generator for the random-input tests.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn values_set_in_the_command_and_used_as_code() {
        for cmd in [
            "x='a[$(rm y)]'; echo $((x))",
            "x='a[$(rm y)]'; echo $(( x + 1 ))",
            "x='a[$(rm y)]'; (( x ))",
            "x='a[$(rm y)]'; echo $[x]",
            "x='a[$(rm y)]'; let y=x",
            "x='a[$(rm y)]'; a=(1 2); echo ${a[x]}",
            "x='a[$(rm y)]'; a[x]=1",
            "x='a[$(rm y)]'; s=abc; echo ${s:x}",
            "x='a[$(rm y)]'; [[ $x -eq 1 ]]",
            "x='a[$(rm y)]'; declare -i y=$x",
            "x='a[$(rm y)]'; echo ${!x}",
            "x='$(rm y)'; echo ${x@P}",
            "read x <<< 'a[$(rm y)]'; echo $((x))",
            "printf -v x %s 'a[$(rm y)]'; echo $((x))",
            "for x in 'a[$(rm y)]'; do echo $((x)); done",
            "bash -c 'echo $(($1))' _ 'a[$(rm y)]'",
            "set -- 'a[$(rm y)]'; echo $(($1))",
            "x=$(printf 'a[$(rm y)]'); echo $((x))",
            "x='1 a[$(rm y)]'; echo $((x))",
            "x=a; a='b[$(rm y)]'; echo $((x))",
            "declare -i v='a[$(rm y)]'",
            // No `=` in the command: a positional parameter in any form,
            // or a value set by a word.
            "echo $((${1}))",
            "echo ${!1}",
            "echo $(($@ + 1))",
            "echo $((${!2}))",
            "read x; echo $((x))",
            "mapfile y; echo ${x[y]}",
            "getopts ab y; echo $((y))",
            "printf -v y %s z; echo $((y))",
            "for y in a b; do echo $((y)); done",
            "select y in a b; do echo $((y)); done",
            // A name before a subscript, after other contexts.
            "x=$(cat f); echo $((1)) ${a[1]}; b9a[x]=1",
            "x=$(cat f); let y=1; c[x]+=1",
        ] {
            assert!(runs_code(cmd), "{cmd}");
        }
    }

    #[test]
    fn ordinary_arithmetic_stays_complete() {
        for cmd in [
            "echo $((1 + 2))",
            "i=0; echo $((i + 1))",
            "for i in 1 2 3; do echo $((i * 2)); done",
            "for i in {1..5}; do echo $((i)); done",
            "for ((i=0; i<3; i++)); do echo $i; done",
            "echo $((COUNT + 1))",
            "[[ $n -eq 1 ]]",
            "echo ${x:-default} ${x:=1} ${#x} ${x[@]} ${!prefix*}",
            "git log --format=%H -n 5",
            "ls [abc]*.txt",
            "echo ${arr[0]}",
            "fruits=(apple pear); for w in ${fruits[@]}; do echo $w; done",
            "s=abcdef; echo ${s:2:3}",
            "curl --data x=1 https://example.com",
            "x='5 * 2'; echo $((x))",
            "node -e \"let d=0; for (const c of s) { if (c=='{') d++; }\"",
            "# let me check: x=a[1]\nls",
            "echo 'x=$(rm y); $((x))'",
            // No name in any context.
            "read x; echo $((1 + 2)) ${s:1:2}",
            // Not a name that starts a word, or not an unquoted one.
            "x=$(cat f); 9a[x]=1",
            "x=$(cat f); \\a[x]=1",
            "x=$(cat f); 'a'[x]=1",
            "x=$(cat f); $a[x]=1",
            "x=$(cat f); echo \"let y=x\"",
        ] {
            assert!(!runs_code(cmd), "{cmd}");
        }
    }

    /// A positional parameter is found wherever it stands in the 8-byte
    /// steps, and a `$` before anything else is none.
    #[test]
    fn positional_parameters_at_any_offset() {
        for pad in 0..24 {
            let before = "$a${b}".repeat(pad / 6) + &"x".repeat(pad % 6);
            for p in ["$1", "$@", "$*", "${2}", "${!3}", "${@}", "${!*}"] {
                let s = format!("{before}{p} y");
                assert!(super::positional_in(s.as_bytes()), "{s:?}");
            }
            for p in ["$x", "${a}", "${!a}", "$", "${", "${!", "$$ $-"] {
                let s = format!("{before}{p}");
                assert!(!super::positional_in(s.as_bytes()), "{s:?}");
            }
        }
    }

    /// Each byte value at each place of a word is told a digit, `@` or
    /// `*` exactly, beside any other byte.
    #[test]
    fn one_byte_names_in_a_word() {
        for fill in [b'x', b'$', 0x2f, 0x3a, 0xb0, 0xff, 0x00] {
            for c in 0..=255u8 {
                for k in 0..8 {
                    let mut w = [fill; 8];
                    w[k] = c;
                    let want = c.is_ascii_digit() || c == b'@' || c == b'*';
                    assert_eq!(
                        super::names_one(u64::from_le_bytes(w)),
                        want,
                        "{c:#x} at {k} in {fill:#x}"
                    );
                }
            }
        }
    }

    /// A zone asked about in any order is the one the pass gives in order,
    /// over texts longer than one read-ahead.
    #[test]
    fn zones_read_ahead_in_any_order() {
        let frags = [
            "a",
            " ",
            "'x y'",
            "\"a\\\"b\"",
            "\\'",
            " # note\n",
            "#",
            "$x",
            "\"",
        ];
        let mut rnd = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..200 {
            let mut s = String::new();
            while s.len() < 3 * super::ZONE_AHEAD {
                let k = usize::try_from(rnd() % frags.len() as u64).unwrap_or(0);
                s.push_str(frags[k]);
            }
            let b = s.as_bytes();
            let mut whole = super::Zones::default();
            whole.reach(b, b.len());
            assert_eq!(whole.zone.len(), b.len());
            let mut lazy = super::Zones::default();
            for _ in 0..50 {
                let k = usize::try_from(rnd() % b.len() as u64).unwrap_or(0);
                assert!(lazy.get(b, k) == whole.zone[k], "{s:?} at {k}");
            }
        }
    }

    /// A bracket's partner asked about in any order is the one a stack
    /// per kind gives.
    #[test]
    fn partners_in_any_order() {
        let frags = ["(", ")", "[", "]", "{", "}", "x", "$(("];
        let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..500 {
            let mut s = String::new();
            for _ in 0..40 {
                let k = usize::try_from(rnd() % frags.len() as u64).unwrap_or(0);
                s.push_str(frags[k]);
            }
            let b = s.as_bytes();
            let mut want = vec![b.len(); b.len()];
            let mut open: [Vec<usize>; 3] = Default::default();
            for (k, c) in b.iter().enumerate() {
                let kind = match c {
                    b'(' | b')' => 0,
                    b'[' | b']' => 1,
                    b'{' | b'}' => 2,
                    _ => continue,
                };
                if b"([{".contains(c) {
                    open[kind].push(k);
                } else if let Some(o) = open[kind].pop() {
                    want[o] = k;
                }
            }
            let mut p = super::Partners::default();
            for _ in 0..20 {
                let k = usize::try_from(rnd() % b.len() as u64).unwrap_or(0);
                if b"([{".contains(&b[k]) {
                    assert_eq!(p.of(b, k), want[k], "{s:?} at {k}");
                }
            }
        }
    }
}
