//! The CPU side of the architecture layer: core atomics, simulated warps of 32 lanes, and a
//! thread-local pointer to the lane that is polling a task.
//!
//! # Model checking (`--cfg loom`)
//!
//! Built with `RUSTFLAGS="--cfg loom"`, every operation on a device-memory atomic goes to a
//! [loom](https://docs.rs/loom) atomic that *shadows* the word (created on first use, with the
//! word's value), fences are loom fences, backoffs are loom yields and the lane pointer is a
//! loom thread-local, so loom explores the interleavings of the scheduler's warps and the
//! values its weak memory model lets each atomic load return. The words stay plain atomics in
//! the zeroed runtime region, so the layout does not change. GPU scopes map to the strongest
//! matching Rust orderings: `.gpu` relaxed/acquire/release/acq_rel operations and
//! `fence.acq_rel.gpu` are the same Rust orderings (one GPU is one coherent address space),
//! `fence.sc.sys` is a `SeqCst` fence, and the warp-local counters (`LocalU32`, shared memory)
//! stay plain cells, since one loom thread runs a whole warp. Memory that is not an atomic
//! (task records, queue ring entries) is not shadowed: loom sees its accesses as sequentially
//! consistent. Where the protocol hands such memory from warp to warp, the code marks the
//! access for loom (`shadow::write`, `shadow::read`, under `#[cfg(loom)]`): a task record when
//! it is written at a spawn and each time it is polled, a queue ring entry when it is written
//! and read. Loom then fails a model in which such an access does not happen after the previous
//! one, which is what a missing acquire or release looks like. A child's write of its result
//! into the parent's record is marked as a *read* of that record: checked against the parent's
//! polls, not against the siblings writing beside it. See `loom_tests.rs`.

use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{self, Ordering};
#[cfg(loom)]
use loom::sync::atomic as model;
#[cfg(not(loom))]
use std::panic::{self, AssertUnwindSafe};

use super::{BlockView, Broadcast, WARP_SIZE};
use crate::lane::{LaneCtx, LaneView, SCRATCH_WORDS, Scratch};
use crate::math::XorShift64;
use crate::region::Region;
use crate::scheduler::WarpShared;

/// A 32-bit atomic in device memory; see the [module docs](super).
#[repr(transparent)]
pub struct AtomicU32(atomic::AtomicU32);

impl AtomicU32 {
    /// Tests: a word holding `v` outside the launch's region (device words are zeroed memory
    /// and have no constructor).
    #[cfg(test)]
    pub(crate) const fn new(v: u32) -> Self {
        Self(atomic::AtomicU32::new(v))
    }

    /// The atomic operations act on: the word itself, or its loom shadow.
    #[cfg(not(loom))]
    #[inline(always)]
    fn op(&self) -> &atomic::AtomicU32 {
        &self.0
    }
    #[cfg(loom)]
    fn op(&self) -> &'static model::AtomicU32 {
        shadow::of(&self.0, |w| {
            model::AtomicU32::new(w.load(Ordering::Relaxed))
        })
    }
    /// Loads the value.
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> u32 {
        let v = self.op().load(order);
        acquired(order);
        v
    }
    /// Stores `v`.
    #[inline(always)]
    pub fn store(&self, v: u32, order: Ordering) {
        self.op().store(v, order)
    }
    /// Adds `v` and returns the previous value.
    #[inline(always)]
    pub fn fetch_add(&self, v: u32, order: Ordering) -> u32 {
        let old = self.op().fetch_add(v, order);
        acquired(order);
        old
    }
    /// Adds `v` without waiting for the old value.
    #[inline(always)]
    pub fn add(&self, v: u32, order: Ordering) {
        self.op().fetch_add(v, order);
        acquired(order);
    }
    /// Subtracts `v` and returns the previous value.
    #[inline(always)]
    pub fn fetch_sub(&self, v: u32, order: Ordering) -> u32 {
        let old = self.op().fetch_sub(v, order);
        acquired(order);
        old
    }
    /// Replaces `current` by `new`; on failure returns the value found.
    #[inline(always)]
    pub fn compare_exchange(&self, current: u32, new: u32, order: Ordering) -> Result<u32, u32> {
        let failure = match order {
            Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
            _ => Ordering::Acquire,
        };
        let result = self.op().compare_exchange(current, new, order, failure);
        acquired(order);
        result
    }
}

