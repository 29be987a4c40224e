//! The error report: the first device failure of a launch, written by the device into host
//! memory mapped into it (so the host can read it even when the kernel did not end cleanly),
//! and the codes that say what failed.

/// What went wrong on the device.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    // Code 1 was a queue overflow, impossible since the overflow lists (`crate::queue`).
    /// A spawn found no free task slot and the thread's stack could not hold the child inline
    /// (`value` = the stack bytes it needed, `limit` = slots per warp).
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
    /// The host's watchdog stopped the launch, and this task saw it first
    /// (`gtap::thread::stop_requested`): it was waiting for something that had not come.
    Watchdog = 8,
    /// Block mode: not every thread of the block reached the same `taskwait!` (some returned,
    /// or threads reached different waits). `line` is the first wait reached; `value` = the
    /// threads that suspended at a wait, `limit` = the block's threads; `message` says which
    /// case.
    PartialWait = 9,
    /// A task of a `#[gtap::kernel(no_taskwait)]` kernel reached a `taskwait!` (`line` says
    /// where): in such a launch nothing keeps a parent's record for its children to join.
    WaitInNoTaskwaitKernel = 10,
}

impl ErrorCode {
    /// Every code, in the order of their values.
    pub const ALL: [ErrorCode; 9] = [
        Self::PoolExhausted,
        Self::InvalidQueue,
        Self::RecordTooLarge,
        Self::Panic,
        Self::ResultTooLarge,
        Self::Stalled,
        Self::Watchdog,
        Self::PartialWait,
        Self::WaitInNoTaskwaitKernel,
    ];

    /// Decodes a raw code written by the device; `None` for 0 (no error) and unknown codes.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|&code| code as u32 == raw)
    }
}

/// The first device failure of a launch, as the host reads it. `code` is zero when none.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ErrorReport {
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

impl ErrorReport {
    /// No error.
    pub const EMPTY: ErrorReport = ErrorReport {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_decodes_to_itself() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_raw(code as u32), Some(code));
        }
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(
            ErrorCode::from_raw(1),
            None,
            "the queue overflow's code, now unused"
        );
        assert_eq!(ErrorCode::from_raw(ErrorCode::ALL.len() as u32 + 2), None);
    }
}
