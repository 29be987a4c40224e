//! GPU tests: first light, every example repeated over many launches with exact results, and
//! device failures on a deliberately small pool followed by correct runs after reset; block
//! mode (`block_mode_*`): its examples exact, every block helper, the partial-wait error; launch
//! contexts in both modes.
//!
//! Without a GPU (or without device code) every test prints why and passes; with
//! `GTAP_REQUIRE_GPU=1` a missing GPU is a failure instead.

use gtap_examples::{fib, integrate, nqueens, tree};
use gtap_host::{Config, DeviceCode, DeviceErrorKind, Error, Runtime};

/// A GPU runtime, or `None` (after saying why) when there is no GPU or no device code.
/// `GTAP_GPU_GRID` sets the grid of configurations that leave it to the default: the
/// sanitizers run with a small grid, since every idle warp polling for work is slowed down too.
fn gpu(code: &DeviceCode, mut config: Config) -> Option<Runtime> {
    if config.grid_size.is_none()
        && let Some(grid) = std::env::var("GTAP_GPU_GRID")
            .ok()
            .and_then(|s| s.parse().ok())
    {
        config = config.grid_size(grid);
    }
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

/// Whether `GTAP_GPU_SMALL` asks for small inputs (under the sanitizers, which slow kernels
/// down 10-100 times).
fn small() -> bool {
    std::env::var_os("GTAP_GPU_SMALL").is_some()
}

/// Random trees `random_trees_are_exact_on_the_gpu` runs in all: `GTAP_GPU_TREES`, else 400
/// (issue 10's stress proof asks for hundreds of trees on the GPU).
fn random_trees() -> u64 {
    std::env::var("GTAP_GPU_TREES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400)
}

#[test]
fn first_light_probe_kernel() {
    let Some(mut rt) = gpu(&gtap_examples::DEVICE_CODE, Config::new()) else {
        return;
    };
    let threads = rt
        .self_test(264, 256)
        .unwrap_or_else(|e| panic!("probe failed: {e}"));
    println!(
        "probe: {threads} threads wrote the expected values on {:?}",
        rt.backend()
    );
}

#[test]
fn kernel_modules_load_from_sass_when_built_for_the_gpu() {
    let code = &gtap_examples::DEVICE_CODE;
    let Some(mut rt) = gpu(code, Config::new()) else {
        return;
    };
    let loads = rt.module_loads();
    for load in &loads {
        println!(
            "module {}: {:?} in {:.1} ms",
            load.kernels.join(", "),
            load.source,
            load.load_ms
        );
    }
    let kernels = code.modules().len() - 1; // every kernel's module, the probe's not yet
    assert_eq!(loads.len(), kernels, "{loads:?}");
    let first = rt.launch(fib::fib_kernel, (20,)).unwrap();
    assert_eq!(first.result, fib::fib_seq(20));
    let load = first
        .stats
        .module_load
        .expect("the first launch reports its module's load");
    assert_eq!(load.kernels, ["fib_kernel"]);
    // The launch strides its slots by its own module's records (fib's 56 bytes), not by the
    // crate's largest (N-Queens' 124 bytes, a 128-byte slot).
    assert_eq!(
        first.stats.slot_bytes,
        64,
        "{:?}",
        code.module_of("fib_kernel")
    );
    let second = rt.launch(fib::fib_kernel, (20,)).unwrap();
    assert_eq!(second.stats.module_load, None);
    // A cubin for the GPU's architecture is used without JIT; a register cap needs the PTX.
    let has_cubin = !code.module_of("fib_kernel").unwrap().cubins.is_empty();
    if has_cubin && matches!(load.source, gtap_host::ModuleSource::Jit) {
        println!(
            "note: the cubins ({:?}) do not match this GPU, so the PTX was compiled",
            code.module_of("fib_kernel")
                .unwrap()
                .cubins
                .iter()
                .map(|c| c.arch)
                .collect::<Vec<_>>()
        );
    }
    let Some(capped) = gpu(code, Config::new().max_registers(64)) else {
        return;
    };
    assert!(
        capped
            .module_loads()
            .iter()
            .all(|l| l.source == gtap_host::ModuleSource::Jit),
        "a register cap compiles the PTX"
    );
}

#[test]
fn examples_are_exact_over_many_launches_with_1_and_3_queues() {
    // (fib, fib with cutoff, N-Queens, tree height, random tree nodes)
    let (fib_n, cut_n, queens, height, random) = if small() {
        (20, 26, 9, 10, 5_000)
    } else {
        (30, 36, 12, 16, 300_000)
    };
    let mut tree_want = vec![0u64; (1 << (height + 1)) - 1];
    let tree_sum = tree::tree_visit_seq(height, 32, &mut tree_want);
    let nodes = tree::random_tree(random, 5);
    let nodes_sum = tree::tree_sum_seq(&nodes);
    let integral = integrate::integrate_seq(-1.0, 1.0, 1e-11);
    for queues in [1, 3] {
        let Some(mut rt) = gpu(
            &gtap_examples::DEVICE_CODE,
            Config::new().num_queues(queues),
        ) else {
            return;
        };
        let buf = rt.upload(&nodes).unwrap();
        let mut out = rt.alloc_filled(tree_want.len(), 0u64).unwrap();
        for i in 0..repeats() {
            let ctx = format!("launch {i}, {queues} queue(s)");
            let l = rt.launch(fib::fib_kernel, (fib_n,)).unwrap();
            assert_eq!(l.result, fib::fib_seq(fib_n), "fib({fib_n}), {ctx}");
            assert_eq!(
                l.stats.tasks_spawned,
                fib::fib_tasks(fib_n),
                "fib({fib_n}) tasks, {ctx}"
            );
            assert_eq!(
                rt.launch(fib::fib_cutoff_kernel, (cut_n, 14))
                    .unwrap()
                    .result,
                fib::fib_seq(cut_n),
                "fib cutoff, {ctx}"
            );
            let got = rt
                .launch(integrate::integrate_kernel, (-1.0, 1.0, 1e-11))
                .unwrap()
                .result;
            assert_eq!(got.to_bits(), integral.to_bits(), "integrate, {ctx}");
            assert_eq!(
                rt.launch(nqueens::nqueens_kernel, (queens, 5))
                    .unwrap()
                    .result,
                nqueens::nqueens_seq(queens, 0, 0, 0, 0),
                "nqueens({queens}), {ctx}"
            );
            assert_eq!(
                rt.launch(tree::tree_kernel, (height, 32, out.slice_mut()))
                    .unwrap()
                    .result,
                tree_sum,
                "tree, {ctx}"
            );
            assert_eq!(
                rt.download(&out).unwrap(),
                tree_want,
                "tree node values, {ctx}"
            );
            assert_eq!(
                rt.launch(tree::tree_sum_kernel, (buf.slice(),))
                    .unwrap()
                    .result,
                nodes_sum,
                "random tree, {ctx}"
            );
        }
        println!(
            "{queues} queue(s): {} launches of each example exact",
            repeats()
        );
    }
}

fn device_error(e: Error) -> gtap_host::DeviceError {
    match e {
        Error::Device(d) => *d,
        other => panic!("expected a device error, got {other}"),
    }
}

#[test]
fn small_pool_error_then_correct_run_after_reset() {
    // Four warps of 64 slots: a batch of 32 tasks spawning 8 children each overflows at once,
    // and a 1 KiB stack (CUDA's default) has no room for a child run inline.
    let config = Config::new()
        .grid_size(2)
        .block_size(64)
        .max_tasks_per_warp(64)
        .stack_bytes(1024);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    let e = device_error(rt.launch(gtap_tests::wide_kernel, (5, 8)).unwrap_err());
    println!("small pool: {e}");
    assert_eq!(e.kind, DeviceErrorKind::PoolExhausted);
    assert_eq!((e.limit, e.task.as_str()), (64, "wide"));
    assert!(e.to_string().contains("doubling it to 128 needs"), "{e}");
    assert!(e.to_string().contains("stack_bytes"), "{e}");
    rt.reset().unwrap();
    // 21 tasks in all: they fit any one warp's 64 slots.
    for _ in 0..5 {
        assert_eq!(
            rt.launch(gtap_tests::wide_kernel, (2, 4)).unwrap().result,
            16
        );
    }
}

#[test]
fn bad_queue_index_and_panic_are_reported_and_the_runtime_survives() {
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new().num_queues(2)) else {
        return;
    };
    let e = device_error(rt.launch(gtap_tests::bad_queue_kernel, (9,)).unwrap_err());
    println!("bad queue: {e}");
    assert_eq!(
        (e.kind, e.value, e.limit),
        (DeviceErrorKind::InvalidQueue, 9, 2)
    );
    assert_eq!(
        rt.launch(gtap_tests::bad_queue_kernel, (1,))
            .unwrap()
            .result,
        7
    );
    let e = device_error(rt.launch(gtap_tests::divide_kernel, (6, 0)).unwrap_err());
    println!("panic: {e}");
    assert_eq!(
        (e.kind, e.task.as_str()),
        (DeviceErrorKind::Panic, "divide")
    );
    assert!(e.line > 0);
    assert_eq!(
        rt.launch(gtap_tests::divide_kernel, (6, 4)).unwrap().result,
        1600
    );
}

#[test]
fn scratch_memory_works_by_default_and_is_a_typed_panic_without_it_on_the_gpu() {
    use gtap_tests::{digits_kernel, digits_seq};
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new()) else {
        return;
    };
    for depth in [0, 8, 14] {
        let got = rt.launch(digits_kernel, (depth, 5)).unwrap();
        assert_eq!(got.result, digits_seq(depth, 5), "depth {depth}");
    }
    let Some(mut rt) = gpu(
        &gtap_tests::DEVICE_CODE,
        Config::new().thread_scratch(false),
    ) else {
        return;
    };
    let e = device_error(rt.launch(digits_kernel, (8, 5)).unwrap_err());
    println!("no scratch: {e}");
    assert_eq!(
        (e.kind, e.task.as_str()),
        (DeviceErrorKind::Panic, "digits")
    );
    assert!(e.message.contains("thread_scratch"), "{e}");
    assert_eq!(
        rt.launch(gtap_tests::divide_kernel, (6, 4)).unwrap().result,
        1600
    );
}

