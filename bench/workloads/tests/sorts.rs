//! The sorts (cilksort, EPAQ cilksort, mergesort) on the CPU executor and their host versions,
//! at small sizes, against the sorted reference; and the input generator against values printed
//! by GTaP's C generator.

use gtap_host::{CpuMode, Runtime};
use gtap_workloads::cilksort::{self, Cilksort};
use gtap_workloads::gen_vector::gen_vector;
use gtap_workloads::measure::Workload;
use gtap_workloads::mergesort::{self, Mergesort};
use gtap_workloads::sort_case::size_label;

/// Runs every runner of `w` on a parallel and a deterministic CPU runtime; all must verify.
fn check_all_runners(mut w: impl Workload) {
    let label = w.label();
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 7 }] {
        let mut rt = Runtime::cpu(mode, &w.config()).expect("CPU runtime");
        let s = w
            .gpu(&mut rt)
            .unwrap_or_else(|e| panic!("{label} on {mode:?}: {e}"));
        assert!(s.verified, "{label} on {mode:?}: {}", s.note);
    }
    let s = w.sequential().expect("sequential");
    assert!(s.verified, "{label} sequential: {}", s.note);
    let s = w.rayon().expect("rayon");
    assert!(s.verified, "{label} rayon: {}", s.note);
}

#[test]
fn gen_vector_matches_gtap_generator() {
    // The first values of GTaP's evaluation/util/gen_vector.c, printed by the C code.
    assert_eq!(
        gen_vector(6),
        [
            -1915688918,
            1126946331,
            1757975480,
            -1296489071,
            1634557174,
            707246327
        ]
    );
}

#[test]
fn labels_follow_the_baseline() {
    assert_eq!(Cilksort::new(1000).label(), "cilksort1e3");
    assert_eq!(Cilksort::parts(1000).label(), "cilksort1e3_parts");
    assert_eq!(Cilksort::epaq(5000, 3).label(), "cilksort5e3_cutoff256_q3");
    assert_eq!(Mergesort::new(1234).label(), "mergesort1234");
    assert_eq!(size_label(100_000_000), "1e8");
    assert_eq!(size_label(50_000_000), "5e7");
    assert_eq!(size_label(10), "10");
}

#[test]
fn cilksort_sorts() {
    // Sizes around the cutoffs and uneven quarters, then one with several levels.
    for n in [0, 1, 63, 64, 65, 255, 257, 1000, 20_011] {
        check_all_runners(Cilksort::new(n));
    }
}

#[test]
fn cilksort_over_parts_sorts() {
    for n in [0, 1, 63, 64, 65, 255, 257, 1000, 20_011] {
        check_all_runners(Cilksort::parts(n));
    }
}

#[test]
fn cilksort_epaq_sorts_on_one_and_three_queues() {
    for n in [255, 256, 3001, 20_011] {
        check_all_runners(Cilksort::epaq(n, 3));
        check_all_runners(Cilksort::epaq(n, 1));
    }
}

#[test]
fn mergesort_sorts() {
    for n in [0, 1, 2, 128, 129, 1000, 20_011] {
        check_all_runners(Mergesort::new(n));
    }
}

#[test]
fn host_sorts_sort_duplicates() {
    // gen_vector has few duplicates; the merges must also keep every copy of repeated values.
    let input: Vec<i32> = (0..5000).map(|i| (i * 7919 % 13) - 6).collect();
    let mut want = input.clone();
    want.sort_unstable();
    for parallel in [false, true] {
        for epaq in [false, true] {
            let (mut d, mut t) = (input.clone(), vec![0; input.len()]);
            cilksort::run_host(epaq, parallel, &mut d, &mut t);
            assert_eq!(d, want, "cilksort epaq={epaq} parallel={parallel}");
        }
        let (mut d, mut b) = (input.clone(), vec![0; input.len()]);
        mergesort::run_host(parallel, &mut d, &mut b);
        assert_eq!(d, want, "mergesort parallel={parallel}");
    }
}

#[test]
fn quick_sets_verify() {
    let mut all = cilksort::quick();
    all.extend(mergesort::quick());
    for w in &mut all {
        let mut rt = Runtime::cpu(CpuMode::Parallel, &w.config()).expect("CPU runtime");
        let s = w.gpu(&mut rt).expect("CPU executor run");
        assert!(s.verified, "{}: {}", w.label(), s.note);
    }
}
