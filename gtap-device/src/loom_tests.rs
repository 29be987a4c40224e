//! Model checking of the scheduler's protocol with loom (`RUSTFLAGS="--cfg loom"`): every
//! interleaving of the warps' atomic operations up to a bound on preemptions, and every value
//! loom's model of the C11 memory model lets each atomic load return. What is and is not
//! modelled is in the docs of `arch` (host side).
//!
//! Run (release: each model runs thousands of executions):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p gtap-device --lib --release loom
//! ```
//!
//! `LOOM_MAX_PREEMPTIONS` overrides each model's bound on preemptions (1 or 2 here, so that all
//! of them run in seconds); loom's other variables (`LOOM_LOG`, `LOOM_CHECKPOINT_FILE`, ...)
//! apply as usual. `scripts/test` runs them.
//!
//! Faults these models were seen to catch, each injected by hand into the runtime: the free-id
//! cell loaded relaxed in `pool::take`; no release fence in `queue::fold`; no acquire fence
//! after the last decrement in `join::complete`; a steal claimed with a relaxed
//! compare-and-swap and no fence by the lanes; ring positions compared by value. (A relaxed
//! steal claim alone is not a fault: the lanes' fence after it acquires.)

use core::sync::atomic::Ordering;
use std::vec::Vec;

use crate::abi::{Geometry, OPT_NO_TASKWAIT};
use crate::arch::{self, AtomicU32, Warp, shadow};
use crate::pool::{self, PoolLocal};
use crate::queue;
use crate::scheduler::Worker;
use crate::task::{Site, create_root};
use crate::testing::{Fib, Launch, TEST_STACK_BYTES, Visit, fib, geometry, root_fib};

/// Explores `f` with loom, at most `preemptions` preemptions per execution unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    // Idle warps spin (yielding) until the root finishes: long paths, all of them finite.
    builder.max_branches = 100_000;
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = executions.clone();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f()
    });
    std::println!("{} executions", executions.load(Ordering::Relaxed));
}

/// A fresh zeroed launch, with the loom shadows of the last execution forgotten and those of
/// the launch's words created here: the host zeroes the region before the kernel starts, so
/// its initial values happen before every warp's accesses.
fn launch(geometry: Geometry) -> &'static Launch {
    launch_with(geometry, 0)
}

/// [`launch`] with launch options `options`.
fn launch_with(geometry: Geometry, options: u32) -> &'static Launch {
    shadow::reset();
    let launch = Launch::leak_with(geometry, TEST_STACK_BYTES, options);
    let region = launch.region();
    let _ = region.control().aborted();
    let _ = region.control().error_claim.load(Ordering::Relaxed);
    let _ = region.control().live_tasks();
    for w in 0..region.warps {
        for q in 0..region.num_queues {
            let meta = region.queue_meta(w, q);
            let _ = meta.count.load(Ordering::Relaxed);
            let _ = meta.head.load(Ordering::Relaxed);
            let _ = meta.lock.load(Ordering::Relaxed);
        }
        let _ = region.pool_meta(w).fresh.load(Ordering::Relaxed);
        // Position 0 is the zeroed state: this writes the same values, through the shadows.
        pool::preset_ring(region, &PoolLocal::new(), w, 0);
    }
    launch
}

/// Runs `f` on lane 0 of `warp`, with the lane context a task would have.
fn on_lane0<T>(warp: &Warp, f: impl FnOnce() -> T) -> T {
    let mut f = Some(f);
    let mut out = None;
    warp.each(Warp::splat(()), |lane, ()| {
        if lane == 0 {
            out = f.take().map(|f| f());
        }
    });
    out.expect("lane 0 ran")
}

/// Fib(n) on `warps` warps, one loom thread each, from kernel start to termination: spawns,
/// the fold's publication, pops, steals, joins across warps, frees into other warps' rings,
/// and the stop word. Every queue and ring position starts at `at`.
fn fib_run(warps: u32, n: u32, at: u32) {
    let launch = launch(geometry(warps, 8, 2));
    let start = move |w: u32| {
        let region = launch.region();
        let warp = Warp::new(region, w, None);
        pool::preset_ring(region, &warp.shared().pool, w, at);
        queue::preset_positions(region, warp.shared(), w, at);
        warp
    };
    let others: Vec<_> = (1..warps)
        .map(|w| {
            loom::thread::spawn(move || {
                let warp = start(w);
                <Worker>::new(&warp).run::<Fib>();
            })
        })
        .collect();
    let warp = start(0);
    let mut worker = <Worker>::new(&warp);
    worker.start_root(|w| root_fib(w, n));
    worker.run::<Fib>();
    for t in others {
        t.join().expect("worker thread");
    }
    assert_eq!(launch.fib_result(), Ok(fib(n)));
}

/// Fib(n) on two warps of two slots each, with rings of one entry: spawns that borrow the
/// other warp's slots or run inline, ids that wait on overflow lists. Both warps run on loom
/// threads with the stack a CPU worker thread has for inline children (loom's own are 32 KiB).
fn fib_tiny_run(n: u32) {
    let launch = launch(geometry(2, 2, 2));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            loom::thread::Builder::new()
                .stack_size(2 * TEST_STACK_BYTES as usize)
                .spawn(move || {
                    let warp = Warp::new(launch.region(), w, None);
                    let mut worker = <Worker>::new(&warp);
                    if w == 0 {
                        worker.start_root(|w| root_fib(w, n));
                    }
                    worker.run::<Fib>();
                })
                .expect("a loom thread")
        })
        .collect();
    for t in workers {
        t.join().expect("worker thread");
    }
    assert_eq!(launch.fib_result(), Ok(fib(n)));
}

