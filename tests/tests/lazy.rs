//! The parallel CPU executor creates tasks lazily: while its warp has work published for other
//! threads, a spawn polls its child at once in the spawning lane (`gtap-device`'s `at_once`
//! module). Results stay exact, every task still has its slot (`tasks_spawned` counts them
//! all), nesting stops where the stack ends instead of failing, a thread whose children
//! outlive their polls (tasks that do not wait) stops nesting. (The deterministic executor
//! polls children at once only where its seed says: `schedule.rs`.)

use gtap_examples::{fib, integrate, tree};
use gtap_host::{Config, CpuMode, Runtime};

fn parallel(config: Config) -> Runtime {
    Runtime::cpu(CpuMode::Parallel, &config.grid_size(2).block_size(64)).expect("CPU runtime")
}

#[test]
fn the_parallel_executor_polls_most_children_at_once() {
    let mut rt = parallel(Config::new());
    let launch = rt.launch(fib::fib_kernel, (22,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(22));
    let s = &launch.stats;
    assert_eq!(s.tasks_spawned, fib::fib_tasks(22), "{s:?}");
    assert_eq!(s.tasks_inlined, 0, "{s:?}");
    assert!(
        s.tasks_run_at_once > s.tasks_spawned / 2,
        "most of fib(22)'s tasks run nested: {s:?}"
    );
}

#[test]
fn a_stack_too_small_to_nest_only_stops_the_nesting() {
    // Less than one inline child's reserve: no child is polled at once, and nothing fails.
    let mut rt = parallel(Config::new().stack_bytes(32 * 1024));
    let launch = rt.launch(fib::fib_kernel, (20,)).unwrap();
    assert_eq!(launch.result, fib::fib_seq(20));
    assert_eq!(launch.stats.tasks_run_at_once, 0, "{:?}", launch.stats);
    assert_eq!(launch.stats.tasks_spawned, fib::fib_tasks(20));
}

#[test]
fn nested_children_that_wait_and_write_results_stay_exact() {
    let mut rt = parallel(Config::new().num_queues(3));
    let want = integrate::integrate_seq(-1.0, 1.0, 1e-9);
    let (height, iters) = (12, 8);
    let mut tree_want = vec![0u64; (1 << (height + 1)) - 1];
    let tree_sum = tree::tree_visit_seq(height, iters, &mut tree_want);
    for _ in 0..5 {
        let got = rt
            .launch(integrate::integrate_kernel, (-1.0, 1.0, 1e-9))
            .unwrap();
        assert_eq!(got.result.to_bits(), want.to_bits());
        let mut out = rt.alloc_filled(tree_want.len(), 0u64).unwrap();
        let got = rt
            .launch(tree::tree_kernel, (height, iters, out.slice_mut()))
            .unwrap();
        assert_eq!(got.result, tree_sum);
        assert!(got.stats.tasks_run_at_once > 0, "{:?}", got.stats);
        assert_eq!(rt.download(&out).unwrap(), tree_want);
    }
}

#[test]
fn chains_of_tasks_that_do_not_wait_are_soon_no_longer_polled_at_once() {
    // 64 chains of 512 tasks, each spawning the next and returning without a wait: a nest of 8
    // ends in a task that spawns the ordinary way, so the tasks polled at once return with a
    // child outstanding, the sign of a graph search's tasks, for which nesting only makes the
    // order depth-first (trees of such tasks that fit a nest finish inside it and nest on).
    let (chains, len) = (64u32, 512u32);
    let mut rt = parallel(Config::new());
    let mut out = rt.alloc_filled((chains * len) as usize, 0u32).unwrap();
    let launch = rt
        .launch(gtap_tests::strands_kernel, (chains, len, out.slice_mut()))
        .unwrap();
    assert!(rt.download(&out).unwrap().iter().all(|&v| v == 1));
    let s = &launch.stats;
    assert_eq!(s.tasks_spawned, (chains * len + 1) as u64);
    // Each of the 4 warps' threads judges after 256 children polled at once, and stops within
    // a nest (8 levels) of that.
    assert!(
        s.tasks_run_at_once <= 4 * (256 + 8),
        "{} of {} tasks polled at once",
        s.tasks_run_at_once,
        s.tasks_spawned
    );
}
