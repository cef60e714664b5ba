//! The `shell` fuzz property, shared with the main package's regression
//! tests (which include this file).

use std::time::{Duration, Instant};
use toolgate::shell::{Reading, WordKind, read};

/// The most one reading may take. Reading is linear in the input (SPEC
/// §8.3) and fuzz inputs are a few KiB, so this catches super-linear
/// behaviour only, with room for a machine busy with other work.
pub const TIME_BOUND: Duration = Duration::from_secs(2);

/// The CPU time the calling thread has run, from Linux's
/// `/proc/thread-self/schedstat` (its first field, in nanoseconds); `None`
/// elsewhere.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Whether `text` is a subsequence of `source`: what quote and backslash
/// removal, which only delete characters, leave of it.
fn subsequence(text: &str, source: &str) -> bool {
    let mut rest = source.chars();
    text.chars().all(|c| rest.any(|s| s == c))
}

/// Checks one word of a reading.
fn word(r: &Reading, script: usize, w: &toolgate::shell::Word, what: &str) -> Result<(), String> {
    let Some(source) = r
        .scripts
        .get(script)
        .and_then(|s| s.text.get(w.span.clone()))
    else {
        return Err(format!(
            "{what} {:?}: span {:?} outside script {script}",
            w.text(),
            w.span
        ));
    };
    if !r.is_complete() {
        return Ok(());
    }
    match w.kind {
        // A glob or dynamic word made by brace expansion is its expansion:
        // a prefix, one alternative and a suffix of its source, in order
        // (a sequence `{1..9}` makes new text).
        WordKind::Glob | WordKind::Dynamic if source.contains('{') => {
            if source.contains("..") || subsequence(w.text(), source) {
                Ok(())
            } else {
                Err(format!(
                    "{what} {:?} ({:?}) is not an expansion of its source {source:?}",
                    w.text(),
                    w.kind
                ))
            }
        }
        // Otherwise the text is the source, unchanged.
        WordKind::Literal | WordKind::Glob | WordKind::Dynamic if w.text() != source => {
            Err(format!(
                "{what} {:?} ({:?}) is not its source {source:?}",
                w.text(),
                w.kind
            ))
        }
        // Without `$'…'`/`$"…"` decoding or brace expansion, decoding only
        // removes quotes and backslashes.
        WordKind::Decoded
            if !source.contains('$') && !source.contains('{') && !subsequence(w.text(), source) =>
        {
            Err(format!(
                "{what} {:?} does not come from its source {source:?}",
                w.text()
            ))
        }
        _ => Ok(()),
    }
}

/// Runs one fuzz input: `data` (lossily UTF-8) as a command line. The
/// reading never panics, stays within [`TIME_BOUND`] (the fastest of up to
/// four readings), its spans lie in their scripts, and every word of a
/// complete reading comes from the input: a literal, glob or dynamic word is its source text; a decoded
/// word without `$'…'` or braces is its source with characters removed.
pub fn check_shell(data: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(data);
    let start = Instant::now();
    let r = read(&text);
    let mut took = start.elapsed();
    // The bound is on wall-clock time, which a starved process (a fuzzer
    // at a low priority beside builds) can pass with no fault of the
    // reader: a slow reading is read again, timed by the thread's own CPU
    // time where the system gives it, and only the fastest of four counts.
    for _ in 0..3 {
        if took <= TIME_BOUND {
            break;
        }
        let (wall, cpu) = (Instant::now(), thread_cpu());
        let _ = read(&text);
        let again = match (cpu, thread_cpu()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => wall.elapsed(),
        };
        took = took.min(again);
    }
    if took > TIME_BOUND {
        return Err(format!(
            "reading {} bytes took {took:?} (the fastest of four readings)",
            text.len()
        ));
    }
    let input = r.scripts.first().map(|s| &*s.text);
    if text.len() <= toolgate::shell::MAX_INPUT && input != Some(&*text) {
        return Err("scripts[0] is not the input".into());
    }
    for i in &r.incomplete {
        // An incomplete span lies in its script, on character boundaries.
        if r.scripts
            .get(i.script)
            .and_then(|s| s.text.get(i.span.clone()))
            .is_none()
        {
            return Err(format!(
                "incomplete span {:?} outside script {} or inside a character",
                i.span, i.script
            ));
        }
    }
    for c in &r.commands {
        let (script, span) = (c.script(), c.span());
        if r.scripts
            .get(script)
            .and_then(|s| s.text.get(span.clone()))
            .is_none()
        {
            return Err(format!("command span {span:?} outside script {script}"));
        }
        for w in c.words(&r) {
            word(&r, script, w, "word")?;
        }
        for a in c.assignments(&r) {
            word(&r, script, &a.value, "assignment value")?;
        }
        for d in c.redirections(&r) {
            word(&r, script, &d.target, "redirection target")?;
        }
    }
    Ok(())
}
