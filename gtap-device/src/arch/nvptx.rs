//! The GPU side of the architecture layer: inline PTX with explicit memory semantics and scope,
//! warp collectives, special registers and the dynamic shared-memory area.

use core::arch::{asm, global_asm};
use core::cell::UnsafeCell;
use core::mem::offset_of;
use core::sync::atomic::Ordering;

use super::{BlockView, Broadcast, WARP_SIZE};
use crate::abi::{
    block_area_offset, exchange_area_offset, lane_area_offset, scratch_area_offset,
    user_area_offset, warp_area_offset,
};
use crate::block::BlockShared;
use crate::lane::Scratch;
use crate::lane::{LaneCtx, LaneView};
use crate::region::Region;
use crate::scheduler::WarpShared;

/// A 32-bit atomic in device memory; see the [module docs](super).
///
/// Every operation is one PTX instruction that states its semantics and `.gpu` scope, so the
/// ordering the scheduler asks for is the ordering the hardware gets.
#[repr(transparent)]
pub struct AtomicU32(UnsafeCell<u32>);

// SAFETY: all accesses go through atomic PTX instructions.
unsafe impl Sync for AtomicU32 {}

macro_rules! rmw {
    ($self:ident, $op:literal, $v:ident, $order:ident) => {{
        let p = $self.0.get();
        let old: u32;
        // SAFETY: `p` points to a live, aligned u32 in device memory; the instruction is atomic.
        unsafe {
            match $order {
                Ordering::Relaxed => asm!(concat!("atom.relaxed.gpu.", $op, " {o}, [{p}], {v};"), o = out(reg32) old, p = in(reg64) p, v = in(reg32) $v),
                Ordering::Acquire => asm!(concat!("atom.acquire.gpu.", $op, " {o}, [{p}], {v};"), o = out(reg32) old, p = in(reg64) p, v = in(reg32) $v),
                Ordering::Release => asm!(concat!("atom.release.gpu.", $op, " {o}, [{p}], {v};"), o = out(reg32) old, p = in(reg64) p, v = in(reg32) $v),
                _ => asm!(concat!("atom.acq_rel.gpu.", $op, " {o}, [{p}], {v};"), o = out(reg32) old, p = in(reg64) p, v = in(reg32) $v),
            }
        }
        old
    }};
}

impl AtomicU32 {
    /// Loads the value (`ld.relaxed.gpu` or `ld.acquire.gpu`).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> u32 {
        let p = self.0.get();
        let v: u32;
        // SAFETY: `p` points to a live, aligned u32 in device memory.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("ld.relaxed.gpu.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p)
                }
                _ => asm!("ld.acquire.gpu.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p),
            }
        }
        v
    }
    /// Stores `v` (`st.relaxed.gpu` or `st.release.gpu`).
    #[inline(always)]
    pub fn store(&self, v: u32, order: Ordering) {
        let p = self.0.get();
        // SAFETY: `p` points to a live, aligned u32 in device memory.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("st.relaxed.gpu.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v)
                }
                _ => asm!("st.release.gpu.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v),
            }
        }
    }
    /// Adds `v` and returns the previous value.
    #[inline(always)]
    pub fn fetch_add(&self, v: u32, order: Ordering) -> u32 {
        rmw!(self, "add.u32", v, order)
    }
    /// Adds `v` without waiting for the old value (`red`): the caller moves on at once.
    #[inline(always)]
    pub fn add(&self, v: u32, order: Ordering) {
        let p = self.0.get();
        // SAFETY: `p` points to a live, aligned u32 in device memory; the reduction is atomic.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("red.relaxed.gpu.add.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v)
                }
                _ => asm!("red.release.gpu.add.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v),
            }
        }
    }
    /// Subtracts `v` and returns the previous value.
    #[inline(always)]
    pub fn fetch_sub(&self, v: u32, order: Ordering) -> u32 {
        let neg = v.wrapping_neg();
        rmw!(self, "add.u32", neg, order)
    }
    /// Replaces `current` by `new`; on failure returns the value found.
    #[inline(always)]
    pub fn compare_exchange(&self, current: u32, new: u32, order: Ordering) -> Result<u32, u32> {
        let p = self.0.get();
        let old: u32;
        // SAFETY: `p` points to a live, aligned u32 in device memory; the CAS is atomic.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("atom.relaxed.gpu.cas.b32 {o}, [{p}], {c}, {n};", o = out(reg32) old, p = in(reg64) p, c = in(reg32) current, n = in(reg32) new)
                }
                Ordering::Acquire => {
                    asm!("atom.acquire.gpu.cas.b32 {o}, [{p}], {c}, {n};", o = out(reg32) old, p = in(reg64) p, c = in(reg32) current, n = in(reg32) new)
                }
                Ordering::Release => {
                    asm!("atom.release.gpu.cas.b32 {o}, [{p}], {c}, {n};", o = out(reg32) old, p = in(reg64) p, c = in(reg32) current, n = in(reg32) new)
                }
                _ => {
                    asm!("atom.acq_rel.gpu.cas.b32 {o}, [{p}], {c}, {n};", o = out(reg32) old, p = in(reg64) p, c = in(reg32) current, n = in(reg32) new)
                }
            }
        }
        if old == current { Ok(old) } else { Err(old) }
    }
}