#[test]
fn a_tiny_pool_runs_children_inline_and_stays_exact() {
    // Four warps of 64 slots for fib(22)'s 57,313 tasks: most run inline, on a stack raised to
    // 32 KiB for it.
    let config = Config::new()
        .grid_size(2)
        .block_size(64)
        .num_queues(2)
        .max_tasks_per_warp(64)
        .stack_bytes(32 * 1024);
    let Some(mut rt) = gpu(&gtap_examples::DEVICE_CODE, config) else {
        return;
    };
    for _ in 0..repeats() {
        let launch = rt.launch(fib::fib_kernel, (22,)).unwrap();
        assert_eq!(launch.result, fib::fib_seq(22));
        let s = &launch.stats;
        assert_eq!(s.tasks_spawned + s.tasks_inlined, fib::fib_tasks(22));
        assert!(s.tasks_inlined > 0, "{s:?}");
    }
    let s = rt.launch(fib::fib_kernel, (22,)).unwrap().stats;
    println!(
        "tiny pool: fib(22) exact, {} tasks in slots and {} inline",
        s.tasks_spawned, s.tasks_inlined
    );
}

#[test]
fn a_20000_deep_chain_completes_under_the_default_configuration() {
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new()) else {
        return;
    };
    // Under the sanitizers (`GTAP_GPU_SMALL`) a shorter chain: racecheck takes minutes for
    // 20,000 steps one after another.
    let depth = if small() { 2_000 } else { 20_000 };
    for _ in 0..repeats().min(5) {
        let launch = rt.launch(gtap_tests::chain_kernel, (depth,)).unwrap();
        assert_eq!(launch.result, depth);
        let s = &launch.stats;
        assert_eq!(s.tasks_spawned + s.tasks_inlined, depth as u64 + 1);
        println!(
            "chain of {depth}: {} slots per warp, {} tasks in slots, {} inline, {:.3} ms",
            s.slots_per_warp, s.tasks_spawned, s.tasks_inlined, s.kernel_ms
        );
    }
}

#[test]
fn a_flood_past_the_queue_capacity_completes() {
    // Four queues of 16 entries: 60 children on one are 32 kept, 16 in the ring and 12 on the
    // warp's overflow list (once a queue overflow error).
    let config = Config::new().num_queues(4).max_tasks_per_warp(64);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    for _ in 0..repeats() {
        assert_eq!(
            rt.launch(gtap_tests::flood_kernel, (60,)).unwrap().result,
            1770
        );
        assert_eq!(
            rt.launch(gtap_tests::flood_kernel, (20,)).unwrap().result,
            190
        );
    }
}

#[test]
fn watchdog_stops_a_launch_waiting_forever_then_the_runtime_runs_fib() {
    use gtap_host::{StallDetector, WarpState};
    use std::time::{Duration, Instant};
    // Generous enough that 32 scheduling steps fit in it under compute-sanitizer too.
    let period = Duration::from_secs(2);
    let config = Config::new().watchdog(Some(period));
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    let mut flag = rt.upload(&[0u32]).unwrap();
    for round in 0..3 {
        let start = Instant::now();
        let e = rt
            .launch(gtap_tests::stall_kernel, (flag.slice_mut(), 20))
            .unwrap_err();
        let took = start.elapsed();
        let Error::Stalled(report) = e else {
            panic!("round {round}: expected a stall, got {e}")
        };
        println!("round {round}, returned after {took:?}: {report}");
        assert!(
            took >= period && took < period * 10,
            "round {round}: {took:?}"
        );
        assert!(matches!(report.detector, StallDetector::Watchdog { .. }));
        assert!(report.stopped, "round {round}: every warp left the launch");
        // Every warp of the launch is reported: the kernel's own resident grid, which may be
        // smaller than the region's (sized for the crate's kernel that fits the most blocks).
        let warps_per_block = (rt.block_size() / 32) as usize;
        assert!(
            !report.warps.is_empty()
                && report.warps.len() % warps_per_block == 0
                && report.warps.len() <= rt.layout().geometry.warps() as usize,
            "{} warps reported",
            report.warps.len()
        );
        let working: Vec<_> = report
            .warps
            .iter()
            .filter(|w| w.state == Some(WarpState::Working))
            .collect();
        assert_eq!(working.len(), 1, "round {round}: {report}");
        let task = report
            .device_error
            .as_ref()
            .expect("the waiting task is named");
        assert_eq!(task.kind, DeviceErrorKind::Watchdog, "{report}");
        assert_eq!(task.task, "wait_for_flag");
        assert_eq!(task.warp, working[0].warp, "{report}");
        for n in [20, 25] {
            assert_eq!(
                rt.launch(gtap_tests::fib_kernel, (n,)).unwrap().result,
                fib::fib_seq(n),
                "round {round}: fib({n}) after the stall"
            );
        }
    }
}