/// A `no_taskwait` launch on `warps` warps: a full binary tree of `depth` levels whose tasks
/// spawn and return without waiting, each counting itself. Nothing joins, so the launch ends by
/// its count of live tasks: reaching zero before the last node ran would stop the warps with
/// nodes uncounted (or never run), never reaching it would never end the launch.
fn no_taskwait_run(warps: u32, depth: u32) {
    const SITE: &Site = &Site {
        function: "visit",
        file: file!(),
        line: line!(),
    };
    let launch = launch_with(geometry(warps, 8, 2), OPT_NO_TASKWAIT);
    let nodes: &'static AtomicU32 = std::boxed::Box::leak(std::boxed::Box::new(AtomicU32::new(0)));
    let _ = nodes.load(Ordering::Relaxed);
    let others: Vec<_> = (1..warps)
        .map(|w| {
            loom::thread::spawn(move || {
                let warp = Warp::new(launch.region(), w, None);
                <Worker>::new(&warp).run::<Visit>();
            })
        })
        .collect();
    let warp = Warp::new(launch.region(), 0, None);
    let mut worker = <Worker>::new(&warp);
    worker.start_root(|w| create_root::<Visit>(w, SITE, (depth, nodes), ()));
    worker.run::<Visit>();
    for t in others {
        t.join().expect("worker thread");
    }
    assert_eq!(launch.error(), None);
    assert_eq!(nodes.load(Ordering::Relaxed), (1 << (depth + 1)) - 1);
    assert_eq!(launch.region().control().live_tasks(), 0);
}

#[test]
fn loom_no_taskwait_two_warps() {
    model(2, || no_taskwait_run(2, 2));
}

#[test]
fn loom_no_taskwait_three_warps() {
    model(1, || no_taskwait_run(3, 2));
}

#[test]
fn loom_fib_two_warps() {
    model(2, || fib_run(2, 3, 0));
}

#[test]
fn loom_fib_two_warps_across_wrap() {
    model(2, || fib_run(2, 3, u32::MAX - 1));
}

#[test]
fn loom_fib4_two_warps() {
    model(1, || fib_run(2, 4, 0));
}

#[test]
fn loom_fib_tiny_pools_and_queues() {
    model(1, || fib_tiny_run(3));
}

#[test]
fn loom_fib_three_warps() {
    model(1, || fib_run(3, 3, 0));
}

/// The free-id ring across 2^32 positions: the owner takes back, through the ring, ids that
/// another warp frees concurrently; each comes back exactly once, whatever the interleaving,
/// and the new record written into a slot happens after the old task's last access to it (the
/// freeing warp touches the slot, fences as a step does, then frees relaxed, as
/// `join::complete` does).
#[test]
fn loom_pool_ring_handoff_across_wrap() {
    model(3, || {
        let launch = launch(geometry(2, 2, 1));
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        pool::preset_ring(region, &owner.shared().pool, 0, u32::MAX);
        let first: Vec<u32> = on_lane0(&owner, || {
            let lane = arch::current_lane();
            (0..2).filter_map(|_| pool::alloc(&lane)).collect()
        });
        assert_eq!(first.len(), 2);
        let freed = first.clone();
        let producer = loom::thread::spawn(move || {
            let other = Warp::new(launch.region(), 1, None);
            on_lane0(&other, || {
                let region = launch.region();
                for &id in &freed {
                    shadow::write(region.header(id) as usize);
                }
                arch::fence_release();
                for &id in &freed {
                    pool::free(&arch::current_lane(), id, Ordering::Relaxed);
                }
            });
        });
        // Allocate once both positions are reserved (an allocation that finds none does not
        // wait: it would borrow warp 1's fresh ids).
        while region.pool_meta(0).frees.load(Ordering::Relaxed) != 1 {
            loom::thread::yield_now();
        }
        let mut again: Vec<u32> = on_lane0(&owner, || {
            let lane = arch::current_lane();
            (0..2).filter_map(|_| pool::alloc(&lane)).collect()
        });
        for &id in &again {
            shadow::write(region.header(id) as usize);
        }
        producer.join().expect("producer thread");
        again.sort_unstable();
        let mut first = first;
        first.sort_unstable();
        assert_eq!(again, first);
    });
}

/// Borrowing: warp 1 claims its own fresh ids one at a time and, once they are out, warp 0's,
/// while warp 0's restock claims a stash's worth of its own with one add and, once those are
/// out, borrows warp 1's. Ten requests for eight ids: whatever the interleaving, every id of
/// both warps is handed out exactly once.
#[test]
fn loom_borrowed_fresh_ids_are_claimed_once() {
    model(2, || {
        let launch = launch(geometry(2, 4, 1));
        let borrower = loom::thread::spawn(move || {
            let warp = Warp::new(launch.region(), 1, None);
            on_lane0(&warp, || {
                let lane = arch::current_lane();
                (0..6)
                    .filter_map(|_| pool::alloc(&lane))
                    .collect::<Vec<u32>>()
            })
        });
        let region = launch.region();
        let owner = Warp::new(region, 0, None);
        pool::restock(&owner);
        let mut ids: Vec<u32> = on_lane0(&owner, || {
            let lane = arch::current_lane();
            (0..4).filter_map(|_| pool::alloc(&lane)).collect()
        });
        ids.extend(borrower.join().expect("borrower thread"));
        ids.sort_unstable();
        let all: Vec<u32> = (0..2)
            .flat_map(|w| (0..4).map(move |i| region.task_id(w, i)))
            .collect();
        assert_eq!(ids, all);
    });
}
