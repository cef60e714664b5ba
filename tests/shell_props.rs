//! Property tests of the shell reader: no panic on any input, words come
//! from their source, and `sh -c 'X'` reads as `X` does.

use proptest::prelude::*;
use toolgate::shell::{self, Reading, Reason, WordKind};

/// Shell-flavoured text: the bytes that matter to the reader, often.
fn shellish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => "[a-z]{1,6}",
        1 => Just(" ".to_string()),
        1 => prop::sample::select(vec![
            "'", "\"", "`", "\\", "$", "$(", "$((", "${", "$'", "(", ")", "{", "}", ";", ";;",
            "&", "&&", "|", "||", "|&", "<", ">", ">>", "<<", "<<-", "<<<", "\n", "#", "*", "?",
            "[", "]", "~", "=", ",", "..", "!", "if ", "then ", "fi", "for ", " in ", "do ",
            "done", "case ", "esac", "while ", "EOF", "sh -c ", "bash ", "| sh", "\\\n", "\t",
            "2>&1", "x=", "é", "\u{3000}",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Checks the invariants every reading keeps.
fn check_invariants(r: &Reading) -> Result<(), TestCaseError> {
    prop_assert!(!r.scripts.is_empty());
    for c in &r.commands {
        let text = &r.scripts[c.script()].text;
        let span = c.span();
        prop_assert!(span.start <= span.end && span.end <= text.len());
        for w in c.words(r) {
            prop_assert!(w.span.end <= text.len());
            let src = &text[w.span.clone()];
            match w.kind {
                WordKind::Literal => prop_assert_eq!(w.text(), src),
                WordKind::Dynamic | WordKind::Glob => {
                    // Source text; brace expansion may split a glob word.
                    if !src.contains('{') {
                        prop_assert_eq!(w.text(), src);
                    }
                }
                WordKind::Decoded => {
                    // Quote removal only deletes: without `$'…'` and
                    // braces, the text is a subsequence of the source.
                    if !src.contains("$'") && !src.contains('{') {
                        let mut it = src.chars();
                        for ch in w.text().chars() {
                            prop_assert!(
                                it.any(|s| s == ch),
                                "{:?} is not from its source {:?}",
                                w.text(),
                                src
                            );
                        }
                    }
                }
            }
        }
    }
    for i in &r.incomplete {
        prop_assert!(i.span.end <= r.scripts[i.script].text.len());
    }
    Ok(())
}

fn rendered(r: &Reading) -> Vec<String> {
    r.commands
        .iter()
        .map(|c| c.display(r).to_string())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn any_text_reads_without_panic(s in any::<String>()) {
        let r = shell::read(&s);
        check_invariants(&r)?;
    }

    #[test]
    fn any_bytes_read_without_panic(b in prop::collection::vec(any::<u8>(), 0..200)) {
        let s = String::from_utf8_lossy(&b);
        let r = shell::read(&s);
        check_invariants(&r)?;
    }

    #[test]
    fn shellish_text_keeps_invariants(s in shellish()) {
        let r = shell::read(&s);
        check_invariants(&r)?;
    }

    #[test]
    fn sh_c_reads_as_its_script(x in shellish()) {
        let alone = shell::read(&x);
        prop_assume!(!alone.incomplete.iter().any(|i| i.reason == Reason::TooDeep));
        let quoted = format!("sh -c '{}'", x.replace('\'', r"'\''"));
        let nested = shell::read(&quoted);
        prop_assert!(!nested.commands.is_empty());
        prop_assert_eq!(nested.commands[0].words(&nested)[0].text(), "sh");
        prop_assert_eq!(&*nested.scripts[1].text, x.as_str());
        let inner: Vec<String> = rendered(&nested)[1..].to_vec();
        prop_assert_eq!(inner, rendered(&alone));
        let a: Vec<_> = alone.incomplete.iter().map(|i| (i.reason, i.span.clone())).collect();
        let n: Vec<_> = nested.incomplete.iter().map(|i| (i.reason, i.span.clone())).collect();
        prop_assert_eq!(a, n);
        for (c, d) in nested.commands[1..].iter().zip(&alone.commands) {
            prop_assert_eq!(c.depth, d.depth + 1);
        }
    }

    #[test]
    fn literal_words_round_trip(
        program in "[a-z][a-z0-9_./-]{0,7}",
        args in prop::collection::vec("[a-zA-Z0-9_./:@%+=-]{1,8}", 0..6),
    ) {
        // Words made only of ordinary characters read back as themselves
        // (a reserved word is not a program).
        let reserved = [
            "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "select",
            "case", "esac", "function", "coproc",
        ];
        prop_assume!(!reserved.contains(&program.as_str()));
        let mut words = vec![program];
        words.extend(args);
        let line = words.join(" ");
        let r = shell::read(&line);
        prop_assert!(r.is_complete());
        prop_assert_eq!(r.commands.len(), 1);
        let got: Vec<&str> = r.commands[0].words(&r).iter().map(|w| w.text()).collect();
        let want: Vec<&str> = words.iter().map(String::as_str).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn single_quoting_any_text_gives_it_back(s in "[^\\x00']{0,40}") {
        let r = shell::read(&format!("echo '{s}'"));
        prop_assert!(r.is_complete());
        prop_assert_eq!(r.commands[0].words(&r)[1].text(), s.as_str());
    }
}
