//! The architecture layer: the only code that differs between the GPU and the CPU.
//!
//! Everything above this module (queues, pools, joins, the scheduler) is written once and
//! runs unchanged on an NVIDIA GPU and in the CPU executor. The layer provides:
//!
//! * [`AtomicU32`]: a 32-bit atomic in device memory whose `Ordering` is honoured and whose
//!   scope is the whole GPU. On the GPU every operation is inline PTX that names its
//!   semantics and scope (`atom.acq_rel.gpu.add.u32`, `ld.acquire.gpu.u32`, ...), because
//!   LLVM's NVPTX backend silently drops the ordering of read-modify-write atomics and gives
//!   the rest system scope. On the CPU it is `core::sync::atomic::AtomicU32`.
//! * [`LocalU32`]: a counter shared by the lanes of one warp (shared memory on the GPU).
//! * [`fence_release`] and [`fence_acquire`] (GPU scope; one-way fences from sm_90, the
//!   acquire-release fence before) and [`fence_system`] (before the host reads).
//! * [`Warp`] and [`Lanes`]: warp-level execution. Scheduler code is written at warp level:
//!   a value of type `Lanes<T>` holds one `T` per lane, [`Warp::each`] runs a closure per lane
//!   and [`Warp::leader`] runs a closure once and gives every lane its result (a
//!   [`Broadcast`] value, shuffled word by word on the GPU). On the GPU
//!   `Lanes<T>` is just `T` (each hardware lane holds its own) and `each` is a plain call; on the
//!   CPU `Lanes<T>` is `[T; 32]` and `each` loops over the simulated lanes.
//! * [`current_lane`]: the context of the lane that is polling a task, so that `task!` and
//!   `taskwait!` inside a task body reach the runtime without extra parameters. On the GPU it is
//!   found in shared memory from the thread index; on the CPU a thread-local points to it.
//! * Thread identity for user code ([`lane_index`], [`warp_index`], [`block_index`]).
//! * Block mode ([`crate::block`]): [`BlockView`] (the block's shared state, exchange cells and
//!   lent shared memory, and the thread's index), [`block_barrier`] (the scheduler's),
//!   [`user_barrier`] (the helpers'; [`user_warp_barrier`] for their rounds inside the first
//!   warp), [`current_block_lane`]. On the GPU they are shared memory
//!   and `barrier.sync`; in the CPU executor a simulated block of OS threads whose barriers pass a
//!   baton ([`crate::cpu`]).

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
pub use nvptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::*;

/// Number of lanes in a warp, on the GPU and in the simulated warps of the CPU executor.
pub const WARP_SIZE: u32 = 32;

/// Where a block-mode thread finds its block's state.
#[derive(Clone, Copy)]
pub struct BlockView {
    /// The block's scheduling state.
    pub(crate) shared: *const crate::block::BlockShared,
    /// The threads' exchange cells (`EXCHANGE_BYTES` each, 16-byte aligned).
    pub(crate) exchange: *mut u8,
    /// The shared memory lent to tasks (16-byte aligned).
    pub(crate) user: *mut u8,
    /// Its size in bytes (the launch's `block_shared_bytes`).
    pub(crate) user_bytes: u32,
    /// The calling thread's index in the block.
    pub(crate) thread: u32,
    /// Threads in the block.
    pub(crate) threads: u32,
}

/// A value the warp's leader lane computes and hands to every lane ([`Warp::leader`]). On the
/// GPU a lane can only receive another lane's registers one 32-bit word per shuffle, so the
/// value travels as its words.
pub trait Broadcast: Copy {
    /// The value as words: `[u32; N]`.
    type Words: Copy + Default + AsMut<[u32]>;
    /// The value's words.
    fn to_words(self) -> Self::Words;
    /// The value back from its words.
    fn from_words(words: Self::Words) -> Self;
}

impl Broadcast for u32 {
    type Words = [u32; 1];
    #[inline(always)]
    fn to_words(self) -> [u32; 1] {
        [self]
    }
    #[inline(always)]
    fn from_words([v]: [u32; 1]) -> Self {
        v
    }
}
