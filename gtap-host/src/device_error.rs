//! Device failures as the host reports them: decoded from the device's error report.

use std::fmt;

use gtap_device::abi::{ErrorCode, ErrorReport, Geometry, Layout};

use crate::timing::bytes;

/// What went wrong on the device. See [`DeviceError`] for where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceErrorKind {
    /// A spawn found no free task slot and the thread's stack could not hold the child inline
    /// (`value`: the stack bytes it needed; `limit`: slots per warp).
    PoolExhausted,
    /// A `queue(...)` clause named a queue outside `0..num_queues`.
    InvalidQueue,
    /// A task's record does not fit a slot.
    RecordTooLarge,
    /// User code panicked.
    Panic,
    /// The root's result type is too large.
    ResultTooLarge,
    /// The deterministic executor found nothing runnable before the root finished.
    Stalled,
    /// The watchdog stopped the launch and this task saw it first (it was waiting in a loop
    /// that checks `gtap::thread::stop_requested`).
    Watchdog,
    /// Block mode: not every thread of the block reached the same `taskwait!` (`line`: the
    /// first wait reached; `value`: the threads that suspended at a wait; `limit`: the block's
    /// threads; `message`: which case).
    PartialWait,
    /// A task of a `#[gtap::kernel(no_taskwait)]` kernel reached a `taskwait!` (`line`: where).
    WaitInNoTaskwaitKernel,
    /// A code this version does not know.
    Unknown(u32),
}

/// The first failure of a launch: what, where, and the value that broke which limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError {
    /// What went wrong.
    pub kind: DeviceErrorKind,
    /// Task function involved (the spawning function for spawn failures).
    pub task: String,
    /// Source file of the `task!`/`taskwait!`, panic or task definition.
    pub file: String,
    /// Source line, 0 if unknown.
    pub line: u32,
    /// Thread block of the failing thread.
    pub block: u32,
    /// Thread within its block.
    pub thread: u32,
    /// Global warp index.
    pub warp: u32,
    /// Lane within the warp.
    pub lane: u32,
    /// Queue involved, if any.
    pub queue: Option<u32>,
    /// The offending value.
    pub value: u64,
    /// The limit it broke.
    pub limit: u64,
    /// Panic message, if any.
    pub message: String,
    /// Pool exhaustion only: what more task slots would cost, attached by the runtime (the
    /// error report does not know the pool's shape).
    pub pool_growth: Option<PoolGrowth>,
}

/// What a larger task pool would cost, for the advice of a pool exhaustion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolGrowth {
    /// Bytes the runtime reserves now for pools, queues and control state.
    pub pool_bytes: u64,
    /// Bytes that doubling `max_tasks_per_warp` adds (slots, queue rings and free-id cells of
    /// every warp).
    pub doubling_bytes: u64,
}

impl PoolGrowth {
    /// The cost of doubling the slots of `layout`, or `None` when twice the slots cannot be
    /// numbered.
    pub(crate) fn of(layout: &Layout) -> Option<Self> {
        let geometry = Geometry {
            slots_per_warp: layout.geometry.slots_per_warp.checked_mul(2)?,
            ..layout.geometry
        };
        let doubled = Layout::new(geometry).ok()?;
        Some(Self {
            pool_bytes: layout.bytes,
            doubling_bytes: doubled.bytes.saturating_sub(layout.bytes),
        })
    }
}