#[test]
fn runs_on_the_callers_cudarc_stream() {
    // SAFETY: only probes whether the driver library loads.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        assert!(
            std::env::var_os("GTAP_REQUIRE_GPU").is_none(),
            "GTAP_REQUIRE_GPU is set but there is no CUDA driver"
        );
        eprintln!("skipping GPU test: no CUDA driver");
        return;
    }
    let ctx = cudarc::driver::CudaContext::new(0).expect("the application's context");
    let stream = ctx.new_stream().expect("the application's stream");
    let before = stream
        .clone_htod(&[1u32, 2, 3])
        .expect("application work before");
    let mut rt =
        Runtime::gpu_on_stream(&gtap_examples::DEVICE_CODE, &Config::new(), stream.clone())
            .unwrap();
    for _ in 0..5 {
        assert_eq!(
            rt.launch(fib::fib_kernel, (25,)).unwrap().result,
            fib::fib_seq(25)
        );
    }
    assert_eq!(
        stream.clone_dtoh(&before).expect("application work after"),
        vec![1, 2, 3]
    );
    println!("ran on the application's own context and stream");
}

/// The stress test's random task trees (`gtap_tests::random_trees`), larger (up to 500,000
/// tasks), on the GPU: random fan-out and depth, one or two waits, spawns and resumptions on
/// random queues, detached children, three result types; each tree compared with its
/// sequential result and its detached children counted. A tree too large for the default pool
/// may be refused with a typed error (then the runtime is reset); most must run.
/// `GTAP_GPU_TREES` sets the number of trees, split between the queue counts (see
/// [`random_trees`]).
#[test]
fn random_trees_are_exact_on_the_gpu() {
    use gtap_tests::random_trees::{
        mix, reference, shape, tree_pair_kernel, tree_u16_kernel, tree_u64_kernel,
        tree_u64_one_queue_kernel, tree_u64_three_queues_kernel,
    };
    const QUEUE_COUNTS: [u32; 2] = [1, 3];
    let per_queue_count = random_trees().div_ceil(QUEUE_COUNTS.len() as u64);
    for queues in QUEUE_COUNTS {
        let config = Config::new().num_queues(queues);
        let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
            return;
        };
        let (mut checked, mut refused, mut tasks) = (0, 0, 0u64);
        for n in 0..per_queue_count {
            let seed = mix(n ^ 0x5eed);
            let depth = 6 + (seed % 14) as u32;
            let fanout = 2 + ((seed >> 8) % 5) as u32;
            let shape = shape(fanout, queues);
            let want = reference(seed, depth, shape);
            if want.nodes > 500_000 {
                continue;
            }
            let mut counter = rt.alloc_filled(1, 0u64).unwrap();
            let args = (seed, depth, shape, counter.slice_mut());
            let what =
                format!("tree {n} (seed {seed}, depth {depth}, fan-out {fanout}, {queues} queues)");
            let got = match n % 3 {
                // Half the u64 trees on the kernel compiled for this queue count.
                0 => match (queues, seed % 2) {
                    (1, 1) => rt.launch(tree_u64_one_queue_kernel, args),
                    (3, 1) => rt.launch(tree_u64_three_queues_kernel, args),
                    _ => rt.launch(tree_u64_kernel, args),
                }
                .map(|l| (want.nodes, l.result)),
                1 => rt.launch(tree_pair_kernel, args).map(|l| l.result),
                _ => rt
                    .launch(tree_u16_kernel, args)
                    .map(|l| (want.nodes, l.result as u64)),
            };
            let want_sum = if n % 3 == 2 {
                want.sum16 as u64
            } else {
                want.sum
            };
            match got {
                Ok(got) => {
                    assert_eq!(got, (want.nodes, want_sum), "{what}");
                    let detached = rt.download(&counter).unwrap()[0];
                    assert_eq!(detached, want.detached, "{what}: detached children");
                    checked += 1;
                    tasks += want.nodes as u64 + want.detached;
                }
                Err(Error::Device(e)) if e.kind == DeviceErrorKind::PoolExhausted => {
                    println!("{what}: refused: {e}");
                    refused += 1;
                    rt.reset().unwrap();
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
        println!(
            "random trees, {queues} queues: {checked} trees exact ({tasks} tasks), {refused} refused"
        );
        assert!(refused <= checked, "most trees must fit the default pool");
    }
}

/// Whether a CUDA driver is here; without one a test that needs only the driver prints why and
/// passes (fails with `GTAP_REQUIRE_GPU=1`).
fn driver_or_skip() -> bool {
    // SAFETY: only probes whether the driver library loads.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        return true;
    }
    assert!(
        std::env::var_os("GTAP_REQUIRE_GPU").is_none(),
        "GTAP_REQUIRE_GPU is set but there is no CUDA driver"
    );
    eprintln!("skipping GPU test: no CUDA driver");
    false
}

#[test]
fn upload_launch_download_are_ordered_on_the_callers_stream() {
    if !driver_or_skip() {
        return;
    }
    let ctx = cudarc::driver::CudaContext::new(0).expect("the application's context");
    let stream = ctx.new_stream().expect("the application's stream");
    let mut rt =
        Runtime::gpu_on_stream(&gtap_examples::DEVICE_CODE, &Config::new(), stream.clone())
            .unwrap();
    for round in 0..4u64 {
        // The application's own work, enqueued between the runtime's on the same stream.
        let mine: Vec<u64> = (0..1 << 20).map(|i| i * round).collect();
        let app = stream.clone_htod(&mine).expect("application upload");
        // Upload (a large buffer, so that an unordered copy would still be in flight), launch
        // reading it, launch writing another, download: each in stream order.
        let nodes = tree::random_tree(1 << 20, round);
        let buf = rt.upload(&nodes).unwrap();
        assert_eq!(
            rt.launch(tree::tree_sum_kernel, (buf.slice(),))
                .unwrap()
                .result,
            tree::tree_sum_seq(&nodes),
            "round {round}: the kernel read the uploaded tree"
        );
        let height = 19;
        let mut out = rt.alloc_filled((1usize << (height + 1)) - 1, 0u64).unwrap();
        let got = rt
            .launch(tree::tree_kernel, (height, 4, out.slice_mut()))
            .unwrap()
            .result;
        let mut want = vec![0u64; out.len()];
        assert_eq!(got, tree::tree_visit_seq(height, 4, &mut want));
        assert_eq!(rt.download(&out).unwrap(), want, "round {round}: download");
        assert_eq!(stream.clone_dtoh(&app).unwrap(), mine);
    }
    drop(rt);
    stream.synchronize().expect("the frees ran on the stream");
    ctx.check_err()
        .expect("no driver call of the runtime failed");
    println!("upload, launches and downloads ran in order on the application's stream");
}

/// 14 items of a realistic subset-sum instance (the case of the issue that found the 1 KiB
/// CUDA default too small) and its exact count.
fn subset_instance() -> (Vec<u32>, u32, u64) {
    let items: Vec<u32> = (1..=14).map(|i| i * 3 + i % 4).collect();
    let target = items.iter().sum::<u32>() / 2;
    let count = (0u32..1 << items.len())
        .filter(|mask| {
            let sum: u32 = (0..items.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| items[i])
                .sum();
            sum == target
        })
        .count() as u64;
    (items, target, count)
}

/// Runs the test `name` of this test binary alone in a child process with `env` set, checks
/// that it passed, and returns what it printed. A kernel fault makes the GPU unusable for the
/// rest of its process (the CUDA driver's rule), so every faulting case runs in a child and
/// the other GPU tests of this binary keep their GPU.
fn run_in_child(name: &str, env: (&str, &str)) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .expect("the test binary runs itself");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the child running {name} with {}={} failed ({}):\n{text}",
        env.0,
        env.1,
        out.status
    );
    text
}

