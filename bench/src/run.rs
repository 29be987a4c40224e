//! One benchmark run: every selected workload on gtap (one runtime per distinct configuration,
//! reused) and on the CPU peers, paired with GTaP's results from a baseline log; writes the
//! JSON records and the table.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gtap_host::{BackendKind, ConfigError, CpuMode, Error, Runtime};
use gtap_workloads::DEVICE_CODE;

use crate::baseline::{self, Baseline};
use crate::catalog::{self, Slot};
use crate::protocol::{self, Outcome, Protocol};
use crate::record::{self, Record, runner};
use crate::stats::Summary;
use crate::table;

/// Where gtap's side runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// GPU 0.
    Gpu,
    /// A CPU executor (quick checks without a GPU, and its speed beside the CPU peers).
    CpuExecutor(CpuMode),
    /// Nowhere: CPU peers and GTaP's log only.
    None,
}

/// What to run and where to write it.
pub struct Settings {
    /// Which workloads and sweep points.
    pub catalog: catalog::Options,
    /// Labels to run (exact, or a prefix ending in `*`); empty: all.
    pub only: Vec<String>,
    /// Repetitions.
    pub protocol: Protocol,
    /// Where gtap runs.
    pub target: Target,
    /// Whether to time the CPU peers.
    pub cpu_peers: bool,
    /// Run gtap on GTaP's grid and block size for each workload instead of its own default.
    pub gtap_geometry: bool,
    /// Register cap for gtap's kernels, if any.
    pub max_registers: Option<u32>,
    /// Threads per block for the thread-mode rows, if not the runtime's default.
    pub thread_block_size: Option<u32>,
    /// Blocks for gtap's rows, if not every resident block.
    pub grid: Option<u32>,
    /// GTaP's log (the output of the baseline's `run.sh`), if any.
    pub baseline_log: Option<PathBuf>,
    /// Directory for the JSON file and `table.md`.
    pub out_dir: PathBuf,
    /// The gtap commit measured.
    pub commit: String,
    /// The GPU driver version, if known (else taken from the baseline log).
    pub driver: Option<String>,
    /// The date in the file name (`YYYY-MM-DD`).
    pub date: String,
}

fn selected(only: &[String], label: &str) -> bool {
    only.is_empty()
        || only.iter().any(|o| match o.strip_suffix('*') {
            Some(prefix) => label.starts_with(prefix),
            None => o == label,
        })
}

/// The runtimes made so far, by configuration; a few are kept so that alternating
/// configurations (1 and 3 queues in a sweep) reuse theirs, and the oldest is dropped beyond
/// that to bound device memory.
struct Runtimes {
    target: Target,
    kept: Vec<(gtap_host::Config, Runtime)>,
}

const KEPT_RUNTIMES: usize = 3;

impl Runtimes {
    fn make(&self, config: &gtap_host::Config) -> Result<Runtime, Error> {
        match self.target {
            Target::Gpu => Runtime::gpu(&DEVICE_CODE, config),
            Target::CpuExecutor(mode) => Runtime::cpu(mode, config),
            Target::None => unreachable!("no runtime is made without a target"),
        }
    }

    fn get(&mut self, config: &gtap_host::Config) -> Result<&mut Runtime, Error> {
        if let Some(i) = self.kept.iter().position(|(c, _)| c == config) {
            return Ok(&mut self.kept[i].1);
        }
        if self.kept.len() >= KEPT_RUNTIMES {
            self.kept.remove(0);
        }
        let rt = match self.make(config) {
            Ok(rt) => rt,
            // The kept runtimes hold device memory (a block-mode SpMV after two BFS runtimes
            // found too little free): drop them and try once more.
            Err(_) if !self.kept.is_empty() => {
                self.kept.clear();
                self.make(config)?
            }
            Err(e) => return Err(e),
        };
        // Module loads: SASS from the build, or PTX compiled by the driver (the slow case).
        for load in rt.module_loads() {
            println!(
                "(module {}: {:?}, loaded in {:.1} ms)",
                load.kernels.join(", "),
                load.source,
                load.load_ms
            );
        }
        self.kept.push((config.clone(), rt));
        Ok(&mut self.kept.last_mut().expect("just pushed").1)
    }
}

/// Everything a run produced.
pub struct Report {
    /// The Markdown table.
    pub table: String,
    /// Failures of gtap or the CPU peers (a failed GTaP run is in the table, not here).
    pub failures: Vec<String>,
    /// The JSON file written.
    pub json: PathBuf,
}

