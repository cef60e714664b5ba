//! The `toolgate` command. Everything lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    toolgate::cli::main()
}
