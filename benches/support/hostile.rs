//! The hostile inputs of the shell reader's benches, shared by
//! `benches/shell.rs` and `examples/count_shell.rs` (included by `#[path]`).

use toolgate::shell::{MAX_INPUT, Reason};

/// Hostile inputs of (about) 64 KiB, with the reason each must give.
pub fn hostile_inputs() -> Vec<(&'static str, String, Option<Reason>)> {
    let k = MAX_INPUT;
    let fit = |s: String| -> String {
        let mut s = s;
        s.truncate(k);
        s
    };
    vec![
        (
            "unclosed $(",
            fit("$(".repeat(k / 2)),
            Some(Reason::TooDeep),
        ),
        (
            "nested $( )",
            fit(format!("echo {}x{}", "$(echo ".repeat(16), ")".repeat(16))
                + &" y".repeat(k / 2 - 200)),
            None,
        ),
        ("10,000 &&", vec!["t"; 10_001].join(" && "), None),
        (
            "64 KiB of &&",
            fit("t&&".repeat(k / 3)),
            Some(Reason::TooMuchWork),
        ),
        (
            "deep quotes",
            fit("\"$(\"".repeat(k / 4)),
            Some(Reason::TooDeep),
        ),
        (
            "alternating quotes",
            fit("'a'\"b\"$'c'".repeat(k / 11)),
            None,
        ),
        (
            "brace bomb",
            fit(format!("echo {}", "{a,b}".repeat(k / 5))),
            Some(Reason::TooManyWords),
        ),
        (
            "unclosed braces",
            fit(format!("echo {}", "{a,".repeat(k / 3))),
            None,
        ),
        (
            "unclosed ${",
            fit("${".repeat(k / 2)),
            Some(Reason::TooDeep),
        ),
        (
            "here-docs",
            fit("cat <<E\n".repeat(k / 8)),
            Some(Reason::Unterminated),
        ),
        ("backslashes", "\\".repeat(k), None),
        ("one long word", "a".repeat(k), None),
        ("subshells", fit("( ".repeat(k / 2)), Some(Reason::TooDeep)),
        // What the value-as-code check scans (every context, subscript
        // and command word), open or repeated.
        (
            "unclosed ${a:",
            fit(format!("echo {}", "${a:".repeat(k / 4))),
            Some(Reason::TooDeep),
        ),
        (
            "[[ × 21,845",
            fit(format!("echo{}", " [[".repeat(k / 3))),
            None,
        ),
        (
            "a[ × 21,845",
            fit(format!("echo{}", " a[".repeat(k / 3))),
            None,
        ),
        (
            "read × 13,106",
            fit(format!("(( 1 )); {}", "read ".repeat(k / 5))),
            None,
        ),
        (
            "(( )) and 32,000 words",
            fit(format!("(( 1 )); echo{}", " y".repeat(k / 2))),
            None,
        ),
        // Text made from text (fuzz finding 13 and the shapes found
        // beside it): bounded by the reading's budget, or read in one pass.
        (
            "brace words piped into shells",
            format!(
                "echo 'echo {{1..250}}{} | sh -s --;'{{1..250}} | sh",
                "x".repeat(100)
            ),
            Some(Reason::TooMuchText),
        ),
        (
            "sequences in a group",
            format!("echo {{{}}}", "{1..4000},".repeat(k / 10 - 1)),
            Some(Reason::TooManyWords),
        ),
        (
            "here-strings into shells × 5,461",
            fit("bash <<< x; ".repeat(k / 12)),
            Some(Reason::TooMuchWork),
        ),
        // The same with no blanks: the most nested scripts 64 KiB holds.
        (
            "sh<<<x; × 9,362",
            fit("sh<<<x;".repeat(k / 7)),
            Some(Reason::TooMuchWork),
        ),
        (
            "sh -c x; × 8,192",
            fit("sh -c x;".repeat(k / 8)),
            Some(Reason::TooMuchWork),
        ),
        // Shells that read the input of what they run in, each found
        // and reported (the reading is incomplete at the first).
        (
            "shells in groups piped into × 6,553",
            fit("a|{ sh;};".repeat(k / 10)),
            Some(Reason::DynamicScript),
        ),
        (
            "shells a fed sh -c runs × 21,843",
            fit(format!("sh<<<x -c '{}'", "sh;".repeat(k / 3 - 5))),
            Some(Reason::DynamicScript),
        ),
        (
            "pending here-docs, a script of newlines",
            fit(format!(
                "cat {}; sh -c \"{}\"",
                "<<A ".repeat(8000),
                "\n".repeat(30_000)
            )),
            Some(Reason::TooMuchWork),
        ),
        (
            "group redirections 8,000 × 8,000",
            fit(format!(
                "{{ {} }} {}",
                "a;".repeat(8000),
                ">a ".repeat(8000)
            )),
            Some(Reason::TooMuchText),
        ),
        // Many small commands of every kind, and one command of many
        // parts: each stops at the work limit (`MAX_WORK`), what was read
        // kept.
        (
            "64 KiB of ;",
            fit("t;".repeat(k / 2)),
            Some(Reason::TooMuchWork),
        ),
        (
            "quoted words in commands × 13,107",
            fit("a \"b\";".repeat(k / 5)),
            Some(Reason::TooMuchWork),
        ),
        (
            "assignments before commands × 13,107",
            fit("a=b c;".repeat(k / 6)),
            Some(Reason::TooMuchWork),
        ),
        (
            "redirections × 21,845",
            fit("a>b;".repeat(k / 4)),
            Some(Reason::TooMuchWork),
        ),
        (
            "pipes × 16,384",
            fit("a|b;".repeat(k / 4)),
            Some(Reason::TooMuchWork),
        ),
        (
            "groups × 9,362",
            fit("{ a;};".repeat(k / 7)),
            Some(Reason::TooMuchWork),
        ),
        (
            "functions × 7,281",
            fit("f(){ a;};".repeat(k / 9)),
            Some(Reason::TooMuchWork),
        ),
        (
            "if × 4,369",
            fit("if a;then b;fi;".repeat(k / 15)),
            Some(Reason::TooMuchWork),
        ),
        (
            "substitutions × 8,192",
            fit("a $(b);".repeat(k / 8)),
            Some(Reason::TooMuchWork),
        ),
        (
            "literal scripts piped into shells × 6,553",
            fit("echo x|sh;".repeat(k / 10)),
            Some(Reason::TooMuchWork),
        ),
        (
            "dynamic programs × 16,384",
            fit("$a;".repeat(k / 3)),
            Some(Reason::TooMuchWork),
        ),
        (
            "one command of 16,384 quoted words",
            fit(format!("echo{}", " \"b\"".repeat(k / 4))),
            Some(Reason::TooMuchWork),
        ),
        (
            "one command of 16,384 assignments",
            fit(" a=b".repeat(k / 4)),
            Some(Reason::TooMuchWork),
        ),
        // The value-as-code check with a value set first: past 4,096
        // places that could start a context, a value is taken to run.
        (
            "a value set, then a[ × 21,843",
            fit(format!("x=1; echo{}", " a[".repeat(k / 3))),
            Some(Reason::ValueRunsCode),
        ),
        (
            "a value set, then [[ × 21,843",
            fit(format!("x=1; echo{}", " [[".repeat(k / 3))),
            Some(Reason::ValueRunsCode),
        ),
        (
            "values set and declared × 3,640",
            fit("x=1;declare -i a;".repeat(k / 18)),
            Some(Reason::TooMuchWork),
        ),
        (
            "values set and let × 5,957",
            fit("x=1;let a;".repeat(k / 11)),
            Some(Reason::TooMuchWork),
        ),
        (
            "a value set, then unclosed ${a:",
            fit(format!("x=1; echo {}", "${a:".repeat(k / 4))),
            Some(Reason::TooDeep),
        ),
    ]
}
