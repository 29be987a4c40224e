//! Device-side failures: the first one is reported to the host, and every worker stops.
//!
//! A failure (exhausted task pool, bad queue index, oversized task record, panic in user
//! code) claims the single [`ErrorReport`](crate::abi::ErrorReport) with a compare-and-swap, fills it in,
//! and raises the launch's abort flag, which a warp reads whenever it has nothing to run and
//! otherwise once every `STOP_CHECK_STEPS` scheduling steps (see [`crate::scheduler`]). The
//! report lives in host memory mapped into the device, so the host can read it even when the
//! kernel did not end cleanly.

use core::sync::atomic::Ordering;

use crate::abi::ErrorCode;
use crate::arch;
use crate::task::{Site, TaskInfo};

/// A failure about to be reported.
pub(crate) struct Failure<'a> {
    pub code: ErrorCode,
    pub task: Option<&'a str>,
    pub file: Option<&'a str>,
    pub line: u32,
    pub message: Option<&'a str>,
    pub queue: u32,
    pub value: u64,
    pub limit: u64,
}

impl<'a> Failure<'a> {
    /// A failure at a `task!`/`taskwait!` site.
    pub(crate) fn at(code: ErrorCode, site: &'a Site, value: u64, limit: u64) -> Self {
        Failure {
            code,
            task: Some(site.function),
            file: Some(site.file),
            line: site.line,
            message: None,
            queue: u32::MAX,
            value,
            limit,
        }
    }

    /// A failure inside the running task, with no source site.
    pub(crate) fn in_task(
        code: ErrorCode,
        info: Option<&'a TaskInfo>,
        value: u64,
        limit: u64,
    ) -> Self {
        Failure {
            code,
            task: info.map(|i| i.name),
            file: info.map(|i| i.file),
            line: info.map_or(0, |i| i.line),
            message: None,
            queue: u32::MAX,
            value,
            limit,
        }
    }
}

fn copy_text(dst: &mut [u8], src: &str) {
    let n = src.len().min(dst.len() - 1);
    dst[..n].copy_from_slice(&src.as_bytes()[..n]);
    dst[n..].fill(0);
}

/// Where a failure happened.
pub(crate) struct Place {
    pub block: u32,
    pub thread: u32,
    pub warp: u32,
    pub lane: u32,
    pub task_id: u32,
}

/// Reports `f` if it is the launch's first failure, then asks every worker to stop.
/// Must be called by a lane that is polling a task or running the scheduler.
pub(crate) fn raise(f: Failure<'_>) {
    let lane = arch::current_lane();
    // SAFETY: we are the lane that owns this context.
    let task_id = unsafe { lane.ctx() }.task;
    let place = Place {
        block: arch::block_index(),
        thread: arch::thread_index(),
        warp: arch::warp_index(),
        lane: arch::lane_index(),
        task_id,
    };
    raise_at(lane.region(), place, f);
    // SAFETY: the calling lane owns its context.
    unsafe { lane.ctx() }.flags |= crate::lane::FAILED;
}

/// Reports `f` at `place` if it is the launch's first failure, then asks every worker to stop.
pub(crate) fn raise_at(region: &crate::region::Region, place: Place, f: Failure<'_>) {
    let control = region.control();
    if control
        .error_claim
        .compare_exchange(0, 1, Ordering::AcqRel)
        .is_ok()
    {
        // SAFETY: the claim above makes this the report's only writer; the pointer comes from
        // the launch parameters and stays valid for the launch.
        let report = unsafe { &mut *region.error };
        report.block = place.block;
        report.thread = place.thread;
        report.warp = place.warp;
        report.lane = place.lane;
        let task_id = place.task_id;
        report.line = f.line;
        report.queue = f.queue;
        report.task_id = task_id;
        report.value = f.value;
        report.limit = f.limit;
        copy_text(&mut report.task, f.task.unwrap_or(""));
        copy_text(&mut report.file, f.file.unwrap_or(""));
        copy_text(&mut report.message, f.message.unwrap_or(""));
        arch::fence_system();
        report.code = f.code as u32;
        arch::fence_system();
    }
    control.abort();
}

/// Reports a panic in user code. `site` is the panic's location when known.
#[cfg_attr(loom, allow(dead_code))] // under loom a panic fails the model instead
pub(crate) fn raise_panic(message: &str, site: Option<(&str, u32)>) {
    let lane = arch::current_lane();
    // SAFETY: we are the lane that owns this context.
    let info = unsafe { lane.ctx().info.as_ref() };
    let mut f = Failure::in_task(ErrorCode::Panic, info, 0, 0);
    f.message = Some(message);
    if let Some((file, line)) = site {
        f.file = Some(file);
        f.line = line;
    }
    raise(f);
}

