//! A launch that stopped making progress, as the host reports it: who noticed, and what every
//! warp was doing, grouped by state so that thousands of warps fit in a few lines.

use std::fmt;
use std::time::Duration;

use gtap_device::abi::{WarpState, WarpStatus};

use crate::device_error::{DeviceError, DeviceErrorKind};

/// How a stalled launch was noticed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallDetector {
    /// The watchdog ([`Config::watchdog`](crate::Config::watchdog)): no warp's progress moved
    /// for this long.
    Watchdog {
        /// How long nothing moved before the watchdog stopped the launch.
        quiet: Duration,
    },
    /// The deterministic CPU executor: for this many scheduling rounds no warp found anything
    /// to run.
    Deterministic {
        /// Idle rounds counted.
        idle_rounds: u64,
    },
}

/// One warp's last published status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpActivity {
    /// Global warp index.
    pub warp: u32,
    /// What it was doing; `None` for a state word this version does not know.
    pub state: Option<WarpState>,
    /// Scheduling steps that ran tasks (wrapping at 2^32).
    pub progress: u32,
}

impl WarpActivity {
    /// Decodes the status words of a launch, warp by warp.
    pub(crate) fn decode(words: &[u64]) -> Vec<WarpActivity> {
        words
            .iter()
            .enumerate()
            .map(|(w, &word)| {
                let (state, progress) = WarpStatus::unpack(word);
                WarpActivity {
                    warp: w as u32,
                    state: WarpState::from_raw(state),
                    progress,
                }
            })
            .collect()
    }
}

/// A launch stopped because it made no progress: what noticed it, every warp's last status,
/// and what the device recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StallReport {
    /// The kernel launched.
    pub kernel: &'static str,
    /// What noticed the stall.
    pub detector: StallDetector,
    /// Every warp's status when the stall was noticed.
    pub warps: Vec<WarpActivity>,
    /// Whether every worker left the launch after it was stopped. `false`: a task never
    /// returned to the scheduler (a loop that does not check `gtap::thread::stop_requested`).
    pub stopped: bool,
    /// What the device recorded: the task that saw the stop first
    /// ([`DeviceErrorKind::Watchdog`]), or a device error that came before it.
    pub device_error: Option<DeviceError>,
}

/// Most warp ranges listed per state before the rest are counted.
const RANGES_SHOWN: usize = 8;

/// Warp indices (ascending) as ranges: `0-3, 8, 10-1023`, at most [`RANGES_SHOWN`] of them.
fn ranges(warps: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &w in warps {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == w => *end = w,
            _ => runs.push((w, w)),
        }
    }
    let mut text: Vec<String> = runs
        .iter()
        .take(RANGES_SHOWN)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if runs.len() > RANGES_SHOWN {
        text.push(format!("and {} more ranges", runs.len() - RANGES_SHOWN));
    }
    text.join(", ")
}

fn describe(state: Option<WarpState>) -> &'static str {
    match state {
        Some(WarpState::Working) => {
            "inside a scheduling step, running tasks (a task that does not return, or a very long one)"
        }
        Some(WarpState::Searching) => {
            "looking for work in their queues and by stealing, finding none"
        }
        Some(WarpState::Starting) => "had not reached the scheduler",
        Some(WarpState::Stopped) => "had left the scheduler",
        None => "in a state this version does not know",
    }
}

impl StallReport {
    /// The warps grouped by state, suspicious states first: (state, warps, lowest and highest
    /// progress).
    pub fn groups(&self) -> Vec<(Option<WarpState>, Vec<u32>, u32, u32)> {
        let order = [
            Some(WarpState::Working),
            Some(WarpState::Starting),
            Some(WarpState::Searching),
            Some(WarpState::Stopped),
            None,
        ];
        order
            .iter()
            .filter_map(|&state| {
                let members: Vec<&WarpActivity> =
                    self.warps.iter().filter(|a| a.state == state).collect();
                let lo = members.iter().map(|a| a.progress).min()?;
                let hi = members.iter().map(|a| a.progress).max()?;
                Some((state, members.iter().map(|a| a.warp).collect(), lo, hi))
            })
            .collect()
    }
}

