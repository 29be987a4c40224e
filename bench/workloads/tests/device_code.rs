//! Every kernel of this crate has its own module holding exactly the task functions it reaches.
//! Without the device toolchain the test says so and passes, unless `GTAP_REQUIRE_DEVICE=1` (as
//! `scripts/test` sets).

use std::collections::BTreeSet;

use gtap_host::DeviceCode;

/// Each kernel with the task functions it spawns (directly or through its children).
const KERNELS: &[(&str, &[&str])] = &[
    ("fib_kernel", &["fib"]),
    ("fib_cutoff_kernel", &["fib_cutoff"]),
    ("fib_cutoff_q1_kernel", &["fib_cutoff"]),
    ("fib_cutoff_q3_kernel", &["fib_cutoff"]),
    ("nq_kernel", &["nq"]),
    ("nq_join_kernel", &["nq_join"]),
    ("tree_kernel", &["tree_work"]),
    ("tree_epaq_kernel", &["tree_work_epaq"]),
    ("tree_epaq_q1_kernel", &["tree_work_epaq"]),
    ("tree_epaq_q3_kernel", &["tree_work_epaq"]),
    ("probtree_kernel", &["probtree_work"]),
    ("cilksort_kernel", &["cilkmerge", "cilksort"]),
    (
        "cilksort_parts_kernel",
        &["cilkmerge_parts", "cilksort_parts", "cilksort_parts_root"],
    ),
    ("cilksort_epaq_kernel", &["cilkmerge_epaq", "cilksort_epaq"]),
    (
        "cilksort_epaq_q1_kernel",
        &["cilkmerge_epaq", "cilksort_epaq"],
    ),
    (
        "cilksort_epaq_q3_kernel",
        &["cilkmerge_epaq", "cilksort_epaq"],
    ),
    ("mergesort_kernel", &["mergesort", "mergesort_root"]),
    ("bfs_kernel", &["bfs"]),
    ("spmv_kernel", &["range_spmv", "spmv_row"]),
    ("tree_block_kernel", &["tree_work_block"]),
    ("bfs_block_kernel", &["bfs_block"]),
    ("spmv_block_kernel", &["range_spmv_block", "spmv_row_block"]),
];

/// This crate's device code, or `None` (the test skips, saying why) when it was built without
/// the device toolchain; that is a failure under `GTAP_REQUIRE_DEVICE=1`.
fn device_code() -> Option<&'static DeviceCode> {
    let code = &gtap_workloads::DEVICE_CODE;
    if let Some(reason) = code.missing_reason() {
        assert!(
            std::env::var("GTAP_REQUIRE_DEVICE").as_deref() != Ok("1"),
            "GTAP_REQUIRE_DEVICE=1 but there is no device code: {reason}"
        );
        eprintln!("skipping: no device code ({reason})");
        return None;
    }
    Some(code)
}

#[test]
fn every_kernel_has_a_module_with_exactly_its_task_functions() {
    let Some(code) = device_code() else {
        return;
    };
    assert!(matches!(code, DeviceCode::Modules { .. }));
    for (kernel, reached) in KERNELS {
        let m = code
            .module_of(kernel)
            .unwrap_or_else(|| panic!("kernel {kernel} has no module"));
        assert!(
            m.ptx.contains(&format!(".entry {kernel}(")),
            "kernel {kernel} missing from its module's PTX"
        );
        let mut tasks: Vec<&str> = m
            .records
            .iter()
            .filter_map(|(symbol, _)| symbol.split('$').nth(1))
            .collect();
        tasks.sort();
        assert_eq!(tasks, *reached, "task functions in {kernel}'s module");
        // One poll shim per task function: a second copy would have its own address, and the
        // scheduler, which recognises its root function's records by the shim's address,
        // would poll them through the other copy by an indirect call.
        // (A function called before its definition is also declared: count names.)
        let shims: BTreeSet<&str> = m
            .ptx
            .lines()
            .filter(|l| l.starts_with(".func"))
            .filter_map(|l| l.split_whitespace().find(|w| w.contains("9poll_shim")))
            .map(|w| w.trim_end_matches('('))
            .collect();
        assert_eq!(
            shims.len(),
            reached.len(),
            "poll shims in {kernel}'s module: {shims:?}"
        );
    }
    // Every task function's record size reaches the host.
    let all: Vec<&str> = code
        .records()
        .iter()
        .filter_map(|(symbol, _)| symbol.split('$').nth(1))
        .collect();
    for (_, reached) in KERNELS {
        for t in *reached {
            assert!(all.contains(t), "record size of task function {t} missing");
        }
    }
}

/// The thread-mode SpMV's row loop is unrolled (`bench/NOTES.md`, entry 39): some basic block
/// of its kernel holds four fused multiply-adds, so the loads of four iterations are issued
/// before the first is waited for. A change to the builder's LLVM options or to the rows'
/// loop that loses this makes the SpMV about 20 % slower on the H200.
#[test]
fn the_spmv_row_loop_is_unrolled() {
    let Some(code) = device_code() else {
        return;
    };
    let ptx = code
        .module_of("spmv_kernel")
        .expect("spmv_kernel's module")
        .ptx;
    // Basic blocks start at labels (`$L__BB...:`); count the FMAs between two labels.
    let most = ptx
        .split("\n$L__")
        .map(|block| block.matches("fma.rn.f64").count())
        .max();
    assert!(
        most >= Some(4),
        "at most {most:?} FMAs in one basic block of spmv_kernel: the row loop is not unrolled"
    );
}
