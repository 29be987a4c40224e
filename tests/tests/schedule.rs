//! The deterministic executor: the same seed gives the same schedule, different seeds move
//! tasks between lanes, warps and blocks, and a program that depends on that is caught.

use gtap_host::{Config, CpuMode, Runtime, ScheduleError, check_schedules};
use gtap_tests::{same_lane_kernel, shapes_kernel, shapes_seq};

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