impl DeviceError {
    /// Decodes a report; `None` when it holds no error.
    pub fn from_report(r: &ErrorReport) -> Option<Self> {
        if r.code == 0 {
            return None;
        }
        let kind = match ErrorCode::from_raw(r.code) {
            Some(ErrorCode::PoolExhausted) => DeviceErrorKind::PoolExhausted,
            Some(ErrorCode::InvalidQueue) => DeviceErrorKind::InvalidQueue,
            Some(ErrorCode::RecordTooLarge) => DeviceErrorKind::RecordTooLarge,
            Some(ErrorCode::Panic) => DeviceErrorKind::Panic,
            Some(ErrorCode::ResultTooLarge) => DeviceErrorKind::ResultTooLarge,
            Some(ErrorCode::Stalled) => DeviceErrorKind::Stalled,
            Some(ErrorCode::Watchdog) => DeviceErrorKind::Watchdog,
            Some(ErrorCode::PartialWait) => DeviceErrorKind::PartialWait,
            Some(ErrorCode::WaitInNoTaskwaitKernel) => DeviceErrorKind::WaitInNoTaskwaitKernel,
            None => DeviceErrorKind::Unknown(r.code),
        };
        Some(Self {
            kind,
            task: ErrorReport::text(&r.task).to_string(),
            file: ErrorReport::text(&r.file).to_string(),
            line: r.line,
            block: r.block,
            thread: r.thread,
            warp: r.warp,
            lane: r.lane,
            queue: (r.queue != u32::MAX).then_some(r.queue),
            value: r.value,
            limit: r.limit,
            message: ErrorReport::text(&r.message).to_string(),
            pool_growth: None,
        })
    }

    /// Attaches the cost of a larger pool to a pool exhaustion; other errors, and the
    /// work-first executor's stack exhaustion (no pool: a limit of 0), are returned unchanged.
    pub(crate) fn with_pool(mut self, layout: &Layout) -> Self {
        if self.kind == DeviceErrorKind::PoolExhausted && self.limit != 0 {
            self.pool_growth = PoolGrowth::of(layout);
        }
        self
    }

    fn site(&self) -> String {
        let mut s = String::new();
        if !self.task.is_empty() {
            s += &format!(" in `{}`", self.task);
        }
        if !self.file.is_empty() {
            s += &format!(" at {}:{}", self.file, self.line);
        }
        s + &format!(
            " (block {}, thread {}, warp {}, lane {})",
            self.block, self.thread, self.warp, self.lane
        )
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let site = self.site();
        match self.kind {
            DeviceErrorKind::PoolExhausted if !self.message.is_empty() => write!(
                f,
                "task pool exhausted{site}: {}; raise max_tasks_per_warp or max_task_memory_bytes, or spawn less",
                self.message
            ),
            // The work-first CPU executor has no slots (`limit` 0): it ran out of stack for
            // the tasks nested on a thread.
            DeviceErrorKind::PoolExhausted if self.limit == 0 => write!(
                f,
                "stack exhausted: the work-first CPU executor runs a task's children on its thread's stack, and the next child{site} needs {} bytes of it, more than stack_bytes; raise stack_bytes, or spawn less deep (a sequential cutoff)",
                self.value
            ),
            DeviceErrorKind::PoolExhausted => {
                write!(
                    f,
                    "task pool exhausted: warp {} found none of its {} task slots (max_tasks_per_warp) free, nor a fresh slot of the warps it asked{site}, and could not run the child inline either: that needs {} bytes of the thread's stack, more than stack_bytes; ",
                    self.warp, self.limit, self.value
                )?;
                match self.pool_growth {
                    Some(g) => write!(
                        f,
                        "raise max_tasks_per_warp (doubling it to {} needs {} more than the pool's {}: max_task_memory_bytes, if set, at least {}) or stack_bytes, or spawn less (a sequential cutoff)",
                        self.limit * 2,
                        bytes(g.doubling_bytes),
                        bytes(g.pool_bytes),
                        g.pool_bytes + g.doubling_bytes
                    ),
                    None => write!(
                        f,
                        "raise max_tasks_per_warp, max_task_memory_bytes or stack_bytes, or spawn less (a sequential cutoff)"
                    ),
                }
            }
            DeviceErrorKind::InvalidQueue => write!(
                f,
                "queue index {} is outside 0..{} (num_queues){site}; pass a queue index below num_queues or configure more queues",
                self.value as i64, self.limit
            ),
            DeviceErrorKind::RecordTooLarge => write!(
                f,
                "the task record needs {} bytes but a slot holds {}{site}; this is a runtime sizing bug, please report it",
                self.value, self.limit
            ),
            DeviceErrorKind::Panic => write!(f, "panic{site}: {}", self.message),
            DeviceErrorKind::ResultTooLarge => write!(
                f,
                "the root task's result is {} bytes, more than the {} the runtime returns{site}; return a smaller value or write large results into a buffer",
                self.value, self.limit
            ),
            DeviceErrorKind::Stalled => write!(
                f,
                "no task could run for {} scheduling rounds but the root had not finished: a task waits for something that never happens{site}",
                self.value
            ),
            DeviceErrorKind::Watchdog => write!(
                f,
                "a task was still waiting when the watchdog stopped the launch (it saw the stop in gtap::thread::stop_requested){site}; whatever it waits for never came"
            ),
            DeviceErrorKind::PartialWait => write!(
                f,
                "block-mode wait: {} of the block's {} threads suspended at a wait{site}, and {}; every thread of the block must reach the same `taskwait!` (spawn conditionally, wait unconditionally)",
                self.value, self.limit, self.message
            ),
            DeviceErrorKind::WaitInNoTaskwaitKernel => write!(
                f,
                "a `taskwait!` was reached{site} in a launch of a `no_taskwait` kernel, where no task may wait; remove `no_taskwait` from the kernel's attribute, or launch this task function from a kernel without it"
            ),
            DeviceErrorKind::Unknown(code) => write!(f, "unknown device error code {code}{site}"),
        }
    }
}

