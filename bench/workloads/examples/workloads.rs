//! Runs the ported GTaP workloads of this crate (cilksort, mergesort, BFS, SpMV) on the GPU
//! (or the CPU executor) and on their sequential and rayon peers, every run verified; prints
//! the median time of each. A stand-in until `gtap-bench` drives these workloads.
//!
//! ```sh
//! cargo run --release -p gtap-workloads --example workloads -- [--quick] [--cpu-only]
//!     [--reps N] [--cpu-reps N] [LABEL_PREFIX...]
//! ```

use std::process::ExitCode;

use gtap_host::{CpuMode, Runtime};
use gtap_workloads::measure::{Sample, Workload};
use gtap_workloads::{DEVICE_CODE, bfs, cilksort, mergesort, spmv};

/// A function returning a set of workloads (`paper` or `quick`).
type WorkloadSet = fn() -> Vec<Box<dyn Workload>>;

struct Args {
    quick: bool,
    cpu_only: bool,
    reps: usize,
    cpu_reps: usize,
    labels: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        cpu_only: false,
        reps: 10,
        cpu_reps: 3,
        labels: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut count = |name: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .filter(|&v| v > 0)
                .ok_or(format!("{name} needs a positive count"))
        };
        match a.as_str() {
            "--quick" => args.quick = true,
            "--cpu-only" => args.cpu_only = true,
            "--reps" => args.reps = count("--reps")?,
            "--cpu-reps" => args.cpu_reps = count("--cpu-reps")?,
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => args.labels.push(s.to_string()),
        }
    }
    Ok(args)
}

/// Runs `f` once untimed, then `reps` times; the median time and a failure if any run failed or
/// was not verified.
fn measure(
    reps: usize,
    mut f: impl FnMut() -> Result<Sample, String>,
) -> Result<(f64, String), String> {
    let mut times = Vec::new();
    let mut note = String::new();
    for i in 0..=reps {
        let s = f()?;
        if !s.verified {
            return Err(format!("not verified: {}", s.note));
        }
        if i > 0 {
            times.push(s.ms);
            note = s.note;
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], note))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let families: [(&str, WorkloadSet, WorkloadSet); 4] = [
        ("cilksort", cilksort::paper, cilksort::quick),
        ("mergesort", mergesort::paper, mergesort::quick),
        ("bfs", bfs::paper, bfs::quick),
        ("spmv", spmv::paper, spmv::quick),
    ];
    let wanted = |name: &str| {
        args.labels.is_empty()
            || args
                .labels
                .iter()
                .any(|l| l.starts_with(name) || name.starts_with(l.as_str()))
    };
    let mut failures = 0;
    for (family, paper, quick) in families {
        if !wanted(family) {
            continue;
        }
        eprintln!("generating the {family} inputs ...");
        let workloads = if args.quick { quick() } else { paper() };
        for mut w in workloads {
            let label = w.label();
            if !args.labels.is_empty() && !args.labels.iter().any(|l| label.starts_with(l.as_str()))
            {
                continue;
            }
            let rt = if args.cpu_only {
                Runtime::cpu(CpuMode::Parallel, &w.config())
            } else {
                Runtime::gpu(&DEVICE_CODE, &w.config())
            };
            let gpu_runner = if args.cpu_only {
                "gtap cpu executor"
            } else {
                "gtap gpu"
            };
            let results = [
                (
                    gpu_runner,
                    rt.map_err(|e| e.to_string())
                        .and_then(|mut rt| measure(args.reps, || w.gpu(&mut rt))),
                ),
                ("sequential", measure(args.cpu_reps, || w.sequential())),
                ("rayon", measure(args.cpu_reps, || w.rayon())),
            ];
            for (runner, result) in results {
                match result {
                    Ok((ms, note)) => println!("{label:<28} {runner:<18} {ms:>12.3} ms  {note}"),
                    Err(e) => {
                        failures += 1;
                        println!("{label:<28} {runner:<18} FAILED: {e}");
                    }
                }
            }
        }
    }
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("{failures} runs failed");
        ExitCode::FAILURE
    }
}
