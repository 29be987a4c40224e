//! Struct kernel parameters and `Part`s on the CPU executor: the fixture's
//! `#[derive(gtap::KernelArg)]` struct reaches the kernel intact under several schedules, and
//! the fill over lent parts writes every element (the GPU twin is in `gpu.rs`).

use gtap_host::{Config, CpuMode, Runtime};
use gtap_tests::params::{Mixed, mixed_kernel};

#[test]
fn struct_parameter_reaches_the_kernel_intact() {
    let values: Vec<u32> = (0..777).collect();
    let want: Vec<u64> = values
        .iter()
        .map(|&v| (0.5 * v as f64) as u64 + 3)
        .collect();
    for mode in [
        CpuMode::Deterministic { seed: 1 },
        CpuMode::Deterministic { seed: 99 },
        CpuMode::Parallel,
    ] {
        let mut rt = Runtime::cpu(mode, &Config::new()).expect("CPU runtime");
        let input = rt.upload(&values).unwrap();
        let mut out = rt.alloc_filled(values.len(), 0u64).unwrap();
        let m = Mixed {
            tag: 0x5a,
            scale: 0.5,
            values: input.slice(),
            out: out.slice_mut(),
            offset: 3,
            flag: false,
        };
        let got = rt.launch(mixed_kernel, (m,)).unwrap().result;
        assert_eq!(got, (0x5a, 0.5, 3, false, 777), "{mode:?}");
        assert_eq!(rt.download(&out).unwrap(), want, "{mode:?}");
    }
}
