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
//! none of `((`, `$[`, `[`, `${`, `let`, ` -i` skip it at the cost of a few
//! substring searches.
//!
//! [`Reason::ValueRunsCode`]: super::Reason::ValueRunsCode

use std::collections::HashSet;
use std::ops::Range;

/// The first use of a value as code in `scripts`: the script's index and
/// the span of the context.
pub(crate) fn find(scripts: &[super::Script]) -> Option<(usize, Range<usize>)> {
    let mut contexts = Vec::new();
    // Each script's tables, computed once (only for a command that has a
    // context at all: most have none and allocate nothing here).
    let mut tables_of: Vec<Option<Tables>> = Vec::new();
    // Nested scripts first: their text is also part of their parent's, and
    // the innermost reading names the place in the script that holds it.
    for (k, s) in scripts.iter().enumerate().rev() {
        if might_evaluate(&s.text) {
            let t = Tables::new(s.text.as_bytes());
            collect_contexts(&s.text, &t, k, &mut contexts);
            tables_of.resize_with(scripts.len(), || None);
            if let Some(slot) = tables_of.get_mut(k) {
                *slot = Some(t);
            }
        }
    }
    if contexts.is_empty() {
        return None;
    }
    let mut tainted: HashSet<&str> = HashSet::new();
    for (k, s) in scripts.iter().enumerate() {
        let t = tables_of
            .get_mut(k)
            .and_then(Option::take)
            .unwrap_or_else(|| Tables::new(s.text.as_bytes()));
        collect_taint(&s.text, &t, &mut tainted);
    }
    contexts.into_iter().find_map(|c| {
        let text = scripts.get(c.script)?.text.get(c.span.clone())?;
        let hit = idents(text).any(|id| is_positional(id) || tainted.contains(id));
        hit.then_some((c.script, c.span))
    })
}

/// Whether `s` holds one of `((`, `$[`, `[`, `${`, `let`, ` -i`, `\t-i`:
/// in one pass over the bytes for a short text (most commands hold none,
/// and setting up seven substring searches would cost more), by substring
/// searches for a long one.
fn might_evaluate(s: &str) -> bool {
    const PATTERNS: [&str; 7] = ["((", "$[", "[", "${", "let", " -i", "\t-i"];
    if s.len() > 256 {
        return PATTERNS.iter().any(|p| s.contains(p));
    }
    let b = s.as_bytes();
    b.iter().enumerate().any(|(k, &c)| match c {
        // (`$[` holds a `[`.)
        b'[' => true,
        b'(' => b.get(k + 1) == Some(&b'('),
        b'$' => b.get(k + 1) == Some(&b'{'),
        b'l' => b.get(k + 1..k + 3) == Some(b"et"),
        b'-' => {
            b.get(k + 1) == Some(&b'i')
                && k.checked_sub(1)
                    .and_then(|p| b.get(p))
                    .is_some_and(|p| matches!(p, b' ' | b'\t'))
        }
        _ => false,
    })
}

