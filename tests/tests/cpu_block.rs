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
fn mixed_waits_and_early_returns_match_the_sequential_reference() {
    use gtap_tests::block::{mixed_joins_kernel, mixed_joins_seq};
    let depth = 9;
    let want = mixed_joins_seq(depth);
    let mut runs: Vec<(String, Runtime)> = [(1, 1), (2, 2), (3, 1), (4, 3)]
        .into_iter()
        .map(|(seed, q)| {
            (
                format!("seed {seed}, {q} queues"),
                deterministic(seed, q, 64),
            )
        })
        .collect();
    runs.push(("parallel".into(), parallel(64)));
    for (mode, mut rt) in runs {
        let mut out = rt.alloc_filled(2, 0u64).unwrap();
        let got = rt
            .launch(mixed_joins_kernel, (out.slice_mut(), depth))
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(got.result, want.0, "{mode}");
        assert_eq!(rt.download(&out).unwrap(), want.1, "{mode}");
    }
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

#[test]
fn every_helper_and_per_thread_spawns_match_the_sequential_reference() {
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq};
    let want = helpers_seq(2, 5, BLOCK);
    for seed in [1, 2] {
        let got = deterministic(seed, 1, BLOCK)
            .launch(helpers_kernel, (2, 5))
            .unwrap();
        assert_eq!(got.result, want, "seed {seed}");
        // 1 root, 4 children (threads 0, 16, 32, 48), 16 grandchildren.
        assert_eq!(got.stats.tasks_spawned, 21, "seed {seed}");
    }
    let got = parallel(BLOCK).launch(helpers_kernel, (2, 5)).unwrap();
    assert_eq!(got.result, want, "parallel");
}

#[test]
fn a_block_reduction_adds_the_same_pairs_in_the_same_order_as_its_reference() {
    use gtap_tests::block::{WIDE_BLOCK, wide_sum_kernel, wide_sum_seq};
    let want = wide_sum_seq(3, WIDE_BLOCK);
    // Not the sum in thread order: the test would not see a change of the tree otherwise.
    let in_order: f64 = (0..WIDE_BLOCK)
        .map(|t| gtap_tests::block::wide_value(t, 3))
        .sum();
    assert_ne!(in_order.to_bits(), want);
    let got = deterministic(1, 1, WIDE_BLOCK)
        .launch(wide_sum_kernel, (3,))
        .unwrap();
    assert_eq!(got.result, want);
}

#[test]
fn a_strided_loop_calls_each_thread_with_its_own_indices_in_order() {
    use gtap_tests::block::{STRIDE_STARTS, WIDE_BLOCK, strided_indices_kernel};
    let mut rt = deterministic(2, 1, WIDE_BLOCK);
    for start in STRIDE_STARTS {
        let got = rt.launch(strided_indices_kernel, (start,)).unwrap();
        assert_eq!(got.result, 1, "start {start}");
    }
}

#[test]
fn a_wait_reached_by_part_of_the_block_is_a_typed_error_then_the_runtime_runs_on() {
    use gtap_host::{DeviceErrorKind, Error};
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq, partial_wait_kernel};
    for mut rt in [deterministic(3, 1, BLOCK), parallel(BLOCK)] {
        // (thread 0 returns early, the message's case, threads that suspended at a wait)
        for (early, case, waited) in [
            (true, "returned instead of waiting", BLOCK - 1),
            (false, "different waits", BLOCK),
        ] {
            let Err(Error::Device(e)) = rt.launch(partial_wait_kernel, (early,)) else {
                panic!("a partial wait must fail");
            };
            assert_eq!(e.kind, DeviceErrorKind::PartialWait);
            assert_eq!(e.task, "partial_wait");
            assert!(e.file.ends_with("src/block.rs"), "{}", e.file);
            // The first wait some thread reached: thread 0's (line 17) or the others' (line 20).
            assert!([17, 20].contains(&e.line), "line {}", e.line);
            assert!(e.message.contains(case), "{e}");
            assert_eq!(e.limit, BLOCK as u64);
            assert_eq!(e.value, waited as u64, "{e}");
            let text = e.to_string();
            assert!(text.contains("every thread of the block"), "{text}");
        }
        let got = rt.launch(helpers_kernel, (1, 2)).unwrap();
        assert_eq!(got.result, helpers_seq(1, 2, BLOCK));
    }
}

