//! Brace expansion of a word's source text (`a{b,c}` → `ab ac`,
//! `{1..3}` → `1 2 3`), before quote removal, as the shell does it.
//!
//! Only words without expansions reach here. The result is a list of
//! source texts, each decoded by the caller. Bounded: at most `cap` words,
//! a nesting of 32 groups, and 256 KiB of output; beyond that `None`.

/// The deepest chain of groups expanded.
const MAX_NEST: u32 = 32;
/// The most bytes all expanded words may take together.
const MAX_BYTES: usize = 256 * 1024;

/// Expands `src`, or `None` when a limit is crossed.
pub(crate) fn expand(src: &[u8], cap: usize) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut bytes = 0usize;
    expand_into(src, cap, 0, &mut out, &mut bytes)?;
    Some(out)
}

/// True when `src` holds a group that brace expansion would expand.
pub(crate) fn has_group(src: &[u8]) -> bool {
    find_group(src).is_some()
}

fn expand_into(
    src: &[u8],
    cap: usize,
    nest: u32,
    out: &mut Vec<Vec<u8>>,
    bytes: &mut usize,
) -> Option<()> {
    if nest > MAX_NEST {
        return None;
    }
    let Some((open, close, alts)) = find_group(src) else {
        *bytes += src.len();
        if out.len() >= cap || *bytes > MAX_BYTES {
            return None;
        }
        out.push(src.to_vec());
        return Some(());
    };
    let pre = &src[..open];
    let post = src.get(close + 1..).unwrap_or(&[]);
    let mut posts = Vec::new();
    expand_into(post, cap, nest + 1, &mut posts, bytes)?;
    let alternatives: Vec<Vec<u8>> = match alts {
        Alts::Commas(cuts) => {
            let mut v = Vec::with_capacity(cuts.len() + 1);
            let mut from = open + 1;
            for c in cuts.iter().copied().chain(std::iter::once(close)) {
                v.push(src.get(from..c).unwrap_or(&[]).to_vec());
                from = c + 1;
            }
            v
        }
        Alts::Sequence(items) => items,
    };
    for alt in alternatives {
        let mut mids = Vec::new();
        expand_into(&alt, cap, nest + 1, &mut mids, bytes)?;
        for m in &mids {
            for p in &posts {
                let mut w = Vec::with_capacity(pre.len() + m.len() + p.len());
                w.extend_from_slice(pre);
                w.extend_from_slice(m);
                w.extend_from_slice(p);
                *bytes += w.len();
                if out.len() >= cap || *bytes > MAX_BYTES {
                    return None;
                }
                out.push(w);
            }
        }
    }
    Some(())
}

enum Alts {
    /// Positions of the top-level commas.
    Commas(Vec<usize>),
    /// The items of a sequence, as source text.
    Sequence(Vec<Vec<u8>>),
}

/// Finds the first group that expands: an unquoted `{` with its matching
/// `}` and a top-level comma inside, or a sequence `{x..y[..n]}`. One
/// pass with a stack, so linear in the word.
fn find_group(src: &[u8]) -> Option<(usize, usize, Alts)> {
    // (open position, commas at its top level)
    let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut best: Option<(usize, usize, Alts)> = None;
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
                stack.push((i, Vec::new()));
                i += 1;
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.1.push(i);
                }
                i += 1;
            }
            b'}' => {
                if let Some((open, commas)) = stack.pop() {
                    let cand = if !commas.is_empty() {
                        Some(Alts::Commas(commas))
                    } else {
                        sequence(src.get(open + 1..i).unwrap_or(&[])).map(Alts::Sequence)
                    };
                    if let Some(alts) = cand {
                        // The group that starts first wins (an outer group
                        // closes after its inner ones).
                        if best.as_ref().is_none_or(|b| open < b.0) {
                            best = Some((open, i, alts));
                        }
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    best
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

/// The items of `x..y` or `x..y..n` (integers or single characters).
fn sequence(inner: &[u8]) -> Option<Vec<Vec<u8>>> {
    if inner.len() > 64
        || inner
            .iter()
            .any(|b| matches!(b, b'\'' | b'"' | b'\\' | b'$'))
    {
        return None;
    }
    let s = std::str::from_utf8(inner).ok()?;
    let parts: Vec<&str> = s.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(p) => p.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let span = a.abs_diff(b) / step as u64 + 1;
        if span > 4096 {
            return Some(vec![Vec::new(); 4097]);
        }
        let pad = |p: &str| {
            let d = p.trim_start_matches('-');
            if d.len() > 1 && d.starts_with('0') {
                p.len()
            } else {
                0
            }
        };
        let width = pad(parts[0]).max(pad(parts[1]));
        let mut v = Vec::new();
        let mut x = a;
        loop {
            let text = if width > 0 {
                if x < 0 {
                    format!("-{:0w$}", -x, w = width - 1)
                } else {
                    format!("{x:0width$}")
                }
            } else {
                x.to_string()
            };
            v.push(text.into_bytes());
            if x == b {
                break;
            }
            let next = if a < b {
                x.checked_add(step)?
            } else {
                x.checked_sub(step)?
            };
            if (a < b && next > b) || (a > b && next < b) {
                break;
            }
            x = next;
        }
        return Some(v);
    }
    let (a, b) = (parts[0].as_bytes(), parts[1].as_bytes());
    if a.len() == 1 && b.len() == 1 && a[0].is_ascii_alphabetic() && b[0].is_ascii_alphabetic() {
        let (a, b) = (a[0] as i64, b[0] as i64);
        let mut v = Vec::new();
        let mut x = a;
        loop {
            let c = x as u8;
            // A backslash or quote inside a character range is quoted so
            // that decoding keeps it.
            match c {
                b'\\' | b'\'' | b'"' | b'`' | b'$' => v.push(vec![b'\\', c]),
                _ => v.push(vec![c]),
            }
            if x == b {
                break;
            }
            let next = if a < b { x + step } else { x - step };
            if (a < b && next > b) || (a > b && next < b) {
                break;
            }
            x = next;
        }
        return Some(v);
    }
    None
}
