//! Catching programs whose results depend on scheduling.
//!
//! A correct gtap program gives the same result whatever lane, warp or block runs each task
//! and whichever queue a task waits in. [`check_schedules`] runs a kernel under many schedules
//! of the deterministic CPU executor (each seed moves tasks between lanes, warps and blocks and
//! picks queues and victims at random) and with several queue counts, and reports the first two
//! schedules that disagree.

use std::fmt::Debug;

use gtap_device::Kernel;

use crate::config::Config;
use crate::cpu::CpuMode;
use crate::error::Error;
use crate::runtime::Runtime;

/// One schedule of the deterministic executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The executor's seed.
    pub seed: u64,
    /// Divergence-aware queues per warp.
    pub num_queues: u32,
}

/// Why [`check_schedules`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// Two schedules gave different results: the program depends on scheduling (thread
    /// identity carried across a wait, queue choice, a race between tasks, ...).
    #[error(
        "the result depends on scheduling: {first:?} gave {first_result}, {second:?} gave {second_result}; look for values tied to a thread carried across a wait, results that depend on the queue, or tasks racing on shared data"
    )]
    Differs {
        /// The first schedule.
        first: Schedule,
        /// Its result (`Debug`).
        first_result: String,
        /// A schedule that disagrees with it.
        second: Schedule,
        /// Its result (`Debug`).
        second_result: String,
    },
    /// No seeds or no queue counts were given.
    #[error("no schedules to run: give at least one seed and one queue count")]
    NoSchedules,
    /// A launch failed.
    #[error("the launch under {schedule:?} failed: {error}")]
    Launch {
        /// The schedule.
        schedule: Schedule,
        /// The error.
        error: Error,
    },
}

/// Runs `kernel(args)` on the deterministic CPU executor under `seeds` × `queue_counts`
/// schedules (with `config` otherwise) and returns the result they all agree on.
///
/// ```
/// # use gtap_host::{Config, check_schedules};
/// # fn check<K: gtap_host::Kernel<Args = (u32,), Output = u64> + Copy>(fib_kernel: K) {
/// let result = check_schedules(fib_kernel, (20,), &Config::new(), 0..8, &[1, 2, 3]);
/// # let _ = result; }
/// ```
pub fn check_schedules<K>(
    kernel: K,
    args: K::Args,
    config: &Config,
    seeds: impl IntoIterator<Item = u64>,
    queue_counts: &[u32],
) -> Result<K::Output, ScheduleError>
where
    K: Kernel + Copy,
    K::Output: PartialEq + Debug,
{
    let mut agreed: Option<(Schedule, K::Output)> = None;
    for seed in seeds {
        for &num_queues in queue_counts {
            let schedule = Schedule { seed, num_queues };
            let config = config.clone().num_queues(num_queues);
            let result = Runtime::cpu(CpuMode::Deterministic { seed }, &config)
                .and_then(|mut rt| rt.launch(kernel, args))
                .map_err(|error| ScheduleError::Launch { schedule, error })?
                .result;
            match &agreed {
                None => agreed = Some((schedule, result)),
                Some((first, first_value)) if *first_value != result => {
                    return Err(ScheduleError::Differs {
                        first: *first,
                        first_result: format!("{first_value:?}"),
                        second: schedule,
                        second_result: format!("{result:?}"),
                    });
                }
                Some(_) => {}
            }
        }
    }
    agreed.map(|(_, v)| v).ok_or(ScheduleError::NoSchedules)
}
