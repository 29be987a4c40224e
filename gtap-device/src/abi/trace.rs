//! The opt-in event trace: what each worker did and when, for profiles.
//!
//! A *worker* is what runs a batch of tasks: a warp in thread mode, a thread block in block
//! mode. With [`Layout::trace_events_per_warp`](super::Layout::trace_events_per_warp) above
//! zero, every worker's recording lane (a warp's leader; a block's thread 0, the leader of its
//! first warp) writes [`TraceEvent`]s into its own bounded buffer in the runtime's region
//! ([`Layout::trace`](super::Layout::trace), `trace_events_per_warp` events per warp; a block
//! records into its first warp's buffer and summary, and its other warps' stay empty):
//! a [`TraceKind::Run`] per thread-mode scheduling step (the polls of the step's batch) or a
//! [`TraceKind::BlockRun`] per block-mode step (the block's poll of its one task), a
//! [`TraceKind::Steal`] per successful steal, and a [`TraceKind::Idle`] per span of steps that
//! found nothing to run. It counts every event it meant to write; those past the buffer's end
//! are not written, only counted, so the host reports them as dropped. At the end of the
//! launch each worker writes its [`WarpTraceMeta`] (when it entered and left the scheduler,
//! and the count). Times are nanoseconds of one clock shared by every warp: `%globaltimer` on
//! the GPU, a monotonic process clock on the CPU executor.
//!
//! With the trace off (the default) the buffers have no bytes and a step tests one launch
//! parameter; nothing in a task's poll changes.

/// What a [`TraceEvent`] records.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceKind {
    /// A scheduling step's polls: `a` = tasks polled (1 to 32), `b` = the batch's queue.
    Run = 1,
    /// A successful steal, from the leader's claim to the lanes holding the ids: `a` = the
    /// victim warp, `b` = tasks stolen.
    Steal = 2,
    /// Steps in a row that found nothing to run, from the first one's start to the moment the
    /// warp had a batch again or left the scheduler: `a` = those steps, `b` = 0.
    Idle = 3,
    /// A block-mode step's poll of the block's task by all its threads: `a` = how the poll
    /// ended (a [`BlockPollEnd`], as `u32`), `b` = the queue the task came from.
    BlockRun = 4,
}

impl TraceKind {
    /// Decodes a recorded kind; `None` for a value no version of the runtime writes.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::Run,
            2 => Self::Steal,
            3 => Self::Idle,
            4 => Self::BlockRun,
            _ => return None,
        })
    }
}

/// How a block-mode poll of a task ended: the block worker's verdict after the poll
/// ([`crate::block`]), recorded in a [`TraceKind::BlockRun`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockPollEnd {
    /// Every thread returned and no child is outstanding: the task is done.
    Finished = 1,
    /// Every thread returned, with children still running: the task completes when they
    /// finish (the implicit wait).
    ChildrenLeft = 2,
    /// Every thread suspended at the same `taskwait!`, with children outstanding: the task
    /// resumes when they have finished.
    Suspended = 3,
    /// Every thread reached the same `taskwait!` and no child was spawned: the wait is a no-op
    /// and the block polls the task again at once.
    PollAgain = 4,
    /// The threads disagreed: a partial wait (raised as a device error here), or a thread
    /// that panicked or raised an error in the poll, in a launch now aborting. The task was
    /// left.
    Dropped = 5,
}

impl BlockPollEnd {
    /// Decodes a recorded end; `None` for a value no version of the runtime writes.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::Finished,
            2 => Self::ChildrenLeft,
            3 => Self::Suspended,
            4 => Self::PollAgain,
            5 => Self::Dropped,
            _ => return None,
        })
    }
}

/// One recorded event: a span of one warp's time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceEvent {
    /// When it began, in nanoseconds of the trace clock.
    pub start_ns: u64,
    /// How long it lasted, in nanoseconds (saturated at `u32::MAX`, about 4.3 s).
    pub duration_ns: u32,
    /// A [`TraceKind`], as `u32`.
    pub kind: u32,
    /// First detail (see [`TraceKind`]).
    pub a: u32,
    /// Second detail (see [`TraceKind`]).
    pub b: u32,
}

impl TraceEvent {
    /// An event of `kind` from `start_ns` to `end_ns`.
    #[inline(always)]
    pub fn span(kind: TraceKind, start_ns: u64, end_ns: u64, a: u32, b: u32) -> Self {
        let duration = end_ns.saturating_sub(start_ns);
        Self {
            start_ns,
            duration_ns: if duration > u32::MAX as u64 {
                u32::MAX
            } else {
                duration as u32
            },
            kind: kind as u32,
            a,
            b,
        }
    }
}

/// One worker's trace summary, written when it leaves the scheduler (in block mode in the slot
/// of the block's first warp).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarpTraceMeta {
    /// When the warp entered the scheduler (trace clock, ns).
    pub begin_ns: u64,
    /// When it left the scheduler; zero if it never did (a task that never returned).
    pub end_ns: u64,
    /// Events it meant to record; those beyond the buffer were dropped.
    pub events: u32,
    /// Padding.
    pub _pad: u32,
}

#[cfg(test)]
mod tests {
    use core::mem::{align_of, size_of};

    use super::*;

    /// Both sides read the same bytes: fixed-width fields with no implicit padding.
    #[test]
    fn the_layouts_are_fixed() {
        assert_eq!((size_of::<TraceEvent>(), align_of::<TraceEvent>()), (24, 8));
        assert_eq!(
            (size_of::<WarpTraceMeta>(), align_of::<WarpTraceMeta>()),
            (24, 8)
        );
    }

    #[test]
    fn kinds_round_trip_and_spans_saturate() {
        for kind in [
            TraceKind::Run,
            TraceKind::Steal,
            TraceKind::Idle,
            TraceKind::BlockRun,
        ] {
            assert_eq!(TraceKind::from_raw(kind as u32), Some(kind));
        }
        assert_eq!(TraceKind::from_raw(0), None);
        for end in [
            BlockPollEnd::Finished,
            BlockPollEnd::ChildrenLeft,
            BlockPollEnd::Suspended,
            BlockPollEnd::PollAgain,
            BlockPollEnd::Dropped,
        ] {
            assert_eq!(BlockPollEnd::from_raw(end as u32), Some(end));
        }
        assert_eq!(BlockPollEnd::from_raw(0), None);
        let e = TraceEvent::span(TraceKind::Run, 10, 25, 32, 1);
        assert_eq!((e.start_ns, e.duration_ns, e.a, e.b), (10, 15, 32, 1));
        assert_eq!(
            TraceEvent::span(TraceKind::Idle, 0, u64::MAX, 1, 0).duration_ns,
            u32::MAX
        );
        assert_eq!(TraceEvent::span(TraceKind::Idle, 9, 3, 1, 0).duration_ns, 0);
    }
}
