//! Draws a gtap event trace as PNG charts, as GTaP's profile build does for its runtime: a
//! timeline of the warps, the warps' utilization over time and per warp, and a histogram of how
//! long the steps' task runs took.
//!
//! The input is the Chrome trace JSON that `gtap_host::Trace::write_chrome_json` writes (a
//! launch with `Config::trace_events_per_warp` above zero, or `GTAP_TRACE=N`); the same file
//! opens in Perfetto (`ui.perfetto.dev`) for zooming into single steps. The command is
//! `gtap-profile TRACE.json --out-dir DIR`; [`Profile`] and [`charts::draw_all`] do the same
//! from code (the benchmark harness's `profile` command uses them).

pub mod charts;
mod profile;

pub use profile::{Profile, Span, Track, log_histogram};

/// Reads the trace at `json`, draws its charts into `out_dir` with the TrueType `font`, the
/// timeline with at most `max_warps` rows; returns the files written.
pub fn draw_file(
    json: &std::path::Path,
    out_dir: &std::path::Path,
    font: &std::path::Path,
    max_warps: usize,
) -> Result<Vec<std::path::PathBuf>, String> {
    let text = std::fs::read_to_string(json)
        .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
    let profile = Profile::from_json(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    charts::register_font(font)?;
    charts::draw_all(&profile, out_dir, max_warps)
}
