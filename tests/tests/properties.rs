//! Property tests: results are identical for 1 to 4 queues and any seed.

use gtap_examples::{fib, nqueens, tree};
use gtap_host::{Config, CpuMode, Runtime};
use proptest::prelude::*;

fn rt(seed: u64, queues: u32) -> Runtime {
    Runtime::cpu(
        CpuMode::Deterministic { seed },
        &Config::new()
            .num_queues(queues)
            .max_tasks_per_warp(queues * 512),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn fib_is_schedule_independent(seed in any::<u64>(), queues in 1u32..=4, n in 0u32..16, cutoff in 0u32..10) {
        let mut rt = rt(seed, queues);
        prop_assert_eq!(rt.launch(fib::fib_kernel, (n,)).unwrap().result, fib::fib_seq(n));
        prop_assert_eq!(rt.launch(fib::fib_cutoff_kernel, (n, cutoff)).unwrap().result, fib::fib_seq(n));
    }

    #[test]
    fn nqueens_is_schedule_independent(seed in any::<u64>(), queues in 1u32..=4, n in 1u32..9, cutoff in 0u32..5) {
        prop_assert_eq!(
            rt(seed, queues).launch(nqueens::nqueens_kernel, (n, cutoff)).unwrap().result,
            nqueens::nqueens_seq(n, 0, 0, 0, 0)
        );
    }

    #[test]
    fn random_tree_sum_is_schedule_independent(seed in any::<u64>(), queues in 1u32..=4, size in 1usize..2000) {
        let nodes = tree::random_tree(size, seed);
        let mut rt = rt(seed, queues);
        let buf = rt.upload(&nodes).unwrap();
        prop_assert_eq!(rt.launch(tree::tree_sum_kernel, (buf.slice(),)).unwrap().result, tree::tree_sum_seq(&nodes));
    }
}
