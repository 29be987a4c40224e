//! The thread running the calling task: where it is, and its scratch memory.
//!
//! A task may resume on another lane, warp or block after a `taskwait!`, so nothing tied to
//! the thread can carry over a wait. Scratch memory is only reachable inside the closure given
//! to [`scratch`]: the closure cannot contain a wait (`#[gtap::function]` rejects waits in
//! closures) and nothing borrowed from the memory can leave it, so holding it across a wait
//! does not compile. The positions below are plain numbers: never carry them across a wait
//! either; the CPU executor's deterministic mode moves tasks around on purpose to catch
//! programs whose results depend on them.

use crate::abi::ErrorCode;
use crate::arch;
use crate::error::{Failure, raise};
use crate::lane::{SCRATCH, Scratch};

/// Runs `f` with the calling thread's scratch memory ([`crate::SCRATCH_WORDS`] words; shared memory
/// on the GPU). Its contents are unspecified when `f` starts: whatever the thread's previous
/// task left there.
///
/// ```
/// # fn inside_a_task() -> u32 {
/// let digits = gtap_device::thread::scratch(|s| {
///     s[0] = 4;
///     s[1] = 2;
///     s[0] * 10 + s[1]
/// });
/// # digits }
/// ```
///
/// A reference to the memory cannot escape the closure, so it cannot cross a wait:
///
/// ```compile_fail
/// let kept: &mut [u32; gtap_device::SCRATCH_WORDS] = gtap_device::thread::scratch(|s| s);
/// ```
///
/// # Panics
/// If called again inside `f` (the memory is already lent), by a block-mode task (block mode
/// has no per-thread scratch memory: its tasks borrow the block's with `Block::shared`), or in
/// a launch on a runtime configured without scratch memory (`Config::thread_scratch(false)` in
/// `gtap-host`).
#[inline]
#[track_caller]
pub fn scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let lane = arch::current_lane();
    let Some(memory) = arch::lane_scratch(&lane) else {
        panic!("gtap::thread::scratch in a block-mode task, which has none: use block.shared(..)");
    };
    assert!(
        lane.region().scratch_reserved(),
        "gtap::thread::scratch on a runtime without scratch memory: leave Config::thread_scratch on"
    );
    // SAFETY: the calling lane owns its context; the borrow ends before `f` runs.
    let flags = unsafe { &mut lane.ctx().flags };
    assert!(
        *flags & SCRATCH == 0,
        "gtap::thread::scratch called while the scratch memory is lent"
    );
    *flags |= SCRATCH;
    // SAFETY: the scratch memory belongs to this thread and is lent to `f` alone (the flag above
    // stops a nested call); it is separate from the lane context that `task!` uses inside `f`.
    let r = f(unsafe { &mut *memory });
    // SAFETY: as above.
    unsafe { lane.ctx() }.flags &= !SCRATCH;
    r
}

/// Lane (0..32) of the thread running the calling task.
#[inline(always)]
pub fn lane() -> u32 {
    arch::lane_index()
}

/// Global index of the warp running the calling task.
#[inline(always)]
pub fn warp() -> u32 {
    arch::warp_index()
}

/// Index of the thread block running the calling task.
#[inline(always)]
pub fn block() -> u32 {
    arch::block_index()
}

/// Index, within its block, of the thread running the calling task.
#[inline(always)]
pub fn thread() -> u32 {
    arch::thread_index()
}

/// Number of divergence-aware queues the runtime was configured with: `queue(...)` clauses
/// must name a queue below it.
#[inline(always)]
pub fn num_queues() -> u32 {
    arch::current_lane().region().num_queues
}

