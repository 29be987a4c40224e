//! Block mode on the GPU: the block-mode examples over many launches with exact results, every
//! block helper against its sequential reference, and the partial-wait error followed by
//! correct runs. A file of its own, so that it can be run (and, while block mode is new,
//! diagnosed) apart from the thread-mode GPU suite:
//! `cargo test --release -p gtap-tests --test gpu_block`.
//!
//! Without a GPU (or without device code) every test prints why and passes; with
//! `GTAP_REQUIRE_GPU=1` a missing GPU is a failure instead.

use gtap_examples::integrate_block;
use gtap_host::{Config, DeviceCode, DeviceErrorKind, Error, Runtime};
use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq, partial_wait_kernel};

fn gpu(code: &DeviceCode, block: u32) -> Option<Runtime> {
    let config = Config::new()
        .block_mode()
        .block_size(block)
        .max_tasks_per_warp(512);
    match Runtime::gpu(code, &config) {
        Ok(rt) => Some(rt),
        Err(e @ (Error::NoGpu { .. } | Error::NoDeviceCode { .. })) => {
            assert!(
                std::env::var_os("GTAP_REQUIRE_GPU").is_none(),
                "GTAP_REQUIRE_GPU is set but: {e}"
            );
            eprintln!("skipping GPU test: {e}");
            None
        }
        Err(e) => panic!("GPU runtime failed: {e}"),
    }
}

fn repeats() -> usize {
    std::env::var("GTAP_GPU_REPEATS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

#[test]
fn integrate_block_is_exact_over_many_launches() {
    let Some(mut rt) = gpu(&gtap_examples::DEVICE_CODE, integrate_block::BLOCK) else {
        return;
    };
    for eps in [1e-8, 1e-10] {
        let want = integrate_block::integrate_block_seq(-1.0, 1.0, eps, integrate_block::BLOCK);
        for i in 0..repeats() {
            let got = rt
                .launch(integrate_block::integrate_block_kernel, (-1.0, 1.0, eps))
                .unwrap_or_else(|e| panic!("eps {eps}, launch {i}: {e}"));
            assert_eq!(
                got.result.to_bits(),
                want.to_bits(),
                "eps {eps}, launch {i}: {} vs {want}",
                got.result
            );
            if i == 0 {
                println!(
                    "integrate_block eps {eps}: {} tasks, {:.3} ms",
                    got.stats.tasks_spawned, got.stats.kernel_ms
                );
            }
        }
    }
}

#[test]
fn every_helper_and_per_thread_spawns_are_exact() {
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    for (depth, salt) in [(0, 1), (2, 5), (4, 9)] {
        let want = helpers_seq(depth, salt, BLOCK);
        for i in 0..repeats() {
            let got = rt.launch(helpers_kernel, (depth, salt)).unwrap();
            assert_eq!(got.result, want, "depth {depth}, launch {i}");
        }
    }
}

#[test]
fn a_partial_wait_is_a_typed_error_then_the_runtime_runs_on() {
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    for early in [true, false] {
        let Err(Error::Device(e)) = rt.launch(partial_wait_kernel, (early,)) else {
            panic!("a partial wait must fail");
        };
        assert_eq!(e.kind, DeviceErrorKind::PartialWait, "{e}");
        assert_eq!(e.task, "partial_wait");
        println!("{e}");
        let got = rt.launch(helpers_kernel, (2, 3)).unwrap();
        assert_eq!(got.result, helpers_seq(2, 3, BLOCK));
    }
}
