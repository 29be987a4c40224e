//! Reading a GTaP baseline log: the standard output of the baseline's `run.sh`, or of its
//! binaries run directly. Each benchmark ends in one `BENCH` line of `key=value` fields;
//! `run.sh`'s summary repeats them with the run label (`BENCH label=fib40 name=fib40
//! median_ms=... correct=10/10 status=ok ...`).

use std::collections::BTreeMap;

/// One GTaP benchmark result.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineResult {
    /// Median kernel time (ms); `None` when the benchmark failed before timing.
    pub median_ms: Option<f64>,
    /// Fastest timed launch (ms), when printed.
    pub min_ms: Option<f64>,
    /// Slowest timed launch (ms), when printed.
    pub max_ms: Option<f64>,
    /// Timed launches.
    pub runs: usize,
    /// Whether every launch was correct (`correct=k/k`) and the status was `ok`.
    pub verified: bool,
    /// The line's `status` field.
    pub status: String,
}

/// What a baseline log says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Baseline {
    /// Results by label.
    pub results: BTreeMap<String, BaselineResult>,
    /// The GPU's name from the first `DEVICE` line (`NVIDIA_H200`), if any.
    pub device: Option<String>,
    /// The driver version from the first `DEVICE` line, if any.
    pub driver: Option<String>,
}

fn fields(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .collect()
}

fn number(v: Option<&&str>) -> Option<f64> {
    v.and_then(|s| s.parse::<f64>().ok())
        .filter(|x| x.is_finite())
}

/// Parses a baseline log. Summary lines (with `label=`) take precedence over the binaries'
/// own lines for the same label.
pub fn parse(log: &str) -> Baseline {
    let mut out = Baseline::default();
    let mut from_summary = std::collections::BTreeSet::new();
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix("DEVICE ") {
            let f = fields(rest);
            out.device = out.device.or(f.get("name").map(|s| s.to_string()));
            out.driver = out.driver.or(f.get("driver").map(|s| s.to_string()));
            continue;
        }
        let Some(rest) = line.strip_prefix("BENCH ") else {
            continue;
        };
        let f = fields(rest);
        let (label, summary) = match (f.get("label"), f.get("name")) {
            (Some(l), _) => (l.to_string(), true),
            (None, Some(n)) => (n.to_string(), false),
            (None, None) => continue,
        };
        if !summary && from_summary.contains(&label) {
            continue;
        }
        let correct = f.get("correct").and_then(|c| c.split_once('/'));
        let all_correct = correct.is_some_and(|(k, n)| k == n && k != "0");
        let status = f.get("status").unwrap_or(&"").to_string();
        let result = BaselineResult {
            median_ms: number(f.get("median_ms")),
            min_ms: number(f.get("min_ms")),
            max_ms: number(f.get("max_ms")),
            runs: f.get("runs").and_then(|r| r.parse().ok()).unwrap_or(0),
            verified: all_correct && status == "ok",
            status,
        };
        if summary {
            from_summary.insert(label.clone());
        }
        out.results.insert(label, result);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
DEVICE name=NVIDIA_H200 cc=9.0 sms=132 mem_gib=139.8 driver=580.95.05 runtime=13000
RUN name=fib40 iter=0 phase=warmup ms=120.1 result=102334155 correct=yes
BENCH name=fib40 mode=thread queues=1 median_ms=120.500 min_ms=119.9 max_ms=121.0 mean_ms=120.4 runs=10 warmup=2 correct=10/10 status=ok
BENCH name=tree12_thread median_ms=1.5 runs=10 correct=10/10 status=ok
BENCH name=nqueens16 median_ms=nan runs=0 correct=0/0 status=failed rc=1
=== SUMMARY
BENCH label=fib40 name=fib40 mode=thread queues=1 median_ms=120.500 min_ms=119.9 max_ms=121.0 runs=10 correct=10/10 status=ok paper_gh200_ms=76.8
BENCH label=nqueens16 name=nqueens16 median_ms=nan runs=0 correct=0/0 status=failed rc=1 paper_gh200_ms=115.7
BENCH label=tree22_thread name=tree22_thread median_ms=15.0 runs=10 correct=9/10 status=ok
";

    #[test]
    fn reads_results_device_and_failures() {
        let b = parse(LOG);
        assert_eq!(b.device.as_deref(), Some("NVIDIA_H200"));
        assert_eq!(b.driver.as_deref(), Some("580.95.05"));
        let fib = &b.results["fib40"];
        assert_eq!(fib.median_ms, Some(120.5));
        assert_eq!(
            (fib.min_ms, fib.max_ms, fib.runs),
            (Some(119.9), Some(121.0), 10)
        );
        assert!(fib.verified);
        let nq = &b.results["nqueens16"];
        assert_eq!(nq.median_ms, None);
        assert!(!nq.verified);
        assert!(
            !b.results["tree22_thread"].verified,
            "9/10 correct is a failure"
        );
        assert!(
            b.results["tree12_thread"].verified,
            "a binary's own line counts"
        );
    }
}
