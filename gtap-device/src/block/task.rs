//! What `task!`, `taskwait!` and `entry!` expand to in block-mode code.

use crate::abi::ErrorCode;
use crate::arch::{self, Warp};
use crate::context::RunsIn;
use crate::error::{Failure, raise};
use crate::lane::{FAILED, SUSPEND};
use crate::task::{BlockTask, Site, check_queue};
use crate::{pool, queue};

use super::record;

/// Threads per block of the running launch.
#[inline(always)]
pub(crate) fn threads() -> u32 {
    arch::block_view().threads
}

/// `task!` in a block-mode task function: [`spawn`], for block-mode task functions that run in
/// `C`, the spawning function's context (`crate::context`).
#[inline(always)]
pub fn spawn_block<T: BlockTask + RunsIn<C>, C: ?Sized>(
    site: &'static Site,
    queue: Option<i128>,
    dst: *mut T::Output,
    args: T::Args,
) {
    spawn::<T>(site, queue, dst, args);
}

/// The calling thread spawns `T(args)` as its own child; the result goes to `dst` (null:
/// discarded), that thread's local.
#[inline(always)]
fn spawn<T: BlockTask>(
    site: &'static Site,
    queue: Option<i128>,
    dst: *mut T::Output,
    args: T::Args,
) {
    let lane = arch::current_block_lane();
    let region = lane.region();
    let q = match queue {
        None => 0,
        Some(q) => match check_queue(site, q, region.num_queues) {
            Some(q) => q,
            None => return,
        },
    };
    let bytes = record::record_bytes_for::<T>(threads());
    match bytes {
        Some(b) if b <= region.slot_bytes as usize => {}
        _ => {
            let mut f = Failure::at(
                ErrorCode::RecordTooLarge,
                site,
                bytes.unwrap_or(usize::MAX) as u64,
                region.slot_bytes as u64,
            );
            f.task = Some(T::INFO.name);
            raise(f);
            return;
        }
    }
    let Some(id) = pool::take_ready(&lane).or_else(|| pool::alloc_slow(&lane)) else {
        // A block-mode child needs a whole block: it cannot run inline on this thread.
        if !region.control().aborted() {
            let mut f = Failure::at(
                ErrorCode::PoolExhausted,
                site,
                0,
                region.slots_per_warp as u64,
            );
            f.task = Some(T::INFO.name);
            f.message =
                Some("block mode: no task slot was free, and a block-mode child cannot run inline");
            raise(f);
        }
        // SAFETY: the calling thread owns its context.
        unsafe { lane.ctx() }.flags |= FAILED;
        return;
    };
    start_child::<T>(&lane, id, q, dst, args);
}

/// Writes the record of `T(args)` into slot `id`, just allocated to the calling thread and
/// large enough for it, and stages it on queue `q`.
#[inline(always)]
fn start_child<T: BlockTask>(
    lane: &crate::lane::LaneView,
    id: u32,
    q: u32,
    dst: *mut T::Output,
    args: T::Args,
) {
    // SAFETY: the calling thread owns its context.
    let ctx = unsafe { lane.ctx() };
    // SAFETY: `id` was just allocated to this thread and the record fits the slot (checked by
    // `spawn_block`).
    unsafe { record::write::<T>(lane.region().header(id), args, dst, ctx.task, q) };
    ctx.spawned += 1;
    queue::stage(lane, id, q);
}

/// First half of `taskwait!` in a block-mode task function: records which wait this thread
/// reached (the block checks that every thread reached the same one) and suspends. Every
/// thread suspends, with or without children: the block sums them ([`super::worker`]).
#[inline(always)]
pub fn prepare_wait_block(site: &'static Site, queue: Option<i128>) {
    let lane = arch::current_block_lane();
    // SAFETY: the calling thread owns its context.
    let ctx = unsafe { lane.ctx() };
    ctx.flags |= SUSPEND;
    if ctx.flags & FAILED != 0 {
        return;
    }
    let view = arch::block_view();
    // SAFETY: the block's shared state lives as long as the kernel.
    let shared = unsafe { &*view.shared };
    if view.thread == 0 {
        let resume = match queue {
            None => crate::record::SPAWN_QUEUE,
            Some(q) => match check_queue(site, q, lane.region().num_queues) {
                Some(q) => q,
                None => return,
            },
        };
        shared.resume.store(resume);
    }
    let addr = site as *const Site as usize as u64;
    // Sites are aligned to their pointer fields, so bit 0 is free to mark "a wait was seen".
    let key = addr as u32 | 1;
    // Threads run this concurrently: read-modify-writes only (as the pool's hints; see
    // `LocalU32::load_rmw`), except the high half, which only the first thread stores.
    if shared.wait_lo.compare_exchange(0, key) {
        shared.wait_hi.store((addr >> 32) as u32);
    } else if shared.wait_lo.load_rmw() != key {
        shared.mismatch.store_rmw(1);
    }
}

/// The first wait the block's threads reached in the current poll, if any.
pub(crate) fn first_wait(shared: &super::BlockShared) -> Option<&'static Site> {
    let lo = shared.wait_lo.load();
    if lo == 0 {
        return None;
    }
    let addr = ((shared.wait_hi.load() as u64) << 32) | (lo & !1) as u64;
    // SAFETY: the address is that of a `&'static Site` stored by `prepare_wait_block` in this
    // poll (both halves written before the block barrier that precedes this read).
    Some(unsafe { &*(addr as usize as *const Site) })
}

/// Creates the root task of a block-mode launch, on thread 0 of block 0 (lane 0 of the block's
/// scheduling warp). Its result goes to the runtime's root-result area.
pub(crate) fn create_root<T: BlockTask>(
    warp: &Warp,
    site: &'static Site,
    args: T::Args,
    context: impl Copy,
) {
    crate::task::create_root_with::<T>(warp, site, args, context, |dst, args| {
        spawn::<T>(site, Some(0), dst, args)
    });
}
