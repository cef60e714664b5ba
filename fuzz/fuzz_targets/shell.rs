//! Arbitrary bytes as a shell command line: reading never panics, stays
//! within its time bound, and every word of a complete reading comes from
//! the input or its decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_fuzz::shell_check::check_shell;

fuzz_target!(|data: &[u8]| {
    if let Err(msg) = check_shell(data) {
        panic!("command {:?}: {msg}", String::from_utf8_lossy(data));
    }
});
