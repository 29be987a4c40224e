//! Launch contexts on the CPU executor, in every mode: trees whose tasks read their weights
//! from `entry!(context(..), ..)`'s value, before and after waits, in thread and block mode,
//! sum to the sequential result; a launch reads its own context, not the previous one's.

use gtap_host::{Config, CpuMode, Runtime};
use gtap_tests::context::{BLOCK, weigh_block_kernel, weigh_kernel, weigh_seq};

/// Every CPU mode of `config`: work-first (thread mode only), parallel, and the deterministic
/// one over seeds.
fn runtimes(config: &Config, work_first: bool) -> Vec<(String, Runtime)> {
    let mut modes = vec![("parallel".to_string(), CpuMode::Parallel)];
    if work_first {
        modes.push(("work-first".into(), CpuMode::WorkFirst));
    }
    for seed in [1, 2, 7] {
        modes.push((
            format!("deterministic seed {seed}"),
            CpuMode::Deterministic { seed },
        ));
    }
    modes
        .into_iter()
        .map(|(name, mode)| (name, Runtime::cpu(mode, config).expect("CPU runtime")))
        .collect()
}

#[test]
fn thread_mode_tasks_read_the_launch_context_before_and_after_waits() {
    for (mode, mut rt) in runtimes(&Config::new(), true) {
        for (weights, scale, depth) in [(vec![3u64], 1, 0), (vec![1, 2, 3, 4, 5], 7, 6)] {
            let w = rt.upload(&weights).unwrap();
            let got = rt
                .launch(weigh_kernel, (w.slice(), scale, depth))
                .unwrap_or_else(|e| panic!("{mode}, depth {depth}: {e}"));
            assert_eq!(
                got.result,
                weigh_seq(&weights, scale, depth),
                "{mode}, depth {depth}"
            );
        }
    }
}

#[test]
fn block_mode_tasks_read_the_launch_context_before_and_after_waits() {
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .max_tasks_per_warp(256);
    for (mode, mut rt) in runtimes(&config, false) {
        for (weights, scale, depth) in [(vec![3u64], 1, 0), (vec![1, 2, 3, 4, 5], 7, 5)] {
            let w = rt.upload(&weights).unwrap();
            let got = rt
                .launch(weigh_block_kernel, (w.slice(), scale, depth))
                .unwrap_or_else(|e| panic!("{mode}, depth {depth}: {e}"));
            assert_eq!(
                got.result,
                weigh_seq(&weights, scale, depth),
                "{mode}, depth {depth}"
            );
        }
    }
}
