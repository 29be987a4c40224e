//! Host-side checks of a launch's event trace, shared by the CPU executor's and the GPU's
//! trace tests.

use std::vec::Vec;

use gtap_host::{EventKind, Launch, Trace};

/// Checks a traced launch that returned `want` and recorded everything: its trace has one
/// entry per warp, its runs poll every task the statistics count (but for the children polled
/// at once inside them on the parallel CPU executor), one run per step, one steal
/// event per steal, every event inside its warp's time in the scheduler and that inside the
/// launch's span, a warp's runs in order without overlap; and its Chrome JSON parses, with one
/// track per warp and every run inside the span. Returns the trace.
pub fn check_trace(launch: Launch<u64>, want: u64, kernel: &str) -> Trace {
    assert_eq!(launch.result, want);
    let trace = launch.trace.expect("a traced runtime gives a trace");
    assert_eq!(trace.kernel, kernel);
    assert_eq!(trace.warps.len() as u32, launch.stats.warps);
    assert_eq!(trace.dropped(), 0, "the buffers hold the whole launch");
    let (mut polled, mut runs, mut steals) = (0, 0, 0);
    for w in &trace.warps {
        let end = w.end_ns.expect("every warp left the scheduler");
        assert!(w.begin_ns <= end && end <= trace.span_ns, "warp {}", w.warp);
        let mut last_run_end = 0;
        for e in &w.events {
            assert!(
                w.begin_ns <= e.start_ns && e.end_ns() <= end,
                "warp {}: {e:?} outside its span",
                w.warp
            );
            match e.kind {
                EventKind::Run { tasks, .. } => {
                    assert!((1..=32).contains(&tasks), "{e:?}");
                    assert!(e.start_ns >= last_run_end, "a warp's runs do not overlap");
                    last_run_end = e.end_ns();
                    polled += u64::from(tasks);
                    runs += 1;
                }
                EventKind::Steal { victim, tasks } => {
                    assert!(victim != w.warp && (1..=32).contains(&tasks), "{e:?}");
                    steals += 1;
                }
                EventKind::Idle { steps } => assert!(steps >= 1, "{e:?}"),
            }
        }
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
    assert_eq!(named("thread_name").count(), trace.warps.len());
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
