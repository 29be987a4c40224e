//! Capacity never fails a computation that can finish, on the CPU executor in its modes: a
//! chain far deeper than one warp's share of the pool completes by borrowing other warps'
//! slots, a pool far too small runs most children inline with the result still exact, and
//! only a stack that cannot hold an inline child ends a launch with the typed error.

use gtap_examples::fib;
use gtap_host::{Config, CpuMode, DeviceErrorKind, Error, Runtime};
use gtap_tests::random_trees::{MAX_FANOUT, mix, reference, shape, tree_u64_kernel};
use gtap_tests::{chain_kernel, flood_kernel};

/// A deterministic and a parallel runtime, each with 8 warps.
fn runtimes(config: Config) -> Vec<Runtime> {
    vec![
        Runtime::cpu(
            CpuMode::Deterministic { seed: 11 },
            &config.clone().grid_size(4).block_size(64),
        )
        .expect("CPU runtime"),
        Runtime::cpu(CpuMode::Parallel, &config.grid_size(8).block_size(32)).expect("CPU runtime"),
    ]
}

#[test]
fn a_20000_deep_chain_completes_under_the_default_configuration() {
    for mode in [
        CpuMode::Deterministic { seed: 3 },
        CpuMode::Parallel,
        CpuMode::WorkFirst,
    ] {
        let mut rt = Runtime::cpu(mode, &Config::new()).expect("CPU runtime");
        let launch = rt
            .launch(chain_kernel, (20_000,))
            .unwrap_or_else(|e| panic!("{mode:?}: the chain does not complete: {e}"));
        assert_eq!(launch.result, 20_000, "{mode:?}");
        assert_eq!(launch.stats.tasks_spawned, 20_001, "{mode:?}");
    }
}

#[test]
fn a_chain_deeper_than_one_warps_pool_borrows_the_other_warps_slots() {
    // 4096 slots per warp, as a GPU with many warps might have; the chain needs 20,001 at once
    // and nobody can steal any of it: without borrowing, warp 0 runs out at 4096.
    for mut rt in runtimes(Config::new().max_tasks_per_warp(4096)) {
        let launch = rt
            .launch(chain_kernel, (20_000,))
            .expect("the chain completes");
        assert_eq!(launch.result, 20_000, "{:?}", rt.backend());
        assert_eq!(
            (launch.stats.tasks_spawned, launch.stats.tasks_inlined),
            (20_001, 0),
            "every task got a slot of some warp"
        );
    }
}

#[test]
fn a_tiny_pool_runs_most_children_inline_and_stays_exact() {
    for mut rt in runtimes(Config::new().num_queues(2).max_tasks_per_warp(16)) {
        let launch = rt.launch(fib::fib_kernel, (22,)).expect("fib completes");
        assert_eq!(launch.result, fib::fib_seq(22));
        let s = &launch.stats;
        assert_eq!(s.tasks_spawned + s.tasks_inlined, fib::fib_tasks(22));
        assert!(
            s.tasks_inlined > s.tasks_spawned,
            "most children ran inline: {s:?}"
        );
        // The first tree of a few thousand tasks, ten times the slots of the grid's 8 warps.
        let (depth, shape) = (8, shape(MAX_FANOUT as u32, 2));
        let (seed, want) = (1..1000)
            .map(|n| (mix(n), reference(mix(n), depth, shape)))
            .find(|(_, r)| r.nodes > 1500 && r.nodes < 20_000)
            .expect("such a tree");
        let mut counter = rt.alloc_filled(1, 0u64).unwrap();
        let launch = rt
            .launch(tree_u64_kernel, (seed, depth, shape, counter.slice_mut()))
            .expect("the tree completes");
        assert_eq!(launch.result, want.sum);
        assert_eq!(rt.download(&counter).unwrap()[0], want.detached);
        assert!(launch.stats.tasks_inlined > 0, "{:?}", launch.stats);
    }
}

#[test]
fn a_pool_large_enough_runs_nothing_inline() {
    for mut rt in runtimes(Config::new().num_queues(2).max_tasks_per_warp(2048)) {
        let launch = rt.launch(fib::fib_kernel, (18,)).unwrap();
        assert_eq!(launch.result, fib::fib_seq(18));
        assert_eq!(launch.stats.tasks_inlined, 0);
        assert_eq!(launch.stats.tasks_spawned, fib::fib_tasks(18));
    }
}

#[test]
fn no_stack_for_an_inline_child_is_a_typed_error_then_the_runtime_runs_on() {
    let config = Config::new()
        .num_queues(2)
        .max_tasks_per_warp(16)
        .stack_bytes(4096);
    for mut rt in runtimes(config) {
        let e = match rt.launch(fib::fib_kernel, (22,)) {
            Err(Error::Device(e)) => *e,
            other => panic!("expected a device error, got {other:?}"),
        };
        assert_eq!(
            (e.kind, e.limit, e.task.as_str()),
            (DeviceErrorKind::PoolExhausted, 16, "fib")
        );
        assert!(
            e.value > 4096,
            "the stack the inline child needed: {}",
            e.value
        );
        let message = e.to_string();
        assert!(message.contains("stack_bytes"), "{message}");
        assert!(message.contains("raise max_tasks_per_warp"), "{message}");
        rt.reset().unwrap();
        assert_eq!(rt.launch(fib::fib_kernel, (5,)).unwrap().result, 5);
    }
}

#[test]
fn a_queue_too_small_for_a_flood_of_children_overflows_into_the_list() {
    // Four queues of 16 entries: 60 children on queue 1 are 32 kept, 16 in the ring and 12 on
    // the warp's overflow list. This was a `QueueOverflow` error.
    for mut rt in runtimes(Config::new().num_queues(4).max_tasks_per_warp(64)) {
        assert_eq!(rt.launch(flood_kernel, (60,)).unwrap().result, 1770);
    }
}