/// A 64-bit word in device memory, read and written whole (GPU scope).
#[repr(transparent)]
pub struct AtomicU64(UnsafeCell<u64>);

// SAFETY: all accesses go through atomic PTX instructions.
unsafe impl Sync for AtomicU64 {}

impl AtomicU64 {
    /// Loads the word (`ld.relaxed.gpu`; any other ordering is `ld.acquire.gpu`).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> u64 {
        let p = self.0.get();
        let v: u64;
        // SAFETY: `p` points to a live, 8-aligned u64 in device memory.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("ld.relaxed.gpu.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p)
                }
                _ => asm!("ld.acquire.gpu.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p),
            }
        }
        v
    }
    /// Stores `v` (`st.relaxed.gpu`; any other ordering is `st.release.gpu`).
    #[inline(always)]
    pub fn store(&self, v: u64, order: Ordering) {
        let p = self.0.get();
        // SAFETY: `p` points to a live, 8-aligned u64 in device memory.
        unsafe {
            match order {
                Ordering::Relaxed => {
                    asm!("st.relaxed.gpu.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v)
                }
                _ => asm!("st.release.gpu.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v),
            }
        }
    }
}

/// A counter shared by the lanes of one warp (or the threads of a block), in shared memory.
///
/// [`load`](Self::load) and [`store`](Self::store) are plain accesses, which the compiler may
/// keep in a register, merge and schedule like any other (strong `ld`/`st.relaxed.cta` in
/// inline assembly forced every one of them onto the scheduling warp's dependent chain:
/// `bench/NOTES.md` entry 91). That is sound because no plain access to a counter is concurrent
/// with another thread's access to it: the schedulers order them with warp and block barriers
/// (`bar.warp.sync`, `barrier.sync`; every barrier, shuffle and atomic here is inline assembly
/// that clobbers memory, so neither LLVM nor ptxas moves a plain access across one), and
/// compute-sanitizer's racecheck, which treats plain and relaxed accesses alike, checks it on
/// every GPU test (`scripts/device-sanitize`). Counters that lanes touch independently use the
/// read-modify-write forms ([`load_rmw`](Self::load_rmw)), and those that a retiring lane
/// changes under the others a strong load ([`load_relaxed`](Self::load_relaxed)); the other
/// operations are relaxed `.cta` atomics.
#[repr(transparent)]
pub struct LocalU32(UnsafeCell<u32>);

// SAFETY: concurrent accesses by several threads are atomic PTX instructions; the plain loads
// and stores are ordered against every other thread's access by barriers (see above).
unsafe impl Sync for LocalU32 {}

impl LocalU32 {
    /// A new counter holding `v`.
    pub const fn new(v: u32) -> Self {
        Self(UnsafeCell::new(v))
    }
    /// Reads the counter.
    #[inline(always)]
    pub fn load(&self) -> u32 {
        // SAFETY: the counter lives in shared memory for the whole kernel, and barriers order
        // this access against other threads' (see the type's docs).
        unsafe { self.0.get().read() }
    }
    /// Reads the counter with a strong load (`ld.relaxed.cta`), for counters that another
    /// thread may change with an atomic at any time, with no barrier between: the warp's `live`
    /// mask and `leader`, which a lane retiring after a panic updates while the others run on.
    #[inline(always)]
    pub(crate) fn load_relaxed(&self) -> u32 {
        let v: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel; the load is atomic.
        unsafe {
            asm!("ld.relaxed.cta.u32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) self.0.get())
        };
        v
    }
    /// Writes the counter.
    #[inline(always)]
    pub fn store(&self, v: u32) {
        // SAFETY: the counter lives in shared memory for the whole kernel, and barriers order
        // this access against other threads' (see the type's docs).
        unsafe { self.0.get().write(v) }
    }
    /// Adds `v` and returns the previous value (wrapping).
    #[inline(always)]
    pub fn fetch_add(&self, v: u32) -> u32 {
        let old: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("atom.relaxed.cta.add.u32 {o}, [{p}], {v};", o = out(reg32) old, p = in(reg64) self.0.get(), v = in(reg32) v)
        };
        old
    }
    /// Clears the bits not in `v` and returns the previous value.
    #[inline(always)]
    pub fn fetch_and(&self, v: u32) -> u32 {
        let old: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("atom.relaxed.cta.and.b32 {o}, [{p}], {v};", o = out(reg32) old, p = in(reg64) self.0.get(), v = in(reg32) v)
        };
        old
    }
    /// Replaces `current` by `new` if the counter holds `current`; returns whether it did.
    #[inline(always)]
    pub fn compare_exchange(&self, current: u32, new: u32) -> bool {
        let old: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("atom.relaxed.cta.cas.b32 {o}, [{p}], {c}, {n};", o = out(reg32) old, p = in(reg64) self.0.get(), c = in(reg32) current, n = in(reg32) new)
        };
        old == current
    }
    /// Raises the counter to `v` if it is below.
    #[inline(always)]
    pub fn store_max(&self, v: u32) {
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("red.relaxed.cta.max.u32 [{p}], {v};", p = in(reg64) self.0.get(), v = in(reg32) v)
        };
    }
    /// Stores `v` and returns the previous value.
    #[inline(always)]
    pub fn swap(&self, v: u32) -> u32 {
        let old: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("atom.relaxed.cta.exch.b32 {o}, [{p}], {v};", o = out(reg32) old, p = in(reg64) self.0.get(), v = in(reg32) v)
        };
        old
    }
    /// Reads the counter with a read-modify-write that changes nothing (`atom.or` of 0), for
    /// counters that lanes running independently may store at the same time (the pool's slow
    /// path), where a plain [`load`](Self::load) would race: racecheck counts only atomic
    /// instructions as race-free, and these paths are rare enough that an atomic costs nothing
    /// that shows.
    #[inline(always)]
    pub fn load_rmw(&self) -> u32 {
        let old: u32;
        // SAFETY: the counter lives in shared memory for the whole kernel.
        unsafe {
            asm!("atom.relaxed.cta.or.b32 {o}, [{p}], 0;", o = out(reg32) old, p = in(reg64) self.0.get())
        };
        old
    }
    /// Writes the counter with an atomic exchange: the store of [`LocalU32::load_rmw`]'s
    /// counters.
    #[inline(always)]
    pub fn store_rmw(&self, v: u32) {
        self.swap(v);
    }
}

