// Runs kernels on the CPU executor the way the host launcher does: a region laid out for a
// small grid, task slots sized from the records the task functions registered. Included by the
// pass tests (`include!("../support/cpu.rs")`).

#[allow(dead_code, unused_imports)]
mod cpu {
    use gtap::__private::{Kernel, TASK_RECORDS};
    use gtap_device::cpu::{Driver, Mode};
    pub use gtap_device::error::{ErrorCode, ErrorRecord};
    use gtap_device::{Geometry, LaunchParams, Layout};

    /// Runs `K` under the deterministic executor with `seed`.
    pub fn run_seeded<K: Kernel>(args: K::Args, seed: u64) -> K::Output {
        run_with::<K>(args, Mode::Deterministic { seed })
    }

    /// Runs `K` under several seeds and on OS threads; all runs must agree.
    pub fn run<K: Kernel>(args: K::Args) -> K::Output
    where
        K::Output: PartialEq + core::fmt::Debug,
    {
        let first = run_seeded::<K>(args, 0);
        for seed in 1..4 {
            assert_eq!(run_seeded::<K>(args, seed), first, "seed {seed}");
        }
        assert_eq!(run_with::<K>(args, Mode::Parallel), first, "parallel");
        first
    }

    /// Runs `K` expecting a device error, and returns its record.
    pub fn run_error<K: Kernel>(args: K::Args) -> ErrorRecord {
        let mut error = ErrorRecord::EMPTY;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            launch::<K>(args, Mode::Deterministic { seed: 0 }, &mut error)
        }));
        assert!(result.is_err(), "the launch should have failed");
        error
    }

    fn run_with<K: Kernel>(args: K::Args, mode: Mode) -> K::Output {
        let mut error = ErrorRecord::EMPTY;
        launch::<K>(args, mode, &mut error)
    }

    fn launch<K: Kernel>(args: K::Args, mode: Mode, error: &mut ErrorRecord) -> K::Output {
        let largest = TASK_RECORDS.iter().map(|r| r.bytes).max().unwrap_or(16);
        let geometry = Geometry {
            blocks: 2,
            warps_per_block: 2,
            slots_per_warp: 2048,
            num_queues: 2,
            slot_bytes: largest.div_ceil(16) * 16,
        };
        let layout = Layout::new(geometry).expect("geometry");
        let mut memory = vec![0u128; (layout.bytes as usize).div_ceil(16)];
        let driver = Driver { mode };
        let launch = LaunchParams {
            base: memory.as_mut_ptr() as u64,
            error: error as *mut ErrorRecord as u64,
            layout,
            options: 0,
            seed: 7,
            host: &raw const driver as u64,
        };
        K::run_cpu(&launch, args)
    }
}
