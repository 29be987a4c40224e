//! `gtap-bench`: GTaP's evaluation workloads on gtap, side by side with GTaP's own runtime
//! (from the log of the GTaP baseline's `run.sh`, run on the same GPU in the same device
//! session) and with CPU peers (sequential Rust, rayon on all cores) on the same machine.
//!
//! * `gtap-bench run`: measures, prints the table, writes `<date>-<device>-<commit>.json` and
//!   `table.md` into `--out-dir`; exits non-zero if any gtap or CPU-peer run failed its check.
//! * `gtap-bench charts`: draws PNG charts from such a JSON file (no GPU needed).
//! * `gtap-bench profile`: traces fib(30) and the binary tree, writes the traces (Chrome JSON)
//!   and their charts, and measures the trace's cost (kernel time with it off and on).

mod baseline;
mod catalog;
mod charts;
mod profile;
mod protocol;
mod record;
mod run;
mod stats;
mod table;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use gtap_host::CpuMode;

/// GTaP's workloads on gtap, next to GTaP's runtime and CPU peers.
#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure (GPU, CPU peers) and pair with a GTaP baseline log.
    Run(RunArgs),
    /// Draw PNG charts from a run's JSON file.
    Charts(ChartArgs),
    /// Trace fib(30) and the binary tree: traces, charts, and the trace's cost off/on.
    Profile(ProfileArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum TargetArg {
    /// GPU 0 (an error if there is none).
    Gpu,
    /// gtap's CPU executor as a program without a GPU gets it (work-first).
    CpuExecutor,
    /// gtap's parallel CPU executor: the GPU's scheduler on OS threads.
    CpuParallel,
    /// Skip gtap: CPU peers and the GTaP log only.
    None,
}

#[derive(Parser)]
struct RunArgs {
    /// Small sizes (labels change accordingly); implies `--target cpu-executor` unless given.
    #[arg(long)]
    quick: bool,
    /// Where gtap runs.
    #[arg(long, value_enum)]
    target: Option<TargetArg>,
    /// The standard output of the GTaP baseline's `run.sh` (its `BENCH` lines) for this GPU.
    #[arg(long)]
    baseline_log: Option<PathBuf>,
    /// Directory for the JSON file and `table.md`.
    #[arg(long, default_value = "bench/results")]
    out_dir: PathBuf,
    /// Labels to run, comma-separated; a trailing `*` matches a prefix (`fib40_cutoff*`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Timed launches (and the most timed runs of a CPU peer).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Seconds a CPU peer may take per workload; slow peers do fewer runs (at least one).
    #[arg(long, default_value_t = 20.0)]
    cpu_budget_s: f64,
    /// Skip the CPU peers.
    #[arg(long)]
    no_cpu: bool,
    /// Run gtap on GTaP's grid and block size per workload (e.g. 4000 blocks of 32 threads for
    /// fib) instead of gtap's default (all resident blocks of 128 threads); a grid that no
    /// kernel can keep resident is skipped, and a row whose kernel keeps fewer runs on those
    /// (see `Config::grid_size` and `--max-registers`).
    #[arg(long)]
    gtap_geometry: bool,
    /// Register cap for gtap's kernels (fewer registers let more blocks be resident). A JIT
    /// option: kernels with their own `max_registers` attribute keep theirs.
    #[arg(long)]
    max_registers: Option<u32>,
    /// Threads per block for gtap's thread-mode rows (block-mode rows keep their kernels'
    /// block size); default: the runtime's (128). Warps a multiprocessor follow the registers,
    /// not the block size (bench/NOTES.md entry 80).
    #[arg(long)]
    thread_block_size: Option<u32>,
    /// Blocks for gtap's rows, instead of every block each kernel keeps resident: a row whose
    /// kernel keeps fewer runs on those (the row's note gives the blocks it ran on), and a grid
    /// that no kernel keeps resident is skipped, as with `--gtap-geometry`.
    #[arg(long)]
    grid: Option<u32>,
    /// Cutoffs of the EPAQ fib sweep (default 2..=18; quick: 2,8; `none` for no sweep).
    #[arg(long, value_delimiter = ',')]
    fib_cutoffs: Option<Vec<String>>,
    /// Heights of the binary-tree sweep (default 10..=21; quick: 6; `none`).
    #[arg(long, value_delimiter = ',')]
    tree_depths: Option<Vec<String>>,
    /// Grid sizes of the fib(35) scaling sweep (default 8,16,33,66,132,198,264; quick: 1,2;
    /// `none`). Sizes above what can be resident are skipped.
    #[arg(long, value_delimiter = ',')]
    grid_sizes: Option<Vec<String>>,
    /// The gtap commit measured (default: `$GTAP_COMMIT`, else the commit built from).
    #[arg(long)]
    commit: Option<String>,
    /// The GPU driver version (default: from the baseline log's `DEVICE` line).
    #[arg(long)]
    driver: Option<String>,
    /// Date for the file name, `YYYY-MM-DD` (default: today, UTC).
    #[arg(long)]
    date: Option<String>,
}

#[derive(Parser)]
struct ChartArgs {
    /// JSON files written by `gtap-bench run` (several: one run split over device calls);
    /// the charts are named after the first.
    #[arg(required = true)]
    json: Vec<PathBuf>,
    /// Directory for the PNG files (default: next to the first JSON file).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// A TrueType font for the labels (Debian's fonts-dejavu-core).
    #[arg(long, default_value = charts::DEFAULT_FONT)]
    font: PathBuf,
}

#[derive(Parser)]
struct ProfileArgs {
    /// Small sizes (fib(20), a tree of height 10); implies `--target cpu-executor` unless given.
    #[arg(long)]
    quick: bool,
    /// Where gtap runs.
    #[arg(long, value_enum)]
    target: Option<TargetArg>,
    /// Events each warp may record.
    #[arg(long, default_value_t = 16384)]
    events_per_warp: u32,
    /// Untimed launches of each runtime (trace off, trace on) before the timed ones.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Timed launches of each runtime.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Directory for the traces (`<label>.trace.json`), the charts (`<label>/*.png`) and
    /// `profile-cost.md`.
    #[arg(long, default_value = "bench/results/profile")]
    out_dir: PathBuf,
    /// A TrueType font for the charts' labels (without one, only the traces are written).
    #[arg(long, default_value = charts::DEFAULT_FONT)]
    font: PathBuf,
}

/// Parses a sweep list: numbers, `a..=b` ranges, or `none`.
fn sweep<T: std::str::FromStr + Copy + Into<i64> + TryFrom<i64>>(
    arg: &Option<Vec<String>>,
    default: &[T],
) -> Result<Vec<T>, String> {
    let Some(items) = arg else {
        return Ok(default.to_vec());
    };
    let mut out = Vec::new();
    for item in items {
        if item == "none" {
            continue;
        }
        let parse = |s: &str| s.parse::<T>().map_err(|_| format!("bad sweep value `{s}`"));
        match item.split_once("..=") {
            Some((a, b)) => {
                let (a, b) = (parse(a)?.into(), parse(b)?.into());
                for v in a..=b {
                    out.push(T::try_from(v).map_err(|_| format!("bad sweep value `{v}`"))?);
                }
            }
            None => out.push(parse(item)?),
        }
    }
    Ok(out)
}

/// `$GTAP_COMMIT` if set, else the commit this binary was built from (see `build.rs`).
fn default_commit() -> String {
    std::env::var("GTAP_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| env!("GTAP_BENCH_COMMIT").to_string())
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the days since 1970 (proleptic Gregorian).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn run_command(a: RunArgs) -> Result<bool, String> {
    let q = a.quick;
    let settings = run::Settings {
        catalog: catalog::Options {
            quick: q,
            fib_cutoffs: sweep(
                &a.fib_cutoffs,
                &if q { vec![2, 8] } else { (2..=18).collect() },
            )?,
            tree_depths: sweep(
                &a.tree_depths,
                &if q { vec![6] } else { (10..=21).collect() },
            )?,
            grid_sizes: sweep(
                &a.grid_sizes,
                if q {
                    &[1, 2]
                } else {
                    &[8, 16, 33, 66, 132, 198, 264]
                },
            )?,
        },
        only: a.only,
        protocol: protocol::Protocol {
            warmup: a.warmup,
            runs: a.runs.max(1),
            cpu_budget: Duration::from_secs_f64(a.cpu_budget_s.max(0.0)),
        },
        target: match (a.target, q) {
            (Some(TargetArg::Gpu), _) | (None, false) => run::Target::Gpu,
            (Some(TargetArg::CpuExecutor), _) | (None, true) => {
                run::Target::CpuExecutor(CpuMode::WorkFirst)
            }
            (Some(TargetArg::CpuParallel), _) => run::Target::CpuExecutor(CpuMode::Parallel),
            (Some(TargetArg::None), _) => run::Target::None,
        },
        cpu_peers: !a.no_cpu,
        gtap_geometry: a.gtap_geometry,
        max_registers: a.max_registers,
        thread_block_size: a.thread_block_size,
        grid: a.grid,
        baseline_log: a.baseline_log,
        out_dir: a.out_dir,
        commit: a.commit.unwrap_or_else(default_commit),
        driver: a.driver,
        date: a.date.unwrap_or_else(today),
    };
    let report = run::run(&settings)?;
    println!("\n{}", report.table);
    println!("records: {}", report.json.display());
    for f in &report.failures {
        println!("FAILED: {f}");
    }
    Ok(report.failures.is_empty())
}

fn charts_command(a: ChartArgs) -> Result<bool, String> {
    let mut records = Vec::new();
    for path in &a.json {
        records.extend(record::read(path)?);
    }
    let first = &a.json[0];
    let dir = a.out_dir.unwrap_or_else(|| {
        first
            .parent()
            .map_or_else(|| PathBuf::from("."), |p| p.to_path_buf())
    });
    let stem = first
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    for path in charts::draw_all(&records, &dir, &stem, &a.font)? {
        println!("wrote {}", path.display());
    }
    Ok(true)
}

fn profile_command(a: ProfileArgs) -> Result<bool, String> {
    profile::run(&profile::Settings {
        quick: a.quick,
        target: match (a.target, a.quick) {
            (Some(TargetArg::Gpu), _) | (None, false) => run::Target::Gpu,
            (Some(TargetArg::CpuExecutor), _) | (None, true) => {
                run::Target::CpuExecutor(CpuMode::WorkFirst)
            }
            (Some(TargetArg::CpuParallel), _) => run::Target::CpuExecutor(CpuMode::Parallel),
            (Some(TargetArg::None), _) => run::Target::None,
        },
        events_per_warp: a.events_per_warp,
        warmup: a.warmup,
        runs: a.runs.max(1),
        out_dir: a.out_dir,
        font: a.font,
    })
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(a) => run_command(a),
        Command::Charts(a) => charts_command(a),
        Command::Profile(a) => profile_command(a),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("gtap-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_parse_lists_ranges_and_none() {
        let v = |s: &[&str]| Some(s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(sweep::<i32>(&v(&["2..=4", "9"]), &[]), Ok(vec![2, 3, 4, 9]));
        assert_eq!(sweep::<i32>(&v(&["none"]), &[1]), Ok(vec![]));
        assert_eq!(sweep::<u32>(&None, &[7]), Ok(vec![7]));
        assert!(sweep::<u32>(&v(&["x"]), &[]).is_err());
    }

    #[test]
    fn today_is_a_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"));
    }
}
