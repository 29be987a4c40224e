//! Catching programs whose results depend on scheduling.
//!
//! A correct gtap program gives the same result whatever lane, warp or block runs each task
//! and whichever queue a task waits in. [`check_schedules`] runs a kernel under many schedules
//! of the deterministic CPU executor (each seed moves tasks between lanes, warps and blocks and
//! picks queues and victims at random) and with several queue counts, and reports the first two
//! schedules that disagree. [`check_schedules_with`] does the same for a closure that uploads
//! buffers to each schedule's runtime and launches there.

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
/// For kernels that take buffers, use [`check_schedules_with`].
///
/// ```
/// use gtap_examples::fib::{fib_kernel, fib_seq};
/// use gtap_host::{Config, check_schedules};
///
/// let result = check_schedules(fib_kernel, (12,), &Config::new(), 0..4, &[1, 3]);
/// assert_eq!(result.unwrap(), fib_seq(12));
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
    check_schedules_with(config, seeds, queue_counts, |rt| {
        rt.launch(kernel, args).map(|launch| launch.result)
    })
}

/// Runs `run` once per schedule of `seeds` × `queue_counts` on the deterministic CPU executor
/// (with `config` otherwise) and returns the value all runs agree on.
///
/// `run` receives the runtime of the schedule: it uploads its inputs there (a buffer belongs to
/// one runtime), launches, and returns what should not depend on scheduling, for instance the
/// kernel's result together with a downloaded output buffer. One runtime per queue count is
/// created and reseeded between schedules, so its pools are allocated once, not once per
/// schedule.
///
/// ```
/// use gtap_examples::tree::{tree_kernel, tree_visit_seq};
/// use gtap_host::{Config, check_schedules_with};
///
/// let (height, iters) = (6, 4);
/// let nodes = (1 << (height + 1)) - 1;
/// let (root, out) = check_schedules_with(&Config::new(), 0..4, &[1, 2], |rt| {
///     let mut out = rt.alloc_filled(nodes, 0u64)?;
///     let root = rt.launch(tree_kernel, (height, iters, out.slice_mut()))?.result;
///     Ok((root, rt.download(&out)?))
/// })
/// .unwrap();
/// let mut want = vec![0; nodes];
/// assert_eq!(root, tree_visit_seq(height, iters, &mut want));
/// assert_eq!(out, want);
/// ```
pub fn check_schedules_with<T, F>(
    config: &Config,
    seeds: impl IntoIterator<Item = u64>,
    queue_counts: &[u32],
    mut run: F,
) -> Result<T, ScheduleError>
where
    T: PartialEq + Debug,
    F: FnMut(&mut Runtime) -> Result<T, Error>,
{
    let seeds: Vec<u64> = seeds.into_iter().collect();
    let mut agreed: Option<(Schedule, T)> = None;
    for &num_queues in queue_counts {
        let Some(&first_seed) = seeds.first() else {
            break;
        };
        let config = config.clone().num_queues(num_queues);
        let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: first_seed }, &config).map_err(
            |error| ScheduleError::Launch {
                schedule: Schedule {
                    seed: first_seed,
                    num_queues,
                },
                error,
            },
        )?;
        for &seed in &seeds {
            let schedule = Schedule { seed, num_queues };
            rt.reseed(seed);
            let result = run(&mut rt).map_err(|error| ScheduleError::Launch { schedule, error })?;
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
