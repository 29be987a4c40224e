//! The CPU executor: the GPU scheduler, unchanged, driven by OS threads or by a seeded
//! single-threaded simulation.
//!
//! * [`Mode::Parallel`]: one OS thread per warp, each running [`Worker::run`] exactly as a GPU
//!   warp does; the fallback when there is no GPU.
//! * [`Mode::Deterministic`]: every warp lives on the calling thread. A seeded generator picks
//!   which warp steps next, shuffles the order of lanes within a step, places each task of a
//!   batch on a random lane, picks a random non-empty queue instead of the fullest, and seeds
//!   victim selection. The same seed gives the same schedule; different seeds resume
//!   continuations on different lanes, warps and blocks. A program whose result changes with
//!   the seed or the queue count depends on scheduling (thread identity across a wait, queue
//!   choice) and is wrong on the GPU too.

use std::boxed::Box;
use std::vec::Vec;

use crate::abi::ErrorCode;
use crate::abi::LaunchParams;
use crate::arch::Warp;
use crate::error::{Failure, Place, record};
use crate::launch::Runtime;
use crate::queue;
use crate::scheduler::{Step, Worker};
use crate::task::{Site, TaskFunction, create_root};

/// How the CPU executor schedules warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// All warps on one thread, in a schedule fixed by `seed`.
    Deterministic {
        /// Seed of the schedule.
        seed: u64,
    },
    /// One OS thread per warp.
    Parallel,
}

/// The executor's settings, reached from [`LaunchParams::host`].
#[derive(Debug)]
pub struct Driver {
    /// Scheduling mode.
    pub mode: Mode,
}

/// Unwinding payload of a kernel body whose launch aborted with a device error (the error
/// record says which). The host launcher catches it.
#[derive(Debug)]
pub struct Aborted;

/// Rounds in which no warp of the deterministic executor could do anything, per warp, before
/// it reports the launch as stalled.
const STALL_ROUNDS: u64 = 10_000;

/// `entry!` on the host.
pub(crate) fn entry<T: TaskFunction>(
    launch: &LaunchParams,
    site: &'static Site,
    args: T::Args,
) -> T::Output
where
    T::Output: Copy,
{
    assert!(
        launch.host != 0,
        "gtap: kernels run on the host only through gtap-host's CPU executor"
    );
    // SAFETY: `host` is set by the launcher to a `Driver` that outlives the launch.
    let driver = unsafe { &*(launch.host as *const Driver) };
    let rt = Runtime::new(launch);
    let mut args = Some(args);
    let mut root = |warp: &Warp| {
        if let Some(args) = args.take() {
            create_root::<T>(warp, site, args);
        }
    };
    match driver.mode {
        Mode::Deterministic { seed } => deterministic::<T>(&rt, seed, &mut root),
        Mode::Parallel => parallel::<T>(&rt, &mut root),
    }
    if rt.control().aborted() {
        std::panic::resume_unwind(Box::new(Aborted));
    }
    // SAFETY: the root finished, so the result area holds its `T::Output`.
    unsafe { (rt.root_result as *const T::Output).read() }
}

fn deterministic<T: TaskFunction>(rt: &Runtime, seed: u64, root: &mut dyn FnMut(&Warp)) {
    let n = rt.warps as usize;
    let mix = |w: usize| (seed ^ (w as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
    let warps: Vec<Warp> = (0..n)
        .map(|w| Warp::new(rt, w as u32, Some(mix(w))))
        .collect();
    let mut workers: Vec<Worker<'_>> = warps.iter().map(Worker::new).collect();
    workers[0].start_root(|w| root(w));
    let mut rng = mix(n);
    let mut idle = 0u64;
    loop {
        let w = (queue::next(&mut rng) % n as u64) as usize;
        match workers[w].step::<T>() {
            Step::Stopped => break,
            Step::Worked => idle = 0,
            Step::Idle => {
                idle += 1;
                if idle > STALL_ROUNDS * n as u64 {
                    let place = Place {
                        block: 0,
                        thread: 0,
                        warp: w as u32,
                        lane: 0,
                        task_id: u32::MAX,
                    };
                    record(
                        rt,
                        place,
                        Failure::in_task(ErrorCode::Stalled, None, idle, STALL_ROUNDS * n as u64),
                    );
                }
            }
        }
    }
    for worker in &workers {
        worker.finish();
    }
}

/// A pointer to the runtime view that scoped worker threads share.
#[derive(Clone, Copy)]
struct Shared(*const Runtime);
// SAFETY: the view is read-only and outlives the scoped threads; all mutation of device
// memory goes through the runtime's atomics and fences.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

fn parallel<T: TaskFunction>(rt: &Runtime, root: &mut dyn FnMut(&Warp)) {
    let shared = Shared(rt);
    std::thread::scope(|s| {
        for w in 1..rt.warps {
            s.spawn(move || {
                let shared = shared;
                let warp = Warp::new(shared.0, w, None);
                Worker::new(&warp).run::<T>();
            });
        }
        let warp = Warp::new(rt, 0, None);
        let mut worker = Worker::new(&warp);
        worker.start_root(|w| root(w));
        worker.run::<T>();
    });
}
