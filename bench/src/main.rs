//! Benchmark harness: gtap kernel times on the GPU, measured as the GTaP paper does (CUDA events
//! around the kernel, warm, median of repeated launches), next to CPU peers (sequential Rust,
//! rayon, and gtap's own CPU executor) measured in the same run on the same machine. Every
//! result is checked; a wrong result fails the run.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use gtap_examples::{DEVICE_CODE, fib, integrate, nqueens, tree};
use gtap_host::{Config, CpuMode, Launch, Runtime};

/// Benchmarks gtap against CPU peers.
#[derive(Parser)]
struct Args {
    /// Timed repetitions per benchmark after the warm-up; the median is reported.
    #[arg(long, default_value_t = 11)]
    reps: usize,
    /// Write the results as Markdown to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The commit being measured, recorded with the results.
    #[arg(long, default_value = "unknown")]
    commit: String,
    /// Run only benchmarks whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Skip the GPU even if there is one.
    #[arg(long)]
    cpu_only: bool,
    /// Small problem sizes, for a quick check.
    #[arg(long)]
    quick: bool,
    /// Also time fib and N-Queens on the GPU under these register caps (0: the driver's
    /// choice), to see how occupancy moves them.
    #[arg(long, value_delimiter = ',')]
    sweep_registers: Vec<u32>,
    /// Register cap for the GPU benchmarks (0: the driver's choice).
    #[arg(long, default_value_t = 0)]
    max_registers: u32,
}

struct Row {
    bench: String,
    runner: String,
    times: Vec<f64>,
    note: String,
}

impl Row {
    fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    }
}

struct Bench {
    args: Args,
    rows: Vec<Row>,
    failures: Vec<String>,
}

impl Bench {
    fn wants(&self, name: &str) -> bool {
        self.args
            .filter
            .as_ref()
            .is_none_or(|f| name.contains(f.as_str()))
    }

    /// Times `f` (which returns its result and its own time in ms) `reps` times after `warm`
    /// untimed runs, checking every result.
    fn time<T: PartialEq + std::fmt::Debug>(
        &mut self,
        bench: &str,
        runner: &str,
        warm: usize,
        reps: usize,
        want: &T,
        mut f: impl FnMut() -> Result<(T, f64, String), String>,
    ) {
        let mut times = Vec::new();
        let mut note = String::new();
        for i in 0..warm + reps {
            match f() {
                Ok((got, ms, n)) if &got == want => {
                    if i >= warm {
                        times.push(ms);
                        note = n;
                    }
                }
                Ok((got, _, _)) => {
                    self.failures.push(format!(
                        "{bench} / {runner}: got {got:?}, expected {want:?}"
                    ));
                    return;
                }
                Err(e) => {
                    self.failures.push(format!("{bench} / {runner}: {e}"));
                    return;
                }
            }
        }
        let row = Row {
            bench: bench.into(),
            runner: runner.into(),
            times,
            note,
        };
        println!(
            "{:<34} {:<30} {:>11.3} ms  {}",
            row.bench,
            row.runner,
            row.median(),
            row.note
        );
        self.rows.push(row);
    }

    fn cpu<T: PartialEq + std::fmt::Debug>(
        &mut self,
        bench: &str,
        runner: &str,
        reps: usize,
        want: &T,
        mut f: impl FnMut() -> T,
    ) {
        self.time(bench, runner, 1, reps, want, || {
            let t = Instant::now();
            let v = f();
            Ok((v, t.elapsed().as_secs_f64() * 1e3, String::new()))
        });
    }
}

fn gtap<T: Copy>(launch: gtap_host::Result<Launch<T>>) -> Result<(T, f64, String), String> {
    let l = launch.map_err(|e| e.to_string())?;
    let s = &l.stats;
    Ok((
        l.result,
        s.kernel_ms,
        format!(
            "{} tasks, {:.1} tasks/step, time run/sched/idle {:.0}/{:.0}/{:.0}%, {} steals, peak {} live/warp of {}, {} warps, {} registers, pools {:.0} MiB, launch {:.2} ms",
            s.tasks_spawned,
            s.tasks_polled as f64 / s.steps.max(1) as f64,
            s.time_shares[0] * 100.0,
            s.time_shares[1] * 100.0,
            s.time_shares[2] * 100.0,
            s.steals,
            s.peak_live_per_warp,
            s.slots_per_warp,
            s.warps,
            s.registers,
            s.pool_bytes as f64 / (1u64 << 20) as f64,
            s.launch_ms
        ),
    ))
}

fn fib_rec(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_rec(n - 1) + fib_rec(n - 2)
    }
}

fn fib_join(n: u32, cutoff: u32) -> u64 {
    if n < 2 || n <= cutoff {
        return fib_rec(n);
    }
    let (a, b) = rayon::join(|| fib_join(n - 1, cutoff), || fib_join(n - 2, cutoff));
    a + b
}

