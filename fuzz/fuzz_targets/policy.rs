//! Arbitrary settings JSON or policy.toml text: it loads, or it is refused
//! with an error; it never panics. A refused load leaves the policy as it
//! was.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_fuzz::policy_check::check_policy;

fuzz_target!(|data: &[u8]| {
    if let Err(msg) = check_policy(data) {
        panic!("policy input {:?}: {msg}", String::from_utf8_lossy(data));
    }
});
