//! Host-side checks of a launch's event trace, shared by the CPU executor's and the GPU's
//! trace tests.

use std::format;
use std::vec::Vec;

use gtap_host::{BlockPollEnd, EventKind, Launch, Trace, WorkerKind};

/// Checks a traced launch that returned `want` and recorded everything: its trace has one
/// entry per worker (every warp; in block mode every block, each recorded by its first warp),
/// its runs poll every task the statistics count (but for the children polled at once inside
/// them on the parallel CPU executor), one run per step, one steal event per steal, every
/// event inside its worker's time in the scheduler and that inside the launch's span, a
/// worker's runs in order without overlap; in block mode every run is one task's poll, saying
/// how it ended, and every task ends (returns) in exactly one run; and its Chrome JSON
/// parses, with one track per worker, named after it, and every run inside the span. Returns
/// the trace.
pub fn check_trace<T: PartialEq + core::fmt::Debug>(
    launch: Launch<T>,
    want: T,
    kernel: &str,
) -> Trace {
    assert_eq!(launch.result, want);
    let trace = launch.trace.expect("a traced runtime gives a trace");
    assert_eq!(trace.kernel, kernel);
    let block_mode = trace.worker == WorkerKind::Block;
    let workers = if block_mode {
        launch.stats.blocks
    } else {
        launch.stats.warps
    };
    assert_eq!(trace.workers.len() as u32, workers);
    assert_eq!(trace.dropped(), 0, "the buffers hold the whole launch");
    let (mut polled, mut runs, mut steals, mut returned) = (0, 0, 0, 0);
    for w in &trace.workers {
        let who = format!("{} {}", trace.worker.name(), w.worker);
        let end = w.end_ns.expect("every worker left the scheduler");
        assert!(w.begin_ns <= end && end <= trace.span_ns, "{who}");
        let mut last_run_end = 0;
        for e in &w.events {
            assert!(
                w.begin_ns <= e.start_ns && e.end_ns() <= end,
                "{who}: {e:?} outside its span"
            );
            match e.kind {
                EventKind::Run { tasks, ended, .. } => {
                    assert!((1..=32).contains(&tasks), "{e:?}");
                    assert!(e.start_ns >= last_run_end, "a worker's runs do not overlap");
                    last_run_end = e.end_ns();
                    polled += u64::from(tasks);
                    runs += 1;
                    if block_mode {
                        assert_eq!(tasks, 1, "{who}: a block polls one task per step");
                        let ended = ended.expect("a block's run says how its poll ended");
                        returned +=
                            matches!(ended, BlockPollEnd::Finished | BlockPollEnd::ChildrenLeft)
                                as u64;
                    } else {
                        assert_eq!(ended, None, "{who}: {e:?}");
                    }
                }
                EventKind::Steal { victim, tasks } => {
                    assert!(victim != w.worker && victim < workers, "{who}: {e:?}");
                    assert!((1..=32).contains(&tasks), "{who}: {e:?}");
                    steals += 1;
                }
                EventKind::Idle { steps } => assert!(steps >= 1, "{e:?}"),
            }
        }
    }
    if block_mode {
        assert_eq!(
            returned, launch.stats.tasks_spawned,
            "every task returns in exactly one of the blocks' runs"
        );
    }
    // Children the parallel CPU executor polled at once, inside their parent's poll, are in
    // their parent's run.
    assert_eq!(
        polled + launch.stats.tasks_run_at_once,
        launch.stats.tasks_polled,
        "every poll is in a run"
    );
    assert_eq!(runs, launch.stats.steps, "one run per step");
    assert_eq!(steals, launch.stats.steals, "every steal is recorded");

    let mut json = Vec::new();
    trace.write_chrome_json(&mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).expect("the JSON parses");
    let events = v["traceEvents"].as_array().unwrap();
    let named = |name: &'static str| events.iter().filter(move |e| e["name"] == name);
    let names: Vec<&str> = named("thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), trace.workers.len());
    for (name, w) in names.iter().zip(&trace.workers) {
        let want = match trace.worker {
            WorkerKind::Warp => format!("warp {} (block {})", w.worker, w.block),
            WorkerKind::Block => format!("block {}", w.worker),
        };
        assert_eq!(*name, want);
    }
    assert_eq!(v["otherData"]["worker"], trace.worker.name());
    assert_eq!(named("run").count() as u64, runs);
    let span_us = v["otherData"]["span_us"].as_f64().unwrap();
    for run in named("run") {
        let (ts, dur) = (run["ts"].as_f64().unwrap(), run["dur"].as_f64().unwrap());
        assert!(
            0.0 <= ts && ts + dur <= span_us + 1e-3,
            "{} outside 0..{} µs",
            run,
            span_us
        );
    }
    trace
}
