//! `#[gtap::kernel(no_taskwait)]` on the CPU executor, in every mode: trees of tasks that never
//! wait count every node (the launch ends when no task is left, not when the root returns),
//! the result is the root's, and a wait in such a launch is the typed device error.

use gtap_host::{Config, CpuMode, DeviceErrorKind, Error, Runtime};
use gtap_tests::detached::{
    BLOCK, block_waits_kernel, expected_ranks, launch_ranks, rank_detached_kernel,
    rank_joined_kernel, visit_block_kernel, visit_joined_kernel, visit_kernel, visit_seq,
    waits_kernel,
};

/// Every CPU mode: the default (work-first), parallel, and the deterministic one over seeds and
/// queue counts.
fn runtimes(config: &Config) -> Vec<(String, Runtime)> {
    let mut out = vec![
        (
            "work-first".into(),
            Runtime::cpu(CpuMode::WorkFirst, config),
        ),
        ("parallel".into(), Runtime::cpu(CpuMode::Parallel, config)),
    ];
    for (seed, queues) in [(1, 1), (2, 3), (7, 2)] {
        out.push((
            format!("deterministic seed {seed}, {queues} queues"),
            Runtime::cpu(
                CpuMode::Deterministic { seed },
                &config
                    .clone()
                    .num_queues(queues)
                    .max_tasks_per_warp(queues * 256),
            ),
        ));
    }
    out.into_iter()
        .map(|(name, rt)| (name, rt.expect("CPU runtime")))
        .collect()
}

#[test]
fn a_tree_of_tasks_that_never_wait_visits_every_node_and_returns_the_roots_result() {
    for (mode, mut rt) in runtimes(&Config::new()) {
        for depth in [0, 1, 9] {
            let mut out = rt.alloc_filled(2, 0u32).unwrap();
            let got = rt
                .launch(visit_kernel, (depth, out.slice_mut()))
                .unwrap_or_else(|e| panic!("{mode}, depth {depth}: {e}"));
            assert_eq!(got.result, depth + 1000, "{mode}");
            assert_eq!(
                rt.download(&out).unwrap(),
                visit_seq(depth),
                "{mode}, depth {depth}"
            );
            // The same tree with joins: the same counts.
            let mut joined = rt.alloc_filled(2, 0u32).unwrap();
            let got = rt
                .launch(visit_joined_kernel, (depth, joined.slice_mut()))
                .unwrap();
            assert_eq!(got.result, depth + 1000, "{mode}");
            assert_eq!(rt.download(&joined).unwrap(), visit_seq(depth), "{mode}");
        }
    }
}

#[test]
fn a_wait_in_a_no_taskwait_launch_is_a_typed_error_then_the_runtime_runs_on() {
    for (mode, mut rt) in runtimes(&Config::new()) {
        let Err(Error::Device(e)) = rt.launch(waits_kernel, (12,)) else {
            panic!("{mode}: a wait must fail the launch");
        };
        assert_eq!(
            e.kind,
            DeviceErrorKind::WaitInNoTaskwaitKernel,
            "{mode}: {e}"
        );
        assert_eq!(e.task, "fib", "{mode}: {e}");
        assert!(e.to_string().contains("no_taskwait"), "{e}");
        let mut out = rt.alloc_filled(2, 0u32).unwrap();
        rt.launch(visit_kernel, (6, out.slice_mut())).unwrap();
        assert_eq!(rt.download(&out).unwrap(), visit_seq(6), "{mode}");
    }
}

#[test]
fn block_mode_tasks_that_never_wait_visit_every_node() {
    let config = Config::new().block_mode().block_size(BLOCK).grid_size(2);
    for (mode, mut rt) in runtimes(&config) {
        let depth = 6;
        let mut out = rt.alloc_filled(3, 0u32).unwrap();
        let got = rt
            .launch(visit_block_kernel, (depth, out.slice_mut()))
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(got.result, depth + 2000, "{mode}");
        let [nodes, sum] = visit_seq(depth);
        assert_eq!(
            rt.download(&out).unwrap(),
            [nodes, sum, nodes * BLOCK],
            "{mode}"
        );
        let Err(Error::Device(e)) = rt.launch(block_waits_kernel, ()) else {
            panic!("{mode}: a block-mode wait must fail the launch");
        };
        assert_eq!(
            e.kind,
            DeviceErrorKind::WaitInNoTaskwaitKernel,
            "{mode}: {e}"
        );
        assert_eq!(e.task, "partial_wait", "{mode}: {e}");
    }
}