#[test]
fn a_block_spawn_without_a_free_slot_is_a_typed_error_then_reset_runs_correctly() {
    use gtap_host::{DeviceErrorKind, Error};
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq};
    // 2 slots a warp, 8 in all: a depth-3 launch holds at least 13 tasks at once (each level
    // waits for its 4 children), and a block-mode child cannot run inline.
    let small = |mode| {
        let config = Config::new()
            .block_mode()
            .block_size(BLOCK)
            .grid_size(2)
            .max_tasks_per_warp(2);
        Runtime::cpu(mode, &config).expect("CPU runtime")
    };
    for mut rt in [
        small(CpuMode::Deterministic { seed: 5 }),
        small(CpuMode::Parallel),
    ] {
        let Err(Error::Device(e)) = rt.launch(helpers_kernel, (3, 5)) else {
            panic!("13 live tasks cannot fit 8 slots");
        };
        assert_eq!(e.kind, DeviceErrorKind::PoolExhausted, "{e}");
        assert_eq!(e.task, "helpers");
        assert!(e.message.contains("cannot run inline"), "{e}");
        rt.reset().unwrap();
        let got = rt.launch(helpers_kernel, (1, 2)).unwrap();
        assert_eq!(got.result, helpers_seq(1, 2, BLOCK));
    }
}

#[test]
fn arguments_read_after_waits_match_the_sequential_reference() {
    use gtap_tests::block::{BLOCK, args_after_waits_kernel, args_after_waits_seq};
    for (depth, acc, salt, scale) in [(0, 5, 7, 11), (1, 2, 3, 4), (3, 9, 1, 1000)] {
        let want = args_after_waits_seq(depth, acc, salt, scale, BLOCK);
        for seed in [1, 2] {
            let got = deterministic(seed, 1, BLOCK)
                .launch(args_after_waits_kernel, (depth, acc, salt, scale))
                .unwrap();
            assert_eq!(got.result, want, "depth {depth}, seed {seed}");
        }
        let got = parallel(BLOCK)
            .launch(args_after_waits_kernel, (depth, acc, salt, scale))
            .unwrap();
        assert_eq!(got.result, want, "depth {depth}, parallel");
    }
}

#[test]
fn frames_hold_no_copy_of_arguments_read_after_a_wait() {
    use gtap_device::abi::RecordSize;
    use gtap_tests::block::{BLOCK, four_after_wait, four_after_wait_kernel};
    let raw = gtap::__private::block_record_size_u32::<four_after_wait>();
    let RecordSize::Block { stride, .. } = RecordSize::decode(raw) else {
        panic!("not a block-mode record: {raw:#x}");
    };
    // The future keeps the reference to the record's arguments and its state, not the four
    // `u64`s (32 bytes) it reads after its wait.
    assert!(stride <= 16, "frame stride {stride}");
    let got = deterministic(1, 1, BLOCK)
        .launch(four_after_wait_kernel, (3, 10, 20, 30))
        .unwrap();
    assert_eq!(got.result, 3 + 10 + 20 + 30);
}

#[test]
fn a_panic_in_a_block_task_is_a_typed_error_then_the_runtime_runs_on() {
    use gtap_host::{DeviceErrorKind, Error};
    use gtap_tests::block::{BLOCK, panics_at_kernel};
    for mut rt in [deterministic(4, 1, BLOCK), parallel(BLOCK)] {
        // Thread 0 (which also schedules for the block), another of its warp, one of another.
        for at in [0, 5, 40] {
            let Err(Error::Device(e)) = rt.launch(panics_at_kernel, (at,)) else {
                panic!("thread {at}: a panic must fail the launch");
            };
            assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
            assert_eq!(e.task, "panics_at", "{e}");
            assert!(e.message.contains("on purpose"), "{e}");
            assert!(e.file.ends_with("src/block.rs"), "{}", e.file);
        }
        let got = rt.launch(panics_at_kernel, (BLOCK,)).unwrap();
        assert_eq!(got.result, BLOCK);
    }
}