/// Release fence at GPU scope: orders this thread's earlier accesses before its later writes.
/// From sm_90 (PTX 8.6, which `gtap-builder` selects there) `fence.release`, whose SASS is the
/// `MEMBAR` of `fence.acq_rel` without the `CCTL.IVALL` that empties the SM's L1; before
/// sm_90 the acquire-release fence.
#[inline(always)]
pub fn fence_release() {
    // SAFETY: a fence has no operands.
    unsafe {
        #[cfg(target_feature = "sm_90")]
        asm!("fence.release.gpu;");
        #[cfg(not(target_feature = "sm_90"))]
        asm!("fence.acq_rel.gpu;");
    }
}

/// Acquire fence at GPU scope: orders this thread's earlier reads before its later accesses.
/// From sm_90 (PTX 8.6) `fence.acquire`, whose SASS is the `CCTL.IVALL` alone, without the
/// `MEMBAR` that waits for the thread's outstanding writes; before sm_90 the acquire-release
/// fence.
#[inline(always)]
pub fn fence_acquire() {
    // SAFETY: a fence has no operands.
    unsafe {
        #[cfg(target_feature = "sm_90")]
        asm!("fence.acquire.gpu;");
        #[cfg(not(target_feature = "sm_90"))]
        asm!("fence.acq_rel.gpu;");
    }
}