/// One block runs the children of a task oldest first in a launch without joins, and the first
/// child, then the newest, in a launch with joins (depth first): in spawn order for a step that
/// spawns up to 32, in the fold's ring order past that.
#[test]
fn a_detached_block_launch_runs_its_oldest_tasks_first() {
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(1)
        .num_queues(1);
    assert_eq!(expected_ranks(12, true), (0..12).collect::<Vec<_>>());
    let mut joined = vec![0];
    joined.extend((1..12).map(|i| 12 - i));
    assert_eq!(expected_ranks(12, false), joined);
    for n in [12u32, 40] {
        for seed in [1, 2] {
            let mut rt = Runtime::cpu(CpuMode::Deterministic { seed }, &config).unwrap();
            for (detached, kernel_ranks) in [
                (true, launch_ranks(&mut rt, rank_detached_kernel, n)),
                (false, launch_ranks(&mut rt, rank_joined_kernel, n)),
            ] {
                assert_eq!(
                    kernel_ranks,
                    expected_ranks(n, detached),
                    "{n} children, seed {seed}, detached {detached}"
                );
            }
        }
    }
}

/// Oldest first would hold a whole level of a binary tree live (512 tasks at depth 9, where two
/// blocks of two warps have 128 slots): a block whose queue holds half its slots takes its
/// newest tasks again, so the tree runs within the pool (without that, this launch fails with
/// `PoolExhausted`).
#[test]
fn a_detached_block_launch_drains_newest_first_when_its_slots_run_low() {
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(2)
        .num_queues(1)
        .max_tasks_per_warp(32);
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 3 }, &config).unwrap();
    let depth = 10;
    let mut out = rt.alloc_filled(3, 0u32).unwrap();
    rt.launch(visit_block_kernel, (depth, out.slice_mut()))
        .unwrap_or_else(|e| panic!("{e}"));
    let [nodes, sum] = visit_seq(depth);
    assert_eq!(rt.download(&out).unwrap(), [nodes, sum, nodes * BLOCK]);
}

/// A block of a detached launch runs the ids it claimed several a step (one find, verdict and
/// settle for them all), in the same oldest-first order; a joining launch's block runs one task
/// a step, and so does a detached one whose warps have under 128 task slots (a step frees its
/// tasks' slots only at its end).
#[test]
fn a_detached_block_launch_runs_several_claimed_tasks_a_step() {
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(1)
        .num_queues(1);
    for seed in [1, 2] {
        let mut rt = Runtime::cpu(CpuMode::Deterministic { seed }, &config).unwrap();
        let n = 40;
        let mut out = rt.alloc_filled(1 + n as usize, 0u32).unwrap();
        let detached = rt
            .launch(rank_detached_kernel, (n, out.slice_mut()))
            .unwrap_or_else(|e| panic!("{e}"));
        let ranks: Vec<u32> = rt.download(&out).unwrap()[1..]
            .iter()
            .map(|r| r - 1)
            .collect();
        assert_eq!(ranks, expected_ranks(n, true), "seed {seed}");
        let s = &detached.stats;
        assert_eq!(s.tasks_polled, u64::from(n) + 1, "seed {seed}");
        // The root and its kept first child alone, then the other 39 claimed in a few takes.
        assert!(s.steps * 4 <= s.tasks_polled, "seed {seed}: {s:?}");
        let mut out = rt.alloc_filled(1 + n as usize, 0u32).unwrap();
        let joined = rt
            .launch(rank_joined_kernel, (n, out.slice_mut()))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(joined.stats.steps, joined.stats.tasks_polled, "seed {seed}");
        let small = config.clone().max_tasks_per_warp(100);
        let mut rt = Runtime::cpu(CpuMode::Deterministic { seed }, &small).unwrap();
        let mut out = rt.alloc_filled(1 + n as usize, 0u32).unwrap();
        let detached = rt
            .launch(rank_detached_kernel, (n, out.slice_mut()))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = &detached.stats;
        assert_eq!(s.slots_per_warp, 100, "seed {seed}");
        assert_eq!(s.steps, s.tasks_polled, "seed {seed}: {s:?}");
    }
}
