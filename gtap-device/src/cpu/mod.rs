//! The CPU executor: the GPU scheduler, unchanged, driven by OS threads or by a seeded
//! single-threaded simulation.
//!
//! Its one entry point is [`run`]: it runs a kernel on a [`State`] (the runtime's region and
//! error report in host memory, laid out as on the GPU) and returns the kernel's value or why
//! there is none.
//!
//! * [`Mode::WorkFirst`]: no warps, queues or pools: task functions run as `rayon::join` runs
//!   closures, children stealable from their parent's wait ([`work_first`]); the fallback when
//!   there is no GPU.
//! * [`Mode::Parallel`]: one OS thread per warp, each running [`Worker::run`] exactly as a GPU
//!   warp does, except that it creates tasks lazily (a spawn polls its child at once while the
//!   warp has work for thieves: see `at_once.rs`): the GPU's scheduler on OS threads.
//! * [`Mode::Deterministic`]: every warp lives on one thread. A seeded generator picks
//!   which warp steps next, shuffles the order of lanes within a step, places each task of a
//!   batch on a random lane, picks a random non-empty queue instead of the fullest, seeds
//!   victim selection, and at some spawns runs the child first, before its parent goes on
//!   (`at_once.rs`). The same seed gives the same schedule; different seeds resume
//!   continuations on different lanes, warps and blocks. A program whose result changes with
//!   the seed or the queue count depends on scheduling (thread identity across a wait, queue
//!   choice, reading what a child writes before the wait that joins it) and is wrong on the
//!   GPU too.
//!
//! Block-mode kernels run on simulated blocks of OS threads with real barriers, in both modes
//! ([`block`]).

use core::sync::atomic::Ordering;
use core::time::Duration;
use std::boxed::Box;
use std::panic::{self, AssertUnwindSafe};
use std::string::{String, ToString};
use std::sync::mpsc;
use std::vec::Vec;

pub(crate) mod baton;
pub(crate) mod block;
pub(crate) mod work_first;

use crate::Kernel;
use crate::abi::{
    DEFAULT_BLOCK_SHARED_BYTES, ErrorCode, ErrorReport, LaunchParams, Layout, OPT_CHILD_FIRST,
    OPT_LAZY_SPAWN, OPT_NO_SCRATCH, OPT_RANDOM_QUEUE, OPT_WORK_FIRST, POOL_CELL_BYTES,
    REGION_ALIGN, TraceEvent, WarpStats, WarpStatus, WarpTraceMeta,
};
use crate::arch::Warp;
use crate::error::{Failure, Place, raise_at};
use crate::math::XorShift64;
use crate::queue::KEEP;
use crate::region::Region;
use crate::scheduler::{Control, Step, Worker};
use crate::task::{Site, TaskFunction, create_root};

/// How the CPU executor runs the warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Task functions run depth-first on OS threads (one per warp of the layout), children
    /// stolen as `rayon::join` steals closures: the fast executor for programs without a GPU
    /// ([`work_first`]). A block-mode kernel, or a launch that records an event trace, runs on
    /// [`Mode::Parallel`] instead.
    WorkFirst,
    /// One OS thread per warp (`gtap-host`'s default: one warp per available hardware thread),
    /// each running the GPU's scheduler.
    Parallel,
    /// Every warp on the calling thread, scheduled by a generator seeded with `seed`: lanes,
    /// warps, queues and victims are chosen at random, so tasks resume on different lanes,
    /// warps and blocks than they suspended on. The same seed gives the same schedule.
    /// (`gtap-host`'s default: 2 blocks of 2 warps.)
    Deterministic {
        /// Seed of the schedule.
        seed: u64,
    },
}

/// The runtime's memory in host memory: the region, laid out by a [`Layout`] as on the GPU,
/// and the error report.
pub struct State {
    mem: RegionMemory,
    error: Box<ErrorReport>,
    layout: Layout,
    stack_bytes: u32,
    block_shared_bytes: u32,
    /// Whether thread-mode tasks have scratch memory ([`State::with_thread_scratch`]).
    thread_scratch: bool,
    /// The threads of [`Mode::WorkFirst`], started by its first launch.
    pool: Option<rayon_core::ThreadPool>,
}

impl State {
    /// Zeroed memory for `layout`, run by worker threads with `stack_bytes` of stack for
    /// children run inline ([`LaunchParams::stack_bytes`]) beyond the scheduler's own.
    pub fn new(layout: Layout, stack_bytes: u32) -> Self {
        Self {
            mem: RegionMemory::zeroed(
                (layout.bytes as usize).div_ceil(REGION_ALIGN) * REGION_ALIGN,
            ),
            error: Box::new(ErrorReport::EMPTY),
            layout,
            stack_bytes,
            block_shared_bytes: DEFAULT_BLOCK_SHARED_BYTES,
            thread_scratch: true,
            pool: None,
        }
    }