/// Sequentially consistent fence at system scope, issued before the host reads what the
/// device wrote into host memory.
#[inline(always)]
pub fn fence_system() {
    // SAFETY: a fence has no operands.
    unsafe { asm!("fence.sc.sys;") };
}

/// Starts loading the line holding `p` into the SM's L1 cache; the thread does not wait.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    // SAFETY: a prefetch never faults and changes no memory.
    unsafe { asm!("prefetch.L1 [{p}];", p = in(reg64) p, options(nostack, readonly)) };
}

/// Pause an idle worker for about `ns` nanoseconds.
#[inline(always)]
pub fn backoff(ns: u32) {
    // SAFETY: nanosleep only delays the calling thread.
    unsafe { asm!("nanosleep.u32 {n};", n = in(reg32) ns) };
}

/// The SM's cycle counter, used to seed victim selection.
#[inline(always)]
pub fn clock() -> u64 {
    let c: u64;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u64 {c}, %clock64;", c = out(reg64) c) };
    c
}

/// Nanoseconds of the GPU's global timer (`%globaltimer`): one clock for every multiprocessor,
/// so the event trace's times compare across warps.
#[inline(always)]
pub fn globaltimer() -> u64 {
    let t: u64;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t) };
    t
}

#[inline(always)]
fn laneid() -> u32 {
    let l: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {l}, %laneid;", l = out(reg32) l, options(pure, nomem, nostack)) };
    l
}

/// `%tid.x`, read again at each use: inline assembly that is not `pure`, where the intrinsic
/// let LLVM hoist the read out of the persistent scheduler loop, so that every thread carried
/// it (and products of it: addresses of its lane and warp state) across its poll. Read where
/// used, the block SpMV ran 9.9 % faster and the block tree 1.8 %, while thread-mode kernels
/// that had registers to spare pay for the reads on their step: the thread SpMV 7 %, fib 1.5 %
/// (`bench/NOTES.md` entries 83-85; holding them on the thread-mode paths alone cost the
/// capped thread BFS 3.8 %). `%laneid` stays `pure`: read each time, it cost fib another 0.8 %
/// and gained nothing.
#[inline(always)]
fn tid() -> u32 {
    let t: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {t}, %tid.x;", t = out(reg32) t, options(nomem, nostack)) };
    t
}

#[inline(always)]
fn ntid() -> u32 {
    // SAFETY: reads a special register.
    unsafe { core::arch::nvptx::_block_dim_x() as u32 }
}

/// Tells the compiler that every block of the kernel has `threads` threads, so that what
/// depends on the block size (the offsets of the shared-memory areas, the block helpers' loops
/// over the threads) is computed at compile time.
///
/// # Safety
/// The kernel must be launched in blocks of exactly `threads` threads.
#[inline(always)]
pub unsafe fn assume_block_threads(threads: u32) {
    // SAFETY: per the contract.
    unsafe { core::hint::assert_unchecked(ntid() == threads) };
}

/// `%ctaid.x`, read again at each use (see [`tid`]).
#[inline(always)]
fn ctaid() -> u32 {
    let b: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {b}, %ctaid.x;", b = out(reg32) b, options(nomem, nostack)) };
    b
}

// The runtime's block-level state lives in dynamic shared memory, sized by the host:
// [Region][WarpShared; warps per block][LaneCtx; threads per block][Scratch; threads per block]
// (see `abi::shared_bytes`).
global_asm!(".extern .shared .align 16 .b8 gtap_smem[];");

#[inline(always)]
fn smem() -> *mut u8 {
    let p: *mut u8;
    // SAFETY: takes the generic address of the shared-memory area declared above.
    unsafe {
        asm!("cvta.shared.u64 {p}, gtap_smem;", p = out(reg64) p, options(pure, nomem, nostack))
    };
    p
}