/// A 64-bit word in device memory, read and written whole.
#[repr(transparent)]
pub struct AtomicU64(atomic::AtomicU64);

impl AtomicU64 {
    /// The atomic operations act on: the word itself, or its loom shadow.
    #[cfg(not(loom))]
    #[inline(always)]
    fn op(&self) -> &atomic::AtomicU64 {
        &self.0
    }
    #[cfg(loom)]
    fn op(&self) -> &'static model::AtomicU64 {
        shadow::of(&self.0, |w| {
            model::AtomicU64::new(w.load(Ordering::Relaxed))
        })
    }
    /// Loads the word.
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> u64 {
        let v = self.op().load(order);
        acquired(order);
        v
    }
    /// Stores `v`.
    #[inline(always)]
    pub fn store(&self, v: u64, order: Ordering) {
        self.op().store(v, order)
    }
}

/// Loom shadows of device-memory words, per model execution.
#[cfg(loom)]
pub mod shadow {
    use std::any::Any;
    use std::boxed::Box;
    use std::cell::RefCell;
    use std::collections::HashMap;

    std::thread_local! {
        /// Shadows by the address of the word they stand for. Loom runs all threads of a model
        /// on one OS thread, so an OS-thread-local table serves a whole model (and models
        /// running in parallel test threads do not meet); being no loom object, it adds no
        /// synchronisation the runtime does not have.
        static SHADOWS: RefCell<HashMap<usize, &'static dyn Any>> = RefCell::new(HashMap::new());
    }

    /// The shadow of `word`, created by `create` on first use in this execution.
    pub(super) fn of<W, S: Any>(word: &W, create: impl FnOnce(&W) -> S) -> &'static S {
        let shadow: &'static dyn Any = SHADOWS.with(|table| {
            *table
                .borrow_mut()
                .entry(word as *const W as usize)
                .or_insert_with(|| Box::leak(Box::new(create(word))))
        });
        shadow
            .downcast_ref::<S>()
            .expect("one word is always shadowed by the same type")
    }

    std::thread_local! {
        /// Causality trackers of plain memory, by address.
        static PLAIN: RefCell<HashMap<usize, &'static loom::cell::UnsafeCell<()>>> =
            RefCell::new(HashMap::new());
    }

    fn plain(addr: usize) -> &'static loom::cell::UnsafeCell<()> {
        PLAIN.with(|table| {
            *table
                .borrow_mut()
                .entry(addr)
                .or_insert_with(|| Box::leak(Box::new(loom::cell::UnsafeCell::new(()))))
        })
    }

    /// A write of plain memory at `addr` (a task record, a ring entry): loom fails the model
    /// unless every earlier access there happens before it.
    pub fn write(addr: usize) {
        plain(addr).with_mut(|_| ());
    }

    /// A read of plain memory at `addr`: loom fails the model unless every earlier write there
    /// happens before it.
    pub fn read(addr: usize) {
        plain(addr).with(|_| ());
    }

    /// Forgets every shadow: call at the start of each model execution (loom objects belong to
    /// one execution, and a new region may reuse the old one's addresses).
    pub fn reset() {
        SHADOWS.with(|table| table.borrow_mut().clear());
        PLAIN.with(|table| table.borrow_mut().clear());
    }
}

/// A counter shared by the lanes of one warp. A simulated warp runs on one OS thread at a time,
/// so a `Cell` is enough.
#[repr(transparent)]
pub struct LocalU32(Cell<u32>);