/// Runs everything `s` selects.
pub fn run(s: &Settings) -> Result<Report, String> {
    let baseline = match &s.baseline_log {
        Some(path) => baseline::parse(
            &std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the baseline log {}: {e}", path.display()))?,
        ),
        None => Baseline::default(),
    };
    let mut runtimes = Runtimes {
        target: s.target,
        kept: Vec::new(),
    };
    let mut device = match s.target {
        Target::Gpu => None,
        Target::CpuExecutor(CpuMode::Parallel) => Some("cpu-parallel".to_string()),
        Target::CpuExecutor(_) => Some("cpu-executor".to_string()),
        Target::None => None,
    };
    let driver = s.driver.clone().or(baseline.driver.clone());
    let mut measured: Vec<(String, &'static str, Outcome)> = Vec::new();
    let mut order = Vec::new();
    // Remarks by label: why gtap has no figure, or why GTaP has none.
    let mut missing = Vec::new();
    let mut failures = Vec::new();

    for slot in catalog::catalog(&s.catalog) {
        let (label, cpu_peers, make) = match slot {
            Slot::Missing { label, why } => {
                if selected(&s.only, &label) {
                    missing.push((label.clone(), why.to_string()));
                    order.push(label);
                }
                continue;
            }
            Slot::Run {
                label,
                cpu_peers,
                gtap_only,
                make,
            } => {
                if let Some(why) = gtap_only.filter(|_| selected(&s.only, &label)) {
                    missing.push((label.clone(), why.to_string()));
                }
                (label, cpu_peers, make)
            }
        };
        if !selected(&s.only, &label) {
            continue;
        }
        order.push(label.clone());
        let start = Instant::now();
        let mut w = make();
        println!(
            "== {label}: input and reference ready in {:.1} s",
            start.elapsed().as_secs_f64()
        );
        if s.target != Target::None {
            let t = Instant::now();
            let mut config = w.config();
            let mut geometry = String::new();
            if s.gtap_geometry
                && let Some((grid, block)) = catalog::gtap_geometry(&label)
            {
                config = config.grid_size(grid).block_size(block);
                geometry = format!("GTaP's geometry ({grid} x {block}); ");
            }
            if let Some(r) = s.max_registers {
                config = config.max_registers(r);
            }
            if let Some(g) = s.grid {
                config = config.grid_size(g);
                geometry.push_str(&format!("at most {g} blocks; "));
            }
            if let Some(b) = s.thread_block_size
                && !config.block_mode
            {
                config = config.block_size(b);
                geometry.push_str(&format!("blocks of {b} threads; "));
            }
            match runtimes.get(&config) {
                Ok(rt) => {
                    if device.is_none()
                        && let BackendKind::Gpu { device: name } = rt.backend()
                    {
                        device = Some(name);
                    }
                    let mut o = protocol::gpu(w.as_mut(), rt, &s.protocol);
                    o.note.insert_str(0, &geometry);
                    report_line(&label, runner::GTAP, &o, t.elapsed());
                    measured.push((label.clone(), runner::GTAP, o));
                }
                Err(Error::Config(e @ ConfigError::GridSize { .. })) => {
                    println!("   gtap: skipped, {e}");
                    missing.push((label.clone(), format!("skipped: {e}")));
                }
                Err(e) => {
                    let o = Outcome {
                        summary: None,
                        verified: false,
                        note: format!("no runtime: {e}"),
                    };
                    report_line(&label, runner::GTAP, &o, t.elapsed());
                    measured.push((label.clone(), runner::GTAP, o));
                }
            }
        }
        if cpu_peers && s.cpu_peers {
            let t = Instant::now();
            let o = protocol::cpu(&s.protocol, || w.rayon());
            report_line(&label, runner::RAYON, &o, t.elapsed());
            measured.push((label.clone(), runner::RAYON, o));
            let t = Instant::now();
            let o = protocol::cpu(&s.protocol, || w.sequential());
            report_line(&label, runner::SEQUENTIAL, &o, t.elapsed());
            measured.push((label.clone(), runner::SEQUENTIAL, o));
        }
    }

    let device = device
        .or(baseline.device.clone())
        .unwrap_or_else(|| "cpu".into());
    let record = |workload: String, who: &str, stats: Option<Summary>, verified, note| Record {
        workload,
        runner: who.to_string(),
        median_ms: stats.map(|x| x.median_ms),
        min_ms: stats.map(|x| x.min_ms),
        max_ms: stats.map(|x| x.max_ms),
        runs: stats.map_or(0, |x| x.runs),
        verified,
        device: device.clone(),
        commit: s.commit.clone(),
        driver: driver.clone(),
        note,
    };
    let mut records = Vec::new();
    for (label, who, o) in measured {
        if !o.verified {
            failures.push(format!("{label} / {who}: {}", o.note));
        }
        records.push(record(label, who, o.summary, o.verified, o.note));
    }
    for (label, b) in &baseline.results {
        if !selected(&s.only, label) {
            continue;
        }
        if !order.contains(label) {
            order.push(label.clone());
            missing.push((label.clone(), "not ported to gtap".into()));
        }
        let stats = b.median_ms.map(|median_ms| Summary {
            median_ms,
            min_ms: b.min_ms.unwrap_or(median_ms),
            max_ms: b.max_ms.unwrap_or(median_ms),
            runs: b.runs,
        });
        let note = if b.verified {
            String::new()
        } else {
            format!("status={}", b.status)
        };
        records.push(record(
            label.clone(),
            runner::GTAP_BASELINE,
            stats,
            b.verified,
            note,
        ));
    }

    let table = table::render(&records, &order, &missing);
    std::fs::create_dir_all(&s.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", s.out_dir.display()))?;
    let json = s
        .out_dir
        .join(record::file_name(&s.date, &device, &s.commit));
    record::write(&json, &records)?;
    let table_path = s.out_dir.join("table.md");
    std::fs::write(&table_path, &table)
        .map_err(|e| format!("cannot write {}: {e}", table_path.display()))?;
    Ok(Report {
        table,
        failures,
        json,
    })
}

/// One progress line per runner and workload.
fn report_line(label: &str, who: &str, o: &Outcome, took: Duration) {
    let result = match (&o.summary, o.verified) {
        (Some(s), true) => format!(
            "median {:.3} ms (min {:.3}, max {:.3}, {} runs)",
            s.median_ms, s.min_ms, s.max_ms, s.runs
        ),
        _ => format!("FAILED: {}", o.note),
    };
    println!(
        "   {who:<10} {result}  [{:.1} s] {label}",
        took.as_secs_f64()
    );
}
