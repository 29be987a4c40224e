//! `gtap-profile TRACE.json [--out-dir DIR]`: draws `timeline.png`, `utilization.png` and
//! `durations.png` from a gtap trace (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Draws a gtap event trace (Chrome trace JSON written by gtap_host::Trace) as PNG charts.
#[derive(Parser)]
struct Cli {
    /// The trace file.
    json: PathBuf,
    /// Directory for the PNG files (default: next to the trace file).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// A TrueType font for the labels (Debian's fonts-dejavu-core).
    #[arg(long, default_value = gtap_profile::charts::DEFAULT_FONT)]
    font: PathBuf,
    /// Most warps the timeline shows (spread evenly over the grid).
    #[arg(long, default_value_t = 64)]
    max_warps: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dir = cli.out_dir.unwrap_or_else(|| {
        cli.json
            .parent()
            .map_or_else(|| PathBuf::from("."), |p| p.to_path_buf())
    });
    match gtap_profile::draw_file(&cli.json, &dir, &cli.font, cli.max_warps) {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gtap-profile: {e}");
            ExitCode::FAILURE
        }
    }
}