impl LocalU32 {
    /// A new counter holding `v`.
    pub const fn new(v: u32) -> Self {
        Self(Cell::new(v))
    }
    /// Reads the counter.
    #[inline(always)]
    pub fn load(&self) -> u32 {
        self.0.get()
    }
    /// Writes the counter.
    #[inline(always)]
    pub fn store(&self, v: u32) {
        self.0.set(v)
    }
    /// Adds `v` and returns the previous value (wrapping).
    #[inline(always)]
    pub fn fetch_add(&self, v: u32) -> u32 {
        let old = self.0.get();
        self.0.set(old.wrapping_add(v));
        old
    }
    /// Replaces `current` by `new` if the counter holds `current`; returns whether it did.
    #[inline(always)]
    pub fn compare_exchange(&self, current: u32, new: u32) -> bool {
        let hit = self.0.get() == current;
        if hit {
            self.0.set(new);
        }
        hit
    }
    /// Stores `v` and returns the previous value.
    #[inline(always)]
    pub fn swap(&self, v: u32) -> u32 {
        self.0.replace(v)
    }
    /// [`LocalU32::load`]; on the GPU an atomic read-modify-write, for counters that lanes
    /// running independently may store at the same time.
    #[inline(always)]
    pub fn load_rmw(&self) -> u32 {
        self.load()
    }
    /// [`LocalU32::store`]; on the GPU an atomic exchange (see [`LocalU32::load_rmw`]).
    #[inline(always)]
    pub fn store_rmw(&self, v: u32) {
        self.store(v)
    }
}

/// Release fence at GPU scope (the GPU's `fence.release.gpu`).
#[inline(always)]
pub fn fence_release() {
    fence(Ordering::Release);
}

/// Acquire fence at GPU scope (the GPU's `fence.acquire.gpu`).
#[inline(always)]
pub fn fence_acquire() {
    fence(Ordering::Acquire);
}

/// Sequentially consistent fence at system scope, issued before the host reads what the
/// device wrote into host memory.
#[inline(always)]
pub fn fence_system() {
    fence(Ordering::SeqCst);
}

/// A fence of `order`: std's, loom's in the models, and under `tsan` its stand-in (an acquire
/// fence only acquires; the others also publish).
#[inline(always)]
fn fence(order: Ordering) {
    #[cfg(not(loom))]
    atomic::fence(order);
    #[cfg(loom)]
    model::fence(order);
    #[cfg(feature = "tsan")]
    if order == Ordering::Acquire {
        tsan::acquire();
    } else {
        tsan::fence();
    }
}

/// After an atomic operation with ordering `order` on a device word: under `tsan`, an acquire
/// also acquires every fence so far (see the `tsan` module below).
#[inline(always)]
fn acquired(order: Ordering) {
    #[cfg(feature = "tsan")]
    if matches!(
        order,
        Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
    ) {
        tsan::acquire();
    }
    #[cfg(not(feature = "tsan"))]
    let _ = order;
}

/// Fences that ThreadSanitizer can see (feature `tsan`, set by `scripts/check-sanitize`).
///
/// TSan does not model fences: it would report every handoff that the scheduler orders, as on
/// the GPU, with a fence and relaxed atomics. So each fence is also an acquire-release
/// read-modify-write of one global word, which TSan sees: everything before a fence happens
/// before everything after any later fence. And every acquire operation on a device word also
/// acquires that word, because in Rust's model (and PTX's) a release fence followed by a
/// relaxed store synchronizes with an acquire load that reads the store: the pool's slot
/// handoff is exactly that (a fence, the free's relaxed store of the ring cell, the take's
/// acquire load, then the new record's plain writes with no fence between). Both rules give
/// more ordering than the program has (they do not check which relaxed access carries the
/// handoff; the loom models do), but an access after the writer's last fence, or handed over
/// with no fence at all, is still a race.
#[cfg(feature = "tsan")]
mod tsan {
    use core::sync::atomic::{AtomicU32, Ordering};

    static FENCES: AtomicU32 = AtomicU32::new(0);

    #[inline(always)]
    pub(super) fn fence() {
        FENCES.fetch_add(1, Ordering::AcqRel);
    }

    /// The acquire half of a fence: whatever preceded any fence so far happens before what
    /// follows.
    #[inline(always)]
    pub(super) fn acquire() {
        FENCES.load(Ordering::Acquire);
    }
}

/// A hint to load the line holding `p`; nothing to do on the CPU.
#[inline(always)]
pub fn prefetch(_p: *const u8) {}

/// Pause an idle worker for about `ns` nanoseconds.
#[cfg(loom)]
pub fn backoff(_ns: u32) {
    // Lets loom run another thread: a spinning model thread must say so.
    loom::thread::yield_now();
}

