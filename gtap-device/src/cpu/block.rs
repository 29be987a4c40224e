//! Block mode in the CPU executor: a simulated block is `threads` OS threads, one per GPU
//! thread, that run one at a time and pass a baton at every barrier ([`super::baton`]).
//!
//! Every simulated thread runs [`BlockWorker::run`] exactly as a GPU thread does; thread 0 also
//! runs the block's scheduling warp (a simulated [`Warp`] whose lanes it steps through, as a
//! warp's OS thread does in thread mode). In parallel mode the blocks run in parallel, each
//! with its own baton; in the deterministic mode one seeded baton orders every thread of every
//! block, and the scheduling warps shuffle their lanes as in thread mode.

use core::cell::UnsafeCell;
use std::boxed::Box;
use std::vec::Vec;

use super::baton::Baton;
use super::{Aborted, Driver, Handed, Mode, SCHEDULER_STACK_BYTES, Shared, join};
use crate::abi::LaunchParams;
use crate::arch::{self, BlockThread, BlockView, WARP_SIZE, Warp};
use crate::block::BlockShared;
use crate::block::worker::BlockWorker;
use crate::lane::{LaneCtx, LaneView};
use crate::region::Region;
use crate::task::{BlockTask, Site};

/// One exchange cell (32 bytes, 16-byte aligned).
type ExchangeCell = UnsafeCell<[u128; 2]>;

/// A block's memory: what lives in its shared memory on the GPU.
struct SimBlock {
    /// The block's first warp: its scheduling state, stepped by thread 0.
    warp: Warp,
    shared: BlockShared,
    lanes: Box<[UnsafeCell<LaneCtx>]>,
    exchange: Box<[ExchangeCell]>,
    /// The memory lent to tasks, in 16-byte units (as aligned as on the GPU).
    user: Box<[UnsafeCell<u128>]>,
}

impl SimBlock {
    fn new(region: &Region, block: u32, seed: Option<u64>) -> Self {
        let threads = (region.warps_per_block * WARP_SIZE) as usize;
        Self {
            warp: Warp::new(region, block * region.warps_per_block, seed),
            shared: BlockShared::new(),
            lanes: (0..threads)
                .map(|_| UnsafeCell::new(LaneCtx::IDLE))
                .collect(),
            exchange: (0..threads).map(|_| UnsafeCell::new([0; 2])).collect(),
            user: (0..region.block_shared_bytes.div_ceil(16))
                .map(|_| UnsafeCell::new(0))
                .collect(),
        }
    }
}

/// A pointer the threads of a launch share. The baton lets one of a block's threads run at a
/// time and orders their accesses (its mutex), as the GPU's barriers do.
#[derive(Clone, Copy)]
struct Ptr<T>(*const T);
// SAFETY: see above; the pointee outlives the scope that runs the threads.
unsafe impl<T> Send for Ptr<T> {}

/// The unwinding payload of a simulated thread that retired after a panic in its task
/// (`arch::retire_block_thread`): an end, not a failure.
pub(crate) struct Retired;

/// Stack of a simulated block thread: the scheduler's and a task's frames (block-mode children
/// never run inline, so no more is needed).
const BLOCK_THREAD_STACK: usize = SCHEDULER_STACK_BYTES;