/// A strong load (`ld.relaxed.cta`, as [`LocalU32::load_relaxed`]) of the word at byte
/// `OFFSET` of the block's shared-memory area, addressed in the `.shared` state space.
#[inline(always)]
fn load_smem_word<const OFFSET: usize>() -> u32 {
    let v: u32;
    // SAFETY: the host sized the area for the first warp's state, which holds `OFFSET` (a
    // 4-byte-aligned field of `WarpShared`); the load is atomic.
    unsafe {
        asm!("ld.shared.relaxed.cta.u32 {v}, [gtap_smem+{o}];", v = out(reg32) v, o = const OFFSET, options(nostack))
    };
    v
}

#[inline(always)]
fn block_region() -> *mut Region {
    smem() as *mut Region
}

#[inline(always)]
fn warp_shared(warp_in_block: u32) -> *mut WarpShared {
    // SAFETY: the host sized the area for every warp of the block.
    unsafe { smem().add(warp_area_offset(warp_in_block)) as *mut WarpShared }
}

#[inline(always)]
fn lane_ctx(thread: u32) -> *mut LaneCtx {
    // SAFETY: the host sized the area for every thread of the block.
    unsafe {
        (smem().add(lane_area_offset(ntid() / WARP_SIZE)) as *mut LaneCtx).add(thread as usize)
    }
}

/// Publishes the runtime view to this block's shared memory and initialises the state of the
/// block's warps and lanes, for a thread-mode kernel. Every thread of the block calls it once,
/// before any task runs.
pub fn init_block(region: &Region) {
    init_areas(region, WARP_SIZE);
}

/// [`init_block`] for a block-mode kernel: the state of the scheduling warp (warp 0) and the
/// block's; the region view is marked as block mode ([`Region::block_mode`]). The other warps'
/// areas hold the block's state (`abi::block_area_offset`), so they are not initialised.
pub fn init_block_mode(region: &Region) {
    init_areas(&region.in_block_mode(), ntid());
}

/// Initialises the region view, the lanes and the state of every warp whose first thread is a
/// multiple of `warp_stride` (all of them, or warp 0 alone); in block mode also the block's.
#[inline(always)]
fn init_areas(region: &Region, warp_stride: u32) {
    let t = tid();
    if t == 0 {
        // SAFETY: thread 0 alone writes the block header before the barrier below.
        unsafe { block_region().write(*region) };
        if region.block_mode() {
            // SAFETY: thread 0 alone writes the block's state before the barrier below; the
            // host sized the area for block mode (`abi::block_mode_shared_bytes`), and no
            // other thread writes the warp areas it may lie in (`warp_stride` is the block).
            unsafe {
                (smem().add(block_area_offset(ntid())) as *mut BlockShared)
                    .write(BlockShared::new())
            };
        }
    }
    if t % warp_stride == 0 {
        // SAFETY: lane 0 of each warp that has a state initialises it before the barrier.
        unsafe { warp_shared(t / WARP_SIZE).write(WarpShared::new()) };
    }
    // SAFETY: each thread initialises its own lane context.
    unsafe { lane_ctx(t).write(LaneCtx::starting_here()) };
    // SAFETY: every thread of the block reaches this barrier exactly once.
    unsafe { core::arch::nvptx::_syncthreads() };
}

/// The calling thread's block-mode state.
#[inline(always)]
pub fn block_view() -> BlockView {
    let threads = ntid();
    // SAFETY: offsets inside the block's dynamic shared memory, sized for block mode (with the
    // lent bytes the region view, initialised by `init_block`, records).
    unsafe {
        BlockView {
            shared: smem().add(block_area_offset(threads)) as *const BlockShared,
            exchange: smem().add(exchange_area_offset(threads)),
            user: smem().add(user_area_offset(threads)),
            user_bytes: (*block_region()).block_shared_bytes,
            thread: tid(),
            threads,
        }
    }
}

/// Barriers cost a few cycles: the block helpers combine values in rounds between barriers.
pub const CHEAP_BARRIERS: bool = true;

/// The block scheduler's barrier (`barrier.sync 0`). Not `.aligned` (`bar.sync` is): the warps
/// reach it from different code (the scheduling warp from its fold, the others straight from
/// their polls), and a task's threads from wherever their control flow took them.
#[inline(always)]
pub fn block_barrier() {
    // SAFETY: every thread of the block reaches the scheduler's barriers in step.
    unsafe { asm!("barrier.sync 0;") };
}

