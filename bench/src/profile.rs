//! `gtap-bench profile`: GTaP's profile for gtap. Runs fib(30) and the binary tree
//! (`tree22_thread`) with the event trace on, writes each trace as Chrome JSON and draws its
//! charts (`gtap-profile`), and measures what the trace costs: the same kernel on a runtime
//! without the trace and on one with it, launches alternating, median kernel time of each.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use gtap_host::{BackendKind, Config, CpuMode, Runtime, Trace};
use gtap_workloads::DEVICE_CODE;
use gtap_workloads::fib::Fib;
use gtap_workloads::measure::{Sample, Workload};
use gtap_workloads::tree::{Tree, TreeKind};

use crate::run::Target;
use crate::stats::summarize;

/// What to run and where to write it.
pub struct Settings {
    /// Small sizes (for the CPU executor and CI).
    pub quick: bool,
    /// Where gtap runs ([`Target::None`] is refused).
    pub target: Target,
    /// Events each warp may record.
    pub events_per_warp: u32,
    /// Untimed launches of each runtime before the timed ones.
    pub warmup: usize,
    /// Timed launches of each runtime.
    pub runs: usize,
    /// Directory for the traces, charts and `profile-cost.md`.
    pub out_dir: PathBuf,
    /// The charts' TrueType font.
    pub font: PathBuf,
}

/// The cost of the trace on one workload.
struct Cost {
    label: String,
    off_ms: f64,
    on_ms: f64,
    spread: String,
    events: u64,
    dropped: u64,
    workers: String,
    device: String,
}

fn runtime(target: Target, config: &Config) -> Result<Runtime, String> {
    match target {
        Target::Gpu => Runtime::gpu(&DEVICE_CODE, config),
        // A traced launch runs on the parallel executor whichever CPU mode is asked for.
        Target::CpuExecutor(_) => Runtime::cpu(CpuMode::Parallel, config),
        Target::None => return Err("the profile needs a target: gpu or cpu-executor".into()),
    }
    .map_err(|e| format!("no runtime: {e}"))
}

/// One verified launch.
fn launch(w: &mut dyn Workload, rt: &mut Runtime, what: &str) -> Result<Sample, String> {
    let s = w
        .gpu(rt)
        .map_err(|e| format!("{}, {what}: {e}", w.label()))?;
    if !s.verified {
        return Err(format!("{}, {what}: wrong result: {}", w.label(), s.note));
    }
    Ok(s)
}

/// Profiles `w`: alternating launches without and with the trace, then the trace of the last.
fn profile(s: &Settings, w: &mut dyn Workload) -> Result<(Cost, Trace), String> {
    let mut plain = runtime(s.target, &w.config())?;
    let mut traced = runtime(
        s.target,
        &w.config().trace_events_per_warp(s.events_per_warp),
    )?;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    let mut last = None;
    for i in 0..s.warmup + s.runs {
        let a = launch(w, &mut plain, "trace off")?;
        let b = launch(w, &mut traced, "trace on")?;
        if i >= s.warmup {
            off.push(a.ms);
            on.push(b.ms);
        }
        last = b.trace;
    }
    let trace = last.ok_or("the traced runtime gave no trace")?;
    let (off_s, on_s) = (
        summarize(&off).ok_or("no timed launch")?,
        summarize(&on).ok_or("no timed launch")?,
    );
    let cost = Cost {
        label: w.label(),
        off_ms: off_s.median_ms,
        on_ms: on_s.median_ms,
        spread: format!(
            "{:.3}-{:.3} / {:.3}-{:.3}",
            off_s.min_ms, off_s.max_ms, on_s.min_ms, on_s.max_ms
        ),
        events: trace.workers.iter().map(|w| w.events.len() as u64).sum(),
        dropped: trace.dropped(),
        workers: format!("{} {}s", trace.workers.len(), trace.worker.name()),
        device: match plain.backend() {
            BackendKind::Gpu { device } => device,
            BackendKind::Cpu(_) => "the CPU executor".into(),
        },
    };
    Ok((cost, trace))
}

fn write_trace(trace: &Trace, path: &Path) -> Result<(), String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    trace
        .write_chrome_json(BufWriter::new(file))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn table(costs: &[Cost], s: &Settings, device: &str) -> String {
    let mut t = format!(
        "# Cost of the event trace on {device}\n\n\
         Kernel time (CUDA events on the GPU, wall time on the CPU executor), median of {} \
         timed launches after {} warm-up ones, launches of the runtime without the trace and \
         the one with it ({} events per warp) alternating; every launch verified.\n\n\
         | workload | trace off ms | trace on ms | on / off | min-max off / on ms | events recorded | dropped | workers |\n\
         |---|---:|---:|---:|---|---:|---:|---:|\n",
        s.runs, s.warmup, s.events_per_warp
    );
    for c in costs {
        t += &format!(
            "| {} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {} |\n",
            c.label,
            c.off_ms,
            c.on_ms,
            c.on_ms / c.off_ms,
            c.spread,
            c.events,
            c.dropped,
            c.workers
        );
    }
    t
}

/// Runs the profile; whether every workload ran and verified.
pub fn run(s: &Settings) -> Result<bool, String> {
    if std::env::var_os("GTAP_TRACE").is_some() {
        return Err("unset GTAP_TRACE: the profile turns the trace on and off itself".into());
    }
    std::fs::create_dir_all(&s.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", s.out_dir.display()))?;
    let (fib_n, tree_h, tree_work) = if s.quick { (20, 10, 16) } else { (30, 22, 256) };
    let workloads: Vec<Box<dyn Fn() -> Box<dyn Workload>>> = vec![
        Box::new(move || Box::new(Fib::new(fib_n))),
        Box::new(move || Box::new(Tree::new(TreeKind::Thread, tree_h, tree_work, tree_work))),
    ];
    let font = gtap_profile::charts::register_font(&s.font);
    if let Err(e) = &font {
        println!("no charts: {e}; draw them later with `gtap-profile TRACE.json`");
    }
    let mut costs = Vec::new();
    let mut ok = true;
    for make in workloads {
        let mut w = make();
        let label = w.label();
        match profile(s, w.as_mut()) {
            Ok((cost, trace)) => {
                println!(
                    "{label}: trace off {:.3} ms, on {:.3} ms (median); {} events over {}, {} dropped",
                    cost.off_ms, cost.on_ms, cost.events, cost.workers, cost.dropped
                );
                let json = s.out_dir.join(format!("{label}.trace.json"));
                write_trace(&trace, &json)?;
                println!("wrote {}", json.display());
                if font.is_ok() {
                    let text = std::fs::read_to_string(&json)
                        .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
                    let p = gtap_profile::Profile::from_json(&text)?;
                    for f in gtap_profile::charts::draw_all(&p, &s.out_dir.join(&label), 64)? {
                        println!("wrote {}", f.display());
                    }
                }
                costs.push(cost);
            }
            Err(e) => {
                println!("FAILED: {e}");
                ok = false;
            }
        }
    }
    let device = costs.first().map_or("no device", |c| c.device.as_str());
    let table = table(&costs, s, device);
    let path = s.out_dir.join("profile-cost.md");
    std::fs::write(&path, &table).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("\n{table}\nwrote {}", path.display());
    Ok(ok)
}