/// `entry!` in a block-mode kernel on the host.
pub(crate) fn entry<T: BlockTask, C: Copy + 'static, const Q: u32>(
    launch: &LaunchParams,
    site: &'static Site,
    args: T::Args,
    context: C,
) -> T::Output
where
    T::Output: Copy,
{
    let driver = Driver::of(launch);
    let region = Region::new(launch);
    let threads = (region.warps_per_block * WARP_SIZE) as usize;
    let blocks = (region.warps / region.warps_per_block) as usize;
    let seed = match driver.mode {
        Mode::Deterministic { seed } => Some(seed),
        // `run_watched` runs block-mode kernels of the work-first mode on `Parallel`.
        Mode::Parallel | Mode::WorkFirst => None,
    };
    let mix = |b: usize| seed.map(|s| (s ^ (b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
    let sims: Vec<SimBlock> = (0..blocks)
        .map(|b| SimBlock::new(&region, b as u32, mix(b)))
        .collect();
    let batons: Vec<Baton> = match seed {
        Some(s) => std::vec![Baton::new(blocks, threads, Some(s))],
        None => (0..blocks).map(|_| Baton::new(1, threads, None)).collect(),
    };
    let mut root = Some(Handed((args, context)));
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (b, sim) in sims.iter().enumerate() {
            for t in 0..threads {
                let (baton, member) = match seed {
                    Some(_) => (&batons[0], b * threads + t),
                    None => (&batons[b], t),
                };
                let root = if b == 0 && t == 0 { root.take() } else { None };
                let (region, sim, baton) = (Shared(&region), Ptr(sim), Ptr(baton));
                let handle = std::thread::Builder::new()
                    .stack_size(BLOCK_THREAD_STACK)
                    .spawn_scoped(s, move || {
                        let (region, sim, baton) = (region, sim, baton);
                        let root = root.map(Handed::into_inner);
                        // SAFETY: the region, block and baton outlive this scoped thread.
                        let (region, sim, baton) = unsafe { (&*region.0, &*sim.0, &*baton.0) };
                        thread::<T, _, Q>(
                            region, sim, b as u32, t as u32, baton, member, site, root,
                        );
                    })
                    .unwrap_or_else(|e| panic!("gtap: cannot start a CPU block thread: {e}"));
                handles.push(handle);
            }
        }
        for baton in &batons {
            baton.start();
        }
        handles.into_iter().for_each(join);
    });
    if region.control().aborted() {
        std::panic::resume_unwind(Box::new(Aborted));
    }
    // SAFETY: the root finished, so the result area holds its `T::Output`.
    unsafe { (region.root_result as *const T::Output).read() }
}

/// Simulated thread `t` of block `b`: a block worker, to the end of the launch; `root` holds
/// the root's arguments and the launch's context on the thread that creates the root.
#[allow(clippy::too_many_arguments)]
fn thread<T: BlockTask, C: Copy, const Q: u32>(
    region: &Region,
    sim: &SimBlock,
    b: u32,
    t: u32,
    baton: &Baton,
    member: usize,
    site: &'static Site,
    root: Option<(T::Args, C)>,
) {
    baton.register(member);
    let ctx = sim.lanes[t as usize].get();
    // SAFETY: each thread initialises and uses only its own context.
    unsafe { ctx.write(LaneCtx::starting_here()) };
    let lane = LaneView {
        ctx,
        shared: sim.warp.shared(),
        region,
        warp: sim.warp.id(),
        // Block mode has no scratch memory, as on the GPU.
        scratch: core::ptr::null_mut(),
    };
    let view = BlockView {
        shared: &sim.shared,
        exchange: sim.exchange.as_ptr() as *mut u8,
        user: sim.user.as_ptr() as *mut u8,
        user_bytes: region.block_shared_bytes,
        thread: t,
        threads: sim.lanes.len() as u32,
    };
    arch::enter_block_thread(
        lane,
        b,
        BlockThread {
            view,
            baton,
            member,
        },
    );
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        baton.wait_turn(member);
        let mut worker = BlockWorker::<Q>::new((t == 0).then_some(&sim.warp));
        if let Some((args, context)) = root {
            worker.start_root(|w| crate::block::task::create_root::<T>(w, site, args, context));
        }
        worker.run::<T>();
    }));
    // Hand the baton on even after a runtime bug, so that the other threads can end.
    baton.finish(member);
    match ran {
        Err(payload) if !payload.is::<Retired>() => std::panic::resume_unwind(payload),
        _ => {}
    }
}