/// A block-mode thread whose task panicked: on the GPU it has exited in the panic handler
/// already, so this is never reached.
#[inline(always)]
pub fn retire_block_thread() {}

/// Whether the calling block-mode thread retired after a panic: never on the GPU (it exited).
#[inline(always)]
pub const fn block_thread_retired() -> bool {
    false
}

/// The barrier of `gtap::Block::sync` and the helpers (`barrier.sync 1`): a barrier of its own,
/// so that a helper reached by part of the block can never pair with the scheduler's barrier.
#[inline(always)]
pub fn user_barrier() {
    // SAFETY: a barrier; threads that never arrive make the others wait (documented: the
    // helpers are collective).
    unsafe { asm!("barrier.sync 1;") };
}

/// The helpers' barrier among the threads of the block's first warp alone (`bar.warp.sync`,
/// which orders their shared-memory accesses): a reduction's last rounds, whose operands the
/// first warp wrote, need no block barrier each.
#[inline(always)]
pub fn user_warp_barrier() {
    // SAFETY: every thread of the first warp reaches it (block sizes are multiples of 32);
    // exited threads are not waited for.
    unsafe { asm!("bar.warp.sync 0xffffffff;") };
}

/// The calling thread as a block-mode lane: its own context, the block's scheduling state (that
/// of its first warp) and the block's worker index (its first warp's index); no scratch memory
/// (a block-mode block has none, see `abi::shared`).
#[inline(always)]
pub fn current_block_lane() -> LaneView {
    LaneView {
        ctx: lane_ctx(tid()),
        shared: warp_shared(0),
        region: block_region(),
        warp: ctaid() * (ntid() / WARP_SIZE),
        scratch: core::ptr::null_mut(),
    }
}

/// The scratch memory of `lane` (`gtap::thread::scratch`); `None` in a block-mode launch, whose
/// blocks have none: [`current_lane`] does not look, and its pointer would lie in the block's
/// state there.
#[inline(always)]
pub fn lane_scratch(lane: &LaneView) -> Option<*mut Scratch> {
    (!lane.region().block_mode()).then_some(lane.scratch)
}

/// The lane polling a task on this thread.
#[inline(always)]
pub fn current_lane() -> LaneView {
    let t = tid();
    // SAFETY: the host sized the scratch area for every thread of the block.
    let scratch =
        unsafe { (smem().add(scratch_area_offset(ntid())) as *mut Scratch).add(t as usize) };
    LaneView {
        ctx: lane_ctx(t),
        shared: warp_shared(t / WARP_SIZE),
        region: block_region(),
        warp: warp_index(),
        scratch,
    }
}

/// Lane index (0..32) of the calling thread.
#[inline(always)]
pub fn lane_index() -> u32 {
    laneid()
}
/// Global warp index of the calling thread.
#[inline(always)]
pub fn warp_index() -> u32 {
    ctaid() * (ntid() / WARP_SIZE) + tid() / WARP_SIZE
}
/// Block index of the calling thread.
#[inline(always)]
pub fn block_index() -> u32 {
    ctaid()
}
/// Thread index within its block.
#[inline(always)]
pub fn thread_index() -> u32 {
    tid()
}

/// One value per lane: on the GPU each hardware lane holds its own.
pub type Lanes<T> = T;

/// The calling thread's warp. All its state is in registers and shared memory; the one field
/// says what is known of it at compile time.
pub struct Warp {
    /// A constant at each construction, so LLVM folds every test of it away.
    kind: WarpKind,
}

/// What a [`Warp`] knows of itself at compile time.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WarpKind {
    /// Any warp: it finds its shared state from `%tid.x`.
    Any,
    /// The block-mode scheduling warp of a detached launch: its block's first, which finds its
    /// shared state at a constant offset instead of reading `%tid.x` at every use
    /// (`bench/NOTES.md` entries 98 and 99).
    FirstOfBlock,
    /// The same in a joining launch, which also reads its leader and live words with `.shared`
    /// loads at a constant address, not with generic loads: 2 % off the block tree. In every
    /// kernel it cost the detached grid BFS's idle loop a quarter (entries 99, 100 and 108).
    FirstOfJoiningBlock,
}