impl fmt::Display for StallReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detector {
            StallDetector::Watchdog { quiet } => write!(
                f,
                "launch of `{}` made no progress for {quiet:.1?} (no warp finished a scheduling step), so the watchdog stopped it",
                self.kernel
            )?,
            StallDetector::Deterministic { idle_rounds } => write!(
                f,
                "launch of `{}` stalled: for {idle_rounds} scheduling rounds no warp of the deterministic executor found a task to run, but the root task had not finished",
                self.kernel
            )?,
        }
        if !self.stopped {
            write!(
                f,
                "; some warps did not stop: a task that never returns to the scheduler cannot be interrupted"
            )?;
        }
        write!(
            f,
            ". The {} warps, by what they were doing:",
            self.warps.len()
        )?;
        for (state, warps, lo, hi) in self.groups() {
            let progress = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo} to {hi}")
            };
            write!(
                f,
                "\n  {} {}: warps {} (steps run: {progress})",
                warps.len(),
                describe(state),
                ranges(&warps)
            )?;
        }
        match &self.device_error {
            Some(e) if e.kind == DeviceErrorKind::Watchdog => write!(f, "\n  {e}")?,
            Some(e) => write!(f, "\n  a device error came first: {e}")?,
            None => {}
        }
        write!(
            f,
            "\nA task that waits in a loop for something must check gtap::thread::stop_requested() and return; if one task legitimately runs longer than this, raise Config::watchdog (or GTAP_WATCHDOG)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(warp: u32, state: WarpState, progress: u32) -> WarpActivity {
        WarpActivity {
            warp,
            state: Some(state),
            progress,
        }
    }

    #[test]
    fn ranges_compress_runs_and_stop_after_a_few() {
        assert_eq!(ranges(&[0, 1, 2, 3, 8, 10, 11]), "0-3, 8, 10-11");
        let scattered: Vec<u32> = (0..40).map(|w| w * 2).collect();
        assert_eq!(
            ranges(&scattered),
            "0, 2, 4, 6, 8, 10, 12, 14, and 32 more ranges"
        );
    }

    #[test]
    fn thousands_of_warps_fit_in_a_few_lines_stuck_ones_first() {
        let mut warps: Vec<WarpActivity> = (0..4096)
            .map(|w| activity(w, WarpState::Searching, 100 + w % 7))
            .collect();
        warps[17] = activity(17, WarpState::Working, 55);
        let report = StallReport {
            kernel: "spin_kernel",
            detector: StallDetector::Watchdog {
                quiet: Duration::from_millis(300),
            },
            warps,
            stopped: true,
            device_error: None,
        };
        let text = report.to_string();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(
            text.contains("`spin_kernel` made no progress for 300.0ms"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("1 inside a scheduling step") && lines[1].contains("warps 17 "),
            "{text}"
        );
        assert!(
            lines[2].contains("4095 looking for work")
                && lines[2].contains("warps 0-16, 18-4095")
                && lines[2].contains("steps run: 100 to 106"),
            "{text}"
        );
        assert!(text.contains("stop_requested"), "{text}");
    }

    #[test]
    fn a_stop_that_did_not_take_says_so() {
        let report = StallReport {
            kernel: "k",
            detector: StallDetector::Deterministic { idle_rounds: 40000 },
            warps: vec![activity(0, WarpState::Working, 3)],
            stopped: false,
            device_error: None,
        };
        let text = report.to_string();
        assert!(text.contains("for 40000 scheduling rounds"), "{text}");
        assert!(text.contains("some warps did not stop"), "{text}");
    }

    #[test]
    fn status_words_decode_per_warp() {
        let words = [
            WarpStatus::word(WarpState::Working, 7),
            WarpStatus::word(WarpState::Stopped, u32::MAX),
            u64::MAX,
        ];
        assert_eq!(
            WarpActivity::decode(&words),
            vec![
                activity(0, WarpState::Working, 7),
                activity(1, WarpState::Stopped, u32::MAX),
                WarpActivity {
                    warp: 2,
                    state: None,
                    progress: u32::MAX
                },
            ]
        );
    }
}