#[test]
fn blocks_lend_tasks_the_configured_shared_memory() {
    use gtap_host::{DeviceErrorKind, Error};
    use gtap_tests::block::{BLOCK, shared_words_kernel};
    let runtime = |bytes: u32| {
        Runtime::cpu(
            CpuMode::Deterministic { seed: 1 },
            &Config::new()
                .block_mode()
                .block_size(BLOCK)
                .block_shared_bytes(bytes),
        )
        .expect("CPU runtime")
    };
    let mut default = Runtime::cpu(
        CpuMode::Deterministic { seed: 1 },
        &Config::new().block_mode().block_size(BLOCK),
    )
    .expect("CPU runtime");
    let got = default.launch(shared_words_kernel, (true,)).unwrap();
    assert_eq!(got.result, Config::DEFAULT_BLOCK_SHARED_BYTES / 8);
    for (bytes, words) in [(256, 32), (100, 12), (0, 0)] {
        let got = runtime(bytes)
            .launch(shared_words_kernel, (false,))
            .unwrap();
        assert_eq!(got.result, words, "{bytes} bytes");
    }
    // Past the end of an empty area: a typed panic that says what sets the size.
    let mut none = runtime(0);
    let Err(Error::Device(e)) = none.launch(shared_words_kernel, (true,)) else {
        panic!("an index past the lent memory must fail");
    };
    assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
    assert!(e.message.contains("block_shared_bytes"), "{e}");
    assert!(e.file.ends_with("src/block.rs"), "{}", e.file);
    let too_much = Runtime::cpu(
        CpuMode::Deterministic { seed: 1 },
        &Config::new()
            .block_mode()
            .block_size(BLOCK)
            .block_shared_bytes(Config::MAX_BLOCK_SHARED_BYTES + 1),
    );
    match too_much {
        Err(Error::Config(e)) => assert!(e.to_string().contains("block_shared_bytes"), "{e}"),
        Err(other) => panic!("expected a configuration error, got {other:?}"),
        Ok(_) => panic!("expected a configuration error"),
    }
}

#[test]
fn a_block_kernel_needs_a_block_mode_runtime_of_its_block_size() {
    use gtap_host::Error;
    use gtap_tests::block::helpers_kernel;
    let mut wrong = deterministic(1, 1, 128);
    match wrong.launch(helpers_kernel, (0, 1)) {
        Err(Error::BlockSizeMismatch {
            kernel_block: 64,
            runtime_block: 128,
            ..
        }) => {}
        other => panic!("expected BlockSizeMismatch, got {other:?}"),
    }
    let mut thread_mode =
        Runtime::cpu(CpuMode::Deterministic { seed: 1 }, &Config::new()).expect("CPU runtime");
    match thread_mode.launch(helpers_kernel, (0, 1)) {
        Err(e @ Error::NotBlockMode { .. }) => {
            assert!(e.to_string().contains("block_mode()"), "{e}")
        }
        other => panic!("expected NotBlockMode, got {other:?}"),
    }
}

#[test]
fn thread_scratch_in_a_block_mode_task_is_a_typed_panic() {
    use gtap_host::{DeviceErrorKind, Error};
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq, wants_scratch_kernel};
    let mut rt = deterministic(1, 1, BLOCK);
    let Err(Error::Device(e)) = rt.launch(wants_scratch_kernel, ()) else {
        panic!("thread-mode scratch in block mode must fail");
    };
    assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
    assert!(e.message.contains("block.shared"), "{e}");
    assert_eq!(e.task, "wants_scratch", "{e}");
    assert!(e.file.ends_with("src/block.rs"), "the caller's line: {e}");
    let got = rt
        .launch(helpers_kernel, (2, 5))
        .expect("the runtime runs on");
    assert_eq!(got.result, helpers_seq(2, 5, BLOCK));
}