impl std::error::Error for DeviceError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(code: ErrorCode) -> ErrorReport {
        let mut r = ErrorReport::EMPTY;
        r.code = code as u32;
        r.task[..3].copy_from_slice(b"fib");
        r.file[..9].copy_from_slice(b"src/x.rs\0");
        r.line = 12;
        r.value = 5;
        r.limit = 3;
        r
    }

    #[test]
    fn empty_report_is_no_error() {
        assert_eq!(DeviceError::from_report(&ErrorReport::EMPTY), None);
    }

    #[test]
    fn decodes_and_explains() {
        let e = DeviceError::from_report(&report(ErrorCode::InvalidQueue)).unwrap();
        assert_eq!(e.kind, DeviceErrorKind::InvalidQueue);
        assert_eq!(e.task, "fib");
        assert_eq!(e.file, "src/x.rs");
        let msg = e.to_string();
        assert!(msg.contains("queue index 5 is outside 0..3"), "{msg}");
        assert!(msg.contains("`fib` at src/x.rs:12"), "{msg}");
        let e = DeviceError::from_report(&report(ErrorCode::PoolExhausted)).unwrap();
        let msg = e.to_string();
        assert!(msg.contains("raise max_tasks_per_warp"), "{msg}");
        assert!(msg.contains("could not run the child inline"), "{msg}");
        assert!(msg.contains("stack_bytes"), "{msg}");
    }

    #[test]
    fn the_work_first_executors_stack_exhaustion_says_so() {
        // That executor has no slots: it reports a limit of 0.
        let mut r = report(ErrorCode::PoolExhausted);
        r.limit = 0;
        let msg = DeviceError::from_report(&r).unwrap().to_string();
        assert!(
            msg.starts_with("stack exhausted: the work-first CPU executor"),
            "{msg}"
        );
        assert!(msg.contains("raise stack_bytes"), "{msg}");
        assert!(!msg.contains("max_tasks_per_warp"), "{msg}");
    }

    #[test]
    fn pool_exhaustion_says_what_doubling_costs() {
        let geometry = Geometry {
            blocks: 1,
            warps_per_block: 2,
            slots_per_warp: 64,
            num_queues: 1,
            slot_bytes: 128,
        };
        let layout = Layout::new(geometry).unwrap();
        let doubled = Layout::new(Geometry {
            slots_per_warp: 128,
            ..geometry
        })
        .unwrap();
        let e = DeviceError::from_report(&report(ErrorCode::PoolExhausted))
            .unwrap()
            .with_pool(&layout);
        let growth = e.pool_growth.unwrap();
        assert_eq!(growth.pool_bytes, layout.bytes);
        assert_eq!(growth.pool_bytes + growth.doubling_bytes, doubled.bytes);
        let msg = e.to_string();
        assert!(msg.contains("doubling it to 6 needs"), "{msg}");
        assert!(
            msg.contains(&format!("at least {}", doubled.bytes)),
            "{msg}"
        );
        let other = DeviceError::from_report(&report(ErrorCode::InvalidQueue)).unwrap();
        assert_eq!(other.clone().with_pool(&layout), other);
    }
}
