//! Test support for the runtime's unit tests: a launch region in host memory, a task function
//! written out by hand (what `#[gtap::function]` would generate), a driver that runs every warp
//! on the calling thread with a hook to preset warp state, and a guard against hangs.

// The loom models (`loom_tests`) use only the launch, `Fib` and `Visit`.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

use core::sync::atomic::Ordering;
use std::boxed::Box;
use std::sync::mpsc;
use std::time::Duration;
use std::vec::Vec;

use crate::abi::{ErrorCode, ErrorReport};
use crate::abi::{Geometry, LaunchParams, Layout, Line, REGION_ALIGN, SLOT_ALIGN};
use crate::arch::{AtomicU32, Warp};
use crate::math::XorShift64;
use crate::region::Region;
use crate::scheduler::{Step, Worker};
use crate::task::{
    Site, Suspend, TaskFunction, TaskInfo, create_root, prepare_wait, record_bytes_of, spawn,
};

/// One launch's device memory in host memory, zeroed, and the runtime's view of it. Leaked, so
/// that a thread left spinning by a failed test never touches freed memory.
pub(crate) struct Launch {
    _memory: Vec<Line>,
    error: Box<ErrorReport>,
    region: Region,
}

impl Launch {
    /// A zeroed launch of `geometry`.
    pub(crate) fn leak(geometry: Geometry) -> &'static Launch {
        Self::leak_with_stack(geometry, TEST_STACK_BYTES)
    }

    /// A zeroed launch of `geometry` whose lanes may use `stack_bytes` for inline children.
    pub(crate) fn leak_with_stack(geometry: Geometry, stack_bytes: u32) -> &'static Launch {
        Self::leak_with(geometry, stack_bytes, 0)
    }

    /// A zeroed launch of `geometry` with launch options `options`
    /// ([`LaunchParams::options`]).
    pub(crate) fn leak_with(geometry: Geometry, stack_bytes: u32, options: u32) -> &'static Launch {
        let layout = Layout::new(geometry).expect("test geometry is valid");
        let mut memory = std::vec![Line([0; REGION_ALIGN]); layout.bytes as usize / REGION_ALIGN];
        let mut error = Box::new(ErrorReport::EMPTY);
        let params = LaunchParams {
            base: memory.as_mut_ptr() as u64,
            error: &mut *error as *mut ErrorReport as u64,
            layout,
            options,
            seed: 7,
            host: 0,
            stack_bytes,
            block_shared_bytes: 0,
        };
        let region = Region::new(&params);
        Box::leak(Box::new(Launch {
            _memory: memory,
            error,
            region,
        }))
    }

    /// The runtime's view.
    pub(crate) fn region(&'static self) -> &'static Region {
        &self.region
    }

    /// The device error the launch recorded, if any.
    pub(crate) fn error(&self) -> Option<ErrorCode> {
        ErrorCode::from_raw(self.error.code)
    }

    /// The result of a finished `Fib` launch, or its device error.
    pub(crate) fn fib_result(&self) -> Result<u64, ErrorCode> {
        match self.error() {
            Some(code) => Err(code),
            // SAFETY: the root finished without an error, so the result area holds its `u64`.
            None => Ok(unsafe { (self.region.root_result as *const u64).read() }),
        }
    }
}

// SAFETY: the region is only accessed through the runtime's atomics and the scheduler's
// protocol, exactly as the CPU executor shares it between its worker threads.
unsafe impl Sync for Launch {}

/// Stack the unit tests' lanes may use for inline children: well inside a test thread's 2 MiB.
pub(crate) const TEST_STACK_BYTES: u32 = 512 * 1024;

/// A geometry of `warps` warps in one block with slots big enough for [`Fib`].
pub(crate) fn geometry(warps: u32, slots_per_warp: u32, num_queues: u32) -> Geometry {
    let bytes = record_bytes_of::<Fib>().expect("Fib's future is not over-aligned") as u32;
    Geometry {
        blocks: 1,
        warps_per_block: warps,
        slots_per_warp,
        num_queues,
        slot_bytes: bytes.next_multiple_of(SLOT_ALIGN as u32),
    }
}

/// Runs `f` on another thread and returns its result, or fails the test if it takes longer
/// than `secs` (a hang, which is what several of the bugs under test look like).
pub(crate) fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung: no result within {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the tested thread panicked"),
    }
}

const SITE: &Site = &Site {
    function: "fib",
    file: file!(),
    line: line!(),
};

/// Fibonacci numbers, two children per call, the second on queue 1 (so a geometry needs two
/// queues): what `#[gtap::function]` generates for the README's `fib`.
pub(crate) struct Fib;

impl TaskFunction for Fib {
    type Args = (u32,);
    type Output = u64;
    const INFO: TaskInfo = TaskInfo {
        name: "fib",
        file: file!(),
        line: line!(),
    };
    async fn start((n,): (u32,)) -> u64 {
        if n < 2 {
            return n as u64;
        }
        let (mut a, mut b) = (0u64, 0u64);
        spawn::<Fib>(SITE, None, &raw mut a, (n - 1,));
        spawn::<Fib>(SITE, Some(1), &raw mut b, (n - 2,));
        prepare_wait(SITE, None);
        Suspend.await;
        a + b
    }
}

/// A node of a full binary tree, for `no_taskwait` launches: counts itself in `nodes`, spawns
/// its two children (the second on queue 1) without a destination and returns without a wait.
pub(crate) struct Visit;

impl TaskFunction for Visit {
    type Args = (u32, &'static AtomicU32);
    type Output = ();
    const INFO: TaskInfo = TaskInfo {
        name: "visit",
        file: file!(),
        line: line!(),
    };
    const SUSPENDS: bool = false;
    async fn start((depth, nodes): (u32, &'static AtomicU32)) {
        nodes.fetch_add(1, Ordering::Relaxed);
        if depth > 0 {
            spawn::<Visit>(SITE, None, core::ptr::null_mut(), (depth - 1, nodes));
            spawn::<Visit>(SITE, Some(1), core::ptr::null_mut(), (depth - 1, nodes));
        }
    }
}

/// Sequential Fibonacci numbers, the reference.
pub(crate) fn fib(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// Creates the root task `Fib(n)` on `warp` (warp 0).
pub(crate) fn root_fib(warp: &Warp, n: u32) {
    create_root::<Fib>(warp, SITE, (n,), ());
}

/// Runs `Fib(n)` on every warp of `launch` from the calling thread, in an order drawn from
/// `seed`, after `preset(warp)` has set up each warp's state. Returns the root's result (or the
/// device error) and the warps, for inspection.
pub(crate) fn run_fib(
    launch: &'static Launch,
    n: u32,
    seed: u64,
    preset: impl Fn(&Warp),
) -> (Result<u64, ErrorCode>, Vec<Warp>) {
    let region = launch.region();
    let warps: Vec<Warp> = (0..region.warps)
        .map(|w| Warp::new(region, w, Some(seed ^ w as u64)))
        .collect();
    for warp in &warps {
        preset(warp);
    }
    let mut workers: Vec<Worker<'_>> = warps.iter().map(Worker::new).collect();
    workers[0].start_root(|w| root_fib(w, n));
    let mut rng = XorShift64::new(seed);
    loop {
        let w = rng.below(workers.len() as u64) as usize;
        if workers[w].step::<Fib>() == Step::Stopped {
            break;
        }
    }
    drop(workers);
    (launch.fib_result(), warps)
}
