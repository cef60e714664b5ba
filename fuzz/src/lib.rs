//! Shared code of toolgate's fuzz targets. The property checks live in
//! files that depend on `toolgate` (and `serde_json`) alone, so that the
//! main package's `tests/fuzz_regressions.rs` replays findings through the
//! same code.

pub mod evaluate_check;
pub mod hook_check;
pub mod matchers_check;
pub mod policy_check;
pub mod print;
pub mod shell_check;