struct Context {
    script: usize,
    span: Range<usize>,
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

fn zones(b: &[u8]) -> Vec<Zone> {
    let mut out = vec![Zone::Plain; b.len()];
    let mut i = 0;
    let mut double = false;
    while i < b.len() {
        let c = b[i];
        if double {
            out[i] = Zone::Double;
            if c == b'\\' {
                if let Some(z) = out.get_mut(i + 1) {
                    *z = Zone::Dead;
                }
                i += 2;
                continue;
            }
            if c == b'"' {
                double = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'\\' => {
                out[i] = Zone::Dead;
                if let Some(z) = out.get_mut(i + 1) {
                    *z = Zone::Dead;
                }
                i += 2;
                continue;
            }
            b'"' => {
                double = true;
                out[i] = Zone::Double;
            }
            b'\'' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map_or(b.len(), |p| i + 1 + p);
                for z in &mut out[i..(end + 1).min(b.len())] {
                    *z = Zone::Dead;
                }
                i = end + 1;
                continue;
            }
            b'#' if word_start(b, i) => {
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                for z in &mut out[i..end] {
                    *z = Zone::Dead;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A script's text with what its scans look up, each table built in one
/// pass: every scan below is then linear in the text, however its brackets
/// nest or fail to close (a scan that searched forward from each of 30,000
/// unclosed `${` would be quadratic).
struct Tables {
    zone: Vec<Zone>,
    /// At an opening `(`, `[` or `{`: the index of its closing partner
    /// (nested pairs of the same kind counted), or the text's length.
    close: Vec<usize>,
    /// At each index: the first index at or after it that ends a simple
    /// command (an unquoted `;`, `&`, `|`, newline or `)`), or the length.
    command_end: Vec<usize>,
    /// At each index: the first index at or after it that ends an
    /// assignment's value (an unquoted blank or command end), or the length.
    value_end: Vec<usize>,
}

impl Tables {
    fn new(b: &[u8]) -> Tables {
        let zone = zones(b);
        let n = b.len();
        let mut close = vec![n; n];
        let mut open: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for (k, &c) in b.iter().enumerate() {
            let (kind, opens) = match c {
                b'(' => (0, true),
                b'[' => (1, true),
                b'{' => (2, true),
                b')' => (0, false),
                b']' => (1, false),
                b'}' => (2, false),
                _ => continue,
            };
            if opens {
                open[kind].push(k);
            } else if let Some(o) = open[kind].pop()
                && let Some(slot) = close.get_mut(o)
            {
                *slot = k;
            }
        }
        let mut command_end = vec![n; n];
        let mut value_end = vec![n; n];
        let (mut cmd, mut val) = (n, n);
        for k in (0..n).rev() {
            if zone.get(k) == Some(&Zone::Plain) {
                match b.get(k) {
                    Some(b';' | b'&' | b'|' | b'\n' | b')') => {
                        cmd = k;
                        val = k;
                    }
                    Some(b' ' | b'\t') => val = k,
                    _ => {}
                }
            }
            if let (Some(c), Some(v)) = (command_end.get_mut(k), value_end.get_mut(k)) {
                *c = cmd;
                *v = val;
            }
        }
        Tables {
            zone,
            close,
            command_end,
            value_end,
        }
    }

    fn zone(&self, k: usize) -> Zone {
        self.zone.get(k).copied().unwrap_or(Zone::Dead)
    }

    /// The closing partner of the bracket at `open` (the text's length when
    /// it has none).
    fn closing(&self, open: usize) -> usize {
        self.close.get(open).copied().unwrap_or(self.close.len())
    }

    /// The end of a simple command's text starting at `from`: the first
    /// unquoted separator.
    fn command_end(&self, from: usize) -> usize {
        self.command_end
            .get(from)
            .copied()
            .unwrap_or(self.command_end.len())
    }

    fn value_end(&self, from: usize) -> usize {
        self.value_end
            .get(from)
            .copied()
            .unwrap_or(self.value_end.len())
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

fn starts_word(b: &[u8], i: usize, word: &[u8]) -> bool {
    b[i..].starts_with(word)
        && word_start(b, i)
        && b.get(i + word.len())
            .is_none_or(|c| matches!(c, b' ' | b'\t'))
}

/// The contexts of `s` that evaluate a value. A context inside one found
/// before it is left out: the names it refers to are among the outer
/// one's (its bounds fall between tokens), so it could only repeat a hit,
/// and keeping the nested ones would make checking them quadratic.
fn collect_contexts(s: &str, t: &Tables, script: usize, out: &mut Vec<Context>) {
    let b = s.as_bytes();
    // The context found so far that ends last.
    let mut widest: Option<Range<usize>> = None;
    let mut push = |span: Range<usize>| {
        if let Some(w) = &widest {
            if w.start <= span.start && span.end <= w.end {
                return;
            }
            if span.end < w.end || (span.end == w.end && span.start >= w.start) {
                out.push(Context { script, span });
                return;
            }
        }
        widest = Some(span.clone());
        out.push(Context { script, span });
    };
    // The next `]]` and the next comparison operator at or after the
    // cursor, found once for all the `[[` before them.
    let mut next_close: Option<usize> = None;
    let mut next_op: Option<usize> = None;
    // The end of the command whose declaration options were last looked
    // at: a later declaration word in it sees a part of the same words.
    let mut declared_to = 0;
    let mut i = 0;
    while i < b.len() {
        let rest = b.get(i..).unwrap_or(&[]);
        let z = t.zone(i);
        if z == Zone::Dead || (z == Zone::Double && b[i] != b'$') {
            i += 1;
            continue;
        }
        if rest.starts_with(b"$((") || (z == Zone::Plain && rest.starts_with(b"((")) {
            // `$((…))` or the `((…))` command.
            let open = if b[i] == b'$' { i + 1 } else { i };
            let end = t.closing(open + 1);
            push(open..(end + 2).min(b.len()));
            i = open + 2;
            continue;
        }
        if rest.starts_with(b"$[") {
            let end = t.closing(i + 1);
            push(i..(end + 1).min(b.len()));
            i += 2;
            continue;
        }
        if rest.starts_with(b"${") {
            let end = t.closing(i + 1);
            let inner = b.get(i + 2..end.min(b.len())).unwrap_or(&[]);
            let bang = inner.first() == Some(&b'!');
            let name_at = usize::from(bang);
            let name_len = inner
                .get(name_at..)
                .unwrap_or(&[])
                .iter()
                .take_while(|c| is_ident(**c))
                .count();
            let after = inner.get(name_at + name_len).copied();
            let next = inner.get(name_at + name_len + 1).copied();
            if name_len > 0 {
                if bang && !matches!(after, Some(b'*' | b'@')) {
                    // `${!x}`, `${!x[…]}`: indirection through x's value.
                    push(i..(end + 1).min(b.len()));
                } else if after == Some(b'@') && next == Some(b'P') {
                    // `${x@P}`: prompt expansion of x's value.
                    push(i..(end + 1).min(b.len()));
                } else {
                    // The subscript of `${a[x]}`, or the offset and length
                    // of `${s:x:y}` (not `${s:-…}` and the like): not the
                    // name itself.
                    let at = i + 2 + name_at + name_len;
                    if after == Some(b'[') {
                        push(at..(t.closing(at) + 1).min(b.len()));
                    } else if after == Some(b':')
                        && !matches!(next, Some(b'-' | b'=' | b'?' | b'+'))
                    {
                        push(at..(end + 1).min(b.len()));
                    }
                }
            }
            i += 2;
            continue;
        }
        if z == Zone::Double {
            i += 1;
            continue;
        }
        if rest.starts_with(b"[[") && word_start(b, i) {
            if next_close.is_none_or(|p| p < i) {
                next_close = Some(find_from(b, i, |w| w.starts_with(b"]]")));
            }
            if next_op.is_none_or(|p| p < i) {
                next_op = Some(find_from(b, i, |w| {
                    [b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge"]
                        .iter()
                        .any(|op| w.starts_with(*op))
                }));
            }
            let end = next_close.unwrap_or(b.len());
            if next_op.is_some_and(|p| p + 3 <= end) {
                push(i..end);
            }
            i += 2;
            continue;
        }
        if starts_word(b, i, b"let") {
            push(i + 3..t.command_end(i + 3));
            i += 3;
            continue;
        }
        if i >= declared_to
            && ["declare", "typeset", "local", "export", "readonly"]
                .iter()
                .any(|w| starts_word(b, i, w.as_bytes()))
        {
            let end = t.command_end(i);
            declared_to = end;
            if words_at(s, i, end)
                .any(|(_, w)| w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
            {
                push(i..end);
            }
            i += 1;
            continue;
        }
        // `a[x]=…`: a subscript on the left of an assignment.
        if is_ident_start(b[i]) && word_start(b, i) {
            let n = rest.iter().take_while(|c| is_ident(**c)).count();
            if b.get(i + n) == Some(&b'[') {
                let end = t.closing(i + n);
                if matches!(b.get(end + 1), Some(b'=' | b'+')) {
                    push(i + n..(end + 1).min(b.len()));
                }
            }
            i += n.max(1);
            continue;
        }
        i += 1;
    }
}

/// The first index at or after `from` where `at(&b[k..])` holds, or the
/// length.
fn find_from(b: &[u8], from: usize, at: impl Fn(&[u8]) -> bool) -> usize {
    (from..b.len())
        .find(|&k| b.get(k..).is_some_and(&at))
        .unwrap_or(b.len())
}

/// The names an evaluated text refers to: `$x`, `${x…}`, bare `x`, `$1`,
/// `$@`, `$*`.
fn idents(text: &str) -> impl Iterator<Item = &str> {
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
                    return text.get(s..i);
                }
                continue;
            }
            if is_ident_start(c) && (i == 0 || !is_ident(b[i - 1])) {
                let s = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                return text.get(s..i);
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
fn collect_taint<'a>(s: &'a str, t: &Tables, out: &mut HashSet<&'a str>) {
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
    while i < b.len() {
        if t.zone(i) != Zone::Plain
            || !is_ident_start(b[i])
            || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b'-'))
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let name = &s[start..i];
        let mut j = i;
        if b.get(j) == Some(&b'[') {
            j = t.closing(j) + 1;
        }
        if b.get(j) == Some(&b'+') {
            j += 1;
        }
        if b.get(j) == Some(&b'=')
            && b.get(j + 1) != Some(&b'=')
            && b.get(start.wrapping_sub(1)) != Some(&b'$')
        {
            let v_start = j + 1;
            let v_end = t.value_end(v_start);
            if !is_inert(s.get(v_start..v_end).unwrap_or("")) {
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
                let end = t.command_end(i);
                read_to = end;
                out.extend(words_at(s, i, end).map(|(_, w)| w).filter(|w| ident(w)));
            }
            "printf" => {
                let end = t.command_end(i);
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
                let end = t.command_end(i);
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
        ] {
            assert!(!runs_code(cmd), "{cmd}");
        }
    }
}