/// Pause an idle worker for about `ns` nanoseconds.
#[cfg(not(loom))]
#[inline]
pub fn backoff(ns: u32) {
    if ns <= 256 {
        for _ in 0..(ns / 8).max(1) {
            core::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

/// A cheap source of entropy for victim selection; the CPU executor seeds it explicitly.
#[inline(always)]
pub fn clock() -> u64 {
    0
}

/// Nanoseconds of a monotonic clock shared by every thread of the process (since its first
/// reading), the CPU executor's counterpart of the GPU's `%globaltimer`.
pub fn globaltimer() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    // Never zero: the event trace uses zero for "no time taken".
    epoch.elapsed().as_nanos() as u64 + 1
}

/// One value per lane: on the CPU the warp holds all 32 of them.
pub type Lanes<T> = [T; WARP_SIZE as usize];

/// Identity of the simulated lane polling a task: lane, global warp, block, warps per block.
#[derive(Clone, Copy)]
struct Ident {
    lane: u32,
    warp: u32,
    block: u32,
    warps_per_block: u32,
}

/// The scratch memory of `lane` (`gtap::thread::scratch`); `None` for a block-mode thread,
/// which has none (its lane view holds a null pointer, as on the GPU).
#[inline(always)]
pub fn lane_scratch(lane: &LaneView) -> Option<*mut Scratch> {
    (!lane.scratch.is_null()).then_some(lane.scratch)
}

const NO_LANE: LaneView = LaneView {
    ctx: core::ptr::null_mut(),
    shared: core::ptr::null(),
    region: core::ptr::null(),
    warp: 0,
    scratch: core::ptr::null_mut(),
};

#[cfg(not(loom))]
std::thread_local! {
    static VIEW: Cell<LaneView> = const { Cell::new(NO_LANE) };
    static IDENT: Cell<Option<Ident>> = const { Cell::new(None) };
    static PANIC_SITE: Cell<Option<(&'static str, u32)>> = const { Cell::new(None) };
}

// Loom runs its model threads on one OS thread: each needs its own lane pointer.
#[cfg(loom)]
loom::thread_local! {
    static VIEW: Cell<LaneView> = Cell::new(NO_LANE);
    static IDENT: Cell<Option<Ident>> = Cell::new(None);
    static PANIC_SITE: Cell<Option<(&'static str, u32)>> = Cell::new(None);
}

/// A simulated GPU thread of a block-mode launch: its block's state, the baton its barriers
/// pass, and its index among the baton's threads.
#[derive(Clone, Copy)]
pub(crate) struct BlockThread {
    pub(crate) view: BlockView,
    pub(crate) baton: *const crate::cpu::baton::Baton,
    pub(crate) member: usize,
}

#[cfg(not(loom))]
std::thread_local! {
    static BLOCK: Cell<Option<BlockThread>> = const { Cell::new(None) };
    /// The simulated thread retired after a panic in its task ([`retire_block_thread`]).
    static RETIRED: Cell<bool> = const { Cell::new(false) };
}
#[cfg(loom)]
loom::thread_local! {
    static BLOCK: Cell<Option<BlockThread>> = Cell::new(None);
    static RETIRED: Cell<bool> = Cell::new(false);
}

/// Makes the calling OS thread simulated thread `thread` of a block-mode launch: its lane (for
/// `task!`, `taskwait!` and the thread identity) and its block. For the rest of the thread.
pub(crate) fn enter_block_thread(lane: LaneView, block: u32, thread: BlockThread) {
    let warps_per_block = lane.region().warps_per_block;
    let t = thread.view.thread;
    VIEW.with(|c| c.set(lane));
    IDENT.with(|c| {
        c.set(Some(Ident {
            lane: t % WARP_SIZE,
            warp: block * warps_per_block + t / WARP_SIZE,
            block,
            warps_per_block,
        }))
    });
    BLOCK.with(|c| c.set(Some(thread)));
    RETIRED.with(|r| r.set(false));
}

/// Makes the calling OS thread a thread of a work-first launch (`cpu::work_first`): its lane,
/// and the identity of a one-lane warp `index` in block `index`. Until
/// [`leave_work_first_thread`].
pub(crate) fn enter_work_first_thread(lane: LaneView, index: u32) {
    VIEW.with(|c| c.set(lane));
    IDENT.with(|c| {
        c.set(Some(Ident {
            lane: 0,
            warp: index,
            block: index,
            warps_per_block: 1,
        }))
    });
}

/// Undoes [`enter_work_first_thread`]: the launch is over, its lane gone.
pub(crate) fn leave_work_first_thread() {
    VIEW.with(|c| c.set(NO_LANE));
    IDENT.with(|c| c.set(None));
}

fn block_thread() -> BlockThread {
    match BLOCK.with(Cell::get) {
        Some(b) => b,
        None => panic!("gtap: a block-mode operation outside a block-mode launch"),
    }
}

/// The calling thread's block-mode state.
#[inline]
pub fn block_view() -> BlockView {
    block_thread().view
}

/// A simulated barrier hands a baton through every thread of the block: the block helpers do
/// their rounds on a copy, between two barriers, instead of one barrier a round.
pub const CHEAP_BARRIERS: bool = false;

/// The block scheduler's barrier: waits, passing the baton, until every thread of the block
/// has arrived.
#[inline]
pub fn block_barrier() {
    let b = block_thread();
    // SAFETY: the baton outlives every thread of the launch (they are scoped inside it).
    unsafe { &*b.baton }.barrier(b.member, crate::cpu::baton::SCHEDULER);
}

/// The helpers' barrier: a simulated barrier of its own, as on the GPU.
#[inline]
pub fn user_barrier() {
    let b = block_thread();
    // SAFETY: as in `block_barrier`.
    unsafe { &*b.baton }.barrier(b.member, crate::cpu::baton::HELPERS);
}

/// The GPU's barrier of the first warp alone, for helpers that use cheap barriers: never
/// called on the CPU, whose helpers run their rounds on a copy ([`CHEAP_BARRIERS`] is false).
pub fn user_warp_barrier() {
    unreachable!("the CPU executor's block helpers use no warp barrier")
}

/// Whether the calling block-mode thread retired after a panic in its task (thread 0, which
/// goes on scheduling but polls no more).
pub fn block_thread_retired() -> bool {
    RETIRED.with(Cell::get)
}

/// A block-mode thread whose task panicked (the error is raised; the launch is aborting) takes
/// no further part, as a GPU thread that exits in the panic handler: this thread ends here,
/// unwinding to its start ([`crate::cpu::block`]), and its block's barriers stop waiting for
/// it. Thread 0 runs its block's scheduling warp, which goes on without it on the GPU too, so
/// it returns and only stops polling.
pub fn retire_block_thread() {
    let b = block_thread();
    // SAFETY: as in `block_barrier`.
    let baton = unsafe { &*b.baton };
    if b.view.thread == 0 {
        baton.retire(b.member);
        RETIRED.with(|r| r.set(true));
        return;
    }
    std::panic::resume_unwind(std::boxed::Box::new(crate::cpu::block::Retired));
}

/// The calling thread as a block-mode lane (in the CPU executor, its own lane view).
#[inline(always)]
pub fn current_block_lane() -> LaneView {
    current_lane()
}

/// The lane polling a task on this thread.
///
/// # Panics
/// If called outside a task (the macros only call it from task bodies).
#[inline(always)]
pub fn current_lane() -> LaneView {
    let view = VIEW.with(Cell::get);
    assert!(
        !view.ctx.is_null(),
        "gtap: task!/taskwait! reached outside a running task"
    );
    view
}

fn with_ident<R>(f: impl FnOnce(Ident) -> R) -> Option<R> {
    IDENT.with(Cell::get).map(f)
}

/// Lane index (0..32) of the calling task's thread.
pub fn lane_index() -> u32 {
    with_ident(|c| c.lane).unwrap_or(0)
}
/// Global warp index of the calling task's thread.
pub fn warp_index() -> u32 {
    with_ident(|c| c.warp).unwrap_or(0)
}
/// Block index of the calling task's thread.
pub fn block_index() -> u32 {
    with_ident(|c| c.block).unwrap_or(0)
}
/// Thread index within its block of the calling task's thread.
pub fn thread_index() -> u32 {
    with_ident(|c| (c.warp % c.warps_per_block) * WARP_SIZE + c.lane).unwrap_or(0)
}

/// A simulated warp: 32 lane contexts and the warp's shared state, run by one OS thread.
pub struct Warp {
    lanes: UnsafeCell<[LaneCtx; WARP_SIZE as usize]>,
    scratch: UnsafeCell<[Scratch; WARP_SIZE as usize]>,
    shared: WarpShared,
    region: *const Region,
    warp: u32,
    /// Order in which `each` visits the lanes.
    order: Cell<[u8; WARP_SIZE as usize]>,
    /// When set, the executor shuffles lane order and task placement with this generator.
    rng: Option<Cell<XorShift64>>,
}

impl Warp {
    /// A warp of the runtime `region` with global index `warp`. With `shuffle_seed`, lanes run in a
    /// random order and batches are placed on random lanes (the deterministic executor).
    pub fn new(region: *const Region, warp: u32, shuffle_seed: Option<u64>) -> Self {
        Self {
            // The warp runs on the thread that creates it, from about this depth of its stack.
            lanes: UnsafeCell::new(core::array::from_fn(|_| LaneCtx::starting_here())),
            scratch: UnsafeCell::new([[0; SCRATCH_WORDS]; WARP_SIZE as usize]),
            shared: WarpShared::new(),
            region,
            warp,
            order: Cell::new(core::array::from_fn(|i| i as u8)),
            rng: shuffle_seed.map(|s| Cell::new(XorShift64::new(s))),
        }
    }

    /// This warp's global index.
    #[inline(always)]
    pub fn id(&self) -> u32 {
        self.warp
    }

    /// The warp's shared state.
    #[inline(always)]
    pub fn shared(&self) -> &WarpShared {
        &self.shared
    }

    /// The runtime this warp belongs to.
    #[inline(always)]
    pub fn region(&self) -> &Region {
        // SAFETY: the executor keeps the runtime alive for as long as its warps.
        unsafe { &*self.region }
    }

    /// The same value on every lane.
    #[inline(always)]
    pub fn splat<T: Copy>(v: T) -> Lanes<T> {
        [v; WARP_SIZE as usize]
    }

    /// Runs `f(lane)` for every lane and collects the results: per-lane work of the scheduler
    /// itself, which needs no lane context (cheaper than [`Warp::each`] on the CPU).
    #[inline]
    pub fn lanes<U: Copy>(&self, f: impl FnMut(u32) -> U) -> Lanes<U> {
        let mut f = f;
        core::array::from_fn(|lane| f(lane as u32))
    }

    /// Runs `f(lane, value)` for every lane and collects the results. While `f` runs for a lane,
    /// [`current_lane`] refers to that lane.
    #[inline]
    pub fn each<T: Copy, U: Copy>(&self, v: Lanes<T>, mut f: impl FnMut(u32, T) -> U) -> Lanes<U> {
        let mut out: [Option<U>; WARP_SIZE as usize] = [None; WARP_SIZE as usize];
        let warps_per_block = self.region().warps_per_block;
        let saved = (VIEW.with(Cell::get), IDENT.with(Cell::get));
        for &lane in self.order.get().iter() {
            let lane = lane as usize;
            // SAFETY: each lane context is only touched through its own view while `f` runs for
            // that lane; the pointer stays valid for the life of `self`.
            let ctx = unsafe { (*self.lanes.get()).as_mut_ptr().add(lane) };
            // SAFETY: as above, for the lane's scratch memory.
            let scratch = unsafe { (*self.scratch.get()).as_mut_ptr().add(lane) };
            VIEW.with(|c| {
                c.set(LaneView {
                    ctx,
                    shared: &self.shared,
                    region: self.region,
                    warp: self.warp,
                    scratch,
                })
            });
            IDENT.with(|c| {
                c.set(Some(Ident {
                    lane: lane as u32,
                    warp: self.warp,
                    block: self.warp / warps_per_block,
                    warps_per_block,
                }))
            });
            out[lane] = Some(f(lane as u32, v[lane]));
        }
        VIEW.with(|c| c.set(saved.0));
        IDENT.with(|c| c.set(saved.1));
        out.map(|o| o.unwrap_or_else(|| unreachable!("every lane is visited")))
    }

    /// Runs `f` once for the warp; every lane gets its result, passed through its words as on
    /// the GPU (so the CPU tests check each value's encoding).
    #[inline(always)]
    pub fn leader<T: Broadcast>(&self, f: impl FnOnce() -> T) -> T {
        T::from_words(f().to_words())
    }

    /// Lane `lane`'s id, on every lane (a shuffle on the GPU, where a lane that retired after
    /// a panic gives [`NONE`](crate::record::NONE); here lanes unwind and keep their values).
    #[inline(always)]
    pub fn at(&self, v: Lanes<u32>, lane: u32) -> u32 {
        v[lane as usize]
    }

    /// Runs `f` once for the warp.
    #[inline(always)]
    pub fn leader_only(&self, f: impl FnOnce()) {
        f()
    }

    /// Whether `v` holds on any lane (a warp vote).
    #[inline(always)]
    pub fn any(&self, v: Lanes<bool>) -> bool {
        v.iter().any(|&b| b)
    }

    /// On how many lanes `v` holds (a warp vote).
    #[inline(always)]
    pub fn count(&self, v: Lanes<bool>) -> u32 {
        v.iter().filter(|&&b| b).count() as u32
    }

    /// Applies `f` to every lane's value: plain per-lane arithmetic of the scheduler.
    #[inline(always)]
    pub fn map<T: Copy, U: Copy>(v: Lanes<T>, f: impl FnMut(T) -> U) -> Lanes<U> {
        v.map(f)
    }

    /// Warp barrier with memory ordering among the lanes (lanes run in turn on the CPU).
    #[inline(always)]
    pub fn sync(&self) {}

    /// Spreads the tasks of a batch over random lanes and reshuffles the lane order (only in
    /// the deterministic executor). [`NONE`](crate::record::NONE) marks a lane without a
    /// task.
    pub fn scramble(&self, batch: Lanes<u32>) -> Lanes<u32> {
        let Some(rng) = &self.rng else { return batch };
        let next = || {
            let mut r = rng.get();
            let x = r.next_u64();
            rng.set(r);
            x
        };
        let mut placed = batch;
        let mut order = self.order.get();
        for i in (1..WARP_SIZE as usize).rev() {
            placed.swap(i, next() as usize % (i + 1));
            order.swap(i, next() as usize % (i + 1));
        }
        self.order.set(order);
        placed
    }
}

/// Runs one poll of user code. A panic is caught and reported as a device error; the task is
/// then abandoned (`None`) and the launch aborts.
#[cfg(not(loom))]
#[inline]
pub fn guard(f: impl FnOnce() -> bool) -> Option<bool> {
    install_panic_hook();
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(done) => Some(done),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&'static str>()
                .copied()
                .or_else(|| {
                    payload
                        .downcast_ref::<std::string::String>()
                        .map(|s| s.as_str())
                })
                .unwrap_or("panic with a non-string payload");
            let site = PANIC_SITE.with(|s| s.take());
            crate::error::raise_panic(message, site);
            None
        }
    }
}

/// Runs one poll of user code. Under loom a panic is a failure of the model, left to loom.
#[cfg(loom)]
#[inline]
pub fn guard(f: impl FnOnce() -> bool) -> Option<bool> {
    Some(f())
}

/// Records where a panic inside a task happened (the payload carries only the message) and
/// keeps the default hook quiet for panics that gtap reports as device errors.
#[cfg(not(loom))]
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(std::boxed::Box::new(move |info| {
            if with_ident(|_| ()).is_some() {
                if let Some(loc) = info.location() {
                    let file: &'static str = std::boxed::Box::leak(loc.file().into());
                    PANIC_SITE.with(|s| s.set(Some((file, loc.line()))));
                }
            } else {
                previous(info);
            }
        }));
    });
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::record::NONE;
    use crate::testing::{Launch, geometry};

    fn warp(launch: &'static Launch, seed: Option<u64>) -> Warp {
        Warp::new(launch.region(), 0, seed)
    }

    /// The lanes in the order [`Warp::each`] visits them.
    fn visiting_order(warp: &Warp) -> Vec<u32> {
        let mut order = Vec::new();
        warp.each(Warp::splat(()), |lane, ()| order.push(lane));
        order
    }

    /// A batch of `n` ids (100, 101, ...) on the first lanes, [`NONE`] on the rest.
    fn batch(n: u32) -> Lanes<u32> {
        core::array::from_fn(|l| if (l as u32) < n { 100 + l as u32 } else { NONE })
    }

    fn sorted(v: Lanes<u32>) -> Lanes<u32> {
        let mut v = v;
        v.sort_unstable();
        v
    }

    #[test]
    fn lanes_and_each_give_every_lane_its_own_value() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, None);
        let squares = w.lanes(|l| l * l);
        let doubled = w.each(squares, |l, v| (l, v * 2));
        for l in 0..WARP_SIZE {
            assert_eq!(squares[l as usize], l * l);
            assert_eq!(doubled[l as usize], (l, 2 * l * l));
        }
        assert_eq!(Warp::map(squares, |v| v + 1)[3], 10);
        assert_eq!(visiting_order(&w), (0..WARP_SIZE).collect::<Vec<_>>());
    }

    #[test]
    fn a_lane_is_identified_only_while_it_runs() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, None);
        let inside = w.each(Warp::splat(()), |_, ()| lane_index());
        assert_eq!(inside[31], 31);
        // Outside `each` there is no lane: the identity reads as thread 0, and the lane
        // pointer is gone again.
        assert_eq!((lane_index(), warp_index(), thread_index()), (0, 0, 0));
        assert!(VIEW.with(Cell::get).ctx.is_null());
    }

    #[test]
    fn the_leader_broadcasts_and_any_votes() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, None);
        let mut calls = 0;
        assert_eq!(
            w.leader(|| {
                calls += 1;
                0xdead_beef_u32
            }),
            0xdead_beef
        );
        assert_eq!(calls, 1, "the leader runs once for the warp");
        assert!(!w.any(Warp::splat(false)));
        let mut one = Warp::splat(false);
        one[17] = true;
        assert!(w.any(one));
    }

    #[test]
    fn without_a_seed_scramble_changes_nothing() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, None);
        assert_eq!(w.scramble(batch(5)), batch(5));
        assert_eq!(visiting_order(&w), (0..WARP_SIZE).collect::<Vec<_>>());
    }

    #[test]
    fn scramble_permutes_the_batch_and_the_lane_order() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, Some(11));
        let mut moved = false;
        for n in [1, 5, 32] {
            let placed = w.scramble(batch(n));
            assert_eq!(
                sorted(placed),
                sorted(batch(n)),
                "{n} ids, none lost or doubled"
            );
            moved |= placed != batch(n);
            let mut order = visiting_order(&w);
            moved |= order != (0..WARP_SIZE).collect::<Vec<_>>();
            order.sort_unstable();
            assert_eq!(order, (0..WARP_SIZE).collect::<Vec<_>>(), "each lane once");
        }
        assert!(moved, "a seeded warp moves tasks and lanes around");
    }

    #[test]
    fn scramble_is_reproducible_per_seed() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let run = |seed| {
            let w = warp(launch, Some(seed));
            (0..4)
                .map(|_| (w.scramble(batch(20)), visiting_order(&w)))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn adds_by_every_lane_hand_out_distinct_slots() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let w = warp(launch, Some(3));
        w.scramble(batch(32));
        let counter = LocalU32::new(u32::MAX - 9);
        let slots = w.each(Warp::splat(()), |_, ()| counter.fetch_add(1));
        let mut slots = slots.map(|s| s.wrapping_sub(u32::MAX - 9));
        slots.sort_unstable();
        assert_eq!(slots, core::array::from_fn(|i| i as u32));
        // The counter wrapped past 2^32 like the device's.
        assert_eq!(counter.load(), 22);
    }

    #[test]
    fn local_compare_exchange_replaces_only_the_expected_value() {
        let c = LocalU32::new(4);
        assert!(!c.compare_exchange(3, 9));
        assert_eq!(c.load(), 4);
        assert!(c.compare_exchange(4, 9));
        assert_eq!(c.load(), 9);
    }

    #[test]
    fn device_atomics_return_what_they_found() {
        let a = AtomicU32(atomic::AtomicU32::new(u32::MAX));
        assert_eq!(a.fetch_add(2, Ordering::AcqRel), u32::MAX);
        assert_eq!(a.fetch_sub(1, Ordering::AcqRel), 1);
        assert_eq!(a.compare_exchange(7, 8, Ordering::AcqRel), Err(0));
        assert_eq!(a.compare_exchange(0, 8, Ordering::Release), Ok(0));
        assert_eq!(a.load(Ordering::Acquire), 8);
    }
}
