//! How often each runner runs a workload, and the verdict over all its runs.

use std::time::{Duration, Instant};

use gtap_host::Runtime;
use gtap_workloads::measure::{Sample, Workload};

use crate::stats::{Summary, summarize};

/// Repetition counts.
#[derive(Clone, Debug)]
pub struct Protocol {
    /// Untimed GPU launches before the timed ones (GTaP: 2).
    pub warmup: usize,
    /// Timed runs (GTaP: 10).
    pub runs: usize,
    /// Time a CPU peer may take in all: slow peers (sequential N-Queens(16) takes seconds) do
    /// fewer runs, at least one.
    pub cpu_budget: Duration,
}

/// A CPU run longer than this needs no warm-up: it counts as the first timed run.
const LONG_RUN: Duration = Duration::from_secs(1);

/// What a runner's runs of a workload came to.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The timed runs' statistics (`None` if a run failed before any was timed).
    pub summary: Option<Summary>,
    /// Whether every run, warm-ups included, ran and verified.
    pub verified: bool,
    /// The last timed run's remark, or the first failure.
    pub note: String,
}

fn failed(note: String) -> Outcome {
    Outcome {
        summary: None,
        verified: false,
        note,
    }
}

/// Runs `sample` `warmup` times untimed and `runs` times timed, after the timed runs already
/// in `times`; stops at the first failure.
fn repeat(
    warmup: usize,
    runs: usize,
    mut times: Vec<f64>,
    mut note: String,
    mut sample: impl FnMut() -> Result<Sample, String>,
) -> Outcome {
    for i in 0..warmup + runs {
        match sample() {
            Ok(s) if s.verified => {
                if i >= warmup {
                    times.push(s.ms);
                    note = s.note;
                }
            }
            Ok(s) => return failed(format!("run {i}: wrong result: {}", s.note)),
            Err(e) => return failed(format!("run {i}: {e}")),
        }
    }
    Outcome {
        summary: summarize(&times),
        verified: true,
        note,
    }
}

/// gtap: `warmup` + `runs` launches on `rt`, each verified.
pub fn gpu(w: &mut dyn Workload, rt: &mut Runtime, p: &Protocol) -> Outcome {
    repeat(p.warmup, p.runs, Vec::new(), String::new(), || w.gpu(rt))
}

/// A CPU peer: one warm-up run, then as many of `runs` timed runs as fit the budget (at least
/// one); a first run longer than a second is itself the first timed run.
pub fn cpu(p: &Protocol, mut sample: impl FnMut() -> Result<Sample, String>) -> Outcome {
    let start = Instant::now();
    let first = match sample() {
        Ok(s) if s.verified => s,
        Ok(s) => return failed(format!("run 0: wrong result: {}", s.note)),
        Err(e) => return failed(format!("run 0: {e}")),
    };
    let took = start.elapsed();
    let fit = (p.cpu_budget.as_secs_f64() / took.as_secs_f64().max(1e-9)) as usize;
    let runs = fit.clamp(1, p.runs.max(1));
    if took >= LONG_RUN {
        repeat(0, runs - 1, vec![first.ms], first.note, sample)
    } else {
        repeat(0, runs, Vec::new(), String::new(), sample)
    }
}
