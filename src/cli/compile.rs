//! `toolgate compile --policy … -o FILE` (SPEC §10.3): a precompiled
//! policy that every command's `--policy FILE` loads without parsing or
//! compiling (see [`crate::policy::image`]).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::Error;
use crate::cli::policy_args::{Compiling, PolicyArgs};
use crate::compile::Config;
use crate::error::ErrorKind;
use crate::policy::cache::write_atomic;
use crate::policy::{ClaudeRoots, PolicyImage};

/// Arguments of `compile`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where the rules come from.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// The image to write (replaced atomically).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Compile shared dense automata: faster queries over many calls
    /// (`eval`), but a much larger image that takes longer to load. By
    /// default the image suits a hook: regex rules are compiled when a call
    /// first needs them.
    #[arg(long)]
    pub dense: bool,
    /// The project directory (for --claude-settings and --tuff); the
    /// current directory by default.
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
}

/// Runs `compile`.
pub fn run(args: Args) -> ExitCode {
    match compile(&args) {
        Ok(summary) => {
            eprintln!("toolgate: {summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate: {e}");
            ExitCode::from(2)
        }
    }
}

fn compile(args: &Args) -> Result<String, Error> {
    if args.policy.is_empty() {
        return Err(Error::new(
            ErrorKind::Call,
            "compile needs a policy: --policy FILE, --claude-settings, --tuff ID or \
             --allow/--ask/--deny RULE",
        ));
    }
    let project = match &args.project_dir {
        Some(p) => p.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let (config, engine) = if args.dense {
        (Config::new(), "default")
    } else {
        (Config::one_shot(), "one-shot")
    };
    let how = Compiling {
        config,
        engine,
        cache: None,
    };
    let roots = ClaudeRoots::system(project.clone());
    let starts = [project];
    let (policy, compiled) = args.policy.load_compiled(&roots, &starts, &how)?;
    for w in policy.warnings() {
        eprintln!("toolgate: warning: {w}");
    }
    let recipe = args.policy.recipe(&roots, &starts, engine);
    let rules = policy.rules().len();
    let files = policy.probes().len();
    let image = PolicyImage::new(&recipe, policy, compiled);
    let bytes = image.to_bytes()?;
    write_atomic(&args.output, &bytes)?;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    Ok(format!(
        "compiled {rules} rule{} ({files} file{} read or looked for) into {} ({} bytes)",
        plural(rules),
        plural(files),
        args.output.display(),
        bytes.len()
    ))
}
