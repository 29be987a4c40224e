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

    /// Runs `kernel` expecting a device error, and returns it.
    pub fn run_error<K: Kernel + Copy>(kernel: K, args: K::Args) -> DeviceError {
        match runtime(CpuMode::Deterministic { seed: 0 }).launch(kernel, args) {
            Err(Error::Device(e)) => *e,
            Err(e) => panic!("expected a device error, got {e}"),
            Ok(_) => panic!("the launch should have failed"),
        }
    }
}
