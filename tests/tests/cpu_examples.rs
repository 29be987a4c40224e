//! The CPU executor runs every example against its sequential reference: in the deterministic
//! mode over many seeds and 1 to 4 queues, and in parallel mode.

use gtap_examples::{fib, integrate, nqueens, tree};
use gtap_host::{Config, CpuMode, Runtime};

fn deterministic(seed: u64, queues: u32) -> Runtime {
    Runtime::cpu(
        CpuMode::Deterministic { seed },
        &Config::new()
            .num_queues(queues)
            .max_tasks_per_warp(queues * 1024),
    )
    .expect("CPU runtime")
}

/// Seeds × queue counts every example runs under.
fn schedules() -> impl Iterator<Item = (u64, u32)> {
    (1..=4).flat_map(|q| (0..6).map(move |s| (s * 7919 + q as u64, q)))
}

#[test]
fn fib_matches_reference() {
    for (seed, q) in schedules() {
        let mut rt = deterministic(seed, q);
        let got = rt.launch(fib::fib_kernel, (17,)).unwrap();
        assert_eq!(got.result, fib::fib_seq(17), "seed {seed}, {q} queues");
        assert_eq!(got.stats.tasks_spawned, fib::fib_tasks(17));
        let got = rt.launch(fib::fib_cutoff_kernel, (22, 12)).unwrap();
        assert_eq!(
            got.result,
            fib::fib_seq(22),
            "cutoff, seed {seed}, {q} queues"
        );
    }
}

#[test]
fn integrate_matches_reference_exactly() {
    let want = integrate::integrate_seq(-1.0, 1.0, 1e-7);
    for (seed, q) in schedules() {
        let got = deterministic(seed, q)
            .launch(integrate::integrate_kernel, (-1.0, 1.0, 1e-7))
            .unwrap();
        assert_eq!(
            got.result.to_bits(),
            want.to_bits(),
            "seed {seed}, {q} queues"
        );
    }
    // The integral of the peak is 200 atan(100).
    assert!((want - 200.0 * 100f64.atan()).abs() < 1e-4, "{want}");
}

#[test]
fn nqueens_matches_reference() {
    for (seed, q) in schedules() {
        let got = deterministic(seed, q)
            .launch(nqueens::nqueens_kernel, (8, 4))
            .unwrap();
        assert_eq!(got.result, 92, "seed {seed}, {q} queues");
    }
    assert_eq!(nqueens::nqueens_seq(8, 0, 0, 0, 0), 92);
}

#[test]
fn binary_tree_matches_reference() {
    let (height, iters) = (8, 8);
    let mut want = vec![0u64; (1 << (height + 1)) - 1];
    let want_sum = tree::tree_visit_seq(height, iters, &mut want);
    for (seed, q) in schedules() {
        let mut rt = deterministic(seed, q);
        let mut out = rt.alloc_filled(want.len(), u64::MAX).unwrap();
        let got = rt
            .launch(tree::tree_kernel, (height, iters, out.slice_mut()))
            .unwrap();
        assert_eq!(got.result, want_sum, "seed {seed}, {q} queues");
        assert_eq!(rt.download(&out).unwrap(), want, "seed {seed}, {q} queues");
    }
}

#[test]
fn random_tree_sum_matches_reference() {
    for (seed, q) in schedules() {
        let nodes = tree::random_tree(3000, seed + 1);
        let mut rt = deterministic(seed, q);
        let buf = rt.upload(&nodes).unwrap();
        let got = rt.launch(tree::tree_sum_kernel, (buf.slice(),)).unwrap();
        assert_eq!(
            got.result,
            tree::tree_sum_seq(&nodes),
            "seed {seed}, {q} queues"
        );
    }
}

#[test]
fn parallel_and_work_first_modes_run_every_example() {
    for (mode, q) in [
        (CpuMode::Parallel, 1),
        (CpuMode::Parallel, 3),
        (CpuMode::WorkFirst, 1),
        (CpuMode::WorkFirst, 3),
    ] {
        let mut rt = Runtime::cpu(mode, &Config::new().num_queues(q)).expect("CPU runtime");
        for _ in 0..3 {
            assert_eq!(
                rt.launch(fib::fib_kernel, (22,)).unwrap().result,
                fib::fib_seq(22)
            );
            assert_eq!(
                rt.launch(fib::fib_cutoff_kernel, (30, 15)).unwrap().result,
                fib::fib_seq(30)
            );
            let want = integrate::integrate_seq(-1.0, 1.0, 1e-8);
            assert_eq!(
                rt.launch(integrate::integrate_kernel, (-1.0, 1.0, 1e-8))
                    .unwrap()
                    .result
                    .to_bits(),
                want.to_bits()
            );
            assert_eq!(
                rt.launch(nqueens::nqueens_kernel, (10, 4)).unwrap().result,
                724
            );
            let nodes = tree::random_tree(50_000, 9);
            let buf = rt.upload(&nodes).unwrap();
            assert_eq!(
                rt.launch(tree::tree_sum_kernel, (buf.slice(),))
                    .unwrap()
                    .result,
                tree::tree_sum_seq(&nodes)
            );
        }
    }
}
