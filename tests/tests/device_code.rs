//! The device code of the workspace's device crates: one module per kernel, holding that kernel
//! and the task functions it reaches, and no others (`scripts/check-ptx` then assembles every
//! module with `ptxas`). Without the device toolchain the test says so and passes, unless
//! `GTAP_REQUIRE_DEVICE=1` (as `scripts/test` sets), where it fails.

use gtap_host::{DeviceCode, KernelModule};

fn built(code: &DeviceCode) -> bool {
    if let Some(reason) = code.missing_reason() {
        assert!(
            std::env::var("GTAP_REQUIRE_DEVICE").as_deref() != Ok("1"),
            "GTAP_REQUIRE_DEVICE=1 but there is no device code: {reason}"
        );
        eprintln!("skipping: no device code ({reason})");
        return false;
    }
    true
}

fn module<'a>(code: &'a DeviceCode, kernel: &str) -> &'a KernelModule {
    code.module_of(kernel)
        .unwrap_or_else(|| panic!("kernel {kernel} has no module"))
}

/// The task functions (by name) whose records a module lists.
fn tasks(m: &KernelModule) -> Vec<&str> {
    let mut names: Vec<&str> = m
        .records
        .iter()
        .filter_map(|(symbol, _)| symbol.split('$').nth(1))
        .collect();
    names.sort();
    names
}

/// `kernels`: each kernel with the task functions its module must hold (exactly).
fn check(code: &DeviceCode, kernels: &[(&str, &[&str])], all_tasks: &[&str]) {
    for (kernel, reached) in kernels.iter().chain([("gtap_probe", &[][..])].iter()) {
        let m = module(code, kernel);
        assert_eq!(m.kernels, [*kernel], "one kernel per module");
        assert!(
            m.ptx.contains(&format!(".entry {kernel}(")),
            "kernel {kernel} missing from its module's PTX"
        );
        let entries = m.ptx.matches(".entry ").count();
        assert_eq!(entries, 1, "{kernel}'s module has {entries} kernels");
        let mut want = reached.to_vec();
        want.sort();
        assert_eq!(tasks(m), want, "task functions in {kernel}'s module");
        // A task function's code is its body's closure, `<path>::<function>::{closure}`, v0-
        // mangled as `<len><function>NC`; the module holds exactly the task functions its
        // kernel reaches.
        for t in all_tasks {
            let shim = format!("{}{t}NC", t.len());
            assert_eq!(
                m.ptx.contains(&shim),
                reached.contains(t),
                "{kernel}'s module and the code of task function {t}"
            );
        }
        for c in m.cubins {
            assert!(
                c.image.starts_with(b"\x7fELF"),
                "{kernel}: {} cubin",
                c.arch
            );
        }
    }
    for t in all_tasks {
        assert!(
            code.records()
                .iter()
                .any(|(symbol, _)| symbol.contains(&format!("${t}$"))),
            "record size of task function {t} missing"
        );
    }
    assert_eq!(
        code.modules().len(),
        kernels.len() + 1,
        "a module per kernel, and gtap's probe"
    );
}

#[test]
fn examples_have_a_module_per_kernel_with_only_its_task_functions() {
    let code = &gtap_examples::DEVICE_CODE;
    if !built(code) {
        return;
    }
    check(
        code,
        &[
            ("fib_kernel", &["fib"]),
            ("fib_cutoff_kernel", &["fib_cutoff"]),
            ("integrate_kernel", &["integrate"]),
            ("nqueens_kernel", &["nqueens"]),
            ("tree_kernel", &["tree_visit"]),
            ("tree_sum_kernel", &["tree_sum"]),
            ("integrate_block_kernel", &["integrate_block"]),
        ],
        &[
            "fib",
            "fib_cutoff",
            "integrate",
            "nqueens",
            "tree_visit",
            "tree_sum",
            "integrate_block",
        ],
    );
    // The point of one module per kernel: fib's holds no N-Queens code at all.
    let fib = module(code, "fib_kernel");
    assert!(!fib.ptx.contains("13gtap_examples7nqueens"));
    assert!(
        module(code, "nqueens_kernel")
            .ptx
            .contains("13gtap_examples7nqueens")
    );
}

#[test]
fn fixtures_have_a_module_per_kernel_with_only_its_task_functions() {
    let code = &gtap_tests::DEVICE_CODE;
    if !built(code) {
        return;
    }
    check(
        code,
        &[
            ("wide_kernel", &["wide"]),
            ("bad_queue_kernel", &["bad_queue", "leaf"]),
            ("divide_kernel", &["divide"]),
            ("digits_kernel", &["digits"]),
            ("same_lane_kernel", &["same_lane"]),
            ("shapes_kernel", &["shapes"]),
            ("flood_kernel", &["flood", "leaf"]),
            ("tree_u64_kernel", &["ping", "tree_u64"]),
            ("tree_u64_one_queue_kernel", &["ping", "tree_u64"]),
            ("tree_u64_three_queues_kernel", &["ping", "tree_u64"]),
            ("tree_pair_kernel", &["ping", "tree_pair"]),
            ("tree_u16_kernel", &["ping", "tree_u16"]),
            ("subsets_kernel", &["subsets"]),
            ("mixed_kernel", &["fill", "mixed_root"]),
            ("fib_kernel", &["fib"]),
            ("fib_one_block_per_sm_kernel", &["fib"]),
            ("stall_kernel", &["fib", "stall", "wait_for_flag"]),
            ("chain_kernel", &["chain"]),
            ("strands_kernel", &["strand", "strands"]),
            ("peek_kernel", &["mark", "peek"]),
            ("partial_wait_kernel", &["one", "partial_wait"]),
            ("helpers_kernel", &["helpers"]),
            ("mixed_joins_kernel", &["mixed_joins"]),
            ("wants_scratch_kernel", &["wants_scratch"]),
            ("wide_sum_kernel", &["wide_sum"]),
            ("strided_indices_kernel", &["strided_indices"]),
            ("shared_words_kernel", &["shared_words"]),
            ("args_after_waits_kernel", &["args_after_waits"]),
            ("four_after_wait_kernel", &["four_after_wait"]),
            ("panics_at_kernel", &["panics_at"]),
            ("visit_kernel", &["visit", "visit_root"]),
            ("visit_joined_kernel", &["visit", "visit_root"]),
            ("waits_kernel", &["fib"]),
            ("visit_block_kernel", &["visit_block", "visit_block_root"]),
            ("block_waits_kernel", &["one", "partial_wait"]),
            ("rank_detached_kernel", &["rank_children", "ranked"]),
            ("rank_joined_kernel", &["rank_children", "ranked"]),
            ("weigh_kernel", &["factor", "weigh"]),
            ("weigh_block_kernel", &["weigh_block"]),
        ],
        &[
            "wide",
            "bad_queue",
            "leaf",
            "divide",
            "same_lane",
            "shapes",
            "flood",
            "ping",
            "tree_u64",
            "tree_pair",
            "tree_u16",
            "chain",
            "strand",
            "strands",
            "mark",
            "peek",
            "subsets",
            "fill",
            "mixed_root",
            "fib",
            "stall",
            "wait_for_flag",
            "partial_wait",
            "one",
            "helpers",
            "mixed_joins",
            "shared_words",
            "args_after_waits",
            "four_after_wait",
            "panics_at",
            "visit",
            "visit_root",
            "visit_block",
            "visit_block_root",
            "rank_children",
            "ranked",
            "weigh",
            "factor",
            "weigh_block",
            "strided_indices",
        ],
    );
}
