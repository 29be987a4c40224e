//! The event trace (`Config::trace_events_per_warp`) on the CPU executor, in both executor
//! modes and both execution modes: a traced launch gives a trace whose runs poll every task
//! exactly as the statistics count, inside the launch's span, and whose Chrome JSON parses
//! with one track per warp (in block mode one per block, each block task's poll once, saying
//! how it ended); an untraced launch gives none; `GTAP_TRACE` and `GTAP_TRACE_DIR` turn it on
//! and save it. The GPU's trace tests are in `gpu.rs`, with the other GPU tests.

use gtap_examples::{fib, integrate_block};
use gtap_host::{BlockPollEnd, Config, CpuMode, EventKind, Launch, Runtime, Trace, WorkerKind};
use gtap_tests::trace_check::check_trace;

/// fib(n) with room for every event of it.
const N: u32 = 20;
const EVENTS: u32 = 1 << 15;

fn traced() -> Config {
    Config::new().trace_events_per_warp(EVENTS)
}

/// Checks a traced `fib_kernel(N)` launch and its trace; returns the trace.
fn check(launch: Launch<u64>) -> Trace {
    check_trace(launch, fib::fib_seq(N), "fib_kernel")
}

#[test]
fn a_traced_launch_on_the_cpu_executor_records_every_poll() {
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 4 }] {
        let mut rt = Runtime::cpu(mode, &traced()).unwrap();
        for _ in 0..2 {
            check(rt.launch(fib::fib_kernel, (N,)).unwrap());
        }
        let mut plain = Runtime::cpu(mode, &Config::new()).unwrap();
        assert!(plain.launch(fib::fib_kernel, (N,)).unwrap().trace.is_none());
    }
}

#[test]
fn a_trace_too_small_counts_what_it_dropped() {
    let config = Config::new().trace_events_per_warp(4);
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &config).unwrap();
    let launch = rt.launch(fib::fib_kernel, (N,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(N));
    let trace = launch.trace.unwrap();
    assert!(trace.dropped() > 0);
    assert!(trace.workers.iter().all(|w| w.events.len() <= 4));
    let recorded: u64 = trace.workers.iter().map(|w| w.events.len() as u64).sum();
    assert!(recorded + trace.dropped() >= launch.stats.steps);
}

/// A block-mode runtime of two blocks of `integrate_block::BLOCK` threads.
fn block_mode(events: u32) -> Config {
    Config::new()
        .block_mode()
        .block_size(integrate_block::BLOCK)
        .grid_size(2)
        .trace_events_per_warp(events)
}

/// The tolerance of the traced integration: a few hundred block tasks.
const EPS: f64 = 1e-6;

/// An `integrate_block_kernel` launch over `-1..1` to [`EPS`].
fn launch_integrate_block(rt: &mut Runtime) -> Launch<f64> {
    rt.launch(integrate_block::integrate_block_kernel, (-1.0, 1.0, EPS))
        .unwrap()
}

#[test]
fn a_traced_block_mode_launch_records_every_task_run_once_on_its_blocks_track() {
    let want = integrate_block::integrate_block_seq(-1.0, 1.0, EPS, integrate_block::BLOCK);
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 4 }] {
        let mut rt = Runtime::cpu(mode, &block_mode(EVENTS)).unwrap();
        for _ in 0..2 {
            let launch = launch_integrate_block(&mut rt);
            let polled = launch.stats.tasks_polled;
            let trace = check_trace(launch, want, "integrate_block_kernel");
            assert_eq!(trace.worker, WorkerKind::Block);
            assert_eq!(trace.workers.len(), 2, "one track per block");
            // Every task that spawned waits for its two children: a poll that suspended, then
            // the poll after the wait that finished it.
            let ends = |end| {
                let runs = trace.workers.iter().flat_map(|w| &w.events);
                runs.filter(|e| matches!(e.kind, EventKind::Run { ended: Some(x), .. } if x == end))
                    .count() as u64
            };
            let (suspended, finished) =
                (ends(BlockPollEnd::Suspended), ends(BlockPollEnd::Finished));
            assert!(suspended > 0, "{mode:?}");
            assert_eq!((suspended + finished, polled), (polled, polled), "{mode:?}");
        }
        let mut plain = Runtime::cpu(mode, &block_mode(0)).unwrap();
        assert!(launch_integrate_block(&mut plain).trace.is_none());
    }
}

#[test]
fn a_block_mode_trace_too_small_counts_what_it_dropped() {
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &block_mode(4)).unwrap();
    let launch = launch_integrate_block(&mut rt);
    let trace = launch.trace.unwrap();
    assert_eq!(trace.workers.len(), 2);
    assert!(trace.dropped() > 0);
    assert!(trace.workers.iter().all(|w| w.events.len() <= 4));
    let recorded: u64 = trace.workers.iter().map(|w| w.events.len() as u64).sum();
    assert!(recorded + trace.dropped() >= launch.stats.steps);
}

/// In the child: one launch of `fib_kernel` on a runtime whose program asks for no trace.
#[test]
#[ignore = "the child process of `gtap_trace_variables_turn_the_trace_on_and_save_it`"]
fn child() {
    match Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &Config::new()) {
        Ok(mut rt) => {
            let launch = rt.launch(fib::fib_kernel, (N,)).unwrap();
            let events = launch.trace.map_or(0, |t| t.events_per_warp);
            println!("CHILD trace events per warp: {events}");
        }
        Err(e) => println!("CHILD error: {e}"),
    }
}

/// Runs `child` with `env`; returns its stdout and stderr.
fn run_child(env: &[(&str, &std::path::Path)]) -> (String, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture"]);
    cmd.env_remove("GTAP_TRACE").env_remove("GTAP_TRACE_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn gtap_trace_variables_turn_the_trace_on_and_save_it() {
    let dir = std::env::temp_dir().join(format!("gtap-trace-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (out, _) = run_child(&[]);
    assert!(out.contains("CHILD trace events per warp: 0"), "{out}");
    let events = std::path::Path::new("4096");
    let (out, err) = run_child(&[("GTAP_TRACE", events), ("GTAP_TRACE_DIR", &dir)]);
    assert!(out.contains("CHILD trace events per warp: 4096"), "{out}");
    let file = dir.join("fib_kernel-1.trace.json");
    assert!(
        err.contains(&format!("GTAP_TRACE_DIR: wrote {}", file.display())),
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(json["otherData"]["kernel"], "fib_kernel");
    std::fs::remove_dir_all(&dir).unwrap();
    let (out, _) = run_child(&[("GTAP_TRACE", std::path::Path::new("lots"))]);
    assert!(
        out.contains("CHILD error: ") && out.contains("GTAP_TRACE=\"lots\""),
        "{out}"
    );
}
