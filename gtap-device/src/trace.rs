//! The recorder of the opt-in event trace ([`crate::abi::TraceEvent`] says what it records).
//!
//! One recorder per *worker*: a warp in thread mode, a thread block in block mode. A block is
//! scheduled by its first warp ([`crate::block`]), whose leader lane (the block's thread 0)
//! records for the whole block; so the recorder always runs on a warp's leader lane, into that
//! warp's own buffer, with plain stores, which the host reads after the launch has ended. The
//! recorder's state ([`TraceCursor`]) lives beside the warp's statistics in its
//! [`WarpShared`](crate::scheduler::WarpShared). The schedulers call these functions only when
//! [`Region::traced`] says the launch records a trace: a step tests that once and calls
//! [`before_polls`] and [`after_polls`] (a block: [`before_block_poll`] and
//! [`after_block_poll`]) around its polls (out of
//! line, so that an untraced step carries only the test and calls it jumps over); the other
//! calls are on the search path (a step that finds nothing, a steal) and at the start and end.
//! Nothing the recorder needs stays in a register across the polls or a search: it keeps its
//! marks in its state in shared memory.

use core::cell::UnsafeCell;

use crate::abi::{TraceEvent, TraceKind, WarpTraceMeta};
use crate::arch::{self, Warp};
use crate::region::Region;

/// A worker's recorder state (only the leader lane of its warp touches it).
#[derive(Clone, Copy)]
pub(crate) struct TraceCursor {
    /// Events recorded so far, dropped ones included.
    events: u32,
    /// Steps in the current idle span.
    idle_steps: u32,
    /// When the warp entered the scheduler.
    begin_ns: u64,
    /// When the current step's polls began.
    polls_ns: u64,
    /// When the current idle span began; zero while the warp is not idle.
    idle_since_ns: u64,
    /// When the warp's leader last began to look for a batch in the queues.
    search_ns: u64,
    /// Block mode: the queue of the task being polled (kept here, not in a register across
    /// the poll).
    queue: u32,
}

impl TraceCursor {
    /// Nothing recorded yet.
    pub(crate) const ZERO: Self = Self {
        events: 0,
        idle_steps: 0,
        begin_ns: 0,
        polls_ns: 0,
        idle_since_ns: 0,
        search_ns: 0,
        queue: 0,
    };
}

/// Runs `f` on the leader lane with the warp's recorder state.
#[inline(always)]
fn with_cursor(warp: &Warp, f: impl FnOnce(&Region, u32, &mut TraceCursor)) {
    let cursor: &UnsafeCell<TraceCursor> = &warp.shared().trace;
    let (region, me) = (warp.region(), warp.id());
    warp.leader_only(|| {
        // SAFETY: only the warp's leader lane touches its recorder state.
        f(region, me, unsafe { &mut *cursor.get() })
    });
}

/// Writes `event` into warp `me`'s buffer (a block's: its first warp's) if it has room;
/// counts it either way.
#[inline(always)]
fn record(region: &Region, me: u32, cursor: &mut TraceCursor, event: TraceEvent) {
    if cursor.events < region.trace_events_per_warp {
        // SAFETY: the index is below the warp's capacity, and only this warp's leader writes
        // its buffer.
        unsafe { region.trace_event(me, cursor.events).write(event) };
    }
    cursor.events = cursor.events.saturating_add(1);
}

/// Ends the warp's idle span at `now`, if it has one.
#[inline(always)]
fn end_idle(region: &Region, me: u32, cursor: &mut TraceCursor, now: u64) {
    if cursor.idle_since_ns != 0 {
        let event = TraceEvent::span(
            TraceKind::Idle,
            cursor.idle_since_ns,
            now,
            cursor.idle_steps,
            0,
        );
        record(region, me, cursor, event);
        cursor.idle_since_ns = 0;
        cursor.idle_steps = 0;
    }
}

/// The warp entered the scheduler.
pub(crate) fn begin(warp: &Warp) {
    with_cursor(warp, |_, _, c| {
        *c = TraceCursor {
            begin_ns: arch::globaltimer(),
            ..TraceCursor::ZERO
        }
    });
}

/// The warp has a batch and starts polling it: ends an idle span, marks the polls' start.
#[inline(never)]
pub(crate) fn before_polls(warp: &Warp) {
    with_cursor(warp, start_polls);
}

/// Block mode: the block has a task of queue `queue` and starts polling it: as
/// [`before_polls`], keeping the queue for [`after_block_poll`].
#[inline(never)]
pub(crate) fn before_block_poll(warp: &Warp, queue: u32) {
    with_cursor(warp, |region, me, c| {
        start_polls(region, me, c);
        c.queue = queue;
    });
}

/// Ends an idle span and marks the polls' start.
#[inline(always)]
fn start_polls(region: &Region, me: u32, c: &mut TraceCursor) {
    let now = arch::globaltimer();
    end_idle(region, me, c, now);
    c.polls_ns = now;
}

/// The step's `polled` tasks of queue `queue` have been polled.
#[inline(never)]
pub(crate) fn after_polls(warp: &Warp, polled: u32, queue: u32) {
    with_cursor(warp, |region, me, c| {
        let event = TraceEvent::span(
            TraceKind::Run,
            c.polls_ns,
            arch::globaltimer(),
            polled,
            queue,
        );
        record(region, me, c, event);
    });
}

/// Block mode: the block's threads have polled the task of [`before_block_poll`], and the
/// poll ended as `end` (a [`BlockPollEnd`](crate::abi::BlockPollEnd), as `u32`).
#[inline(never)]
pub(crate) fn after_block_poll(warp: &Warp, end: u32) {
    with_cursor(warp, |region, me, c| {
        let (start, queue) = (c.polls_ns, c.queue);
        let event = TraceEvent::span(TraceKind::BlockRun, start, arch::globaltimer(), end, queue);
        record(region, me, c, event);
    });
}

/// A step found nothing to run: starts an idle span or extends the current one.
pub(crate) fn idle_step(warp: &Warp) {
    with_cursor(warp, |_, _, c| {
        if c.idle_since_ns == 0 {
            c.idle_since_ns = arch::globaltimer();
        }
        c.idle_steps = c.idle_steps.saturating_add(1);
    });
}

/// The warp's leader begins to look for a batch (a block's task) in its own queues and,
/// failing that, to steal (kept in the recorder's state, not in a register across the search).
pub(crate) fn search(warp: &Warp) {
    with_cursor(warp, |_, _, c| c.search_ns = arch::globaltimer());
}

/// The warp stole `tasks` tasks from warp `victim` (in block mode, the first warp of the victim
/// block), since its [`search`] began.
pub(crate) fn steal(warp: &Warp, victim: u32, tasks: u32) {
    with_cursor(warp, |region, me, c| {
        let end = arch::globaltimer();
        let event = TraceEvent::span(TraceKind::Steal, c.search_ns, end, victim, tasks);
        record(region, me, c, event);
    });
}

/// The warp leaves the scheduler: ends an idle span and writes its summary for the host.
pub(crate) fn finish(warp: &Warp) {
    with_cursor(warp, |region, me, c| {
        let now = arch::globaltimer();
        end_idle(region, me, c, now);
        let meta = WarpTraceMeta {
            begin_ns: c.begin_ns,
            end_ns: now,
            events: c.events,
            _pad: 0,
        };
        // SAFETY: with the trace on, each warp writes only its own summary, at the end.
        unsafe { region.trace_meta(me).write(meta) };
    });
}
