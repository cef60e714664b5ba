//! Replays every fuzz finding kept in `tests/data/fuzz/<target>/` through
//! the property its fuzz target checks (the same code: the files below are
//! the fuzz crate's own). Each file is a raw fuzz input, also replayable with
//! `cargo fuzz run <target> tests/data/fuzz/<target>/<file>`. All failures
//! are reported at once.

#[allow(dead_code)]
#[path = "../fuzz/src/print.rs"]
mod print;

#[allow(dead_code)]
#[path = "../fuzz/src/policy_check.rs"]
mod policy_check;

#[allow(dead_code)]
#[path = "../fuzz/src/shell_check.rs"]
mod shell_check;

#[allow(dead_code)]
#[path = "../fuzz/src/matchers_check.rs"]
mod matchers_check;

#[allow(dead_code)]
#[path = "../fuzz/src/evaluate_check.rs"]
mod evaluate_check;

#[allow(dead_code)]
#[path = "../fuzz/src/hook_check.rs"]
mod hook_check;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

/// The inputs of one target, sorted by name.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target);
    // A target without findings has no folder.
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("a directory entry").path();
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, data)
        })
        .collect();
    out.sort();
    out
}

/// Runs `check` on every input of `target`; panics with every failure.
fn replay(target: &str, check: impl Fn(&[u8]) -> Result<(), String>) {
    let cases = inputs(target);
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(name, data)| {
            match std::panic::catch_unwind(AssertUnwindSafe(|| check(data))) {
                Ok(Ok(())) => None,
                Ok(Err(msg)) => Some(format!("{target}/{name}: {msg}")),
                Err(_) => Some(format!("{target}/{name}: panicked")),
            }
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} {target} inputs fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The folder holds the findings of the targets that had any.
#[test]
fn findings_are_kept() {
    assert!(!inputs("rules").is_empty(), "no rules regression inputs");
}

#[test]
fn rules() {
    replay("rules", |data| {
        let Some((&first, rest)) = data.split_first() else {
            return Ok(());
        };
        let Ok(text) = std::str::from_utf8(rest) else {
            return Err("not UTF-8 (the target skips it)".into());
        };
        let (effect, dialect) = print::mode(first);
        print::check_rule(text, effect, dialect)
    });
}

#[test]
fn policy() {
    replay("policy", policy_check::check_policy);
}

#[test]
fn shell() {
    replay("shell", shell_check::check_shell);
}

/// A matchers finding is kept as its case (JSON lines, as the target
/// prints it), not as the raw fuzz input.
#[test]
fn matchers() {
    replay("matchers", |data| {
        let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
        let (specs, inputs) = matchers_check::parse_case(text)?;
        matchers_check::check_matchers(&specs, &inputs).map(|_| ())
    });
}

/// An evaluate finding is kept as its case (JSON lines, as the target
/// prints it).
#[test]
fn evaluate() {
    replay("evaluate", |data| {
        let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
        let case = evaluate_check::parse_case(text)?;
        evaluate_check::check_evaluate(&case).map(|_| ())
    });
}

#[test]
fn hook() {
    replay("hook", hook_check::check_hook);
}
