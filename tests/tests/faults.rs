//! Device failures on the CPU executor behave as on the GPU: each is a typed error naming the
//! task function, the source line and the limit, and the runtime stays usable afterwards.

use gtap_host::{BackendKind, Config, CpuMode, DeviceErrorKind, Error, Runtime};
use gtap_tests::{bad_queue_kernel, digits_kernel, digits_seq, divide_kernel, wide_kernel};

fn device_error(e: Error) -> gtap_host::DeviceError {
    match e {
        Error::Device(d) => *d,
        other => panic!("expected a device error, got {other}"),
    }
}

/// The pool-based executors and the work-first one, which has no pool to exhaust.
fn runtimes() -> Vec<Runtime> {
    let config = Config::new().num_queues(2).max_tasks_per_warp(64);
    let mut all = runtimes_with(config.clone());
    all.push(Runtime::cpu(CpuMode::WorkFirst, &config).unwrap());
    all
}

fn runtimes_with(config: Config) -> Vec<Runtime> {
    vec![
        Runtime::cpu(CpuMode::Deterministic { seed: 3 }, &config).unwrap(),
        Runtime::cpu(CpuMode::Parallel, &config).unwrap(),
    ]
}

#[test]
fn exhausted_pool_is_a_typed_error_then_reset_runs_correctly() {
    // One queue, so the ring (max_tasks_per_warp / num_queues ids) is as large as the pool; a
    // stack too small for any inline child, so the children the pool has no slot for cannot
    // run inline either.
    let config = Config::new().max_tasks_per_warp(64).stack_bytes(4096);
    for mut rt in runtimes_with(config) {
        // 8^4 leaves held until their parents join: far more than 64 slots per warp.
        let e = device_error(rt.launch(wide_kernel, (4, 8)).unwrap_err());
        assert_eq!(e.kind, DeviceErrorKind::PoolExhausted);
        assert_eq!(e.limit, 64);
        assert_eq!(e.task, "wide");
        assert!(e.line > 0);
        assert!(e.to_string().contains("max_tasks_per_warp"), "{e}");
        // The advice is exact enough to follow: the doubled pool fits the budget it names.
        let growth = e
            .pool_growth
            .expect("a pool exhaustion says what more slots cost");
        assert_eq!(growth.pool_bytes, rt.layout().bytes);
        assert!(e.to_string().contains("doubling it to 128"), "{e}");
        let doubled = Config::new()
            .max_tasks_per_warp(128)
            .max_task_memory_bytes(growth.pool_bytes + growth.doubling_bytes);
        let BackendKind::Cpu(mode) = rt.backend() else {
            panic!("a CPU runtime")
        };
        let bigger = Runtime::cpu(mode, &doubled).unwrap();
        assert_eq!(bigger.layout().geometry.slots_per_warp, 128);
        rt.reset().unwrap();
        assert_eq!(rt.launch(wide_kernel, (2, 4)).unwrap().result, 16);
    }
    // With the default stack the same pool runs the tree, the children it has no slot for
    // inline.
    for mut rt in runtimes_with(Config::new().max_tasks_per_warp(64)) {
        let launch = rt.launch(wide_kernel, (4, 8)).unwrap();
        assert_eq!(launch.result, 4096);
        assert!(launch.stats.tasks_inlined > 0, "{:?}", launch.stats);
    }
}

#[test]
fn queue_index_out_of_range_is_a_typed_error() {
    for mut rt in runtimes() {
        let e = device_error(rt.launch(bad_queue_kernel, (5,)).unwrap_err());
        assert_eq!(e.kind, DeviceErrorKind::InvalidQueue);
        assert_eq!((e.value, e.limit), (5, 2));
        assert_eq!(e.task, "bad_queue");
        assert!(e.file.ends_with("lib.rs"), "{}", e.file);
        assert_eq!(rt.launch(bad_queue_kernel, (1,)).unwrap().result, 7);
    }
}

#[test]
fn panic_in_a_task_is_a_typed_error() {
    for mut rt in runtimes() {
        let e = device_error(rt.launch(divide_kernel, (3, 0)).unwrap_err());
        assert_eq!(e.kind, DeviceErrorKind::Panic);
        assert_eq!(e.task, "divide");
        assert!(e.message.contains("divide by zero"), "{}", e.message);
        assert!(e.line > 0);
        assert_eq!(rt.launch(divide_kernel, (3, 5)).unwrap().result, 160);
    }
}

#[test]
fn scratch_memory_works_by_default_and_is_a_typed_panic_without_it() {
    let expected = digits_seq(7, 5);
    for mut rt in runtimes_with(Config::new()) {
        assert_eq!(rt.launch(digits_kernel, (7, 5)).unwrap().result, expected);
    }
    for mut rt in runtimes_with(Config::new().thread_scratch(false)) {
        let e = device_error(rt.launch(digits_kernel, (7, 5)).unwrap_err());
        assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
        assert_eq!(e.task, "digits", "{e}");
        assert!(e.message.contains("thread_scratch"), "{e}");
        assert!(e.file.ends_with("src/lib.rs"), "the caller's line: {e}");
        assert_eq!(rt.launch(divide_kernel, (3, 5)).unwrap().result, 160);
    }
}

#[test]
fn bad_configurations_are_rejected_with_advice() {
    let err = |c: Config| {
        Runtime::cpu(CpuMode::Parallel, &c)
            .err()
            .expect("rejected")
            .to_string()
    };
    // A live runtime, to show that refused configurations leave it working.
    let mut live = Runtime::cpu(CpuMode::Parallel, &Config::new()).unwrap();
    assert!(err(Config::new().block_size(0)).contains("block_size 0"));
    assert!(err(Config::new().block_size(48)).contains("multiple of 32"));
    assert!(err(Config::new().block_size(2048)).contains("between 32 and 1024"));
    assert!(err(Config::new().num_queues(0)).contains("num_queues 0"));
    assert!(err(Config::new().num_queues(3).max_tasks_per_warp(100)).contains("use 102"));
    assert!(err(Config::new().max_task_memory_bytes(1000)).contains("too small"));
    assert_eq!(live.launch(wide_kernel, (2, 4)).unwrap().result, 16);
}

#[test]
fn the_gpu_path_reports_missing_gpu_or_code_clearly() {
    // Whatever this machine has, asking for the GPU either works or says why not.
    match Runtime::gpu(&gtap_tests::DEVICE_CODE, &Config::new()) {
        Ok(_) => {}
        Err(e @ (Error::NoGpu { .. } | Error::NoDeviceCode { .. })) => {
            assert!(!e.to_string().is_empty())
        }
        Err(e) => panic!("unexpected error without a usable GPU: {e}"),
    }
    let missing = gtap_host::DeviceCode::Missing {
        reason: "built without the device toolchain",
    };
    let e = Runtime::gpu(&missing, &Config::new()).err().unwrap();
    assert!(matches!(e, Error::NoDeviceCode { .. }));
    assert!(e.to_string().contains("built without the device toolchain"));
    // The fallback says the same and runs.
    let (mut rt, why) = Runtime::gpu_or_cpu(&missing, &Config::new()).unwrap();
    assert!(matches!(why, Some(Error::NoDeviceCode { .. })));
    assert_eq!(rt.launch(wide_kernel, (2, 4)).unwrap().result, 16);
}
