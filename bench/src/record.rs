//! The JSON file of a run: one record per (workload, runner).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Who ran a workload.
pub mod runner {
    /// gtap on the GPU (or on the CPU executor in quick mode: see the record's `device`).
    pub const GTAP: &str = "gtap";
    /// GTaP's own runtime (the baseline log).
    pub const GTAP_BASELINE: &str = "GTaP";
    /// The rayon peer on all cores.
    pub const RAYON: &str = "rayon";
    /// The sequential Rust reference algorithm.
    pub const SEQUENTIAL: &str = "sequential";
}

/// One workload measured by one runner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The workload's label (GTaP's baseline label).
    pub workload: String,
    /// `gtap`, `GTaP`, `rayon` or `sequential`.
    pub runner: String,
    /// Median over the timed runs (mean of the two middle ones for an even count); `null`
    /// when no run was timed.
    pub median_ms: Option<f64>,
    /// Fastest timed run.
    pub min_ms: Option<f64>,
    /// Slowest timed run.
    pub max_ms: Option<f64>,
    /// Timed runs.
    pub runs: usize,
    /// Whether every run (warm-ups included) matched the reference.
    pub verified: bool,
    /// The device (GPU name; for CPU runners, the GPU of the machine they ran beside).
    pub device: String,
    /// The gtap commit measured.
    pub commit: String,
    /// The GPU driver version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Remarks: scheduler statistics, or why a run failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// Writes `records` as a pretty-printed JSON array.
pub fn write(path: &Path, records: &[Record]) -> Result<(), String> {
    let text = serde_json::to_string_pretty(records).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Reads a file written by [`write()`].
pub fn read(path: &Path) -> Result<Vec<Record>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The file name of a run: `<date>-<device>-<commit>.json`, the device name lowercased with
/// anything but letters and digits turned into `-`.
pub fn file_name(date: &str, device: &str, commit: &str) -> String {
    let device: String = device
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("{date}-{}-{commit}.json", device.trim_matches('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_names_files() {
        let r = Record {
            workload: "fib40".into(),
            runner: runner::GTAP.into(),
            median_ms: Some(1.5),
            min_ms: Some(1.0),
            max_ms: Some(2.0),
            runs: 10,
            verified: true,
            device: "NVIDIA H200".into(),
            commit: "abc1234".into(),
            driver: None,
            note: String::new(),
        };
        let dir = std::env::temp_dir().join(format!("gtap-bench-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        write(&path, std::slice::from_ref(&r)).unwrap();
        assert_eq!(read(&path).unwrap(), vec![r]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            file_name("2026-11-30", "NVIDIA H200", "abc1234"),
            "2026-11-30-nvidia-h200-abc1234.json"
        );
    }
}
