//! The main job: runs every example on the GPU when there is one (else on the CPU executor)
//! and checks each result against a sequential reference.
//!
//! `GTAP_DEMO_SMALL=1` runs the CPU executor's small sizes on the GPU too: for tools that slow
//! kernels down many times, such as `compute-sanitizer` (`scripts/device-sanitize`).

use std::process::ExitCode;

use gtap_examples::{DEVICE_CODE, fib, integrate, nqueens, tree};
use gtap_host::{Config, Runtime};

struct Check {
    name: String,
    ok: bool,
    detail: String,
    kernel_ms: f64,
    tasks: u64,
}

fn main() -> ExitCode {
    let (mut rt, fallback) = match Runtime::gpu_or_cpu(&DEVICE_CODE, &Config::new()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gtap-demo: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(why) = &fallback {
        println!("No GPU run: {why}");
        println!("Running on the CPU executor instead.");
    }
    let l = rt.layout();
    println!(
        "backend: {:?}; grid {} x {} threads, {} warps, {} task slots/warp of {} bytes, {} queue(s), {:.1} MiB of pools",
        rt.backend(),
        l.geometry.blocks,
        rt.block_size(),
        l.geometry.warps(),
        l.geometry.slots_per_warp,
        l.geometry.slot_bytes,
        l.geometry.num_queues,
        l.bytes as f64 / (1 << 20) as f64
    );
    let large = fallback.is_none() && std::env::var_os("GTAP_DEMO_SMALL").is_none();
    let mut checks = Vec::new();
    let mut check =
        |name: String, ran: gtap_host::Result<gtap_host::Launch<String>>, want: String| match ran {
            Ok(l) => checks.push(Check {
                ok: l.result == want,
                detail: if l.result == want {
                    l.result
                } else {
                    format!("got {}, expected {want}", l.result)
                },
                name,
                kernel_ms: l.stats.kernel_ms,
                tasks: l.stats.tasks_spawned,
            }),
            Err(e) => checks.push(Check {
                name,
                ok: false,
                detail: e.to_string(),
                kernel_ms: 0.0,
                tasks: 0,
            }),
        };
    let as_text = |r: gtap_host::Result<gtap_host::Launch<u64>>| {
        r.map(|l| gtap_host::Launch {
            result: l.result.to_string(),
            stats: l.stats,
            trace: l.trace,
        })
    };

    let n = if large { 32 } else { 27 };
    check(
        format!("fib({n})"),
        as_text(rt.launch(fib::fib_kernel, (n,))),
        fib::fib_seq(n).to_string(),
    );

    let n = if large { 40 } else { 32 };
    check(
        format!("fib({n}), cutoff 14"),
        as_text(rt.launch(fib::fib_cutoff_kernel, (n, 14))),
        fib::fib_seq(n).to_string(),
    );

    let eps = if large { 1e-12 } else { 1e-10 };
    let want = integrate::integrate_seq(-1.0, 1.0, eps);
    let got = rt.launch(integrate::integrate_kernel, (-1.0, 1.0, eps));
    check(
        format!("integrate peak on [-1, 1], eps {eps:e}"),
        got.map(|l| gtap_host::Launch {
            result: format!("{:.12}", l.result),
            stats: l.stats,
            trace: l.trace,
        }),
        format!("{want:.12}"),
    );

    let (n, cutoff) = if large { (14, 6) } else { (11, 4) };
    check(
        format!("N-Queens({n}), cutoff {cutoff}"),
        as_text(rt.launch(nqueens::nqueens_kernel, (n, cutoff))),
        nqueens::nqueens_seq(n, 0, 0, 0, 0).to_string(),
    );

    let (height, iters) = if large { (20, 64) } else { (14, 16) };
    let nodes = (1usize << (height + 1)) - 1;
    let mut want_out = vec![0u64; nodes];
    let want = tree::tree_visit_seq(height, iters, &mut want_out);
    let outcome = rt.alloc_filled(nodes, u64::MAX).and_then(|mut out| {
        let l = rt.launch(tree::tree_kernel, (height, iters, out.slice_mut()))?;
        let got_out = rt.download(&out)?;
        let same = got_out == want_out;
        Ok(gtap_host::Launch {
            result: format!(
                "{}{}",
                l.result,
                if same { "" } else { " (node values differ)" }
            ),
            stats: l.stats,
            trace: l.trace,
        })
    });
    check(
        format!("binary tree, height {height}"),
        outcome,
        want.to_string(),
    );

    let size = if large { 2_000_000 } else { 100_000 };
    let nodes = tree::random_tree(size, 42);
    let want = tree::tree_sum_seq(&nodes);
    let outcome = rt
        .upload(&nodes)
        .and_then(|buf| as_text(rt.launch(tree::tree_sum_kernel, (buf.slice(),))));
    check(
        format!("random tree of {size} nodes"),
        outcome,
        want.to_string(),
    );

    println!(
        "{:<36} {:>6} {:>12} {:>12}  result",
        "example", "check", "kernel ms", "tasks"
    );
    let mut failed = 0;
    for c in &checks {
        failed += !c.ok as u32;
        println!(
            "{:<36} {:>6} {:>12.3} {:>12}  {}",
            c.name,
            if c.ok { "ok" } else { "FAIL" },
            c.kernel_ms,
            c.tasks,
            c.detail
        );
    }
    if failed > 0 {
        println!("{failed} example(s) failed");
        ExitCode::FAILURE
    } else {
        println!(
            "all {} examples match their sequential references",
            checks.len()
        );
        ExitCode::SUCCESS
    }
}