/// Runs the subset-sum leaf `depth` levels deep (items larger than the target, so one call
/// per level, and exactly one subset: the empty one) on a new runtime with `stack_bytes`;
/// `Ok(true)` if it ran, `Ok(false)` if it faulted, an error for anything else. A fault
/// poisons the process's GPU: call it in a child process.
fn leaf_runs(depth: usize, stack_bytes: u32) -> Result<bool, Error> {
    let config = Config::new()
        .stack_bytes(stack_bytes)
        .max_task_memory_bytes(256 << 20);
    let mut rt = Runtime::gpu(&gtap_tests::DEVICE_CODE, &config)?;
    let items = rt.upload(&vec![7u32; depth])?;
    match rt.launch(gtap_tests::subsets_kernel, (items.slice(), 0)) {
        Ok(launch) => {
            assert!(
                launch.stats.stack_bytes >= stack_bytes,
                "{:?}",
                launch.stats
            );
            assert_eq!(launch.result, 1, "depth {depth}: one subset sums to 0");
            Ok(true)
        }
        Err(Error::KernelFault { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// A recursion too deep for its stack is a typed `KernelFault` naming `Config::stack_bytes`;
/// afterwards (in the faulting process, a child of this test) every GPU runtime and buffer
/// answers `ContextLost`, a new `Runtime::gpu` is the typed `GpuPoisoned` error without a
/// driver call, `gpu_or_cpu` runs on the CPU executor, and dropping everything is quiet.
#[test]
fn leaf_stack_overflow_is_a_fault_and_the_process_falls_back_to_the_cpu() {
    const NAME: &str = "leaf_stack_overflow_is_a_fault_and_the_process_falls_back_to_the_cpu";
    const CHILD: &str = "GTAP_TEST_LEAF_FAULT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        leaf_stack_overflow_in_this_process();
        return;
    }
    if gpu(&gtap_tests::DEVICE_CODE, Config::new()).is_none() {
        return;
    }
    let out = run_in_child(NAME, (CHILD, "1"));
    println!("{out}");
    for line in [
        "default stack: 14 levels exact",
        "fault: kernel `subsets_kernel` faulted on the GPU",
        "new runtime: the GPU is unusable for the rest of this process: kernel `subsets_kernel` faulted",
        "fell back: fib(30) = 832040 on the CPU executor",
        "dropped the dead runtimes and buffers",
    ] {
        assert!(out.contains(line), "the child did not print {line:?}");
    }
}

/// The child's part of the test above: it faults, so it ends its process's GPU use.
fn leaf_stack_overflow_in_this_process() {
    let code = &gtap_tests::DEVICE_CODE;
    // The default stack serves the 14-level recursion of the case.
    let mut rt = Runtime::gpu(code, &Config::new()).expect("a GPU in the child");
    let (items, target, count) = subset_instance();
    let buf = rt.upload(&items).unwrap();
    let launch = rt
        .launch(gtap_tests::subsets_kernel, (buf.slice(), target))
        .unwrap();
    assert_eq!(launch.result, count);
    assert!(launch.stats.stack_bytes >= Config::DEFAULT_STACK_BYTES);
    println!("default stack: 14 levels exact ({count} subsets)");
    // 20,000 levels overflow a 1 KiB stack: a fault, named, with the setting to raise.
    let mut small = Runtime::gpu(code, &Config::new().stack_bytes(1024)).unwrap();
    let deep = small.upload(&vec![7u32; 20_000]).unwrap();
    let e = small
        .launch(gtap_tests::subsets_kernel, (deep.slice(), 0))
        .unwrap_err();
    let message = e.to_string();
    println!("fault: {message}");
    let Error::KernelFault {
        kernel,
        stack_bytes,
        ..
    } = &e
    else {
        panic!("expected a kernel fault, got {e}")
    };
    assert_eq!(*kernel, "subsets_kernel");
    assert!(*stack_bytes >= 1024);
    for part in [
        format!("{stack_bytes} bytes of stack, set by Config::stack_bytes"),
        "restart the process".to_string(),
    ] {
        assert!(message.contains(&part), "{part:?} missing from: {message}");
    }
    // Both runtimes (the faulting one and the one made before) and their buffers are dead.
    for dead in [&mut small, &mut rt] {
        assert!(matches!(
            dead.launch(gtap_tests::subsets_kernel, (buf.slice(), target)),
            Err(Error::ContextLost)
        ));
        assert!(matches!(dead.upload(&[1u32]), Err(Error::ContextLost)));
        assert!(matches!(dead.reset(), Err(Error::ContextLost)));
    }
    assert!(matches!(small.download(&deep), Err(Error::ContextLost)));
    assert!(matches!(rt.download(&buf), Err(Error::ContextLost)));
    // A new GPU runtime is refused with the typed error; gpu_or_cpu runs on the CPU.
    let examples = &gtap_examples::DEVICE_CODE;
    match Runtime::gpu(examples, &Config::new()) {
        Err(e @ Error::GpuPoisoned { .. }) => println!("new runtime: {e}"),
        Err(e) => panic!("expected GpuPoisoned, got {e}"),
        Ok(_) => panic!("a new GPU runtime after the fault"),
    }
    let (mut cpu, why) = Runtime::gpu_or_cpu(examples, &Config::new()).unwrap();
    assert!(matches!(why, Some(Error::GpuPoisoned { .. })), "{why:?}");
    assert!(matches!(cpu.backend(), gtap_host::BackendKind::Cpu(_)));
    let fib30 = cpu.launch(fib::fib_kernel, (30,)).unwrap().result;
    assert_eq!(fib30, fib::fib_seq(30));
    println!("fell back: fib(30) = {fib30} on the CPU executor");
    drop((deep, small, buf, rt));
    println!("dropped the dead runtimes and buffers");
}

/// Measures, for a few stack sizes (the default among them), the deepest recursion of the
/// subset-sum leaf that still runs. Each probe runs in a child process (a failed one poisons
/// its process's GPU); the search starts from the depth the previous size reached, scaled by
/// the stack, and stops within 1/32 of the answer. Prints a table; checks that more stack
/// allows deeper recursion and the default at least the 14 levels of the case.
#[test]
fn deepest_leaf_recursion_per_stack_size() {
    const NAME: &str = "deepest_leaf_recursion_per_stack_size";
    const PROBE: &str = "GTAP_TEST_LEAF_PROBE";
    if let Ok(probe) = std::env::var(PROBE) {
        let (depth, stack) = probe.split_once(',').expect("PROBE is depth,stack");
        let (depth, stack) = (depth.parse().unwrap(), stack.parse().unwrap());
        let runs = leaf_runs(depth, stack).unwrap_or_else(|e| panic!("{probe}: {e}"));
        println!("leaf probe: {}", if runs { "runs" } else { "faults" });
        return;
    }
    if gpu(&gtap_tests::DEVICE_CODE, Config::new()).is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let mut probes = 0;
    let mut runs = |depth: usize, stack: u32| {
        probes += 1;
        let out = run_in_child(NAME, (PROBE, &format!("{depth},{stack}")));
        match (
            out.contains("leaf probe: runs"),
            out.contains("leaf probe: faults"),
        ) {
            (true, false) => true,
            (false, true) => false,
            _ => panic!("the probe of depth {depth}, stack {stack} said neither:\n{out}"),
        }
    };
    let sizes = [1024, Config::DEFAULT_STACK_BYTES, 16 * 1024, 64 * 1024];
    let mut deepest: Vec<usize> = Vec::new();
    println!("stack_bytes | deepest leaf recursion that runs | stack bytes per level");
    for &stack in &sizes {
        let guess = match deepest.last() {
            Some(&d) => d * stack as usize / sizes[deepest.len() - 1] as usize,
            None => 16,
        };
        let good = deepest_that_runs(guess.max(1), |depth| runs(depth, stack));
        let per_level = stack as f64 / good.max(1) as f64;
        println!("{stack:>11} | {good:>32} | {per_level:>21.0}");
        deepest.push(good);
    }
    println!(
        "{probes} probes in child processes, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        deepest.windows(2).all(|w| w[0] <= w[1]),
        "more stack must allow at least as deep a recursion: {deepest:?}"
    );
    assert!(deepest[1] >= 14, "the default stack must serve 14 levels");
}

/// The deepest depth for which `runs` holds, within 1/32 (rounded down), searching from
/// `guess`: doubling or halving until a depth that runs and one that faults bracket it, then
/// bisecting.
fn deepest_that_runs(guess: usize, mut runs: impl FnMut(usize) -> bool) -> usize {
    const NEVER_FAULTS: usize = 1 << 17;
    let (mut good, mut bad) = if runs(guess) {
        let mut good = guess;
        loop {
            assert!(good < NEVER_FAULTS, "{good} levels still run: no overflow");
            if !runs(good * 2) {
                break (good, good * 2);
            }
            good *= 2;
        }
    } else {
        let mut bad = guess;
        loop {
            if bad == 1 {
                break (0, 1);
            }
            if runs(bad / 2) {
                break (bad / 2, bad);
            }
            bad /= 2;
        }
    };
    while bad - good > (good / 32).max(1) {
        let mid = (good + bad) / 2;
        if runs(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// The search the stack measurement uses, against known thresholds (no GPU needed).
#[test]
fn deepest_that_runs_finds_the_threshold_within_a_32nd() {
    for deepest in [0, 1, 13, 14, 700, 5000] {
        for guess in [1, 16, 600, 9000] {
            let mut probes = 0;
            let found = deepest_that_runs(guess, |depth| {
                probes += 1;
                depth <= deepest
            });
            assert!(
                found <= deepest && deepest - found <= (found / 32).max(1),
                "threshold {deepest}, guess {guess}: found {found}"
            );
            assert!(probes <= 20, "threshold {deepest}, guess {guess}: {probes}");
        }
    }
}

#[test]
fn invalid_configurations_are_typed_errors_and_a_live_runtime_keeps_working() {
    let code = &gtap_examples::DEVICE_CODE;
    let Some(mut live) = gpu(code, Config::new()) else {
        return;
    };
    let refused = |config: Config| match Runtime::gpu(code, &config) {
        Err(Error::Config(e)) => e,
        Err(e) => panic!("{config:?}: expected a configuration error, got {e}"),
        Ok(_) => panic!("{config:?}: accepted"),
    };
    use gtap_host::ConfigError as C;
    assert!(matches!(
        refused(Config::new().block_size(0)),
        C::BlockSize { got: 0, .. }
    ));
    assert!(matches!(
        refused(Config::new().block_size(100)),
        C::BlockSize { got: 100, .. }
    ));
    let e = refused(Config::new().block_size(4096));
    assert!(
        matches!(
            e,
            C::BlockSize {
                got: 4096,
                max: 1024
            }
        ),
        "{e}"
    );
    assert!(matches!(
        refused(Config::new().num_queues(0)),
        C::NumQueues { got: 0, .. }
    ));
    let e = refused(Config::new().num_queues(3).max_tasks_per_warp(1000));
    assert!(
        matches!(
            e,
            C::TasksNotDivisible {
                suggestion: 1002,
                ..
            }
        ),
        "{e}"
    );
    let e = refused(Config::new().max_task_memory_bytes(1 << 44));
    assert!(matches!(e, C::OutOfMemory { .. }), "{e}");
    let e = refused(Config::new().grid_size(1 << 20));
    assert!(matches!(e, C::GridSize { got: 1_048_576, .. }), "{e}");
    let e = refused(Config::new().max_registers(8));
    assert!(matches!(e, C::MaxRegisters { got: 8 }), "{e}");
    let e = refused(Config::new().stack_bytes(1 << 30));
    assert!(matches!(e, C::StackBytes { .. }), "{e}");
    for config in [
        Config::new().block_size(0),
        Config::new().stack_bytes(1 << 30),
    ] {
        println!("{}", refused(config));
    }
    // Blocks of 1024 threads fit only kernels of at most 64 registers: either they run, or
    // the error names the largest block that fits.
    match Runtime::gpu(code, &Config::new().block_size(1024)) {
        Ok(mut rt) => assert_eq!(
            rt.launch(fib::fib_kernel, (25,)).unwrap().result,
            fib::fib_seq(25)
        ),
        Err(Error::Config(e @ C::KernelDoesNotFit { .. })) => println!("{e}"),
        Err(e) => panic!("block_size 1024: {e}"),
    }
    assert_eq!(
        live.launch(fib::fib_kernel, (30,)).unwrap().result,
        fib::fib_seq(30)
    );
}

/// A launch whose kernel keeps fewer blocks resident than the grid laid out for the widest
/// kernel runs on those (a block that is not resident would start only after the others had
/// ended the launch), with the same result as on its default grid. In the tests' device code
/// divide (more than 96 registers) keeps fewer blocks resident than the kernels of 96 registers
/// or fewer: a warp scheduler's register file holds four warps of the one and five of the
/// others.
#[test]
fn an_explicit_grid_runs_each_kernel_on_the_blocks_it_keeps_resident() {
    let code = &gtap_tests::DEVICE_CODE;
    if std::env::var_os("GTAP_GPU_GRID").is_some() {
        // The default grid is then the variable's, not the widest resident one.
        eprintln!("skipping: GTAP_GPU_GRID sets the default grid");
        return;
    }
    let Some(mut default) = gpu(code, Config::new()) else {
        return;
    };
    // 2^6 leaves of 100 / 4.
    let own = default.launch(gtap_tests::divide_kernel, (6, 4)).unwrap();
    assert_eq!(own.result, 1600);
    let widest = default.layout().geometry.blocks;
    assert!(
        own.stats.blocks < widest,
        "divide keeps {} blocks resident, the widest kernel {widest}: the test needs one that keeps \
         fewer",
        own.stats.blocks
    );
    let Some(mut wide) = gpu(code, Config::new().grid_size(widest)) else {
        return;
    };
    assert_eq!(wide.layout().geometry.blocks, widest);
    let launch = wide.launch(gtap_tests::divide_kernel, (6, 4)).unwrap();
    assert_eq!(launch.result, 1600);
    assert_eq!(launch.stats.blocks, own.stats.blocks);
}

/// A kernel declared with `max_blocks_per_sm = 1` runs on one block a multiprocessor, where the
/// same task function's kernel without it runs on every block it keeps resident (a whole
/// number of blocks a multiprocessor, more than one for fib), with the same result.
#[test]
fn a_kernel_capped_at_one_block_a_multiprocessor_runs_on_one() {
    let code = &gtap_tests::DEVICE_CODE;
    if std::env::var_os("GTAP_GPU_GRID").is_some() {
        eprintln!("skipping: GTAP_GPU_GRID sets the default grid");
        return;
    }
    let Some(mut rt) = gpu(code, Config::new()) else {
        return;
    };
    let resident = rt.launch(gtap_tests::fib_kernel, (20,)).unwrap();
    let capped = rt
        .launch(gtap_tests::fib_one_block_per_sm_kernel, (20,))
        .unwrap();
    assert_eq!(capped.result, fib::fib_seq(20));
    let (all, one) = (resident.stats.blocks, capped.stats.blocks);
    assert!(
        one < all && all % one == 0,
        "fib ran on {all} blocks, capped at one a multiprocessor on {one}"
    );
}

/// Device code of the examples with every module's PTX rewritten by `edit` and no SASS.
fn edited_code(edit: impl Fn(&str) -> String) -> DeviceCode {
    let DeviceCode::Modules {
        arch,
        modules,
        records,
    } = gtap_examples::DEVICE_CODE
    else {
        panic!("the examples have device code (checked by the caller)")
    };
    let modules: Vec<gtap_host::KernelModule> = modules
        .iter()
        .map(|m| gtap_host::KernelModule {
            ptx: Box::leak(edit(m.ptx).into_boxed_str()),
            cubins: &[],
            ..*m
        })
        .collect();
    DeviceCode::Modules {
        arch,
        modules: Box::leak(modules.into_boxed_slice()),
        records,
    }
}

#[test]
fn device_code_the_gpu_cannot_load_is_a_module_load_error() {
    let Some(mut live) = gpu(&gtap_examples::DEVICE_CODE, Config::new()) else {
        return;
    };
    // PTX for an architecture newer than any device's.
    let newer = edited_code(|ptx| {
        ptx.lines()
            .map(|l| {
                if l.starts_with(".target") {
                    ".target sm_200".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    let broken = edited_code(|_| "this is not PTX".to_string());
    for (what, code) in [("newer architecture", newer), ("broken PTX", broken)] {
        match Runtime::gpu(&code, &Config::new()) {
            Err(e @ Error::ModuleLoad { .. }) => {
                println!("{what}: {e}");
                assert!(e.to_string().contains("GTAP_ARCH"), "{e}");
            }
            Err(e) => panic!("{what}: expected a module load error, got {e}"),
            Ok(_) => panic!("{what}: loaded"),
        }
    }
    assert_eq!(
        live.launch(fib::fib_kernel, (30,)).unwrap().result,
        fib::fib_seq(30)
    );
}

/// With no GPU visible (`CUDA_VISIBLE_DEVICES` empty, in a child process of this test binary),
/// asking for the GPU is a typed `NoGpu` error and `gpu_or_cpu` falls back to the CPU.
#[test]
fn no_visible_gpu_is_a_typed_error() {
    const CHILD: &str = "GTAP_TEST_NO_VISIBLE_GPU";
    if std::env::var_os(CHILD).is_some() {
        let e = Runtime::gpu(&gtap_examples::DEVICE_CODE, &Config::new())
            .err()
            .expect("no GPU is visible");
        assert!(matches!(e, Error::NoGpu { .. }), "{e}");
        println!("{e}");
        let (mut rt, why) =
            Runtime::gpu_or_cpu(&gtap_examples::DEVICE_CODE, &Config::new()).unwrap();
        assert!(matches!(why, Some(Error::NoGpu { .. })));
        assert_eq!(
            rt.launch(fib::fib_kernel, (20,)).unwrap().result,
            fib::fib_seq(20)
        );
        return;
    }
    if gpu(&gtap_examples::DEVICE_CODE, Config::new()).is_none() {
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["no_visible_gpu_is_a_typed_error", "--exact", "--nocapture"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(CHILD, "1")
        .status()
        .expect("the test binary runs itself");
    assert!(status.success(), "the child without a visible GPU failed");
}

/// A `#[derive(gtap::KernelArg)]` struct reaches the GPU kernel byte for byte, and a fill over
/// lent `Part`s writes every element.
#[test]
fn struct_parameters_and_parts_work_on_the_gpu() {
    use gtap_tests::params::{Mixed, mixed_kernel};
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new()) else {
        return;
    };
    let values: Vec<u32> = (0..1000).collect();
    let input = rt.upload(&values).unwrap();
    let mut out = rt.alloc_filled(values.len(), 0u64).unwrap();
    let m = Mixed {
        tag: 0xa5,
        scale: 2.5,
        values: input.slice(),
        out: out.slice_mut(),
        offset: 7,
        flag: true,
    };
    let got = rt.launch(mixed_kernel, (m,)).unwrap().result;
    assert_eq!(got, (0xa5, 2.5, 7, true, 1000));
    let want: Vec<u64> = values
        .iter()
        .map(|&v| (2.5 * v as f64) as u64 + 7)
        .collect();
    assert_eq!(rt.download(&out).unwrap(), want);
}

#[test]
fn a_traced_launch_records_every_poll_of_every_warp() {
    let config = Config::new().trace_events_per_warp(1 << 14);
    let Some(mut rt) = gpu(&gtap_examples::DEVICE_CODE, config) else {
        return;
    };
    for _ in 0..3 {
        let launch = rt.launch(fib::fib_kernel, (24,)).unwrap();
        let trace = gtap_tests::trace_check::check_trace(launch, fib::fib_seq(24), "fib_kernel");
        println!(
            "fib(24) traced: {} warps over {:.1} µs, {} events",
            trace.workers.len(),
            trace.span_ns as f64 / 1e3,
            trace.workers.iter().map(|w| w.events.len()).sum::<usize>()
        );
    }
    // The runtime without the trace, on the same device code, records none.
    let Some(mut plain) = gpu(&gtap_examples::DEVICE_CODE, Config::new()) else {
        return;
    };
    assert!(
        plain
            .launch(fib::fib_kernel, (24,))
            .unwrap()
            .trace
            .is_none()
    );
}

#[test]
fn a_trace_too_small_for_the_launch_counts_the_rest_as_dropped() {
    // Four events per warp: most warps run more steps than that. Under memcheck this also
    // shows that nothing is written past a warp's buffer.
    let config = Config::new().trace_events_per_warp(4);
    let Some(mut rt) = gpu(&gtap_examples::DEVICE_CODE, config) else {
        return;
    };
    let launch = rt.launch(fib::fib_kernel, (24,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(24));
    let steps = launch.stats.steps;
    let trace = launch.trace.unwrap();
    assert!(trace.dropped() > 0);
    assert!(trace.workers.iter().all(|w| w.events.len() <= 4));
    let recorded: u64 = trace.workers.iter().map(|w| w.events.len() as u64).sum();
    assert!(recorded + trace.dropped() >= steps);
}

/// A block-mode runtime for the block-mode tests (blocks of `block` threads).
fn block_gpu(code: &DeviceCode, block: u32) -> Option<Runtime> {
    gpu(
        code,
        Config::new()
            .block_mode()
            .block_size(block)
            .max_tasks_per_warp(512),
    )
}

/// A traced block-mode runtime for `integrate_block` (`events` per block).
fn traced_block_gpu(events: u32) -> Option<Runtime> {
    let block = gtap_examples::integrate_block::BLOCK;
    let config = Config::new()
        .block_mode()
        .block_size(block)
        .max_tasks_per_warp(512)
        .trace_events_per_warp(events);
    gpu(&gtap_examples::DEVICE_CODE, config)
}

#[test]
fn a_traced_block_mode_launch_records_every_task_run_of_every_block() {
    use gtap_examples::integrate_block::{BLOCK, integrate_block_kernel, integrate_block_seq};
    let Some(mut rt) = traced_block_gpu(1 << 14) else {
        return;
    };
    let want = integrate_block_seq(-1.0, 1.0, 1e-8, BLOCK);
    for _ in 0..3 {
        let launch = rt
            .launch(integrate_block_kernel, (-1.0, 1.0, 1e-8))
            .unwrap();
        let trace = gtap_tests::trace_check::check_trace(launch, want, "integrate_block_kernel");
        assert_eq!(trace.worker, gtap_host::WorkerKind::Block);
        println!(
            "integrate_block traced: {} blocks over {:.1} µs, {} events",
            trace.workers.len(),
            trace.span_ns as f64 / 1e3,
            trace.workers.iter().map(|w| w.events.len()).sum::<usize>()
        );
    }
    // The runtime without the trace, on the same device code, records none.
    let Some(mut plain) = block_gpu(&gtap_examples::DEVICE_CODE, BLOCK) else {
        return;
    };
    let launch = plain
        .launch(integrate_block_kernel, (-1.0, 1.0, 1e-8))
        .unwrap();
    assert!(launch.trace.is_none());
}

#[test]
fn a_block_mode_trace_too_small_for_the_launch_counts_the_rest_as_dropped() {
    use gtap_examples::integrate_block::{BLOCK, integrate_block_kernel, integrate_block_seq};
    // Four events per block: most blocks run more steps than that. Under memcheck this also
    // shows that nothing is written past a block's buffer.
    let Some(mut rt) = traced_block_gpu(4) else {
        return;
    };
    let launch = rt
        .launch(integrate_block_kernel, (-1.0, 1.0, 1e-8))
        .unwrap();
    assert_eq!(
        launch.result.to_bits(),
        integrate_block_seq(-1.0, 1.0, 1e-8, BLOCK).to_bits()
    );
    let steps = launch.stats.steps;
    let trace = launch.trace.unwrap();
    assert_eq!(trace.workers.len() as u32, launch.stats.blocks);
    assert!(trace.dropped() > 0);
    assert!(trace.workers.iter().all(|w| w.events.len() <= 4));
    let recorded: u64 = trace.workers.iter().map(|w| w.events.len() as u64).sum();
    assert!(recorded + trace.dropped() >= steps);
}

#[test]
fn block_mode_integrate_is_exact_over_many_launches() {
    use gtap_examples::integrate_block::{BLOCK, integrate_block_kernel, integrate_block_seq};
    let Some(mut rt) = block_gpu(&gtap_examples::DEVICE_CODE, BLOCK) else {
        return;
    };
    let tolerances: &[f64] = if small() { &[1e-6] } else { &[1e-8, 1e-10] };
    for &eps in tolerances {
        let want = integrate_block_seq(-1.0, 1.0, eps, BLOCK);
        for i in 0..repeats() {
            let got = rt
                .launch(integrate_block_kernel, (-1.0, 1.0, eps))
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
fn block_mode_mixed_waits_and_early_returns_are_exact() {
    use gtap_tests::block::{BLOCK, mixed_joins_kernel, mixed_joins_seq};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    // Deep enough that blocks hold back, publish and steal children many times.
    let depth = if small() { 8 } else { 18 };
    let want = mixed_joins_seq(depth);
    for i in 0..repeats() {
        let mut out = rt.alloc_filled(2, 0u64).unwrap();
        let got = rt
            .launch(mixed_joins_kernel, (out.slice_mut(), depth))
            .unwrap();
        assert_eq!(got.result, want.0, "launch {i}");
        assert_eq!(rt.download(&out).unwrap(), want.1, "launch {i}");
    }
}

#[test]
fn block_mode_helpers_and_per_thread_spawns_are_exact() {
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    let cases: &[(u32, u32)] = if small() {
        &[(1, 1)]
    } else {
        &[(0, 1), (2, 5), (4, 9)]
    };
    for &(depth, salt) in cases {
        let want = helpers_seq(depth, salt, BLOCK);
        for i in 0..repeats() {
            let got = rt.launch(helpers_kernel, (depth, salt)).unwrap();
            assert_eq!(got.result, want, "depth {depth}, launch {i}");
        }
    }
}

#[test]
fn a_block_reduction_adds_the_same_pairs_in_the_same_order_as_its_reference() {
    use gtap_tests::block::{WIDE_BLOCK, wide_sum_kernel, wide_sum_seq};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, WIDE_BLOCK) else {
        return;
    };
    for salt in [0, 3, 11] {
        let want = wide_sum_seq(salt, WIDE_BLOCK);
        for i in 0..repeats() {
            let got = rt.launch(wide_sum_kernel, (salt,)).unwrap();
            assert_eq!(got.result, want, "salt {salt}, launch {i}");
        }
    }
}

#[test]
fn a_strided_loop_calls_each_thread_with_its_own_indices_in_order() {
    use gtap_tests::block::{STRIDE_STARTS, WIDE_BLOCK, strided_indices_kernel};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, WIDE_BLOCK) else {
        return;
    };
    for start in STRIDE_STARTS {
        let got = rt.launch(strided_indices_kernel, (start,)).unwrap();
        assert_eq!(got.result, 1, "start {start}");
    }
}

#[test]
fn block_mode_arguments_read_after_waits_are_exact() {
    use gtap_tests::block::{
        BLOCK, args_after_waits_kernel, args_after_waits_seq, four_after_wait_kernel,
    };
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    for (depth, acc, salt, scale) in [(0, 5, 7, 11), (1, 2, 3, 4), (3, 9, 1, 1000)] {
        let want = args_after_waits_seq(depth, acc, salt, scale, BLOCK);
        for i in 0..repeats() {
            let got = rt
                .launch(args_after_waits_kernel, (depth, acc, salt, scale))
                .unwrap();
            assert_eq!(got.result, want, "depth {depth}, launch {i}");
        }
    }
    let got = rt.launch(four_after_wait_kernel, (5, 10, 20, 30)).unwrap();
    assert_eq!(got.result, 5 + 10 + 20 + 30);
}

#[test]
fn launch_contexts_are_exact_in_both_modes_over_many_launches() {
    use gtap_tests::context::{BLOCK, weigh_block_kernel, weigh_kernel, weigh_seq};
    let weights: Vec<u64> = (1..=37).collect();
    let (thread_depth, block_depth) = if small() { (6, 4) } else { (14, 9) };
    if let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new()) {
        let w = rt.upload(&weights).unwrap();
        for i in 0..repeats() {
            // A new scale every launch: each launch reads its own context.
            let scale = i as u64 + 1;
            let got = rt
                .launch(weigh_kernel, (w.slice(), scale, thread_depth))
                .unwrap();
            assert_eq!(
                got.result,
                weigh_seq(&weights, scale, thread_depth),
                "thread mode, launch {i}"
            );
        }
    }
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    let w = rt.upload(&weights).unwrap();
    for i in 0..repeats() {
        let scale = i as u64 + 1;
        let got = rt
            .launch(weigh_block_kernel, (w.slice(), scale, block_depth))
            .unwrap();
        assert_eq!(
            got.result,
            weigh_seq(&weights, scale, block_depth),
            "block mode, launch {i}"
        );
    }
}

#[test]
fn block_mode_panic_is_a_typed_error_then_the_runtime_runs_on() {
    use gtap_tests::block::{BLOCK, panics_at_kernel};
    // A hang would be stopped by the watchdog (and fail below as `Stalled`), not wait a minute.
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .max_tasks_per_warp(512)
        .watchdog(Some(std::time::Duration::from_secs(5)));
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    // Thread 0 (the scheduling warp's first lane), another of its warp, one of another warp.
    for at in [0, 5, 40] {
        let Err(Error::Device(e)) = rt.launch(panics_at_kernel, (at,)) else {
            panic!("thread {at}: a panic must fail the launch");
        };
        assert_eq!(e.kind, DeviceErrorKind::Panic, "thread {at}: {e}");
        assert_eq!(e.task, "panics_at", "{e}");
        assert!(e.message.contains("on purpose"), "{e}");
        println!("{e}");
        let got = rt.launch(panics_at_kernel, (BLOCK,)).unwrap();
        assert_eq!(got.result, BLOCK, "after the panic of thread {at}");
    }
}

#[test]
fn block_mode_blocks_lend_the_configured_shared_memory() {
    use gtap_tests::block::{BLOCK, shared_words_kernel};
    for (bytes, words) in [(Config::DEFAULT_BLOCK_SHARED_BYTES, 512), (256, 32), (0, 0)] {
        let config = Config::new()
            .block_mode()
            .block_size(BLOCK)
            .max_tasks_per_warp(512)
            .block_shared_bytes(bytes);
        let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
            return;
        };
        for i in 0..repeats() {
            let got = rt.launch(shared_words_kernel, (false,)).unwrap();
            assert_eq!(got.result, words, "{bytes} bytes, launch {i}");
        }
        if bytes == 0 {
            let Err(Error::Device(e)) = rt.launch(shared_words_kernel, (true,)) else {
                panic!("an index past the lent memory must fail");
            };
            assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
            assert!(e.message.contains("block_shared_bytes"), "{e}");
            println!("{e}");
            let got = rt.launch(shared_words_kernel, (false,)).unwrap();
            assert_eq!(got.result, 0, "after the panic");
        }
    }
}

#[test]
fn thread_scratch_in_a_block_mode_task_is_a_typed_panic_on_the_gpu() {
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq, wants_scratch_kernel};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    let Err(Error::Device(e)) = rt.launch(wants_scratch_kernel, ()) else {
        panic!("thread-mode scratch in block mode must fail");
    };
    assert_eq!(e.kind, DeviceErrorKind::Panic, "{e}");
    assert!(e.message.contains("block.shared"), "{e}");
    println!("{e}");
    let got = rt
        .launch(helpers_kernel, (2, 5))
        .expect("the runtime runs on");
    assert_eq!(got.result, helpers_seq(2, 5, BLOCK));
}

#[test]
fn block_mode_partial_wait_is_a_typed_error_then_the_runtime_runs_on() {
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq, partial_wait_kernel};
    let Some(mut rt) = block_gpu(&gtap_tests::DEVICE_CODE, BLOCK) else {
        return;
    };
    for (early, case) in [
        (true, "returned instead of waiting"),
        (false, "different waits"),
    ] {
        let Err(Error::Device(e)) = rt.launch(partial_wait_kernel, (early,)) else {
            panic!("a partial wait must fail");
        };
        assert_eq!(e.kind, DeviceErrorKind::PartialWait, "{e}");
        assert_eq!(e.task, "partial_wait");
        assert!(e.message.contains(case), "{e}");
        println!("{e}");
        let got = rt.launch(helpers_kernel, (1, 3)).unwrap();
        assert_eq!(got.result, helpers_seq(1, 3, BLOCK));
    }
}

#[test]
fn block_mode_spawn_without_a_free_slot_is_a_typed_error_then_reset_runs_correctly() {
    use gtap_tests::block::{BLOCK, helpers_kernel, helpers_seq};
    // 2 blocks of 2 warps, 2 slots a warp: a depth-3 launch holds at least 13 tasks at once.
    let config = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(2)
        .max_tasks_per_warp(2);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    let Err(Error::Device(e)) = rt.launch(helpers_kernel, (3, 5)) else {
        panic!("13 live tasks cannot fit 8 slots");
    };
    assert_eq!(e.kind, DeviceErrorKind::PoolExhausted, "{e}");
    assert_eq!(e.task, "helpers");
    println!("{e}");
    rt.reset().unwrap();
    let got = rt.launch(helpers_kernel, (1, 2)).unwrap();
    assert_eq!(got.result, helpers_seq(1, 2, BLOCK));
}

#[test]
fn no_taskwait_kernels_visit_every_node_over_many_launches_and_reject_a_wait() {
    use gtap_tests::detached::{
        BLOCK, block_waits_kernel, visit_block_kernel, visit_joined_kernel, visit_kernel,
        visit_seq, waits_kernel,
    };
    for queues in [1, 3] {
        let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, Config::new().num_queues(queues)) else {
            return;
        };
        // Shallow trees end with the root's own step; deep ones spread over the grid.
        for (launch, depth) in [0u32, 1, 5, 16, 20]
            .into_iter()
            .cycle()
            .take(25)
            .enumerate()
        {
            let mut out = rt.alloc_filled(2, 0u32).unwrap();
            let got = rt
                .launch(visit_kernel, (depth, out.slice_mut()))
                .unwrap_or_else(|e| panic!("{queues} queues, launch {launch}: {e}"));
            assert_eq!(got.result, depth + 1000);
            assert_eq!(
                rt.download(&out).unwrap(),
                visit_seq(depth),
                "{queues} queues, launch {launch}, depth {depth}"
            );
        }
        let mut out = rt.alloc_filled(2, 0u32).unwrap();
        let joined = rt
            .launch(visit_joined_kernel, (20, out.slice_mut()))
            .unwrap();
        assert_eq!(rt.download(&out).unwrap(), visit_seq(20));
        let mut out = rt.alloc_filled(2, 0u32).unwrap();
        let detached = rt.launch(visit_kernel, (20, out.slice_mut())).unwrap();
        println!(
            "{queues} queues, depth 20: joined {:.3} ms, no_taskwait {:.3} ms",
            joined.stats.kernel_ms, detached.stats.kernel_ms
        );
        let Err(Error::Device(e)) = rt.launch(waits_kernel, (12,)) else {
            panic!("a wait must fail a no_taskwait launch");
        };
        assert_eq!(e.kind, DeviceErrorKind::WaitInNoTaskwaitKernel, "{e}");
        assert_eq!(e.task, "fib", "{e}");
        let mut out = rt.alloc_filled(2, 0u32).unwrap();
        rt.launch(visit_kernel, (10, out.slice_mut())).unwrap();
        assert_eq!(rt.download(&out).unwrap(), visit_seq(10), "after the error");
    }
    let config = Config::new().block_mode().block_size(BLOCK);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, config) else {
        return;
    };
    for depth in [0u32, 3, 12, 3, 12] {
        let mut out = rt.alloc_filled(3, 0u32).unwrap();
        let got = rt
            .launch(visit_block_kernel, (depth, out.slice_mut()))
            .unwrap_or_else(|e| panic!("block mode, depth {depth}: {e}"));
        assert_eq!(got.result, depth + 2000);
        let [nodes, sum] = visit_seq(depth);
        assert_eq!(rt.download(&out).unwrap(), [nodes, sum, nodes * BLOCK]);
    }
    let Err(Error::Device(e)) = rt.launch(block_waits_kernel, ()) else {
        panic!("a block-mode wait must fail a no_taskwait launch");
    };
    assert_eq!(e.kind, DeviceErrorKind::WaitInNoTaskwaitKernel, "{e}");
    let mut out = rt.alloc_filled(3, 0u32).unwrap();
    rt.launch(visit_block_kernel, (4, out.slice_mut())).unwrap();
    let [nodes, sum] = visit_seq(4);
    assert_eq!(rt.download(&out).unwrap(), [nodes, sum, nodes * BLOCK]);
}

/// One block runs the children of a task oldest first when nothing joins, and the first child,
/// then the newest, with joins (the order `expected_ranks` derives from the fold's ring), over
/// many launches; then a tree far wider than the pool, which a block drains newest first once
/// its queue holds half its slots.
#[test]
fn a_detached_block_launch_runs_its_oldest_tasks_first_within_its_slots() {
    use gtap_tests::detached::{
        BLOCK, expected_ranks, launch_ranks, rank_detached_kernel, rank_joined_kernel,
        visit_block_kernel, visit_seq,
    };
    let one_block = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(1)
        .num_queues(1);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, one_block) else {
        return;
    };
    for launch in 0..repeats() {
        for n in [12, 40] {
            let got = launch_ranks(&mut rt, rank_detached_kernel, n);
            assert_eq!(
                got,
                expected_ranks(n, true),
                "launch {launch}, {n} children"
            );
            let got = launch_ranks(&mut rt, rank_joined_kernel, n);
            assert_eq!(got, expected_ranks(n, false), "launch {launch}, {n} joined");
        }
    }
    let small_pool = Config::new()
        .block_mode()
        .block_size(BLOCK)
        .grid_size(4)
        .max_tasks_per_warp(64);
    let Some(mut rt) = gpu(&gtap_tests::DEVICE_CODE, small_pool) else {
        return;
    };
    for depth in [14u32, 16] {
        let mut out = rt.alloc_filled(3, 0u32).unwrap();
        rt.launch(visit_block_kernel, (depth, out.slice_mut()))
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        let [nodes, sum] = visit_seq(depth);
        assert_eq!(rt.download(&out).unwrap(), [nodes, sum, nodes * BLOCK]);
    }
}
