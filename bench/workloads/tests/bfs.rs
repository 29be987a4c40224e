//! BFS on the CPU executor and its host versions against a queue BFS, and the R-MAT generator
//! against values printed by the baseline's C++ generator (`bfs_common.cuh`).

use gtap_host::{CpuMode, Runtime};
use gtap_workloads::bfs::{self, Bfs, INF, grid, reference_depths, rmat, rmat_edge, run_host};
use gtap_workloads::measure::Workload;

fn check_all_runners(mut w: Bfs) {
    let label = w.label();
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 11 }] {
        let mut rt = Runtime::cpu(mode, &w.config()).expect("CPU runtime");
        let s = w
            .gpu(&mut rt)
            .unwrap_or_else(|e| panic!("{label} on {mode:?}: {e}"));
        assert!(s.verified, "{label} on {mode:?}: {}", s.note);
    }
    assert!(w.sequential().unwrap().verified, "{label} sequential");
    assert!(w.rayon().unwrap().verified, "{label} rayon");
}

#[test]
fn rmat_edges_match_the_baseline() {
    // The first edges of the scale-22 graph (seed 1), printed by bfs_common.cuh's generator.
    let want = [
        (1676348, 2741012),
        (82045, 2257320),
        (3347146, 3346668),
        (118430, 636438),
    ];
    for (e, w) in want.iter().enumerate() {
        assert_eq!(rmat_edge(22, 1, e as u64), *w, "edge {e}");
    }
}

#[test]
fn small_rmat_graph_matches_the_baseline() {
    // bfs_common.cuh at scale 10, edge factor 16, seed 1: CSR prefix, maximum out-degree,
    // vertices above the split threshold, and the BFS from vertex 0 (1019 reached, depth 4).
    let g = rmat(10, 16, 1);
    assert_eq!(g.row[1..6], [90, 148, 220, 267, 330]);
    assert_eq!(g.col[..6], [128, 604, 322, 260, 546, 256]);
    let degrees: Vec<i32> = g.row.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(degrees.iter().max(), Some(&90));
    assert_eq!(degrees.iter().filter(|&&d| d > bfs::SPLIT).count(), 7);
    let depth = reference_depths(&g, 0);
    assert_eq!(depth.iter().filter(|&&d| d != INF).count(), 1019);
    assert_eq!(depth.iter().filter(|&&d| d != INF).max(), Some(&4));
    let hash = depth.iter().fold(0u64, |h, &d| {
        h.wrapping_mul(31).wrapping_add(d as u32 as u64)
    });
    assert_eq!(hash, 739716921133204799);
}

#[test]
fn grid_depths_are_manhattan_distances() {
    let side = 37;
    let depth = reference_depths(&grid(side), 0);
    for (v, d) in depth.iter().enumerate() {
        assert_eq!(*d as usize, v / side + v % side);
    }
}

#[test]
fn host_versions_match_the_queue_bfs() {
    let g = rmat(12, 16, 1);
    let want = reference_depths(&g, 0);
    assert_eq!(run_host(&g, 0, false), want);
    assert_eq!(run_host(&g, 0, true), want);
}

#[test]
fn bfs_block_runs_on_the_cpu_executor_on_both_graphs() {
    check_all_runners(Bfs::rmat_block(8, 8));
    check_all_runners(Bfs::grid_block(12));
}

#[test]
fn bfs_runs_on_the_cpu_executor() {
    check_all_runners(Bfs::rmat(10, 16));
    check_all_runners(Bfs::grid(40));
    assert_eq!(Bfs::rmat(10, 16).label(), "bfs_rmat10_thread");
    assert_eq!(Bfs::grid(40).label(), "bfs_grid40_thread");
}

/// The full scale-22 graph against the figures of the baseline's README (about a minute in
/// release mode on 2 cores): `cargo test --release -p gtap-workloads --test bfs -- --ignored`.
#[test]
#[ignore = "generates the full 67M-edge graph"]
fn full_rmat_graph_matches_the_baseline() {
    let g = rmat(22, 16, 1);
    assert_eq!(g.col.len(), 67_108_864);
    let degrees: Vec<i32> = g.row.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(degrees.iter().max(), Some(&940));
    assert_eq!(degrees.iter().filter(|&&d| d > bfs::SPLIT).count(), 112_200);
    let depth = reference_depths(&g, 0);
    assert_eq!(depth.iter().filter(|&&d| d != INF).count(), 4_111_410);
    assert_eq!(depth.iter().filter(|&&d| d != INF).max(), Some(&8));
}
