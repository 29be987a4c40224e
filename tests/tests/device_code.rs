//! Every kernel and task function of the workspace's device crates is in their PTX (which
//! `scripts/check-ptx` then assembles with `ptxas`). Without the device toolchain the test says
//! so and passes, unless `GTAP_REQUIRE_DEVICE=1` (as `scripts/test` sets), where it fails.

use gtap_host::DeviceCode;

fn ptx(code: &DeviceCode) -> Option<&'static str> {
    match code {
        DeviceCode::Ptx { ptx, .. } => Some(ptx),
        DeviceCode::Missing { reason } => {
            assert!(
                std::env::var("GTAP_REQUIRE_DEVICE").as_deref() != Ok("1"),
                "GTAP_REQUIRE_DEVICE=1 but there is no device code: {reason}"
            );
            eprintln!("skipping: no device code ({reason})");
            None
        }
    }
}

fn check(ptx: &str, kernels: &[&str], tasks: &[&str]) {
    for k in kernels.iter().chain(["gtap_probe"].iter()) {
        assert!(
            ptx.contains(&format!(".entry {k}(")),
            "kernel {k} missing from the PTX"
        );
    }
    for t in tasks {
        assert!(
            ptx.lines()
                .any(|l| l.contains("__gtap_record_") && l.contains(&format!("${t}$"))),
            "record size of task function {t} missing from the PTX"
        );
    }
}

#[test]
fn examples_ptx_has_every_kernel_and_task_function() {
    if let Some(ptx) = ptx(&gtap_examples::DEVICE_CODE) {
        check(
            ptx,
            &[
                "fib_kernel",
                "fib_cutoff_kernel",
                "integrate_kernel",
                "nqueens_kernel",
                "tree_kernel",
                "tree_sum_kernel",
            ],
            &[
                "fib",
                "fib_cutoff",
                "integrate",
                "nqueens",
                "tree_visit",
                "tree_sum",
            ],
        );
    }
}

#[test]
fn fixtures_ptx_has_every_kernel_and_task_function() {
    if let Some(ptx) = ptx(&gtap_tests::DEVICE_CODE) {
        check(
            ptx,
            &[
                "wide_kernel",
                "bad_queue_kernel",
                "divide_kernel",
                "same_lane_kernel",
                "shapes_kernel",
                "flood_kernel",
            ],
            &[
                "wide",
                "bad_queue",
                "leaf",
                "divide",
                "same_lane",
                "shapes",
                "flood",
            ],
        );
    }
}