    /// Lends block-mode tasks `bytes` of simulated shared memory per block
    /// ([`LaunchParams::block_shared_bytes`]; default [`DEFAULT_BLOCK_SHARED_BYTES`]).
    pub fn with_block_shared_bytes(mut self, bytes: u32) -> Self {
        self.block_shared_bytes = bytes;
        self
    }

    /// Whether thread-mode tasks have scratch memory (default: yes); without it
    /// `gtap::thread::scratch` is a typed panic, as on a GPU runtime that reserves none
    /// ([`OPT_NO_SCRATCH`]).
    pub fn with_thread_scratch(mut self, on: bool) -> Self {
        self.thread_scratch = on;
        self
    }

    /// The region's layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Zeroes the whole region and the error report.
    pub fn reset(&mut self) {
        self.bytes().fill(0);
        *self.error = ErrorReport::EMPTY;
    }

    /// Each warp's statistics of the last launch.
    pub fn stats(&self) -> &[WarpStats] {
        // SAFETY: the statistics region holds one `WarpStats` per warp, zeroed or written by
        // the workers of a finished launch; regions are REGION_ALIGN-aligned, enough for it.
        unsafe {
            std::slice::from_raw_parts(
                self.mem.as_ptr().add(self.layout.stats as usize) as *const WarpStats,
                self.layout.geometry.warps() as usize,
            )
        }
    }

    /// The event trace of the last launch: each warp's summary and every warp's whole buffer
    /// (`trace_events_per_warp` events per warp, of which warp `w` recorded the first
    /// `min(events, trace_events_per_warp)`); both empty when the layout has no trace.
    pub fn trace(&self) -> (&[WarpTraceMeta], &[TraceEvent]) {
        let l = &self.layout;
        if l.trace_events_per_warp == 0 {
            return (&[], &[]);
        }
        let warps = l.geometry.warps() as usize;
        let base = self.mem.as_ptr();
        // SAFETY: with the trace on, the layout places one `WarpTraceMeta` per warp at
        // `trace_meta` and `trace_events_per_warp` `TraceEvent`s per warp at `trace`, aligned
        // (REGION_ALIGN) inside `mem`; they hold only integers, so any bytes are valid values,
        // and no launch runs while `self` is borrowed.
        unsafe {
            (
                std::slice::from_raw_parts(
                    base.add(l.trace_meta as usize) as *const WarpTraceMeta,
                    warps,
                ),
                std::slice::from_raw_parts(
                    base.add(l.trace as usize) as *const TraceEvent,
                    warps * l.trace_events_per_warp as usize,
                ),
            )
        }
    }

    /// Each warp's last published status word ([`WarpStatus`]).
    pub fn status_words(&self) -> Vec<u64> {
        // SAFETY: the status region holds one `WarpStatus` per warp, aligned, inside `mem`;
        // no launch runs while `self` is borrowed.
        let words = unsafe {
            std::slice::from_raw_parts(
                self.mem.as_ptr().add(self.layout.status as usize) as *const WarpStatus,
                self.layout.geometry.warps() as usize,
            )
        };
        words.iter().map(WarpStatus::load).collect()
    }

    fn bytes(&mut self) -> &mut [u8] {
        self.mem.as_mut_slice()
    }

    /// The parameters of a launch on this memory.
    fn params(&mut self, mode: Mode, driver: &Driver) -> LaunchParams {
        let (options, seed) = match mode {
            Mode::WorkFirst => (OPT_WORK_FIRST, 0x5eed),
            Mode::Parallel => (OPT_LAZY_SPAWN, 0x5eed),
            Mode::Deterministic { seed } => (
                OPT_RANDOM_QUEUE | OPT_CHILD_FIRST,
                seed as u32 ^ (seed >> 32) as u32,
            ),
        };
        LaunchParams {
            base: self.mem.as_mut_ptr() as u64,
            error: &mut *self.error as *mut ErrorReport as u64,
            layout: self.layout,
            options: if self.thread_scratch {
                options
            } else {
                options | OPT_NO_SCRATCH
            },
            seed,
            host: driver as *const Driver as u64,
            stack_bytes: self.stack_bytes,
            block_shared_bytes: self.block_shared_bytes,
        }
    }

    /// Zeroes the error report, the metadata and the free-id cells the last launch used (as
    /// far as each warp's pool counted frees); the cells are most of the state and a launch
    /// rarely touches them all.
    fn clear_for_launch(&mut self) {
        *self.error = ErrorReport::EMPTY;
        let layout = self.layout;
        let cells = 1u64 << layout.geometry.id_shift();
        let driver = Driver {
            mode: Mode::Parallel,
            pool: core::ptr::null(),
        };
        let region = Region::new(&self.params(Mode::Parallel, &driver));
        let used: Vec<u64> = (0..layout.geometry.warps())
            .map(|w| (region.pool_meta(w).frees.load(Ordering::Relaxed) as u64).min(cells))
            .collect();
        let bytes = self.bytes();
        for (w, used) in used.into_iter().enumerate() {
            let first = layout.pool_cells + w as u64 * cells * POOL_CELL_BYTES;
            bytes[first as usize..(first + used * POOL_CELL_BYTES) as usize].fill(0);
        }
        let reset = layout.reset_range();
        bytes[reset.start as usize..reset.end as usize].fill(0);
    }
}

