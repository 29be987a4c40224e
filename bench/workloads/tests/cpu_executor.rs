//! Every workload at a small size on gtap's CPU executor, checked against its sequential
//! reference, and its sequential and rayon peers checked the same way.

use gtap_host::{CpuMode, Runtime};
use gtap_workloads::fib::{Fib, FibCutoff};
use gtap_workloads::measure::Workload;
use gtap_workloads::nqueens::{NQueens, NQueensJoin};
use gtap_workloads::probtree::ProbTree;
use gtap_workloads::tree::{Tree, TreeKind};

/// Runs `w` on the parallel CPU executor and on a deterministic schedule, then its CPU peers;
/// every run must verify.
fn runs_everywhere(mut w: impl Workload) {
    let label = w.label();
    for mode in [CpuMode::Parallel, CpuMode::Deterministic { seed: 7 }] {
        let mut rt = Runtime::cpu(mode, &w.config()).expect("a CPU runtime");
        for _ in 0..2 {
            let s = w
                .gpu(&mut rt)
                .unwrap_or_else(|e| panic!("{label} on {mode:?}: {e}"));
            assert!(s.verified, "{label} on {mode:?}: {}", s.note);
        }
    }
    let s = w.sequential().unwrap();
    assert!(s.verified, "{label} sequential: {}", s.note);
    let s = w.rayon().unwrap();
    assert!(s.verified, "{label} rayon: {}", s.note);
}

#[test]
fn fib_without_cutoff() {
    runs_everywhere(Fib::new(16));
}

#[test]
fn fib_with_cutoff_on_one_and_three_queues() {
    for queues in [1, 3] {
        for cutoff in [2, 9, 30] {
            runs_everywhere(FibCutoff::new(18, cutoff, queues));
        }
    }
}

#[test]
fn nqueens_gtap_form_join_form_and_epaq() {
    runs_everywhere(NQueens::new(8, 3));
    runs_everywhere(NQueensJoin::new(8, 3));
    runs_everywhere(NQueens::epaq(8, 3, 2));
    runs_everywhere(NQueens::epaq(8, 3, 1));
}

#[test]
fn binary_trees() {
    runs_everywhere(Tree::new(TreeKind::Thread, 6, 16, 16));
    runs_everywhere(Tree::new(TreeKind::Epaq { queues: 3 }, 6, 16, 16));
    runs_everywhere(Tree::new(TreeKind::Epaq { queues: 1 }, 6, 16, 16));
    runs_everywhere(Tree::new(TreeKind::Block, 4, 100, 100));
}

#[test]
fn probabilistic_tree() {
    let w = ProbTree::new(10, 3, 16, 16);
    assert!(w.nodes() > 10, "the tree has more than its root");
    runs_everywhere(w);
}
