//! Brace expansion of a word's source text (`a{b,c}` → `ab ac`,
//! `{1..3}` → `1 2 3`), before quote removal, as the shell does it.
//!
//! Only words without expansions reach here. The result is a list of
//! source texts, each decoded by the caller. Bounded: at most `cap` words,
//! a nesting of 32 groups, and 256 KiB of output (or less: the caller's
//! budget); beyond that an error says which.

/// The deepest chain of groups expanded.
const MAX_NEST: u32 = 32;
/// The most bytes all expanded words may take together.
const MAX_BYTES: usize = 256 * 1024;

/// Why an expansion stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Over {
    /// Over `cap` words, the nesting limit or 256 KiB.
    Words,
    /// Over the caller's byte budget (below 256 KiB).
    Budget,
}

/// An expansion: its words and the bytes it wrote (the words and the
/// partial lists they were built from), the measure of its work.
pub(crate) struct Expansion {
    pub(crate) words: Vec<Vec<u8>>,
    pub(crate) bytes: usize,
}

/// The first group of a word that expands (see [`group`]).
pub(crate) struct Group(usize, usize, Alts);

/// Expands `src`, whose first group is `first` ([`group`]), into at most
/// `cap` words, writing at most `min(budget, 256 KiB)` bytes; on failure,
/// also the bytes written.
pub(crate) fn expand(
    src: &[u8],
    first: Group,
    cap: usize,
    budget: usize,
) -> Result<Expansion, (Over, usize)> {
    let mut out = Vec::new();
    let mut bytes = 0usize;
    let limit = budget.min(MAX_BYTES);
    match expand_group(src, first, cap, limit, 0, &mut out, &mut bytes) {
        Some(()) => Ok(Expansion { words: out, bytes }),
        None if bytes > limit && limit < MAX_BYTES => Err((Over::Budget, bytes)),
        None => Err((Over::Words, bytes)),
    }
}

/// The first group of `src` that brace expansion would expand, if any.
pub(crate) fn group(src: &[u8]) -> Option<Group> {
    find_group(src).map(|(open, close, alts)| Group(open, close, alts))
}

fn expand_into(
    src: &[u8],
    cap: usize,
    limit: usize,
    nest: u32,
    out: &mut Vec<Vec<u8>>,
    bytes: &mut usize,
) -> Option<()> {
    if nest > MAX_NEST {
        return None;
    }
    let Some((open, close, alts)) = find_group(src) else {
        *bytes += src.len();
        if out.len() >= cap || *bytes > limit {
            return None;
        }
        out.push(src.to_vec());
        return Some(());
    };
    expand_group(src, Group(open, close, alts), cap, limit, nest, out, bytes)
}

/// [`expand_into`] once the first group of `src` is known.
fn expand_group(
    src: &[u8],
    Group(open, close, alts): Group,
    cap: usize,
    limit: usize,
    nest: u32,
    out: &mut Vec<Vec<u8>>,
    bytes: &mut usize,
) -> Option<()> {
    if nest > MAX_NEST {
        return None;
    }
    let pre = &src[..open];
    let post = src.get(close + 1..).unwrap_or(&[]);
    let mut posts = Vec::new();
    expand_into(post, cap, limit, nest + 1, &mut posts, bytes)?;
    // Each alternative, expanded in its turn (a comma group's are parts
    // of `src`, made into words only as they are expanded).
    let each = |alt: &[u8], out: &mut Vec<Vec<u8>>, bytes: &mut usize| -> Option<()> {
        let mut mids = Vec::new();
        expand_into(alt, cap, limit, nest + 1, &mut mids, bytes)?;
        for m in &mids {
            for p in &posts {
                let mut w = Vec::with_capacity(pre.len() + m.len() + p.len());
                w.extend_from_slice(pre);
                w.extend_from_slice(m);
                w.extend_from_slice(p);
                *bytes += w.len();
                if out.len() >= cap || *bytes > limit {
                    return None;
                }
                out.push(w);
            }
        }
        Some(())
    };
    match alts {
        Alts::Commas(cuts) => {
            let mut from = open + 1;
            for c in cuts.iter().copied().chain(std::iter::once(close)) {
                each(src.get(from..c).unwrap_or(&[]), out, bytes)?;
                from = c + 1;
            }
        }
        // More items than words allowed: over the limit before any is made.
        Alts::Sequence(seq) if seq.len() > cap as u64 => return None,
        Alts::Sequence(seq) => {
            let items = seq.items();
            *bytes += items.iter().map(Vec::len).sum::<usize>();
            if *bytes > limit {
                return None;
            }
            for alt in &items {
                each(alt, out, bytes)?;
            }
        }
    }
    Some(())
}

