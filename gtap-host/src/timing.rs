//! `GTAP_TIME=1`: a timing report on stderr, like `PGI_ACC_TIME=1` of OpenACC compilers.
//!
//! With the variable set to `1` when the first launch runs, every launch prints what it did
//! (kernel and launch time, tasks and tasks per second, steals, batch fill, peak live tasks,
//! task-pool use), and at process exit a summary per kernel (launches, total and mean kernel
//! time). Unset, or any other value, it costs one flag check per launch.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::{Mutex, Once, OnceLock};

use crate::stats::Stats;

/// The environment variable that turns the report on.
pub(crate) const VAR: &str = "GTAP_TIME";

/// Whether a value of [`VAR`] turns the report on: exactly `1`.
pub(crate) fn enabled_by(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| v == "1")
}

fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| enabled_by(std::env::var_os(VAR).as_deref()))
}

/// Every launch so far, per kernel name (sorted, so the summary's order is stable).
static TOTALS: Mutex<Totals> = Mutex::new(Totals::new());

/// Reports one finished launch of `kernel` on `backend` ("GPU", "CPU executor") when
/// `GTAP_TIME=1`: prints its report and counts it for the summary printed at exit.
pub(crate) fn record(kernel: &'static str, backend: &str, stats: &Stats) {
    if !enabled() {
        return;
    }
    let launch = {
        // A panic while holding the lock leaves plain counters behind: still usable.
        let mut totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
        totals.add(kernel, stats.kernel_ms)
    };
    to_stderr(&launch_report(kernel, launch, backend, stats));
    print_summary_at_exit();
}

/// The report of one launch: the `launch`-th of `kernel`, counting from 1.
pub(crate) fn launch_report(kernel: &str, launch: u64, backend: &str, s: &Stats) -> String {
    let mut out = format!("{VAR}: {kernel}, launch {launch}, on the {backend}\n");
    let mut row = |name: &str, value: String| {
        let _ = writeln!(out, "    {name:<16} {value}");
    };
    row("kernel time", format!("{:.3} ms", s.kernel_ms));
    row("launch time", format!("{:.3} ms", s.launch_ms));
    let rate = if s.kernel_ms > 0.0 {
        format!("{:.3e}", s.tasks_spawned as f64 / (s.kernel_ms * 1e-3))
    } else {
        "-".into()
    };
    row("tasks", format!("{} ({rate} per second)", s.tasks_spawned));
    if s.tasks_inlined > 0 {
        row(
            "run inline",
            format!(
                "{} children, no task slot free (raise max_tasks_per_warp to spawn them)",
                s.tasks_inlined
            ),
        );
    }
    if s.tasks_run_at_once > 0 {
        row(
            "run at once",
            format!(
                "{} of them polled at once by their parent's thread (CPU executor)",
                s.tasks_run_at_once
            ),
        );
    }
    row(
        "steals",
        format!("{} (of {} attempts)", s.steals, s.steal_attempts),
    );
    let fill = if s.steps > 0 {
        let per_step = s.tasks_polled as f64 / s.steps as f64;
        format!(
            "{:.3} ({per_step:.1} tasks per step of 32 lanes)",
            per_step / 32.0
        )
    } else {
        "- (no scheduling steps)".into()
    };
    row("batch fill", fill);
    row(
        "peak live tasks",
        format!(
            "{} per warp, of {} slots (sampled every few steps)",
            s.peak_live_per_warp, s.slots_per_warp
        ),
    );
    let (used, per_warp) = (
        s.slot_bytes_used_per_warp(),
        s.slot_bytes_reserved_per_warp(),
    );
    let share = match (used, per_warp) {
        (_, 0) => "-".into(),
        // A few slots of a big pool would read "0.0%", as if none were used.
        (1.., _) if used * 1000 < per_warp => "<0.1%".into(),
        _ => format!("{:.1}%", 100.0 * used as f64 / per_warp as f64),
    };
    row(
        "task pool",
        format!(
            "{} of {} per warp used ({share}); {} reserved for pools, queues and control",
            bytes(used),
            bytes(per_warp),
            bytes(s.pool_bytes)
        ),
    );
    out
}

/// `n` bytes in B, KiB, MiB or GiB.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Launch counts and kernel time per kernel.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Totals {
    kernels: BTreeMap<&'static str, KernelTotal>,
}

#[derive(Debug, Default, PartialEq)]
struct KernelTotal {
    launches: u64,
    kernel_ms: f64,
}

impl Totals {
    pub(crate) const fn new() -> Self {
        Self {
            kernels: BTreeMap::new(),
        }
    }

    /// Counts a launch of `kernel`; returns how many launches of it there were, this one
    /// included.
    pub(crate) fn add(&mut self, kernel: &'static str, kernel_ms: f64) -> u64 {
        let t = self.kernels.entry(kernel).or_default();
        t.launches += 1;
        t.kernel_ms += kernel_ms;
        t.launches
    }