/// The region's bytes: zeroed by `calloc`, which for a large region means fresh pages that the
/// OS maps zeroed on first touch, so that a region sized for a GPU's budget costs only what a
/// launch touches (writing every byte faulted in gigabytes up front). The system allocator
/// zeroes lazily only at its own small alignment, so the region starts at the first
/// [`REGION_ALIGN`] boundary of an allocation that many bytes larger.
struct RegionMemory {
    bytes: Vec<u8>,
    offset: usize,
    len: usize,
}

impl RegionMemory {
    fn zeroed(len: usize) -> Self {
        let bytes = std::vec![0u8; len + REGION_ALIGN];
        let offset = bytes.as_ptr().align_offset(REGION_ALIGN);
        Self { bytes, offset, len }
    }

    fn as_ptr(&self) -> *const u8 {
        self.bytes[self.offset..].as_ptr()
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes[self.offset..].as_mut_ptr()
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.offset..self.offset + self.len]
    }
}

/// Why [`run`] returned no value.
#[derive(Clone, Debug)]
pub enum RunError {
    /// A device failure stopped the launch; the report says which (empty if none was
    /// written, which would be a runtime bug).
    Aborted(Box<ErrorReport>),
    /// The kernel body panicked outside a task (its message).
    Panicked(String),
}

/// Runs kernel `K` with `args` on `state` in `mode`, to completion: the CPU executor's one
/// entry point.
pub fn run<K: Kernel>(state: &mut State, mode: Mode, args: K::Args) -> Result<K::Output, RunError> {
    run_watched::<K, (), fn(Monitor)>(state, mode, args, None).0
}

/// A running launch's warp status words and stop word, for a watchdog on a thread of its own
/// ([`run_watched`]).
pub struct Monitor {
    status: *const WarpStatus,
    warps: usize,
    control: *const Control,
    ended: mpsc::Receiver<()>,
}

// SAFETY: the pointers reach atomics of a region that outlives the watching thread (it is
// scoped inside `run_watched`), and the workers access those words only atomically too.
unsafe impl Send for Monitor {}

