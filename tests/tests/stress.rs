//! Stress: thousands of random task trees (`gtap_tests::random_trees`: random fan-out, depth,
//! one or two waits, queue choices for spawns and resumptions, detached children joined by the
//! implicit wait, three result types) on the CPU executor, in its deterministic, parallel and
//! work-first modes, with 1 to 4 queues and pools from roomy to too small, each compared with
//! its sequential result; with 1 or 3 queues, half the `u64` trees run on a kernel compiled
//! for that count (`queues = N`). A pool too small for a tree runs the children it has no slot for
//! inline, and a queue too small keeps the rest on its warp's overflow list: every tree
//! completes, exactly.
//! `GTAP_STRESS_CASES` sets the number of trees.

use gtap::math::XorShift64;
use gtap_host::{Config, CpuMode, Error, Runtime};
use gtap_tests::random_trees::{
    MAX_FANOUT, reference, shape, tree_pair_kernel, tree_u16_kernel, tree_u64_kernel,
    tree_u64_one_queue_kernel, tree_u64_three_queues_kernel,
};

/// Trees per run unless `GTAP_STRESS_CASES` says otherwise.
const CASES: u64 = 10_000;

/// Most task nodes in one tree (larger draws are drawn again).
const MAX_NODES: u32 = 1500;

/// One case: a tree, a result type and the runtime configuration it runs under.
#[derive(Debug)]
struct Case {
    seed: u64,
    depth: u32,
    fanout: u32,
    queues: u32,
    slots_per_warp: u32,
    kind: u64,
    /// The executor: 0 deterministic, 1 parallel, 2 work-first.
    executor: u64,
}

impl Case {
    fn draw(n: u64) -> (Self, u32, u64) {
        // The test's own choices, reproducible from the case number.
        let mut rng = XorShift64::new(n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        loop {
            let queues = 1 + rng.below(4) as u32;
            let fanout = 1 + rng.below(MAX_FANOUT as u64) as u32;
            let depth = 1 + rng.below(7) as u32;
            let seed = rng.below(u64::MAX);
            let r = reference(seed, depth, shape(fanout, queues));
            if r.nodes > MAX_NODES {
                continue;
            }
            // From far too small to roomy; a multiple of the queue count, as the pool requires.
            let per_queue = [4, 16, 64, 256, 2048][rng.below(5) as usize];
            let case = Case {
                seed,
                depth,
                fanout,
                queues,
                slots_per_warp: per_queue * queues,
                kind: rng.below(3),
                executor: rng.below(3),
            };
            return (case, r.nodes, r.detached);
        }
    }

    fn runtime(&self, n: u64) -> Runtime {
        let mode = match self.executor {
            0 => CpuMode::Deterministic { seed: n },
            1 => CpuMode::Parallel,
            _ => CpuMode::WorkFirst,
        };
        let config = Config::new()
            .num_queues(self.queues)
            .max_tasks_per_warp(self.slots_per_warp);
        Runtime::cpu(mode, &config).expect("CPU runtime")
    }
}

/// What a launch did: the result (as in [`reference`]), the detached children counted, and
/// the children run inline.
fn launch(rt: &mut Runtime, case: &Case) -> Result<(u64, u64, u64), Error> {
    let mut counter = rt.alloc_filled(1, 0u64)?;
    let (seed, depth, shape) = (case.seed, case.depth, shape(case.fanout, case.queues));
    let args = (seed, depth, shape, counter.slice_mut());
    let (got, stats) = match case.kind {
        0 => {
            let l = match (case.queues, seed % 2) {
                (1, 1) => rt.launch(tree_u64_one_queue_kernel, args)?,
                (3, 1) => rt.launch(tree_u64_three_queues_kernel, args)?,
                _ => rt.launch(tree_u64_kernel, args)?,
            };
            (l.result, l.stats)
        }
        1 => {
            let l = rt.launch(tree_pair_kernel, args)?;
            let (nodes, sum) = l.result;
            assert_eq!(nodes, reference(seed, depth, shape).nodes, "{case:?}");
            (sum, l.stats)
        }
        _ => {
            let l = rt.launch(tree_u16_kernel, args)?;
            (l.result as u64, l.stats)
        }
    };
    Ok((got, rt.download(&counter)?[0], stats.tasks_inlined))
}

#[test]
fn random_trees_match_their_sequential_results() {
    let cases = std::env::var("GTAP_STRESS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let (mut tasks, mut inlined, mut small) = (0u64, 0u64, 0u64);
    for n in 0..cases {
        let (case, nodes, detached) = Case::draw(n);
        let want = reference(case.seed, case.depth, shape(case.fanout, case.queues));
        let want_sum = if case.kind == 2 {
            want.sum16 as u64
        } else {
            want.sum
        };
        let mut rt = case.runtime(n);
        let (got, pings, ran_inline) =
            launch(&mut rt, &case).unwrap_or_else(|e| panic!("case {n}: {case:?}: {e}"));
        assert_eq!(got, want_sum, "case {n}: {case:?}");
        assert_eq!(pings, detached, "case {n}: detached children, {case:?}");
        tasks += (nodes as u64) + detached;
        inlined += ran_inline;
        small += (case.slots_per_warp / case.queues < nodes + detached as u32) as u64;
    }
    eprintln!(
        "stress: {cases} trees checked ({tasks} tasks, {inlined} of them run inline), {small} with a pool or queue smaller than the tree"
    );
    assert!(
        small * 10 >= cases,
        "a tenth of the trees must outgrow their pools, or the test checks little of inline runs"
    );
}

#[test]
fn a_kernel_compiled_for_a_queue_count_refuses_a_runtime_of_another() {
    let config = Config::new().num_queues(1);
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &config).expect("CPU runtime");
    let mut counter = rt.alloc_filled(1, 0u64).expect("buffer");
    let args = (7, 3, shape(2, 1), counter.slice_mut());
    match rt.launch(tree_u64_three_queues_kernel, args) {
        Err(
            e @ Error::QueueCountMismatch {
                kernel_queues: 3,
                runtime_queues: 1,
                ..
            },
        ) => assert!(e.to_string().contains("num_queues(3)"), "{e}"),
        other => panic!("expected QueueCountMismatch, got {other:?}"),
    }
    let l = rt
        .launch(tree_u64_one_queue_kernel, args)
        .expect("the matching kernel runs");
    assert_eq!(l.result, reference(7, 3, shape(2, 1)).sum);
}