    /// The summary: one line per kernel, or an empty string when nothing was launched.
    pub(crate) fn summary(&self) -> String {
        if self.kernels.is_empty() {
            return String::new();
        }
        let mut out = format!("{VAR}: summary at exit\n");
        for (name, t) in &self.kernels {
            let _ = writeln!(
                out,
                "    {name}: {} launch{}, kernel time {:.3} ms in all, {:.3} ms mean",
                t.launches,
                if t.launches == 1 { "" } else { "es" },
                t.kernel_ms,
                t.kernel_ms / t.launches as f64
            );
        }
        out
    }
}

unsafe extern "C" {
    /// The C library's `atexit`: runs `f` when the process exits normally (main returns or
    /// `std::process::exit`).
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn print_summary() {
    let totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    to_stderr(&totals.summary());
}

/// Writes `text` to stderr; a closed stderr loses the report instead of panicking (`eprint!`
/// would panic, and a panic must not unwind out of the `extern "C"` exit handler).
fn to_stderr(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Registers [`print_summary`] with `atexit`, once.
fn print_summary_at_exit() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `print_summary` is a plain `extern "C" fn()` that stays valid for the life of
        // the process (it is a static function), which is all `atexit` requires. If
        // registration fails (the C library's table is full) there is just no summary.
        unsafe { atexit(print_summary) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Stats {
        Stats {
            kernel_ms: 2.0,
            launch_ms: 2.5,
            tasks_polled: 640,
            tasks_spawned: 500,
            steals: 7,
            steal_attempts: 30,
            peak_live_per_warp: 16,
            steps: 40,
            pool_bytes: 3 << 20,
            slot_bytes: 256,
            slots_per_warp: 1024,
            ..Stats::default()
        }
    }

    #[test]
    fn only_exactly_one_turns_it_on() {
        assert!(enabled_by(Some(OsStr::new("1"))));
        for off in ["0", "", "yes", "true", " 1"] {
            assert!(!enabled_by(Some(OsStr::new(off))), "{off:?}");
        }
        assert!(!enabled_by(None));
    }

    #[test]
    fn a_launch_report_has_every_figure() {
        let r = launch_report("fib_kernel", 3, "GPU", &stats());
        let want = "GTAP_TIME: fib_kernel, launch 3, on the GPU\n\
            \x20   kernel time      2.000 ms\n\
            \x20   launch time      2.500 ms\n\
            \x20   tasks            500 (2.500e5 per second)\n\
            \x20   steals           7 (of 30 attempts)\n\
            \x20   batch fill       0.500 (16.0 tasks per step of 32 lanes)\n\
            \x20   peak live tasks  16 per warp, of 1024 slots (sampled every few steps)\n\
            \x20   task pool        4.0 KiB of 256.0 KiB per warp used (1.6%); 3.0 MiB reserved for pools, queues and control\n";
        assert_eq!(r, want);
    }

    #[test]
    fn children_run_inline_are_reported_only_when_there_are_some() {
        let s = Stats {
            tasks_inlined: 12,
            ..stats()
        };
        let r = launch_report("k", 1, "GPU", &s);
        assert!(
            r.contains("    run inline       12 children, no task slot free"),
            "{r}"
        );
        assert!(!launch_report("k", 1, "GPU", &stats()).contains("inline"));
    }

    #[test]
    fn a_sliver_of_the_pool_is_not_zero() {
        let s = Stats {
            peak_live_per_warp: 3,
            ..stats()
        };
        let r = launch_report("k", 1, "GPU", &s);
        assert!(r.contains("768 B of 256.0 KiB per warp used (0.3%)"), "{r}");
        let s = Stats {
            peak_live_per_warp: 1,
            slots_per_warp: 1 << 20,
            ..stats()
        };
        let r = launch_report("k", 1, "GPU", &s);
        assert!(
            r.contains("256 B of 256.0 MiB per warp used (<0.1%)"),
            "{r}"
        );
    }

    #[test]
    fn an_empty_launch_divides_by_nothing() {
        let r = launch_report("k", 1, "CPU executor", &Stats::default());
        assert!(r.contains("tasks            0 (- per second)"), "{r}");
        assert!(
            r.contains("batch fill       - (no scheduling steps)"),
            "{r}"
        );
        assert!(r.contains("0 B of 0 B per warp used (-)"), "{r}");
    }

    #[test]
    fn the_summary_sums_per_kernel() {
        let mut t = Totals::new();
        assert_eq!(t.summary(), "");
        assert_eq!(t.add("b_kernel", 1.0), 1);
        assert_eq!(t.add("a_kernel", 4.0), 1);
        assert_eq!(t.add("b_kernel", 2.0), 2);
        assert_eq!(
            t.summary(),
            "GTAP_TIME: summary at exit\n\
             \x20   a_kernel: 1 launch, kernel time 4.000 ms in all, 4.000 ms mean\n\
             \x20   b_kernel: 2 launches, kernel time 3.000 ms in all, 1.500 ms mean\n"
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
    }
}
