//! The deterministic executor: the same seed gives the same schedule, different seeds move
//! tasks between lanes, warps and blocks, and a program that depends on that is caught.

use gtap_host::{
    Config, CpuMode, Runtime, ScheduleError, Stats, check_schedules, check_schedules_with,
};
use gtap_tests::{fib_one_block_per_sm_kernel, same_lane_kernel, shapes_kernel, shapes_seq};

fn run_same_lane(seed: u64, queues: u32) -> u64 {
    let mut rt = Runtime::cpu(
        CpuMode::Deterministic { seed },
        &Config::new().num_queues(queues),
    )
    .unwrap();
    rt.launch(same_lane_kernel, (6,)).unwrap().result
}

#[test]
fn same_seed_same_schedule() {
    for seed in [1, 2, 3] {
        assert_eq!(run_same_lane(seed, 2), run_same_lane(seed, 2));
    }
}

#[test]
fn thread_identity_across_a_wait_is_caught() {
    // 127 tasks each report whether they resumed on the lane they suspended on. A correct
    // program's result cannot depend on that; this one's does, and some schedules expose it.
    let err =
        check_schedules(same_lane_kernel, (6,), &Config::new(), 0..16, &[1, 2, 3]).unwrap_err();
    assert!(matches!(err, ScheduleError::Differs { .. }), "{err}");
    assert!(err.to_string().contains("depends on scheduling"), "{err}");
}

#[test]
fn correct_programs_pass_the_schedule_check() {
    let fib = check_schedules(
        gtap_examples::fib::fib_kernel,
        (16,),
        &Config::new(),
        0..6,
        &[1, 2, 3, 4],
    );
    assert_eq!(fib.unwrap(), gtap_examples::fib::fib_seq(16));
    let none = check_schedules(same_lane_kernel, (2,), &Config::new(), 0..4, &[]);
    assert!(matches!(none, Err(ScheduleError::NoSchedules)));
}

/// What a deterministic schedule decides: equal for equal seeds, different for most others.
fn schedule_counts(stats: &Stats) -> [u64; 5] {
    [
        stats.tasks_spawned,
        stats.steals,
        stats.steal_attempts,
        stats.steps,
        stats.peak_live_per_warp.into(),
    ]
}

#[test]
fn a_reused_runtime_runs_each_seed_as_a_fresh_one_does() {
    let (seeds, queue_counts) = (0..6, [1, 3]);
    let mut counts = Vec::new();
    check_schedules_with(&Config::new(), seeds.clone(), &queue_counts, |rt| {
        let launch = rt.launch(gtap_examples::fib::fib_kernel, (14,))?;
        counts.push(schedule_counts(&launch.stats));
        Ok(launch.result)
    })
    .unwrap();
    let mut fresh = Vec::new();
    for queues in queue_counts {
        for seed in seeds.clone() {
            let config = Config::new().num_queues(queues);
            let mut rt = Runtime::cpu(CpuMode::Deterministic { seed }, &config).unwrap();
            let launch = rt.launch(gtap_examples::fib::fib_kernel, (14,)).unwrap();
            fresh.push(schedule_counts(&launch.stats));
        }
    }
    assert_eq!(counts, fresh);
    assert!(
        counts[..6].iter().any(|c| *c != counts[0]),
        "every seed gave the same schedule: {counts:?}"
    );
}

#[test]
fn buffers_are_checked_through_the_runtime_of_each_schedule() {
    use gtap_examples::tree::{Node, random_tree, tree_sum_kernel, tree_sum_seq};
    let nodes: Vec<Node> = random_tree(2_000, 7);
    let mut runs = 0;
    let sum = check_schedules_with(&Config::new(), 0..4, &[1, 2], |rt| {
        runs += 1;
        let input = rt.upload(&nodes)?;
        Ok(rt.launch(tree_sum_kernel, (input.slice(),))?.result)
    })
    .unwrap();
    assert_eq!(sum, tree_sum_seq(&nodes));
    assert_eq!(runs, 8);
    // A pool too small for the tree and a stack too small to run children inline instead.
    let tiny = Config::new().max_tasks_per_warp(32).stack_bytes(4096);
    let failed = check_schedules_with(&tiny, 0..2, &[1], |rt| {
        let input = rt.upload(&nodes)?;
        Ok(rt.launch(tree_sum_kernel, (input.slice(),))?.result)
    });
    assert!(
        matches!(failed, Err(ScheduleError::Launch { .. })),
        "{failed:?}"
    );
}

#[test]
fn waits_in_match_loops_early_returns_and_question_mark() {
    for seed in 0..8 {
        for queues in 1..=4 {
            let mut rt = Runtime::cpu(
                CpuMode::Deterministic { seed },
                &Config::new().num_queues(queues),
            )
            .unwrap();
            for n in [0, 1, 2, 3, 7, 12, 13, 14, 16] {
                let want = match shapes_seq(n) {
                    Ok(v) => v,
                    Err(e) => u64::MAX - e as u64,
                };
                assert_eq!(
                    rt.launch(shapes_kernel, (n,)).unwrap().result,
                    want,
                    "n {n} seed {seed} queues {queues}"
                );
            }
        }
    }
}

#[test]
fn a_read_of_a_childs_write_before_the_wait_is_caught() {
    // `peek` reads, through a buffer the macros cannot follow, what its child writes before the
    // wait that joins it. Queues alone always run a parent up to its wait first (result 0);
    // the seeds' child-first spawns run the child first in some schedules (result 1).
    let err = check_schedules_with(&Config::new(), 0..16, &[1], |rt| {
        let mut out = rt.alloc_filled(1, 0u32)?;
        Ok(rt
            .launch(gtap_tests::peek_kernel, (out.slice_mut(),))?
            .result)
    })
    .unwrap_err();
    assert!(matches!(err, ScheduleError::Differs { .. }), "{err}");
}

#[test]
fn the_same_seed_makes_the_same_child_first_choices() {
    let run = |seed| {
        let config = Config::new().grid_size(2).block_size(64);
        let mut rt = Runtime::cpu(CpuMode::Deterministic { seed }, &config).unwrap();
        let launch = rt.launch(gtap_examples::fib::fib_kernel, (16,)).unwrap();
        assert_eq!(launch.result, gtap_examples::fib::fib_seq(16));
        launch.stats.tasks_run_at_once
    };
    let firsts: Vec<u64> = (0..4).map(run).collect();
    assert_eq!(firsts, (0..4).map(run).collect::<Vec<_>>());
    assert!(firsts.iter().all(|&n| n > 0), "{firsts:?}");
}

/// The CPU executor ignores a kernel's `max_blocks_per_sm` (a GPU launch's grid): the capped
/// kernel runs on every simulated block, with fib's result.
#[test]
fn a_cap_on_blocks_a_multiprocessor_leaves_the_cpu_executor_alone() {
    let config = Config::new().grid_size(4);
    let mut rt = Runtime::cpu(CpuMode::Deterministic { seed: 7 }, &config).unwrap();
    let launch = rt.launch(fib_one_block_per_sm_kernel, (15,)).unwrap();
    assert_eq!(launch.result, 610);
    assert_eq!(launch.stats.blocks, 4);
}