impl Monitor {
    /// Waits up to `pause` for the launch to end; whether it has.
    pub fn wait(&self, pause: Duration) -> bool {
        !matches!(
            self.ended.recv_timeout(pause),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    }

    /// Reads every warp's status word ([`WarpStatus`]) into `words` (one per warp).
    pub fn read(&self, words: &mut [u64]) {
        // SAFETY: `warps` status words in the live region (see the `Send` impl).
        let status = unsafe { std::slice::from_raw_parts(self.status, self.warps) };
        for (word, status) in words.iter_mut().zip(status) {
            *word = status.load();
        }
    }

    /// Stops the launch, unless it already ended: every worker stops at its next check.
    pub fn stop(&self) {
        // SAFETY: the control words of the live region (see the `Send` impl).
        unsafe { &*self.control }.stop_by_watchdog();
    }

    /// Warps of the launch.
    pub fn warps(&self) -> usize {
        self.warps
    }
}

/// [`run`], with `watch` (if any) on a thread of its own beside the launch, given the launch's
/// [`Monitor`]: the host's watchdog. Returns the launch's result and `watch`'s.
pub fn run_watched<K: Kernel, W: Send, F: FnOnce(Monitor) -> W + Send>(
    state: &mut State,
    mode: Mode,
    args: K::Args,
    watch: Option<F>,
) -> (Result<K::Output, RunError>, Option<W>) {
    state.clear_for_launch();
    // What the work-first executor does not do: simulated blocks and the event trace.
    let mode = match mode {
        Mode::WorkFirst if K::BLOCK_SIZE != 0 || state.layout.trace_events_per_warp != 0 => {
            Mode::Parallel
        }
        mode => mode,
    };
    if mode == Mode::WorkFirst && state.pool.is_none() {
        state.pool = Some(work_first_pool(&state.layout, state.stack_bytes));
    }
    let driver = Driver {
        mode,
        pool: state
            .pool
            .as_ref()
            .map_or(core::ptr::null(), |p| p as *const _),
    };
    let params = state.params(mode, &driver);
    let region = Region::new(&params);
    let (done, ended) = mpsc::channel::<()>();
    let monitor = Monitor {
        status: region.status(0),
        warps: region.warps as usize,
        control: region.control(),
        ended,
    };
    let (ran, watched) = std::thread::scope(|s| {
        let watcher = watch.map(|watch| s.spawn(move || watch(monitor)));
        let ran = panic::catch_unwind(AssertUnwindSafe(|| K::run_cpu(&params, args)));
        drop(done);
        let watched = watcher.map(|w| w.join().unwrap_or_else(|p| panic::resume_unwind(p)));
        (ran, watched)
    });
    let ran = match ran {
        Ok(value) => Ok(value),
        Err(payload) if payload.is::<Aborted>() => Err(RunError::Aborted(state.error.clone())),
        Err(payload) => Err(RunError::Panicked(
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".into()),
        )),
    };
    (ran, watched)
}

/// The record size of every task function linked into this program (name, bytes; `u32::MAX`
/// when over-aligned), which sizes the executor's task slots.
pub fn task_records() -> impl Iterator<Item = (&'static str, u32)> {
    crate::task::TASK_RECORDS.iter().map(|r| (r.name, r.bytes))
}

/// The executor's settings, reached from [`LaunchParams::host`].
#[derive(Debug)]
struct Driver {
    mode: Mode,
    /// The work-first executor's threads (null in the other modes).
    pool: *const rayon_core::ThreadPool,
}

impl Driver {
    /// The executor's settings of the launch `launch` describes.
    fn of(launch: &LaunchParams) -> &Driver {
        assert!(
            launch.host != 0,
            "gtap: kernels run on the host only through gtap-host's CPU executor"
        );
        // SAFETY: `host` is set by the launcher to a `Driver` that outlives the launch.
        unsafe { &*(launch.host as *const Driver) }
    }
}

/// Threads for [`Mode::WorkFirst`]: one per warp of `layout`, each with `stack_bytes` for the
/// tasks nested on it beside the executor's own frames.
fn work_first_pool(layout: &Layout, stack_bytes: u32) -> rayon_core::ThreadPool {
    rayon_core::ThreadPoolBuilder::new()
        .num_threads(layout.geometry.warps() as usize)
        .stack_size(stack_bytes as usize + SCHEDULER_STACK_BYTES)
        .thread_name(|i| std::format!("gtap-cpu-{i}"))
        .build()
        .unwrap_or_else(|e| panic!("gtap: cannot start the CPU executor's threads: {e}"))
}

/// Unwinding payload of a kernel body whose launch aborted with a device error (the error
/// report says which); [`run`] catches it.
#[derive(Debug)]
struct Aborted;

/// Stack a CPU worker thread has beyond [`LaunchParams::stack_bytes`], for the frames of the
/// executor and the scheduler above the point its warp starts measuring from.
const SCHEDULER_STACK_BYTES: usize = 1 << 20;

/// Runs `f` on a new scoped thread with a stack of the launch's `stack_bytes` plus the
/// scheduler's, so that an inline child's stack check (see [`crate::task`]) measures against
/// a stack that really is there. A panic escaping `f` (a runtime bug; user panics are caught
/// per task) is passed on with its payload.
fn on_worker_thread<'s, 'e>(
    scope: &'s std::thread::Scope<'s, 'e>,
    region: &Region,
    f: impl FnOnce() + Send + 's,
) -> std::thread::ScopedJoinHandle<'s, ()> {
    std::thread::Builder::new()
        .stack_size(region.stack_bytes as usize + SCHEDULER_STACK_BYTES)
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("gtap: cannot start a CPU worker thread: {e}"))
}

/// A value the calling thread hands to the one worker thread that uses it, and waits (in the
/// thread scope) until that thread is done: the root task's arguments and result area.
struct Handed<T>(T);

// SAFETY: the value is used by one thread at a time: the worker it was handed to, while the
// calling thread is blocked in the scope that joins that worker.
unsafe impl<T> Send for Handed<T> {}

impl<T> Handed<T> {
    /// The value (a method, so a closure captures the whole wrapper, not its field).
    fn into_inner(self) -> T {
        self.0
    }
}

/// Waits for a worker thread, passing on a panic that escaped it.
fn join(handle: std::thread::ScopedJoinHandle<'_, ()>) {
    if let Err(payload) = handle.join() {
        std::panic::resume_unwind(payload);
    }
}

/// Rounds in which no warp of the deterministic executor could do anything, per warp, before
/// it reports the launch as stalled (`gtap-host` turns the record into the same stall report as
/// its watchdog's, with every warp's published state).
const STALL_ROUNDS: u64 = 10_000;

