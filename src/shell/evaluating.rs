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
    // Each script's zones, computed once (only for a command that has a
    // context at all: most have none and allocate nothing here).
    let mut zone_of: Vec<Option<Vec<Zone>>> = Vec::new();
    // Nested scripts first: their text is also part of their parent's, and
    // the innermost reading names the place in the script that holds it.
    for (k, s) in scripts.iter().enumerate().rev() {
        if might_evaluate(&s.text) {
            let z = zones(s.text.as_bytes());
            collect_contexts(s.text.as_bytes(), &z, k, &mut contexts);
            zone_of.resize(scripts.len(), None);
            zone_of[k] = Some(z);
        }
    }
    if contexts.is_empty() {
        return None;
    }
    let mut tainted: HashSet<&str> = HashSet::new();
    for (k, s) in scripts.iter().enumerate() {
        let z = zone_of
            .get_mut(k)
            .and_then(Option::take)
            .unwrap_or_else(|| zones(s.text.as_bytes()));
        collect_taint(&s.text, &z, &mut tainted);
    }
    contexts.into_iter().find_map(|c| {
        let text = scripts.get(c.script)?.text.get(c.span.clone())?;
        let hit = idents(text).any(|id| is_positional(id) || tainted.contains(id));
        hit.then_some((c.script, c.span))
    })
}

fn might_evaluate(s: &str) -> bool {
    ["((", "$[", "[", "${", "let", " -i", "\t-i"]
        .iter()
        .any(|p| s.contains(p))
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

/// The end of the bracketed text that opened just before `from` with
/// `open`, closing with `close` (nested pairs counted); the text's end when
/// it does not close.
fn closing(b: &[u8], from: usize, open: u8, close: u8) -> usize {
    let mut depth = 1usize;
    let mut i = from;
    while i < b.len() {
        if b[i] == open {
            depth += 1;
        } else if b[i] == close {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
        i += 1;
    }
    b.len()
}

/// The end of a simple command's text starting at `from`: the first
/// unquoted separator.
fn command_end(b: &[u8], zone: &[Zone], from: usize) -> usize {
    (from..b.len())
        .find(|&k| {
            zone.get(k) == Some(&Zone::Plain) && matches!(b[k], b';' | b'&' | b'|' | b'\n' | b')')
        })
        .unwrap_or(b.len())
}

fn starts_word(b: &[u8], i: usize, word: &[u8]) -> bool {
    b[i..].starts_with(word)
        && word_start(b, i)
        && b.get(i + word.len())
            .is_none_or(|c| matches!(c, b' ' | b'\t'))
}

fn collect_contexts(b: &[u8], zone: &[Zone], script: usize, out: &mut Vec<Context>) {
    let mut push = |span: Range<usize>| out.push(Context { script, span });
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let z = zone[i];
        if z == Zone::Dead || (z == Zone::Double && b[i] != b'$') {
            i += 1;
            continue;
        }
        if rest.starts_with(b"$((") || (z == Zone::Plain && rest.starts_with(b"((")) {
            // `$((…))` or the `((…))` command.
            let open = if b[i] == b'$' { i + 1 } else { i };
            let end = closing(b, open + 2, b'(', b')');
            push(open..(end + 2).min(b.len()));
            i = open + 2;
            continue;
        }
        if rest.starts_with(b"$[") {
            let end = closing(b, i + 2, b'[', b']');
            push(i..(end + 1).min(b.len()));
            i += 2;
            continue;
        }
        if rest.starts_with(b"${") {
            let end = closing(b, i + 2, b'{', b'}');
            let inner = &b[i + 2..end.min(b.len())];
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
                        push(at..(closing(b, at + 1, b'[', b']') + 1).min(b.len()));
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
            let end = b[i..]
                .windows(2)
                .position(|w| w == b"]]")
                .map_or(b.len(), |p| i + p);
            let inner = &b[i..end];
            if [b"-eq", b"-ne", b"-lt", b"-le", b"-gt", b"-ge"]
                .iter()
                .any(|op| inner.windows(3).any(|w| w == *op))
            {
                push(i..end);
            }
            i += 2;
            continue;
        }
        if starts_word(b, i, b"let") {
            push(i + 3..command_end(b, zone, i + 3));
            i += 3;
            continue;
        }
        if ["declare", "typeset", "local", "export", "readonly"]
            .iter()
            .any(|w| starts_word(b, i, w.as_bytes()))
        {
            let end = command_end(b, zone, i);
            let words = std::str::from_utf8(&b[i..end]).unwrap_or("");
            if words
                .split_ascii_whitespace()
                .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
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
                let end = closing(b, i + n + 1, b'[', b']');
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
fn collect_taint<'a>(s: &'a str, zone: &[Zone], out: &mut HashSet<&'a str>) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if zone[i] != Zone::Plain
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
            j = closing(b, j + 1, b'[', b']') + 1;
        }
        if b.get(j) == Some(&b'+') {
            j += 1;
        }
        if b.get(j) == Some(&b'=')
            && b.get(j + 1) != Some(&b'=')
            && b.get(start.wrapping_sub(1)) != Some(&b'$')
        {
            let v_start = j + 1;
            let v_end = (v_start..b.len())
                .find(|&k| {
                    zone[k] == Zone::Plain
                        && matches!(b[k], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')')
                })
                .unwrap_or(b.len());
            if !is_inert(s.get(v_start..v_end).unwrap_or("")) {
                out.insert(name);
            }
            continue;
        }
        if !word_start(b, start) {
            continue;
        }
        let end = command_end(b, zone, i);
        let words: Vec<&str> = s
            .get(i..end)
            .unwrap_or("")
            .split_ascii_whitespace()
            .collect();
        let ident =
            |w: &str| w.bytes().next().is_some_and(is_ident_start) && w.bytes().all(is_ident);
        match name {
            "read" | "mapfile" | "readarray" | "getopts" => {
                out.extend(words.iter().copied().filter(|w| ident(w)));
            }
            "printf" => {
                if let Some(p) = words.iter().position(|w| *w == "-v") {
                    if let Some(v) = words.get(p + 1) {
                        out.insert(v);
                    }
                }
            }
            "for" | "select" => {
                if let Some(var) = words.first().copied().filter(|w| ident(w)) {
                    let items: Vec<&str> = words
                        .iter()
                        .skip(2)
                        .take_while(|w| **w != "do")
                        .copied()
                        .collect();
                    let in_list = words.get(1) == Some(&"in");
                    if !in_list || !items.iter().all(|w| is_int_item(w)) {
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
