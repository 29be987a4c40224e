//! Block mode on the CPU executor: every block-mode example against its sequential reference,
//! in the deterministic mode over several seeds and queue counts and in parallel mode, and the
//! typed errors of block mode (a partial wait, a block size the kernel was not built for).

use gtap_examples::integrate_block;
use gtap_host::{Config, CpuMode, Runtime};

/// A block-mode runtime of `block` threads per block: 2 blocks in the deterministic mode.
fn deterministic(seed: u64, queues: u32, block: u32) -> Runtime {
    Runtime::cpu(
        CpuMode::Deterministic { seed },
        &Config::new()
            .block_mode()
            .block_size(block)
            .num_queues(queues)
            .max_tasks_per_warp(queues * 128),
    )
    .expect("CPU runtime")
}

fn parallel(block: u32) -> Runtime {
    Runtime::cpu(
        CpuMode::Parallel,
        &Config::new().block_mode().block_size(block).grid_size(2),
    )
    .expect("CPU runtime")
}

#[test]
fn integrate_block_matches_reference_exactly() {
    let block = integrate_block::BLOCK;
    let want = integrate_block::integrate_block_seq(-1.0, 1.0, 1e-8, block);
    for (seed, q) in [(1, 1), (2, 2), (3, 1)] {
        let got = deterministic(seed, q, block)
            .launch(integrate_block::integrate_block_kernel, (-1.0, 1.0, 1e-8))
            .unwrap();
        assert_eq!(
            got.result.to_bits(),
            want.to_bits(),
            "seed {seed}, {q} queues: {} vs {want}",
            got.result
        );
        assert!(
            got.stats.tasks_spawned > 20,
            "{} tasks",
            got.stats.tasks_spawned
        );
    }
    let got = parallel(block)
        .launch(integrate_block::integrate_block_kernel, (-1.0, 1.0, 1e-8))
        .unwrap();
    assert_eq!(got.result.to_bits(), want.to_bits());
    assert!((want - 200.0 * 100f64.atan()).abs() < 1e-2, "{want}");
}