/// `entry!` on the host.
pub(crate) fn entry<T: TaskFunction, C: Copy + 'static, const Q: u32>(
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
    let shared = Shared(&region);
    match driver.mode {
        Mode::WorkFirst => {
            // SAFETY: `run_watched` sets the pool for this mode; the state that owns it
            // outlives the launch.
            let pool = unsafe { &*driver.pool };
            work_first::run_root::<T>(pool, &region, site, args, context);
        }
        Mode::Deterministic { seed } => {
            let mut root = root_once::<T>(site, args, context);
            std::thread::scope(|s| {
                let root = Handed(&mut root);
                join(on_worker_thread(s, &region, move || {
                    let (shared, root) = (shared, root.into_inner());
                    // SAFETY: the view outlives the scope (see `Shared`).
                    deterministic::<T, Q>(unsafe { &*shared.0 }, seed, root)
                }))
            })
        }
        Mode::Parallel => parallel::<T, Q>(&region, &mut root_once::<T>(site, args, context)),
    }
    if region.control().aborted() {
        std::panic::resume_unwind(Box::new(Aborted));
    }
    // SAFETY: the root finished, so the result area holds its `T::Output`.
    unsafe { (region.root_result as *const T::Output).read() }
}

/// The scheduler's root creation, for the warp that starts the launch: creates root task
/// `T(args)`, in a launch with `context`, on its first call.
fn root_once<T: TaskFunction>(
    site: &'static Site,
    args: T::Args,
    context: impl Copy,
) -> impl FnMut(&Warp) {
    let mut args = Some(args);
    move |warp| {
        if let Some(args) = args.take() {
            create_root::<T>(warp, site, args, context);
        }
    }
}