impl Warp {
    /// The calling thread's warp.
    #[inline(always)]
    pub fn current() -> Self {
        Warp {
            kind: WarpKind::Any,
        }
    }

    /// The calling thread's warp, which the caller knows to be its block's first (a block-mode
    /// kernel's scheduling warp); `joining`: the launch's tasks join (not `no_taskwait`).
    #[inline(always)]
    pub fn first_of_block(joining: bool) -> Self {
        Warp {
            kind: if joining {
                WarpKind::FirstOfJoiningBlock
            } else {
                WarpKind::FirstOfBlock
            },
        }
    }

    /// Whether the warp is known to be its block's first.
    #[inline(always)]
    fn is_first_of_block(&self) -> bool {
        self.kind != WarpKind::Any
    }

    /// Whether the warp reads its leader and live words at a constant `.shared` address.
    #[inline(always)]
    fn constant_words(&self) -> bool {
        self.kind == WarpKind::FirstOfJoiningBlock
    }

    /// The warp's leader lane ([`WarpShared::leader`]).
    #[inline(always)]
    fn leader_lane(&self) -> u32 {
        if self.constant_words() {
            load_smem_word::<{ warp_area_offset(0) + offset_of!(WarpShared, leader) }>()
        } else {
            self.shared().leader.load_relaxed()
        }
    }

    /// The warp's live lanes ([`WarpShared::live`]).
    #[inline(always)]
    fn live_lanes(&self) -> u32 {
        if self.constant_words() {
            load_smem_word::<{ warp_area_offset(0) + offset_of!(WarpShared, live) }>()
        } else {
            self.shared().live.load_relaxed()
        }
    }

    /// This warp's index within its block.
    #[inline(always)]
    fn index_in_block(&self) -> u32 {
        if self.is_first_of_block() {
            0
        } else {
            tid() / WARP_SIZE
        }
    }

    /// This warp's global index.
    #[inline(always)]
    pub fn id(&self) -> u32 {
        if self.is_first_of_block() {
            ctaid() * (ntid() / WARP_SIZE)
        } else {
            warp_index()
        }
    }

    /// The warp's shared state.
    #[inline(always)]
    pub fn shared(&self) -> &WarpShared {
        // SAFETY: initialised by `init_block`, alive for the whole kernel.
        unsafe { &*warp_shared(self.index_in_block()) }
    }

    /// The runtime's view of device memory (the block's shared-memory copy).
    #[inline(always)]
    pub fn region(&self) -> &Region {
        // SAFETY: initialised by `init_block`, alive for the whole kernel.
        unsafe { &*block_region() }
    }

    /// The same value on every lane.
    #[inline(always)]
    pub fn splat<T: Copy>(v: T) -> Lanes<T> {
        v
    }

    /// Runs `f(lane)` on this lane: per-lane work of the scheduler itself, which needs no lane
    /// context (on the GPU the same as [`Warp::each`]).
    #[inline(always)]
    pub fn lanes<U: Copy>(&self, mut f: impl FnMut(u32) -> U) -> Lanes<U> {
        f(laneid())
    }

    /// Runs `f(lane, value)` on this lane.
    #[inline(always)]
    pub fn each<T: Copy, U: Copy>(&self, v: Lanes<T>, mut f: impl FnMut(u32, T) -> U) -> Lanes<U> {
        f(laneid(), v)
    }

    /// Runs `f` on the lowest live lane and gives every lane its result.
    ///
    /// Warp collectives name all 32 lanes: a lane that retired after a panic has exited, and
    /// PTX's warp-synchronous instructions only wait for lanes that have not exited.
    #[inline(always)]
    pub fn leader<T: Broadcast>(&self, f: impl FnOnce() -> T) -> T {
        let leader = self.leader_lane();
        let mut words = T::Words::default();
        if laneid() == leader {
            words = f().to_words();
        }
        for word in words.as_mut() {
            let v: u32;
            // SAFETY: every live lane executes this shuffle with the same mask.
            unsafe {
                asm!("shfl.sync.idx.b32 {d}, {a}, {s}, 31, 0xffffffff;", d = out(reg32) v, a = in(reg32) *word, s = in(reg32) leader)
            };
            *word = v;
        }
        T::from_words(words)
    }

