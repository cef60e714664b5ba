//! Property tests of the reducer: no panic on any input, every action has
//! candidates, every allow candidate is also a deny candidate, and a
//! wrapper never hides the command it runs from deny rules.

use proptest::prelude::*;
use toolgate::shell::{self, reduce};

/// Command-flavoured text: wrappers, their options, programs with tables,
/// file programs, quotes and separators.
fn commandish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        2 => "[a-z]{1,5}",
        3 => Just(" ".to_string()),
        3 => prop::sample::select(vec![
            "sudo", "env", "-S", "--split-string=", "nice", "-n", "timeout", "5", "xargs", "-I",
            "{}", "find", "-exec", "\\;", "+", "eval", "su", "-c", "watch", "flock", "bash",
            "sh -c", "git", "-C", "push", "--force", "kubectl", "-n", "rm", "-rf", "cp", "-r",
            "grep", "-e", "-f", "sed", "-i", "awk", "tar", "czf", "curl", "https://a.b/c",
            "scp", "u@h:/p", "cd", "&&", ";", "|", "'", "\"", "$HOME", "~/", "$(", ")", ">",
            "<", "2>&1", "-", "--", "=", "FOO=1", "LANG=C", "/usr/bin/", "é", "-é", "\n",
            "dd", "if=", "of=", "jq", "--slurpfile", "parallel", ":::", "command", "-v",
            "exec", "-a", "chroot", "busybox", "script", "time", "-p", "-o", "ssh", "-J",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn reduces_without_panic_and_keeps_invariants(s in commandish()) {
        let reading = shell::read(&s);
        let r = reduce::invocations(&reading);
        for inv in &r.invocations {
            if let Some(p) = inv.parent {
                prop_assert!(p < r.invocations.len());
            }
            prop_assert!(inv.reading <= r.scripts.len());
            if inv.role == reduce::Role::Command {
                prop_assert!(!inv.candidates.is_empty(), "no candidates for {}", inv);
                // The action's rendering is always a deny/ask candidate.
                let plain = reduce::render_words(inv.words.iter(), false);
                prop_assert!(
                    inv.candidates.iter().any(|c| c.text == plain),
                    "{plain:?} is not a candidate of {s:?}"
                );
            }
        }
        if !reading.is_complete() {
            prop_assert!(!r.is_complete());
        }
    }
}

#[test]
fn every_prefix_of_the_cases_reduces() {
    // Cut every case input at every character: partial commands never
    // panic (unclosed quotes, options without values, wrappers without
    // commands).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/programs");
    let mut n = 0;
    for e in std::fs::read_dir(dir)
        .expect("case dir")
        .filter_map(Result::ok)
    {
        let text = std::fs::read_to_string(e.path()).expect("readable");
        for line in text.lines().filter_map(|l| l.strip_prefix("input = ")) {
            for (i, _) in line.char_indices() {
                let reading = shell::read(&line[..i]);
                let r = reduce::invocations(&reading);
                n += r.invocations.len();
            }
        }
    }
    assert!(n > 0);
}

#[test]
fn hostile_inputs_reduce() {
    let cases = [
        "cd a; ".repeat(10_000) + "cat k",
        "find . ".to_string() + &"-exec a {} \\; ".repeat(4_000),
        "sudo ".repeat(5_000) + "ls",
        "eval ".to_string() + &"'eval ".repeat(40) + "ls" + &"'".repeat(40),
        "xargs ".repeat(3_000) + "rm",
        "env -S '".to_string() + &"env -S ".repeat(2_000) + "ls'",
        "(cd x; ".repeat(20) + "cat k" + &")".repeat(20),
        "git ".to_string() + &"--frob ".repeat(8_000) + "push",
    ];
    for input in &cases {
        let reading = shell::read(input);
        let r = reduce::invocations(&reading);
        assert!(!r.invocations.is_empty(), "{}", &input[..40]);
    }
    // Wrappers nested past the limit are incomplete, not unbounded.
    let reading = shell::read(&cases[2]);
    let r = reduce::invocations(&reading);
    assert!(!r.is_complete());
}