fn deterministic<T: TaskFunction, const Q: u32>(
    region: &Region,
    seed: u64,
    root: &mut dyn FnMut(&Warp),
) {
    let n = region.warps as usize;
    let mix = |w: usize| (seed ^ (w as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
    let warps: Vec<Warp> = (0..n)
        .map(|w| Warp::new(region, w as u32, Some(mix(w))))
        .collect();
    let mut workers: Vec<Worker<'_, KEEP, Q>> = warps.iter().map(Worker::new).collect();
    workers[0].start_root(|w| root(w));
    let mut rng = XorShift64::new(mix(n));
    let mut idle = 0u64;
    loop {
        let w = rng.below(n as u64) as usize;
        match workers[w].step::<T>() {
            Step::Stopped => break,
            Step::Worked => idle = 0,
            Step::Idle => {
                idle += 1;
                if idle > STALL_ROUNDS * n as u64 {
                    let place = Place {
                        block: 0,
                        thread: 0,
                        warp: w as u32,
                        lane: 0,
                        task_id: u32::MAX,
                    };
                    raise_at(
                        region,
                        place,
                        Failure::in_task(ErrorCode::Stalled, None, idle, STALL_ROUNDS * n as u64),
                    );
                }
            }
        }
    }
    for worker in &workers {
        worker.finish();
    }
}

/// A pointer to the runtime view that scoped worker threads share.
#[derive(Clone, Copy)]
struct Shared(*const Region);
// SAFETY: the view is read-only and outlives the scoped threads; all mutation of device
// memory goes through the runtime's atomics and fences.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

fn parallel<T: TaskFunction, const Q: u32>(region: &Region, root: &mut dyn FnMut(&Warp)) {
    let root = Handed(root);
    let shared = Shared(region);
    std::thread::scope(|s| {
        let workers: Vec<_> = (1..region.warps)
            .map(|w| {
                on_worker_thread(s, region, move || {
                    let shared = shared;
                    let warp = Warp::new(shared.0, w, None);
                    Worker::<KEEP, Q>::new(&warp).run::<T>();
                })
            })
            .collect();
        join(on_worker_thread(s, region, move || {
            let (shared, root) = (shared, root.into_inner());
            let warp = Warp::new(shared.0, 0, None);
            let mut worker = Worker::<KEEP, Q>::new(&warp);
            worker.start_root(|w| root(w));
            worker.run::<T>();
        }));
        workers.into_iter().for_each(join);
    });
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::abi::Geometry;
    use crate::task::TaskInfo;
    use crate::testing::{Fib, fib, geometry, within};

    static SITE: Site = Site {
        function: "kernel",
        file: file!(),
        line: line!(),
    };

    /// What `#[gtap::kernel] fn fib_kernel(n: u32) -> u64 { gtap::entry!(fib(n)) }` expands to.
    struct FibKernel;

    impl Kernel for FibKernel {
        const NAME: &'static str = "fib_kernel";
        type Args = (u32,);
        type Output = u64;
        fn run_cpu(launch: &LaunchParams, args: (u32,)) -> u64 {
            crate::kernel::entry::<Fib, (), 0>(launch, &SITE, args, ())
        }
    }

    /// A task that never finishes and spawns nothing: a launch that can make no progress.
    struct Park;

    impl TaskFunction for Park {
        type Args = ();
        type Output = u64;
        const INFO: TaskInfo = TaskInfo {
            name: "park",
            file: file!(),
            line: line!(),
        };
        async fn start((): ()) -> u64 {
            core::future::pending().await
        }
    }

    struct ParkKernel;

    impl Kernel for ParkKernel {
        const NAME: &'static str = "park_kernel";
        type Args = ();
        type Output = u64;
        fn run_cpu(launch: &LaunchParams, (): ()) -> u64 {
            crate::kernel::entry::<Park, (), 0>(launch, &SITE, (), ())
        }
    }

    /// A task whose result is larger than the root-result area.
    struct Wide;

    impl TaskFunction for Wide {
        type Args = ();
        type Output = [u64; 64];
        const INFO: TaskInfo = TaskInfo {
            name: "wide",
            file: file!(),
            line: line!(),
        };
        async fn start((): ()) -> [u64; 64] {
            [7; 64]
        }
    }

    struct WideKernel;

    impl Kernel for WideKernel {
        const NAME: &'static str = "wide_kernel";
        type Args = ();
        type Output = [u64; 64];
        fn run_cpu(launch: &LaunchParams, (): ()) -> [u64; 64] {
            crate::kernel::entry::<Wide, (), 0>(launch, &SITE, (), ())
        }
    }

    #[test]
    fn a_root_result_too_large_is_a_typed_error_in_every_mode() {
        for mode in [
            Mode::Deterministic { seed: 1 },
            Mode::Parallel,
            Mode::WorkFirst,
        ] {
            let mut state = state(64);
            let Err(RunError::Aborted(report)) = run::<WideKernel>(&mut state, mode, ()) else {
                panic!("{mode:?}: a 512-byte result cannot fit the 256-byte result area");
            };
            assert_eq!(
                ErrorCode::from_raw(report.code),
                Some(ErrorCode::ResultTooLarge),
                "{mode:?}"
            );
            assert_eq!((report.value, report.limit), (512, 256), "{mode:?}");
            assert_eq!(ErrorReport::text(&report.task), "wide");
            assert_eq!(run::<FibKernel>(&mut state, mode, (10,)).ok(), Some(55));
        }
    }

    /// A task that waits for a stop, as a task waiting for a flag no one sets would.
    struct Spin;

    impl TaskFunction for Spin {
        type Args = ();
        type Output = u64;
        const INFO: TaskInfo = TaskInfo {
            name: "spin",
            file: file!(),
            line: line!(),
        };
        async fn start((): ()) -> u64 {
            while !crate::thread::stop_requested() {
                std::thread::yield_now();
            }
            0
        }
    }

    struct SpinKernel;

    impl Kernel for SpinKernel {
        const NAME: &'static str = "spin_kernel";
        type Args = ();
        type Output = u64;
        fn run_cpu(launch: &LaunchParams, (): ()) -> u64 {
            crate::kernel::entry::<Spin, (), 0>(launch, &SITE, (), ())
        }
    }

    /// A kernel body that panics before it starts any task.
    struct PanicKernel;

    impl Kernel for PanicKernel {
        const NAME: &'static str = "panic_kernel";
        type Args = ();
        type Output = u64;
        fn run_cpu(_: &LaunchParams, (): ()) -> u64 {
            panic!("no tasks today")
        }
    }

    /// 2 blocks of 2 warps, as `gtap-host` runs the deterministic executor.
    fn state(slots_per_warp: u32) -> State {
        State::new(
            Layout::new(Geometry {
                blocks: 2,
                warps_per_block: 2,
                ..geometry(1, slots_per_warp, 2)
            })
            .expect("valid geometry"),
            crate::testing::TEST_STACK_BYTES,
        )
    }

    fn deterministic(seed: u64) -> (Result<u64, RunError>, Vec<WarpStats>) {
        let mut state = state(1024);
        let result = run::<FibKernel>(&mut state, Mode::Deterministic { seed }, (15,));
        (result, state.stats().to_vec())
    }

    #[test]
    fn a_deterministic_schedule_is_reproducible_per_seed() {
        let (result, first) = deterministic(1);
        assert_eq!(result.ok(), Some(fib(15)));
        assert_eq!(
            deterministic(1).1,
            first,
            "the same seed, the same schedule"
        );
        // Another seed moves tasks elsewhere: some warp runs, spawns or steals differently.
        assert!(
            (2..6).any(|seed| deterministic(seed).1 != first),
            "every seed gave seed 1's schedule"
        );
        // Every warp took part, which is what the schedule is meant to exercise.
        assert!(first.iter().all(|w| w.tasks > 0), "{first:?}");
    }

    #[test]
    fn a_parallel_launch_runs_every_task_exactly_once() {
        let n = 18;
        // fib(n) makes 2 fib(n + 1) - 1 calls, each a task with its own slot. (How often they
        // are polled depends on how many the executor polls at once: see `at_once.rs`.)
        let tasks = 2 * fib(n + 1) - 1;
        for _ in 0..3 {
            let (value, stats) = within(60, move || {
                let mut state = state(4096);
                let value = run::<FibKernel>(&mut state, Mode::Parallel, (n,)).ok();
                (value, state.stats().to_vec())
            });
            assert_eq!(value, Some(fib(n)));
            assert_eq!(stats.iter().map(|w| w.spawned).sum::<u64>(), tasks);
        }
    }

    #[test]
    fn a_work_first_launch_runs_every_task_once_on_its_threads() {
        let n = 20;
        let tasks = 2 * fib(n + 1) - 1;
        let mut state = state(64);
        for _ in 0..3 {
            let value;
            (value, state) = within(60, move || {
                let value = run::<FibKernel>(&mut state, Mode::WorkFirst, (n,)).ok();
                (value, state)
            });
            assert_eq!(value, Some(fib(n)));
            let stats = state.stats();
            assert_eq!(stats.iter().map(|w| w.tasks).sum::<u64>(), tasks);
            assert_eq!(stats.iter().map(|w| w.spawned).sum::<u64>(), tasks);
        }
    }

    #[test]
    fn a_work_first_child_the_stack_cannot_hold_is_a_typed_error_then_the_state_runs_on() {
        // A stack too small for even one level of nesting.
        let mut state = State::new(*state(64).layout(), 1024);
        let Err(RunError::Aborted(report)) = run::<FibKernel>(&mut state, Mode::WorkFirst, (20,))
        else {
            panic!("1 KiB of stack cannot hold fib(20)'s tasks");
        };
        assert_eq!(
            ErrorCode::from_raw(report.code),
            Some(ErrorCode::PoolExhausted)
        );
        assert_eq!(ErrorReport::text(&report.task), "fib");
        let mut state = State::new(*state.layout(), crate::testing::TEST_STACK_BYTES);
        assert_eq!(
            run::<FibKernel>(&mut state, Mode::WorkFirst, (20,)).ok(),
            Some(fib(20))
        );
    }

    /// A state like [`state`] whose layout records `events` trace events per warp.
    fn traced_state(events: u32) -> State {
        let layout = Layout::with_trace(state(4096).layout().geometry, events).expect("valid");
        State::new(layout, crate::testing::TEST_STACK_BYTES)
    }

    #[test]
    fn a_traced_launch_records_every_poll_inside_each_warps_span() {
        use crate::abi::TraceKind;
        let n = 16;
        for mode in [Mode::Deterministic { seed: 5 }, Mode::Parallel] {
            let (value, metas, events, stats) = within(60, move || {
                let mut state = traced_state(1 << 16);
                let value = run::<FibKernel>(&mut state, mode, (n,)).ok();
                let (metas, events) = state.trace();
                (
                    value,
                    metas.to_vec(),
                    events.to_vec(),
                    state.stats().to_vec(),
                )
            });
            let cap = 1usize << 16;
            assert_eq!(value, Some(fib(n)), "{mode:?}");
            let mut polled = 0u64;
            for (w, meta) in metas.iter().enumerate() {
                assert!(
                    meta.begin_ns != 0 && meta.begin_ns <= meta.end_ns,
                    "{mode:?} {meta:?}"
                );
                assert!((meta.events as usize) < cap, "{mode:?}: nothing dropped");
                let mine = &events[w * cap..w * cap + meta.events as usize];
                let mut last_run_end = 0;
                for e in mine {
                    let end = e.start_ns + e.duration_ns as u64;
                    assert!(meta.begin_ns <= e.start_ns && end <= meta.end_ns, "{e:?}");
                    match TraceKind::from_raw(e.kind) {
                        Some(TraceKind::Run) => {
                            assert!((1..=32).contains(&e.a), "{e:?}");
                            assert!(e.start_ns >= last_run_end, "runs of a warp do not overlap");
                            last_run_end = end;
                            polled += e.a as u64;
                        }
                        Some(TraceKind::Steal) => {
                            assert!(e.a != w as u32 && (1..=32).contains(&e.b), "{e:?}")
                        }
                        Some(TraceKind::Idle) => assert!(e.a >= 1, "{e:?}"),
                        Some(TraceKind::BlockRun) | None => {
                            panic!("{mode:?}: thread-mode warp {w} recorded {e:?}")
                        }
                    }
                }
                // Nothing past the recorded events was written.
                assert!(events[w * cap + meta.events as usize] == TraceEvent::default());
            }
            // Every poll is in a step's run, but for the children polled at once inside them
            // (lazily in parallel, where the seed says in the deterministic executor).
            let all: u64 = stats.iter().map(|w| w.tasks).sum();
            let at_once: u64 = stats.iter().map(|w| w.at_once).sum();
            assert_eq!(polled + at_once, all, "{mode:?}");
        }
    }

    #[test]
    fn a_full_trace_drops_and_counts_what_does_not_fit() {
        let cap = 3;
        let mut traced = traced_state(cap);
        assert_eq!(
            run::<FibKernel>(&mut traced, Mode::Deterministic { seed: 2 }, (12,)).ok(),
            Some(fib(12))
        );
        let (metas, events) = traced.trace();
        assert_eq!(events.len(), metas.len() * cap as usize);
        assert!(metas[0].events > cap, "warp 0 ran more than {cap} steps");
        // Each warp's buffer holds its own events only: a warp that recorded fewer than `cap`
        // has zeros after them, whatever the others dropped.
        for (w, meta) in metas.iter().enumerate() {
            for (i, e) in events[w * cap as usize..][..cap as usize]
                .iter()
                .enumerate()
            {
                assert_eq!(
                    *e == TraceEvent::default(),
                    i as u32 >= meta.events,
                    "warp {w}"
                );
            }
        }
        // Off, the state has no trace.
        assert_eq!(state(64).trace().0.len(), 0);
    }

    #[test]
    fn an_aborted_launch_returns_its_error_and_the_state_stays_usable() {
        for mode in [Mode::Deterministic { seed: 3 }, Mode::Parallel] {
            // No stack for inline children: every child takes a slot.
            let mut state = State::new(*state(16).layout(), 0);
            let Err(RunError::Aborted(report)) = run::<FibKernel>(&mut state, mode, (20,)) else {
                panic!("{mode:?}: 16 slots per warp cannot hold fib(20)");
            };
            assert_eq!(
                ErrorCode::from_raw(report.code),
                Some(ErrorCode::PoolExhausted)
            );
            assert_eq!(report.limit, 16);
            assert_eq!(ErrorReport::text(&report.task), "fib");
            // The next launch on the same memory starts clean.
            assert_eq!(run::<FibKernel>(&mut state, mode, (5,)).ok(), Some(5));
        }
    }

    #[test]
    fn a_launch_that_cannot_progress_is_reported_as_stalled() {
        let mut state = state(64);
        let result = within(60, move || {
            run::<ParkKernel>(&mut state, Mode::Deterministic { seed: 1 }, ())
        });
        let Err(RunError::Aborted(report)) = result else {
            panic!("a parked root must stall, got {result:?}");
        };
        assert_eq!(ErrorCode::from_raw(report.code), Some(ErrorCode::Stalled));
        assert!(report.value > report.limit, "{} rounds", report.value);
    }

    #[test]
    fn a_panic_outside_any_task_returns_its_message() {
        let mut state = state(64);
        match run::<PanicKernel>(&mut state, Mode::Deterministic { seed: 1 }, ()) {
            Err(RunError::Panicked(message)) => assert_eq!(message, "no tasks today"),
            other => panic!("expected the panic, got {other:?}"),
        }
    }

    /// A watchdog that stops the launch if it has not ended within `patience`; whether it had
    /// to.
    fn watchdog(patience: Duration) -> impl FnOnce(Monitor) -> bool + Send {
        move |monitor| {
            if monitor.wait(patience) {
                return false;
            }
            monitor.stop();
            assert!(
                monitor.wait(Duration::from_secs(30)),
                "stopped launch ended"
            );
            true
        }
    }

    /// For launches that never end: stop them soon.
    fn impatient() -> impl FnOnce(Monitor) -> bool + Send {
        watchdog(Duration::from_millis(50))
    }

    #[test]
    fn a_watched_launch_that_ends_is_left_alone() {
        let mut state = state(1024);
        let (result, stopped) = run_watched::<FibKernel, _, _>(
            &mut state,
            Mode::Parallel,
            (12,),
            Some(watchdog(Duration::from_secs(30))),
        );
        assert_eq!(result.ok(), Some(fib(12)));
        assert_eq!(stopped, Some(false));
    }

    #[test]
    fn the_watchdog_stops_a_launch_that_cannot_progress() {
        let (result, stopped, words) = within(60, || {
            let mut state = state(64);
            let (result, stopped) =
                run_watched::<ParkKernel, _, _>(&mut state, Mode::Parallel, (), Some(impatient()));
            (result, stopped, state.status_words())
        });
        assert_eq!(stopped, Some(true));
        let Err(RunError::Aborted(report)) = result else {
            panic!("a stopped launch has no value, got {result:?}");
        };
        // No task saw the stop: no device error, which the host reports as a stall.
        assert_eq!(report.code, 0);
        for word in words {
            let (state, _) = crate::abi::WarpStatus::unpack(word);
            assert_eq!(
                crate::abi::WarpState::from_raw(state),
                Some(crate::abi::WarpState::Stopped)
            );
        }
    }

    #[test]
    fn a_task_that_sees_the_watchdog_is_named() {
        let result = within(60, || {
            let mut state = state(64);
            run_watched::<SpinKernel, _, _>(&mut state, Mode::Parallel, (), Some(impatient())).0
        });
        let Err(RunError::Aborted(report)) = result else {
            panic!("a stopped launch has no value, got {result:?}");
        };
        assert_eq!(ErrorCode::from_raw(report.code), Some(ErrorCode::Watchdog));
        assert_eq!(ErrorReport::text(&report.task), "spin");
    }
}
