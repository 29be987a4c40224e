//! Every kernel and task function of this crate is in its PTX. Without the device toolchain the
//! test says so and passes, unless `GTAP_REQUIRE_DEVICE=1` (as `scripts/test` sets).

use gtap_host::DeviceCode;

#[test]
fn ptx_has_every_kernel_and_task_function() {
    let ptx = match &gtap_workloads::DEVICE_CODE {
        DeviceCode::Ptx { ptx, .. } => *ptx,
        DeviceCode::Missing { reason } => {
            assert!(
                std::env::var("GTAP_REQUIRE_DEVICE").as_deref() != Ok("1"),
                "GTAP_REQUIRE_DEVICE=1 but there is no device code: {reason}"
            );
            eprintln!("skipping: no device code ({reason})");
            return;
        }
    };
    let kernels = [
        "fib_kernel",
        "fib_cutoff_kernel",
        "nq_kernel",
        "nq_join_kernel",
        "tree_kernel",
        "tree_epaq_kernel",
        "probtree_kernel",
    ];
    for k in kernels {
        assert!(ptx.contains(&format!(".entry {k}(")), "kernel {k} missing");
    }
    let tasks = [
        "fib",
        "fib_cutoff",
        "nq",
        "nq_join",
        "tree_work",
        "tree_work_epaq",
        "probtree_work",
    ];
    for t in tasks {
        assert!(
            ptx.lines()
                .any(|l| l.contains("__gtap_record_") && l.contains(&format!("${t}$"))),
            "record size of task function {t} missing"
        );
    }
}