/// Whether the launch running the calling task is being stopped: a device error elsewhere, or
/// the host's watchdog (`gtap_host::Config::watchdog`) found that no warp made progress.
///
/// The runtime cannot interrupt a task: a task that loops waiting for something (a flag
/// another task sets, a value in a buffer) should check this in its loop and return when it
/// is `true`, so that a launch that will never finish can be stopped and reported. The first
/// task that sees a watchdog stop here is named in the report. It costs one device-memory read.
///
/// ```
/// # fn inside_a_task(flag: &core::sync::atomic::AtomicU32) -> u32 {
/// let mut spins = 0;
/// while flag.load(core::sync::atomic::Ordering::Acquire) == 0 {
///     if gtap_device::thread::stop_requested() {
///         return 0; // the launch is over: give up waiting
///     }
///     spins += 1;
/// }
/// # spins }
/// ```
#[inline]
pub fn stop_requested() -> bool {
    let lane = arch::current_lane();
    let control = lane.region().control();
    if !control.stopping() {
        return false;
    }
    if control.stopped_by_watchdog() {
        // SAFETY: the calling lane owns its context.
        let info = unsafe { lane.ctx().info.as_ref() };
        raise(Failure::in_task(ErrorCode::Watchdog, info, 0, 0));
    }
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use super::*;
    use crate::abi::Geometry;
    use crate::arch::{WARP_SIZE, Warp};
    use crate::testing::{Launch, geometry};

    /// 2 blocks of 2 warps, 3 queues.
    fn launch() -> &'static Launch {
        Launch::leak(Geometry {
            blocks: 2,
            warps_per_block: 2,
            ..geometry(1, 96, 3)
        })
    }

    #[test]
    fn a_task_learns_where_its_thread_is() {
        let launch = launch();
        let third = Warp::new(launch.region(), 3, None);
        let seen = third.each(Warp::splat(()), |_, ()| {
            (lane(), warp(), block(), thread(), num_queues())
        });
        for (l, &got) in seen.iter().enumerate() {
            let l = l as u32;
            // Warp 3 is the second warp of block 1.
            assert_eq!(got, (l, 3, 1, WARP_SIZE + l, 3), "lane {l}");
        }
    }

    #[test]
    fn each_thread_keeps_its_own_scratch_memory() {
        let launch = launch();
        let warp = Warp::new(launch.region(), 0, None);
        warp.each(Warp::splat(()), |l, ()| scratch(|s| s.fill(l)));
        // What a thread's previous task left is still there, and no other thread's.
        let kept = warp.each(Warp::splat(()), |_, ()| scratch(|s| *s));
        for (l, words) in kept.iter().enumerate() {
            assert!(words.iter().all(|&w| w == l as u32), "lane {l}: {words:?}");
        }
    }

    #[test]
    fn scratch_is_lent_once_at_a_time_and_given_back() {
        let launch = launch();
        let warp = Warp::new(launch.region(), 0, None);
        let nested = warp.each(Warp::splat(()), |l, ()| {
            if l != 0 {
                return None;
            }
            let nested = catch_unwind(AssertUnwindSafe(|| scratch(|_| scratch(|_| ()))));
            Some(nested.is_err())
        });
        assert_eq!(nested[0], Some(true), "a nested call panics");
        // Loans one after the other on another lane: each gives the memory back.
        let again = warp.each(Warp::splat(()), |l, ()| {
            if l == 1 {
                scratch(|s| s[0] = 7);
                scratch(|s| s[0])
            } else {
                0
            }
        });
        assert_eq!(again[1], 7);
    }

    /// `stop_requested()` as lane 0 of a warp of `launch`, polling a task of `info`.
    fn stop_requested_in(launch: &'static Launch, info: &'static crate::task::TaskInfo) -> bool {
        let warp = Warp::new(launch.region(), 0, None);
        warp.each(Warp::splat(()), |l, ()| {
            let lane = arch::current_lane();
            // SAFETY: the lane owns its context while `each` runs it.
            unsafe { lane.ctx() }.info = info;
            l == 0 && stop_requested()
        })[0]
    }

    static SPIN: crate::task::TaskInfo = crate::task::TaskInfo {
        name: "spin",
        file: "src/spin.rs",
        line: 12,
    };

    #[test]
    fn a_running_launch_requests_no_stop() {
        let launch = launch();
        assert!(!stop_requested_in(launch, &SPIN));
        assert_eq!(launch.error(), None);
    }

    #[test]
    fn a_device_error_requests_a_stop_without_a_report_of_its_own() {
        let launch = launch();
        launch.region().control().abort();
        assert!(stop_requested_in(launch, &SPIN));
        assert_eq!(launch.error(), None);
    }

    #[test]
    fn the_first_task_to_see_the_watchdog_is_reported() {
        let launch = launch();
        launch.region().control().stop_by_watchdog();
        assert!(stop_requested_in(launch, &SPIN));
        assert_eq!(launch.error(), Some(ErrorCode::Watchdog));
        // SAFETY: the launch's report; nothing is being raised meanwhile.
        let report = unsafe { &*launch.region().error };
        assert_eq!(crate::abi::ErrorReport::text(&report.task), "spin");
        assert_eq!(report.line, 12);
    }
}