enum Alts {
    /// Positions of the top-level commas.
    Commas(Vec<usize>),
    /// A sequence.
    Sequence(Sequence),
}

/// Finds the first group that expands: an unquoted `{` with its matching
/// `}` and a top-level comma inside, or a sequence `{x..y[..n]}`. One
/// pass with a stack, linear in the word, and it stops as soon as the
/// first group is known (every group open before it has closed). Groups
/// without a comma are parsed as sequences only when no group with one
/// starts before them (a word can hold thousands inside one that has).
fn find_group(src: &[u8]) -> Option<(usize, usize, Alts)> {
    // Open groups: (position of `{`, index into `commas` where its own
    // commas start). `commas` holds (stack depth, position).
    // (32-bit: a word is far shorter than 4 GiB; a long word of unclosed
    // groups fills both, so their memory is much of the word's reading.)
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut commas: Vec<(u32, u32)> = Vec::new();
    // The group with commas that starts first, and the groups without
    // (`{` and `}`) that might be sequences, since the stack was last empty.
    let mut best: Option<(usize, usize, Alts)> = None;
    let mut maybe: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'\'' => i = skip_to(src, i + 1, b'\'', false),
            b'"' => i = skip_to(src, i + 1, b'"', true),
            b'$' if src.get(i + 1) == Some(&b'\'') => i = skip_to(src, i + 2, b'\'', true),
            b'$' if src.get(i + 1) == Some(&b'{') => {
                // `${` is not a brace group (such words are dynamic and never
                // reach here; kept for safety).
                i += 2;
            }
            b'{' => {
                stack.push((i as u32, commas.len() as u32));
                i += 1;
            }
            b',' => {
                if !stack.is_empty() {
                    commas.push((stack.len() as u32, i as u32));
                }
                i += 1;
            }
            b'}' => {
                let depth = stack.len() as u32;
                if let Some((open, from)) = stack.pop() {
                    let (open, from) = (open as usize, from as usize);
                    let own: Vec<usize> = commas
                        .get(from..)
                        .unwrap_or(&[])
                        .iter()
                        .filter(|(d, _)| *d == depth)
                        .map(|(_, p)| *p as usize)
                        .collect();
                    commas.truncate(from);
                    if own.is_empty() {
                        maybe.push((open, i));
                    } else if best.as_ref().is_none_or(|b| open < b.0) {
                        // The group that starts first wins (an outer group
                        // closes after its inner ones).
                        best = Some((open, i, Alts::Commas(own)));
                    }
                }
                if stack.is_empty() && (best.is_some() || !maybe.is_empty()) {
                    let found = first_of(src, best.take(), &mut maybe);
                    if found.is_some() {
                        return found;
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    first_of(src, best, &mut maybe)
}

/// Of the group with commas `best` and the groups `maybe` that are
/// sequences when they parse as one, the one that starts first.
fn first_of(
    src: &[u8],
    best: Option<(usize, usize, Alts)>,
    maybe: &mut Vec<(usize, usize)>,
) -> Option<(usize, usize, Alts)> {
    let before = best.as_ref().map_or(usize::MAX, |b| b.0);
    maybe.retain(|&(open, _)| open < before);
    maybe.sort_unstable_by_key(|&(open, _)| open);
    let seq = maybe.iter().find_map(|&(open, close)| {
        let s = sequence(src.get(open + 1..close).unwrap_or(&[]))?;
        Some((open, close, Alts::Sequence(s)))
    });
    maybe.clear();
    seq.or(best)
}

fn skip_to(src: &[u8], mut i: usize, end: u8, escapes: bool) -> usize {
    while i < src.len() {
        if escapes && src[i] == b'\\' {
            i += 2;
            continue;
        }
        if src[i] == end {
            return i + 1;
        }
        i += 1;
    }
    src.len()
}

/// A sequence `x..y` or `x..y..n`, parsed; its items are made only when
/// the group is expanded (a word can hold thousands of sequences that
/// never expand, inside a group that does).
pub(crate) struct Sequence {
    first: i64,
    last: i64,
    step: i64,
    /// Zero-padding width of integers; `None` for characters.
    width: Option<usize>,
}

impl Sequence {
    /// How many items it has.
    fn len(&self) -> u64 {
        self.first.abs_diff(self.last) / self.step as u64 + 1
    }

    /// Its items as source text.
    fn items(&self) -> Vec<Vec<u8>> {
        let (a, b, step) = (self.first, self.last, self.step);
        let mut v = Vec::new();
        let mut x = a;
        loop {
            v.push(match self.width {
                Some(width) if width > 0 => {
                    if x < 0 {
                        format!("-{:0w$}", x.unsigned_abs(), w = width - 1).into_bytes()
                    } else {
                        format!("{x:0width$}").into_bytes()
                    }
                }
                Some(_) => x.to_string().into_bytes(),
                // A backslash or quote inside a character range is quoted
                // so that decoding keeps it.
                None => match x as u8 {
                    c @ (b'\\' | b'\'' | b'"' | b'`' | b'$') => vec![b'\\', c],
                    c => vec![c],
                },
            });
            if x == b {
                break;
            }
            let next = if a < b {
                x.checked_add(step)
            } else {
                x.checked_sub(step)
            };
            // A step past the integer range ends the sequence, as in bash.
            let Some(next) = next else { break };
            if (a < b && next > b) || (a > b && next < b) {
                break;
            }
            x = next;
        }
        v
    }
}

/// `s` split at each `..` (as `str::split("..")` does, left to right),
/// when that gives two or three parts; by hand, since a word can hold
/// thousands of groups to look at and `split` with a string pattern builds
/// a searcher and the parts a vector each time.
fn split_dots(s: &str) -> Option<Parts<'_>> {
    let b = s.as_bytes();
    let mut cuts = [0usize; 2];
    let mut n = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'.' && b[i + 1] == b'.' {
            *cuts.get_mut(n)? = i;
            n += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    match n {
        1 => Some(Parts {
            parts: [s.get(..cuts[0])?, s.get(cuts[0] + 2..)?, ""],
            len: 2,
        }),
        2 => Some(Parts {
            parts: [
                s.get(..cuts[0])?,
                s.get(cuts[0] + 2..cuts[1])?,
                s.get(cuts[1] + 2..)?,
            ],
            len: 3,
        }),
        _ => None,
    }
}

/// Two or three parts of a sequence.
struct Parts<'a> {
    parts: [&'a str; 3],
    len: usize,
}

impl<'a> Parts<'a> {
    fn get(&self, i: usize) -> Option<&'a str> {
        if i < self.len {
            self.parts.get(i).copied()
        } else {
            None
        }
    }
}

impl<'a> std::ops::Index<usize> for Parts<'a> {
    type Output = &'a str;
    fn index(&self, i: usize) -> &&'a str {
        &self.parts[i.min(2)]
    }
}

/// Parses `x..y` or `x..y..n` (integers or single characters).
fn sequence(inner: &[u8]) -> Option<Sequence> {
    if inner.len() > 64
        || inner
            .iter()
            .any(|b| matches!(b, b'\'' | b'"' | b'\\' | b'$'))
    {
        return None;
    }
    let s = std::str::from_utf8(inner).ok()?;
    let parts = split_dots(s)?;
    let step: i64 = match parts.get(2) {
        Some(p) => p.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let pad = |p: &str| {
            let d = p.trim_start_matches('-');
            if d.len() > 1 && d.starts_with('0') {
                p.len()
            } else {
                0
            }
        };
        let width = pad(parts[0]).max(pad(parts[1]));
        return Some(Sequence {
            first: a,
            last: b,
            step,
            width: Some(width),
        });
    }
    let (a, b) = (parts[0].as_bytes(), parts[1].as_bytes());
    if a.len() == 1 && b.len() == 1 && a[0].is_ascii_alphabetic() && b[0].is_ascii_alphabetic() {
        return Some(Sequence {
            first: a[0] as i64,
            last: b[0] as i64,
            step,
            width: None,
        });
    }
    None
}