fn nq_rayon(n: u32, row: u32, cols: u32, left: u32, right: u32, cutoff: u32) -> u64 {
    use rayon::prelude::*;
    if row >= cutoff {
        return nqueens::nqueens_seq(n, row, cols, left, right);
    }
    let mut avail = ((1u32 << n) - 1) & !(cols | left | right);
    let mut moves = Vec::new();
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail &= avail - 1;
        moves.push(p);
    }
    moves
        .into_par_iter()
        .map(|p| {
            nq_rayon(
                n,
                row + 1,
                cols | p,
                (left | p) << 1,
                (right | p) >> 1,
                cutoff,
            )
        })
        .sum()
}

fn tree_rayon(node: u32, height: u32, iters: u32) -> u64 {
    let own = tree::node_work(node, iters);
    if height == 0 {
        return own;
    }
    let (l, r) = rayon::join(
        || tree_rayon(2 * node + 1, height - 1, iters),
        || tree_rayon(2 * node + 2, height - 1, iters),
    );
    l.wrapping_add(r).wrapping_add(own)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let q = args.quick;
    let reps = args.reps.max(1);
    let mut b = Bench {
        args,
        rows: Vec::new(),
        failures: Vec::new(),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{:<34} {:<30} {:>14}  notes",
        "benchmark", "runner", "median"
    );

    let gpu_config = match b.args.max_registers {
        0 => Config::new(),
        r => Config::new().max_registers(r),
    };
    let mut gpu = if b.args.cpu_only {
        None
    } else {
        match Runtime::gpu(&DEVICE_CODE, &gpu_config) {
            Ok(rt) => {
                // Module loads: SASS from the build, or PTX JIT-compiled by the driver.
                for load in rt.module_loads() {
                    println!(
                        "(module {}: {:?}, loaded in {:.1} ms)",
                        load.kernels.join(", "),
                        load.source,
                        load.load_ms
                    );
                }
                Some(rt)
            }
            Err(e) => {
                println!("(no GPU benchmarks: {e})");
                None
            }
        }
    };
    let device = gpu
        .as_ref()
        .map(|rt| format!("{:?}", rt.backend()))
        .unwrap_or_else(|| "none".into());

    // Occupancy sweep: the same kernels under several register caps.
    for &regs in &b.args.sweep_registers.clone() {
        if gpu.is_none() {
            break;
        }
        let config = if regs == 0 {
            Config::new()
        } else {
            Config::new().max_registers(regs)
        };
        let Ok(mut rt) = Runtime::gpu(&DEVICE_CODE, &config) else {
            b.failures.push(format!("no runtime with {regs} registers"));
            continue;
        };
        let cap = if regs == 0 {
            "driver's choice".to_string()
        } else {
            format!("cap {regs}")
        };
        let (n, want) = if q {
            (30, fib::fib_seq(30))
        } else {
            (40, fib::fib_seq(40))
        };
        b.time(
            &format!("sweep: fib({n})"),
            &format!("registers {cap}"),
            1,
            5,
            &want,
            || gtap(rt.launch(fib::fib_kernel, (n,))),
        );
        let (nq, cut, want) = if q {
            (11, 4, 2680)
        } else {
            (16, 7, 14_772_512)
        };
        b.time(
            &format!("sweep: N-Queens({nq})"),
            &format!("registers {cap}"),
            1,
            5,
            &want,
            || gtap(rt.launch(nqueens::nqueens_kernel, (nq, cut))),
        );
    }

    // fib without cutoff: every call a task.
    let n = if q { 30 } else { 40 };
    let name = format!("fib({n}), no cutoff");
    if b.wants(&name) {
        let want = fib::fib_seq(n);
        if let Some(rt) = gpu.as_mut() {
            b.time(&name, "gtap GPU, 1 queue", 2, reps, &want, || {
                gtap(rt.launch(fib::fib_kernel, (n,)))
            });
        }
        b.cpu(&name, "sequential Rust", 3, &want, || fib_rec(black_box(n)));
        b.cpu(
            &name,
            &format!("rayon::join ({cpus} threads)"),
            3,
            &want,
            || fib_join(black_box(n), 1),
        );
        b.cpu(&name, "rayon::join, cutoff 20", reps, &want, || {
            fib_join(black_box(n), 20)
        });
    }

    // fib with cutoff 14: divergence-aware queues against one queue.
    let name = format!("fib({n}), cutoff 14");
    if b.wants(&name) {
        let want = fib::fib_seq(n);
        for queues in [1, 3] {
            if gpu.is_some() {
                let mut rt =
                    Runtime::gpu(&DEVICE_CODE, &gpu_config.clone().num_queues(queues)).unwrap();
                b.time(
                    &name,
                    &format!("gtap GPU, {queues} queue(s)"),
                    2,
                    reps,
                    &want,
                    || gtap(rt.launch(fib::fib_cutoff_kernel, (n, 14))),
                );
            }
        }
    }

    // The CPU executor as the fallback, against rayon::join (issue: fib(32)).
    let n32 = if q { 26 } else { 32 };
    let name = format!("fib({n32}) on the CPU");
    if b.wants(&name) {
        let want = fib::fib_seq(n32);
        let mut rt = Runtime::cpu(CpuMode::Parallel, &Config::new()).unwrap();
        b.time(
            &name,
            &format!("gtap CPU executor ({cpus} warps)"),
            1,
            reps,
            &want,
            || gtap(rt.launch(fib::fib_kernel, (n32,))),
        );
        b.cpu(
            &name,
            &format!("rayon::join ({cpus} threads)"),
            reps,
            &want,
            || fib_join(black_box(n32), 1),
        );
        b.cpu(&name, "sequential Rust", reps, &want, || {
            fib_rec(black_box(n32))
        });
    }

    // N-Queens(16) with cutoff depth 7.
    let (nq, cut) = if q { (11, 4) } else { (16, 7) };
    let name = format!("N-Queens({nq}), cutoff {cut}");
    if b.wants(&name) {
        let want = [
            1u64, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512,
        ][nq as usize - 1];
        if let Some(rt) = gpu.as_mut() {
            b.time(&name, "gtap GPU, 1 queue", 2, reps, &want, || {
                gtap(rt.launch(nqueens::nqueens_kernel, (nq, cut)))
            });
        }
        b.cpu(
            &name,
            &format!("rayon, cutoff {cut} ({cpus} threads)"),
            reps.min(5),
            &want,
            || nq_rayon(nq, 0, 0, 0, 0, cut),
        );
        b.cpu(&name, "sequential Rust", 1, &want, || {
            nqueens::nqueens_seq(black_box(nq), 0, 0, 0, 0)
        });
    }

    // Binary tree with synthetic work per node.
    let (h, iters) = if q { (14, 64) } else { (22, 64) };
    let name = format!("binary tree, height {h}");
    if b.wants(&name) {
        let mut want_out = vec![0u64; (1 << (h + 1)) - 1];
        let want = tree::tree_visit_seq(h, iters, &mut want_out);
        if let Some(rt) = gpu.as_mut() {
            let mut out = rt.alloc_filled(want_out.len(), 0u64).unwrap();
            let slice = out.slice_mut();
            b.time(&name, "gtap GPU, 1 queue", 2, reps, &want, || {
                gtap(rt.launch(tree::tree_kernel, (h, iters, slice)))
            });
            if rt.download(&out).unwrap() != want_out {
                b.failures.push(format!("{name}: node values differ"));
            }
        }
        b.cpu(&name, "sequential Rust", 3, &want, || {
            tree::tree_visit_seq(h, iters, &mut want_out)
        });
        b.cpu(
            &name,
            &format!("rayon::join ({cpus} threads)"),
            reps,
            &want,
            || tree_rayon(0, h, iters),
        );
    }

    // Adaptive integration.
    let eps = if q { 1e-9 } else { 1e-12 };
    let name = format!("integrate, eps {eps:e}");
    if b.wants(&name) {
        let want = integrate::integrate_seq(-1.0, 1.0, eps).to_bits();
        if let Some(rt) = gpu.as_mut() {
            b.time(&name, "gtap GPU, 1 queue", 2, reps, &want, || {
                gtap(rt.launch(integrate::integrate_kernel, (-1.0, 1.0, eps)))
                    .map(|(v, t, n)| (v.to_bits(), t, n))
            });
        }
        b.cpu(&name, "sequential Rust", 3, &want, || {
            integrate::integrate_seq(-1.0, black_box(1.0), eps).to_bits()
        });
    }

    let mut md = String::new();
    let _ = writeln!(md, "# gtap benchmarks\n");
    let _ = writeln!(md, "- commit: `{}`", b.args.commit);
    let _ = writeln!(md, "- GPU: {device}");
    let _ = writeln!(md, "- CPU threads: {cpus}");
    let _ = writeln!(
        md,
        "- method: gtap GPU times are kernel time from CUDA events, after 2 warm-up launches, median of {reps}; CPU peers are wall time after 1 warm-up run; every result verified against a sequential reference\n"
    );
    let _ = writeln!(
        md,
        "| benchmark | runner | median ms | min ms | max ms | runs | notes |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---|");
    for r in &b.rows {
        let (min, max) = r
            .times
            .iter()
            .fold((f64::MAX, 0f64), |(a, z), &t| (a.min(t), z.max(t)));
        let _ = writeln!(
            md,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {} | {} |",
            r.bench,
            r.runner,
            r.median(),
            min,
            max,
            r.times.len(),
            r.note
        );
    }
    if let Some(path) = &b.args.out
        && let Err(e) = std::fs::write(path, &md)
    {
        eprintln!("cannot write {}: {e}", path.display());
    }
    if b.failures.is_empty() {
        println!("all results verified");
        ExitCode::SUCCESS
    } else {
        for f in &b.failures {
            println!("FAILED: {f}");
        }
        ExitCode::FAILURE
    }
}
