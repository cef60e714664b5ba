//! Arbitrary bytes on a hook's stdin (the first byte picks the harness):
//! the answer is a valid decision or refusal in the harness's terms, never
//! a panic, never an allow for input that cannot be read, and the decision
//! is the reference evaluator's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_fuzz::hook_check::check_hook;

fuzz_target!(|data: &[u8]| {
    if let Err(msg) = check_hook(data) {
        panic!("hook input {:?}: {msg}", String::from_utf8_lossy(data));
    }
});