    /// Lane `lane`'s id, on every lane (`lane` the same on all); [`NONE`](crate::record::NONE)
    /// when that lane retired after a panic (its registers are gone; the launch is aborting).
    #[inline(always)]
    pub fn at(&self, v: Lanes<u32>, lane: u32) -> u32 {
        let r: u32;
        // SAFETY: every live lane executes this shuffle with the same mask and source lane.
        unsafe {
            asm!("shfl.sync.idx.b32 {d}, {a}, {s}, 31, 0xffffffff;", d = out(reg32) r, a = in(reg32) v, s = in(reg32) lane)
        };
        if self.live_lanes() >> lane & 1 == 0 {
            return crate::record::NONE;
        }
        r
    }

    /// Runs `f` on the lowest live lane only (no result is shared).
    #[inline(always)]
    pub fn leader_only(&self, f: impl FnOnce()) {
        if laneid() == self.leader_lane() {
            f();
        }
    }

    /// Whether `v` holds on any live lane (a warp vote).
    #[inline(always)]
    pub fn any(&self, v: Lanes<bool>) -> bool {
        let r: u32;
        // SAFETY: every live lane executes the vote; as in `leader`'s shuffle, the mask names
        // all 32 lanes and the vote waits only for those that have not exited.
        unsafe {
            asm!("{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.any.pred q, p, 0xffffffff; selp.u32 {r}, 1, 0, q; }}", r = out(reg32) r, v = in(reg32) v as u32)
        };
        r != 0
    }

    /// On how many live lanes `v` holds (a warp vote).
    #[inline(always)]
    pub fn count(&self, v: Lanes<bool>) -> u32 {
        let r: u32;
        // SAFETY: every live lane executes the vote; as in `leader`'s shuffle, the mask names
        // all 32 lanes and the vote waits only for those that have not exited.
        unsafe {
            asm!("{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {r}, p, 0xffffffff; }}", r = out(reg32) r, v = in(reg32) v as u32)
        };
        r.count_ones()
    }

    /// Applies `f` to this lane's value: plain per-lane arithmetic of the scheduler.
    #[inline(always)]
    pub fn map<T: Copy, U: Copy>(v: Lanes<T>, mut f: impl FnMut(T) -> U) -> Lanes<U> {
        f(v)
    }

    /// Warp barrier; orders memory among the participating lanes.
    #[inline(always)]
    pub fn sync(&self) {
        // SAFETY: every live lane reaches the barrier; exited lanes are not waited for.
        unsafe { asm!("bar.warp.sync 0xffffffff;") };
    }

    /// Task placement is left to the hardware on the GPU.
    #[inline(always)]
    pub fn scramble(&self, batch: Lanes<u32>) -> Lanes<u32> {
        batch
    }
}

/// Runs one poll of user code. A panic on the GPU goes to the panic handler, which records it
/// and retires the lane, so this is a plain call.
#[inline(always)]
pub fn guard(f: impl FnOnce() -> bool) -> Option<bool> {
    Some(f())
}

/// Retires the calling lane for the rest of the kernel (after a panic). The other lanes of the
/// warp go on without it: warp collectives only involve live lanes.
pub fn retire_lane() -> ! {
    // In block mode only the scheduling warp (warp 0) has a state: the other warps' areas hold
    // the block's (`abi::block_area_offset`).
    // SAFETY: initialised by `init_block`, alive for the whole kernel.
    if !unsafe { &*block_region() }.block_mode() || tid() < WARP_SIZE {
        let lane = current_lane();
        let shared = lane.shared();
        let bit = 1 << laneid();
        let left = shared.live.fetch_and(!bit) & !bit;
        // Lanes only ever leave `live`, so the lowest lane of the latest mask is the largest
        // any retiring lane computes: the maximum is right when several retire at once.
        shared.leader.store_max(left.trailing_zeros());
    }
    // SAFETY: `exit` ends only this thread.
    unsafe { asm!("exit;", options(noreturn)) }
}

/// Ends the calling thread (every thread of an aborted launch leaves this way).
pub fn exit_thread() -> ! {
    // SAFETY: `exit` ends only this thread.
    unsafe { asm!("exit;", options(noreturn)) }
}