/// On the GPU a panic in user code is reported and the panicking lane retires; the rest of the
/// grid sees the abort flag within `STOP_CHECK_STEPS` scheduling steps and stops, so the
/// kernel ends normally and the runtime stays usable.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn on_panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let message = info
        .message()
        .as_str()
        .unwrap_or("panic (formatted message not kept on the GPU)");
    raise_panic(message, info.location().map(|l| (l.file(), l.line())));
    arch::retire_lane()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::abi::ErrorReport;
    use crate::region::Region;
    use crate::testing::{Launch, geometry};

    fn report(region: &Region) -> &ErrorReport {
        // SAFETY: the launch's report outlives it; no failure is being raised meanwhile.
        unsafe { &*region.error }
    }

    fn place(warp: u32) -> Place {
        Place {
            block: 1,
            thread: 37,
            warp,
            lane: 5,
            task_id: 0x0102,
        }
    }

    const SITE: Site = Site {
        function: "walk",
        file: "src/tree.rs",
        line: 77,
    };

    #[test]
    fn a_failure_is_reported_field_by_field_and_stops_the_launch() {
        let launch = Launch::leak(geometry(2, 64, 2));
        let region = launch.region();
        let mut failure = Failure::at(ErrorCode::InvalidQueue, &SITE, 9, 2);
        failure.queue = 3;
        failure.message = Some("queue(9) of 2");
        raise_at(region, place(3), failure);
        let r = report(region);
        assert_eq!(ErrorCode::from_raw(r.code), Some(ErrorCode::InvalidQueue));
        assert_eq!((r.block, r.thread, r.warp, r.lane), (1, 37, 3, 5));
        assert_eq!((r.task_id, r.queue, r.line), (0x0102, 3, 77));
        assert_eq!((r.value, r.limit), (9, 2));
        assert_eq!(ErrorReport::text(&r.task), "walk");
        assert_eq!(ErrorReport::text(&r.file), "src/tree.rs");
        assert_eq!(ErrorReport::text(&r.message), "queue(9) of 2");
        assert!(region.control().aborted());
    }

    #[test]
    fn the_first_failure_wins() {
        let launch = Launch::leak(geometry(2, 64, 2));
        let region = launch.region();
        let info = TaskInfo {
            name: "first",
            file: "a.rs",
            line: 1,
        };
        raise_at(
            region,
            place(0),
            Failure::in_task(ErrorCode::PoolExhausted, Some(&info), 65, 64),
        );
        let mut later = Failure::at(ErrorCode::Panic, &SITE, 1, 1);
        later.message = Some("later");
        raise_at(region, place(1), later);
        let r = report(region);
        assert_eq!(ErrorCode::from_raw(r.code), Some(ErrorCode::PoolExhausted));
        assert_eq!((r.warp, r.line, r.value, r.limit), (0, 1, 65, 64));
        assert_eq!(ErrorReport::text(&r.task), "first");
        assert_eq!(ErrorReport::text(&r.message), "");
        assert!(region.control().aborted());
    }

    #[test]
    fn a_failure_outside_any_task_names_none() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let region = launch.region();
        raise_at(
            region,
            place(0),
            Failure::in_task(ErrorCode::Stalled, None, 10, 5),
        );
        let r = report(region);
        assert_eq!(ErrorCode::from_raw(r.code), Some(ErrorCode::Stalled));
        assert_eq!((r.line, r.queue), (0, u32::MAX));
        assert_eq!(ErrorReport::text(&r.task), "");
        assert_eq!(ErrorReport::text(&r.file), "");
    }

    #[test]
    fn long_text_is_cut_and_stays_nul_terminated() {
        let mut field = [0xffu8; 8];
        copy_text(&mut field, "abcdefghij");
        assert_eq!(&field, b"abcdefg\0");
        // Shorter text clears what a longer one left behind.
        copy_text(&mut field, "xy");
        assert_eq!(&field, b"xy\0\0\0\0\0\0");
        // Cut inside a multi-byte character, the text reads back as its valid prefix.
        copy_text(&mut field, "abcdefé");
        assert_eq!(ErrorReport::text(&field), "abcdef");
    }
}
