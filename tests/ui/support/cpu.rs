// Runs kernels on gtap-host's CPU executor: under several seeds of the deterministic mode and on
// OS threads, all of which must agree. Included by the pass tests
// (`include!("../support/cpu.rs")`).

#[allow(dead_code)]
mod cpu {
    use gtap::__private::Kernel;
    use gtap_host::{Config, CpuMode, DeviceError, Error, Runtime};

    fn runtime(mode: CpuMode) -> Runtime {
        Runtime::cpu(mode, &Config::new().num_queues(2).max_tasks_per_warp(2048)).expect("CPU runtime")
    }

    /// Runs `kernel` under several seeds and on OS threads; all runs must agree.
    pub fn run<K: Kernel + Copy>(kernel: K, args: K::Args) -> K::Output
    where
        K::Output: PartialEq + core::fmt::Debug,
    {
        let first = runtime(CpuMode::Deterministic { seed: 0 }).launch(kernel, args).expect("launch").result;
        for seed in 1..4 {
            let got = runtime(CpuMode::Deterministic { seed }).launch(kernel, args).expect("launch").result;
            assert_eq!(got, first, "seed {seed}");
        }
        let got = runtime(CpuMode::Parallel).launch(kernel, args).expect("launch").result;
        assert_eq!(got, first, "parallel");
        first
    }

    /// Runs the block-mode `kernel` (`block` threads per block) under several seeds and on OS
    /// threads; all runs must agree.
    pub fn run_block<K: Kernel + Copy>(kernel: K, block: u32, args: K::Args) -> K::Output
    where
        K::Output: PartialEq + core::fmt::Debug,
    {
        let config = Config::new().num_queues(2).block_mode().block_size(block).max_tasks_per_warp(256);
        let run = |mode| Runtime::cpu(mode, &config).expect("CPU runtime").launch(kernel, args).expect("launch").result;
        let first = run(CpuMode::Deterministic { seed: 0 });
        for seed in 1..3 {
            assert_eq!(run(CpuMode::Deterministic { seed }), first, "seed {seed}");
        }
        assert_eq!(run(CpuMode::Parallel), first, "parallel");
        first
    }

    /// Runs `kernel` expecting a device error, and returns it.
    pub fn run_error<K: Kernel + Copy>(kernel: K, args: K::Args) -> DeviceError {
        match runtime(CpuMode::Deterministic { seed: 0 }).launch(kernel, args) {
            Err(Error::Device(e)) => *e,
            Err(e) => panic!("expected a device error, got {e}"),
            Ok(_) => panic!("the launch should have failed"),
        }
    }
}
