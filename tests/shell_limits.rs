//! Hostile and oversized inputs: bounded, fail closed, what was read is
//! kept. (Their speed is measured by `benches/shell.rs`.)

use toolgate::shell::{self, MAX_INPUT, Reading, Reason};

fn reasons(r: &Reading) -> Vec<Reason> {
    r.incomplete.iter().map(|i| i.reason).collect()
}

/// Reads on a thread with a small stack: recursion is bounded by the
/// nesting limit, not by the input.
fn read_small_stack(s: String) -> Reading {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || shell::read(&s))
        .expect("thread starts")
        .join()
        .expect("no panic, no overflow")
}

#[path = "../benches/support/hostile.rs"]
mod hostile;

/// Every hostile input of the bench gives the reason it names (or none),
/// within 64 KiB.
#[test]
fn hostile_inputs_give_their_reasons() {
    let mut wrong = Vec::new();
    for (name, s, reason) in hostile::hostile_inputs() {
        assert!(s.len() <= MAX_INPUT, "{name} is {} bytes", s.len());
        let r = read_small_stack(s);
        let ok = match reason {
            Some(want) => reasons(&r).contains(&want),
            None => r.is_complete(),
        };
        if !ok {
            wrong.push(format!(
                "{name}: expected {reason:?}, got {:?}",
                reasons(&r)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_work_limit_stops_reading_and_keeps_what_was_read() {
    // One-word commands count 1: 10,000 are read in full (above), and
    // 20,000 stop at the limit with the first ones kept.
    let s = vec!["t"; 20_000].join(";");
    let r = shell::read(&s);
    assert_eq!(reasons(&r), [Reason::TooMuchWork]);
    let n = r.commands.len();
    // (The command that goes over the limit is kept too.)
    assert!(
        n > 10_000 && n <= shell::MAX_WORK as usize + 1,
        "{n} commands"
    );
    assert!(r.commands.iter().all(|c| r.words(c).len() == 1));
    // A deny rule still sees a command before the stop: `rm -rf /` read
    // in a script after 1,000 shells given scripts.
    let s = format!(
        "{}sh -c 'rm -rf /'; {}",
        "sh -c x;".repeat(1000),
        "sh -c x;".repeat(1000)
    );
    let r = shell::read(&s);
    assert_eq!(reasons(&r), [Reason::TooMuchWork]);
    assert!(
        r.commands
            .iter()
            .any(|c| r.words(c).iter().map(|w| w.text()).collect::<Vec<_>>() == ["rm", "-rf", "/"])
    );
    // Words that are not plain count: one command of them stops.
    let s = format!("echo{}", " \"b\"".repeat(8000));
    assert_eq!(reasons(&shell::read(&s)), [Reason::TooMuchWork]);
    let s = format!("echo{}", " \"b\"".repeat(5000));
    assert!(shell::read(&s).is_complete());
    // The command being read at the limit is kept with the words read so
    // far: a deny rule on its start still sees it.
    let s = format!("rm -rf /{}", " \"b\"".repeat(8000));
    let r = shell::read(&s);
    assert_eq!(reasons(&r), [Reason::TooMuchWork]);
    let words: Vec<&str> = r.words(&r.commands[0]).iter().map(|w| w.text()).collect();
    assert_eq!(words[..3], ["rm", "-rf", "/"]);
    assert!(words.len() > 5000 && words.len() < 8000, "{}", words.len());
}

#[test]
fn unclosed_substitutions_stop_at_the_depth_limit() {
    let s = "$(".repeat(32 * 1024);
    let r = read_small_stack(s);
    assert_eq!(reasons(&r), [Reason::TooDeep]);
}

#[test]
fn closed_deep_substitutions_stop_at_the_depth_limit() {
    let s = format!("{}ls{}", "$(echo ".repeat(5000), ")".repeat(5000));
    let r = read_small_stack(s);
    assert_eq!(reasons(&r), [Reason::TooDeep]);
}

#[test]
fn deep_parentheses_backquotes_braces_and_quotes() {
    for s in [
        "( ".repeat(20_000),
        "{ ".repeat(20_000),
        "`".repeat(1000) + &"\\`".repeat(1000),
        "\"$(\"".repeat(10_000),
        "${".repeat(20_000),
        "$((".repeat(20_000),
        "<(".repeat(20_000),
        "if ".repeat(20_000),
    ] {
        let r = read_small_stack(s.clone());
        assert!(!r.is_complete(), "{:?}… read as complete", &s[..20]);
    }
}

#[test]
fn ten_thousand_ands_are_all_read() {
    let s = vec!["t"; 10_001].join(" && ");
    let r = read_small_stack(s);
    assert!(r.is_complete());
    assert_eq!(r.commands.len(), 10_001);
}

#[test]
fn brace_bomb_is_capped() {
    let s = format!("echo {}", "{a,b}".repeat(2000));
    let r = read_small_stack(s);
    assert_eq!(reasons(&r), [Reason::TooManyWords]);
    assert_eq!(
        r.commands[0].words(&r).len(),
        2,
        "the bomb stays one dynamic word"
    );
    let nested = format!("echo {}x{}", "{a,".repeat(3000), "}".repeat(3000));
    let r = read_small_stack(nested);
    assert!(!r.is_complete());
}

#[test]
fn brace_words_per_command_are_capped() {
    let s = format!("echo {}", vec!["{1..200}"; 21].join(" "));
    let r = shell::read(&s);
    assert_eq!(reasons(&r), [Reason::TooManyWords]);
    // 20 groups of 200 words fit under 4,096; the 21st does not.
    assert_eq!(r.commands[0].words(&r).len(), 1 + 20 * 200 + 1);
    assert!(
        r.commands[0]
            .words(&r)
            .last()
            .is_some_and(|w| w.is_dynamic())
    );
}

#[test]
fn over_64_kib_is_incomplete_and_read_up_to_the_limit() {
    let s = format!("rm -rf /; {}", "ls; ".repeat(MAX_INPUT / 4));
    let r = shell::read(&s);
    assert!(reasons(&r).contains(&Reason::TooLong));
    assert_eq!(r.commands[0].display(&r).to_string(), "rm -rf /");
    assert!(r.commands.len() > 10_000);
    // Exactly at the limit is read in full.
    let at = "x".repeat(MAX_INPUT);
    assert!(shell::read(&at).is_complete());
}

#[test]
fn a_limit_keeps_the_commands_read_before_it() {
    let s = format!(
        "git push --force; echo {}x{}; rm -rf /",
        "$(".repeat(40),
        ")".repeat(40)
    );
    let r = shell::read(&s);
    assert_eq!(r.commands[0].display(&r).to_string(), "git push --force");
    assert_eq!(reasons(&r), [Reason::TooDeep]);
}

#[test]
fn many_here_documents_are_linear() {
    let s = format!(
        "{}\n{}",
        "cat <<E $(x) <<E ".repeat(600),
        "$(y)\nE\n".repeat(1200)
    );
    let r = read_small_stack(s);
    assert!(r.is_complete(), "{:?}", reasons(&r));
    assert!(r.commands.len() >= 1800);
}

/// The value-as-code check reads each command's words once, however often
/// a word that sets or evaluates a value repeats: what it finds after
/// thousands of repetitions it still finds, and what it must not find it
/// still does not.
#[test]
fn value_as_code_after_repeated_words() {
    let code = "'a[$(rm y)]'";
    let cases: Vec<(String, bool)> = vec![
        (
            format!("{}x <<< {code}; echo $((x))", "read ".repeat(5000)),
            true,
        ),
        (format!("{}x; echo $((x))", "mapfile ".repeat(3000)), true),
        (
            format!("{}-v x %s {code}; echo $((x))", "printf ".repeat(5000)),
            true,
        ),
        (
            format!("printf {}-v x %s {code}; echo $((x))", "a ".repeat(5000)),
            true,
        ),
        (format!("printf-v x {code}; echo $((x))"), true),
        (
            format!("for x in {}{code}; do echo $((x)); done", "1 ".repeat(5000)),
            true,
        ),
        (
            format!("for x in {}; do echo $((x)); done", "1 ".repeat(5000)),
            false,
        ),
        (
            format!(
                "(( 1 )); {}x in 1 2; do :; done; x={code}; a[x]=1",
                "for ".repeat(3000)
            ),
            true,
        ),
        (
            format!("x={code}; {}echo $((x))", "echo $((1)); ".repeat(3000)),
            true,
        ),
        (
            format!(
                "x={code}; echo {}x{}",
                "$((".repeat(3000),
                "))".repeat(3000)
            ),
            true,
        ),
        (
            format!("x={code}; echo {}${{!x}}", "${a:".repeat(3000)),
            true,
        ),
        (format!("x={code}; {}-i y=x", "declare ".repeat(3000)), true),
        (
            format!("x={code}; [[ {} $x -eq 1 ]]", "[[ ".repeat(3000)),
            true,
        ),
        (format!("echo {}", "[[ ".repeat(20_000)), false),
        (format!("echo {}", "a[".repeat(20_000)), false),
        (format!("(( 1 )); {}", "read ".repeat(10_000)), false),
    ];
    let mut wrong = Vec::new();
    for (cmd, runs_code) in &cases {
        let r = shell::read(cmd);
        let found = reasons(&r).contains(&Reason::ValueRunsCode);
        if found != *runs_code {
            wrong.push(format!(
                "{}… ({} bytes): value runs code {found}, expected {runs_code}",
                &cmd[..cmd.len().min(40)],
                cmd.len()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The value-as-code check looks at a bounded number of places that could
/// start a context once a value may be set; past it a value is taken to
/// run as code (the reading incomplete), never the other way.
#[test]
fn value_as_code_places_are_bounded() {
    let flagged = |s: &str| reasons(&shell::read(s)).contains(&Reason::ValueRunsCode);
    assert!(!flagged(&format!("x=1; echo{}", " a[".repeat(4000))));
    assert!(flagged(&format!("x=1; echo{}", " a[".repeat(4200))));
    // Without a value set, nothing is taken to run.
    assert!(!flagged(&format!("echo{}", " a[".repeat(9000))));
    // A context counts 8 places: 480 are looked at, 540 are not.
    assert!(!flagged(&format!("x=1; {}", "(( a )); ".repeat(480))));
    assert!(flagged(&format!("x=1; {}", "(( a )); ".repeat(540))));
}

/// What a reading holds beyond its input: the text of the scripts shells
/// were given, and the words, assignment values and redirection targets
/// and bodies of its commands.
fn text_held(r: &Reading) -> (usize, usize) {
    let scripts: usize = r.scripts.iter().skip(1).map(|s| s.text.len()).sum();
    let words: usize = r
        .commands
        .iter()
        .map(|c| {
            c.words(r).iter().map(|w| w.text().len()).sum::<usize>()
                + c.assignments(r)
                    .iter()
                    .map(|a| a.value.text().len())
                    .sum::<usize>()
                + c.redirections(r)
                    .iter()
                    .map(|d| d.target.text().len() + d.body.as_ref().map_or(0, |b| b.text().len()))
                    .sum::<usize>()
        })
        .sum();
    (scripts, words)
}

/// Text made from text (scripts piped into shells, brace words, the
/// redirections of a group copied onto its commands) is bounded by one
/// budget for the whole reading, however it nests: the work of a reading
/// stays a small multiple of its input (fuzz finding 13: 358 bytes of
/// brace words piped into shells made 81 KB of scripts and 82,362 words).
/// Counted, not timed: the scripts read, the words held, the commands.
#[test]
fn made_text_is_bounded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/shell");
    let mut inputs: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the shell fuzz findings")
        .map(|e| {
            let path = e.expect("a directory entry").path();
            let data = std::fs::read(&path).expect("a finding");
            (
                path.display().to_string(),
                String::from_utf8_lossy(&data).into_owned(),
            )
        })
        .collect();
    let x = "x".repeat(100);
    for (name, s) in [
        (
            "brace words piped into a shell, twice",
            format!("echo 'echo {{1..250}}{x} | sh;'{{1..250}} | sh"),
        ),
        (
            "a long brace word per command",
            format!("echo {{1..255}}{};", "a".repeat(1000)).repeat(64),
        ),
        (
            "sequences inside an expanded group",
            format!("echo {{{}}}", "{1..4000},".repeat(6000)),
        ),
        ("here-strings into shells", "bash <<< x; ".repeat(5400)),
        (
            "literal scripts piped into shells",
            "echo x | sh; ".repeat(5000),
        ),
        (
            "here-documents into shells",
            "bash <<E\nx\nE\n".repeat(5000),
        ),
        (
            "shells nested 15 deep around a long script",
            (0..15).fold(format!("echo {}", "a ".repeat(20_000)), |s, _| {
                format!("sh -c '{}'", s.replace('\'', "'\\''"))
            }),
        ),
        (
            "many redirections around many commands",
            format!("{{ {} }} {}", "a;".repeat(2000), ">a ".repeat(2000)),
        ),
        (
            "a long quoted target around many commands",
            format!("{{ {} }} > \"{}\"", "a;".repeat(10_000), "x".repeat(40_000)),
        ),
    ] {
        inputs.push((name.to_string(), s));
    }
    let mut failures = Vec::new();
    for (name, s) in &inputs {
        let r = read_small_stack(s.clone());
        let input = r.scripts.first().map_or(0, |s| s.text.len());
        let (scripts, words) = text_held(&r);
        let budget = shell::MAX_MADE_TEXT;
        if scripts > budget {
            failures.push(format!("{name}: {scripts} bytes of scripts made"));
        }
        if words > input + scripts + budget {
            failures.push(format!(
                "{name}: {words} bytes of words from {input} bytes of input and {scripts} of scripts"
            ));
        }
        if r.commands.len() > input + scripts {
            failures.push(format!("{name}: {} commands", r.commands.len()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
