//! Device-side failures: the first one is recorded for the host, and every worker stops.
//!
//! A failure (queue overflow, exhausted task pool, bad queue index, oversized task record,
//! panic in user code) claims the single [`ErrorRecord`] with a compare-and-swap, fills it in,
//! and raises the launch's abort flag, which a warp reads whenever it has nothing to run and
//! otherwise once every `STOP_CHECK_STEPS` scheduling steps (see [`crate::scheduler`]). The
//! record lives in host memory mapped into the device, so the host can read it even when the
//! kernel did not end cleanly.

use core::sync::atomic::Ordering;

use crate::arch;
use crate::task::{Site, TaskInfo};

/// What went wrong on the device.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// A warp's ring queue had no room for another task (`limit` = ring capacity).
    QueueOverflow = 1,
    /// A warp spawned more live tasks than it has slots (`limit` = slots per warp).
    PoolExhausted = 2,
    /// A `queue(...)` clause named a queue outside `0..num_queues` (`value` = the index).
    InvalidQueue = 3,
    /// A task's future does not fit a task slot (`value` = its size, `limit` = payload bytes).
    RecordTooLarge = 4,
    /// User code panicked (`message`, `file` and `line` say where).
    Panic = 5,
    /// The root task's result type is larger than the result area (`value`, `limit` in bytes).
    ResultTooLarge = 6,
    /// Nothing could run but the root had not finished (`value` = idle scheduling rounds).
    /// Only the deterministic CPU executor detects this.
    Stalled = 7,
}

impl ErrorCode {
    /// Decodes a raw code written by the device.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::QueueOverflow,
            2 => Self::PoolExhausted,
            3 => Self::InvalidQueue,
            4 => Self::RecordTooLarge,
            5 => Self::Panic,
            6 => Self::ResultTooLarge,
            7 => Self::Stalled,
            _ => return None,
        })
    }
}

/// The first device failure of a launch, as the host reads it. `code` is zero when none.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ErrorRecord {
    /// An [`ErrorCode`], or 0.
    pub code: u32,
    /// Thread block of the failing thread.
    pub block: u32,
    /// Thread index within the block.
    pub thread: u32,
    /// Global warp index.
    pub warp: u32,
    /// Lane within the warp.
    pub lane: u32,
    /// Source line of the `task!`/`taskwait!` or panic, 0 if unknown.
    pub line: u32,
    /// Queue involved, if any (`u32::MAX` if none).
    pub queue: u32,
    /// Id of the task that was running (`u32::MAX` if none).
    pub task_id: u32,
    /// The offending value (queue index, record size, ...).
    pub value: u64,
    /// The limit it broke.
    pub limit: u64,
    /// Name of the task function involved, NUL-padded.
    pub task: [u8; 64],
    /// Source file, NUL-padded.
    pub file: [u8; 128],
    /// Panic message, NUL-padded.
    pub message: [u8; 128],
}

impl ErrorRecord {
    /// No error.
    pub const EMPTY: ErrorRecord = ErrorRecord {
        code: 0,
        block: 0,
        thread: 0,
        warp: 0,
        lane: 0,
        line: 0,
        queue: u32::MAX,
        task_id: u32::MAX,
        value: 0,
        limit: 0,
        task: [0; 64],
        file: [0; 128],
        message: [0; 128],
    };

    /// Reads a NUL-padded field as text.
    pub fn text(field: &[u8]) -> &str {
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        match core::str::from_utf8(&field[..end]) {
            Ok(s) => s,
            // A name cut inside a multi-byte character: keep the valid prefix.
            Err(e) => core::str::from_utf8(&field[..e.valid_up_to()]).unwrap_or(""),
        }
    }
}

/// A failure about to be recorded.
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

/// Records `f` if it is the launch's first failure, then asks every worker to stop.
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
    record(lane.rt(), place, f);
    // SAFETY: the calling lane owns its context.
    unsafe { lane.ctx() }.flags |= crate::lane::FAILED;
}

/// Records `f` at `place` if it is the launch's first failure, then asks every worker to stop.
pub(crate) fn record(rt: &crate::launch::Runtime, place: Place, f: Failure<'_>) {
    let control = rt.control();
    if control
        .error_claim
        .compare_exchange(0, 1, Ordering::AcqRel)
        .is_ok()
    {
        // SAFETY: the claim above makes this the record's only writer; the pointer comes from
        // the launch parameters and stays valid for the launch.
        let rec = unsafe { &mut *rt.error };
        rec.block = place.block;
        rec.thread = place.thread;
        rec.warp = place.warp;
        rec.lane = place.lane;
        let task_id = place.task_id;
        rec.line = f.line;
        rec.queue = f.queue;
        rec.task_id = task_id;
        rec.value = f.value;
        rec.limit = f.limit;
        copy_text(&mut rec.task, f.task.unwrap_or(""));
        copy_text(&mut rec.file, f.file.unwrap_or(""));
        copy_text(&mut rec.message, f.message.unwrap_or(""));
        arch::fence_system();
        rec.code = f.code as u32;
        arch::fence_system();
    }
    control.abort();
}

/// Records a panic in user code. `site` is the panic's location when known.
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

/// On the GPU a panic in user code is recorded and the panicking lane retires; the rest of the
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
