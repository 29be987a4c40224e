//! Every workload the harness runs, in table order, under the labels GTaP's baseline uses.
//! Adding a workload is adding its constructor to [`catalog`].

use gtap_host::{Config, Runtime};
use gtap_workloads::bfs::Bfs;
use gtap_workloads::cilksort::Cilksort;
use gtap_workloads::fib::{Fib, FibCutoff};
use gtap_workloads::measure::{Sample, Workload};
use gtap_workloads::mergesort::Mergesort;
use gtap_workloads::nqueens::{NQueens, NQueensJoin};
use gtap_workloads::probtree::ProbTree;
use gtap_workloads::sort_case::size_label;
use gtap_workloads::spmv::Spmv;
use gtap_workloads::tree::{Tree, TreeKind};

/// Builds a workload (its input and reference) when the harness gets to it.
pub type Make = Box<dyn Fn() -> Box<dyn Workload>>;

/// One row of the comparison.
pub enum Slot {
    /// A workload gtap runs.
    Run {
        /// Its label (as [`Workload::label`] will say).
        label: String,
        /// Whether to time the sequential and rayon peers too (sweep points skip them: their
        /// CPU algorithm is the main point's).
        cpu_peers: bool,
        /// Why no GTaP figure belongs to this row, for gtap-only variants.
        gtap_only: Option<&'static str>,
        /// Its constructor.
        make: Make,
    },
    /// A GTaP workload gtap cannot run yet: listed with GTaP's figure and the reason.
    Missing {
        /// GTaP's label.
        label: String,
        /// Why gtap has no figure.
        why: &'static str,
    },
}

/// Which points the catalog includes.
pub struct Options {
    /// Small sizes (for the CPU executor and CI).
    pub quick: bool,
    /// Cutoffs of the EPAQ fib sweep (`fib40_cutoff<K>_q<1|3>`); 14 is always run.
    pub fib_cutoffs: Vec<i32>,
    /// Heights of the binary-tree sweep (`tree<d>_thread`); the main height is always run.
    pub tree_depths: Vec<i32>,
    /// Grid sizes of the fib(35) scaling sweep (`fib35_grid<g>`).
    pub grid_sizes: Vec<u32>,
}

fn run(label: String, cpu_peers: bool, make: impl Fn() -> Box<dyn Workload> + 'static) -> Slot {
    Slot::Run {
        label,
        cpu_peers,
        gtap_only: None,
        make: Box::new(make),
    }
}

fn gtap_only(why: &'static str, slot: Slot) -> Slot {
    match slot {
        Slot::Run {
            label,
            cpu_peers,
            make,
            ..
        } => Slot::Run {
            label,
            cpu_peers,
            gtap_only: Some(why),
            make,
        },
        missing => missing,
    }
}

/// The workloads, main points first, then the sweeps.
pub fn catalog(o: &Options) -> Vec<Slot> {
    let q = o.quick;
    let fib_n = if q { 24 } else { 40 };
    let (nq_n, nq_cut) = if q { (9, 3) } else { (16, 7) };
    let tree_h = if q { 10 } else { 22 };
    let tree_work = if q { 16 } else { 256 };
    let (epaq_h, epaq_work) = if q { (8, 32) } else { (20, 512) };
    let probtree_d = if q { 12 } else { 34 };
    let scaling_n = if q { 20 } else { 35 };
    let cilksort_n: usize = if q { 100_000 } else { 100_000_000 };
    let cilksort_epaq_n: usize = if q { 50_000 } else { 50_000_000 };
    let mergesort_n: usize = if q { 100_000 } else { 10_000_000 };
    let bfs_scale = if q { 14 } else { 22 };
    let bfs_side = if q { 128 } else { 1024 };
    let (spmv_rows, spmv_nnz) = if q { (20_000, 30) } else { (1_000_000, 300) };
    let spmv_label = if spmv_rows == 1_000_000 {
        "spmv1m".to_string()
    } else {
        format!("spmv{spmv_rows}")
    };

    let mut slots = vec![
        run(format!("fib{fib_n}"), true, move || {
            Box::new(Fib::new(fib_n))
        }),
        run(format!("fib{fib_n}_cutoff14_q3"), true, move || {
            Box::new(FibCutoff::new(fib_n, 14, 3))
        }),
        run(format!("fib{fib_n}_cutoff14_q1"), true, move || {
            Box::new(FibCutoff::new(fib_n, 14, 1))
        }),
        run(format!("nqueens{nq_n}"), true, move || {
            Box::new(NQueens::new(nq_n, nq_cut))
        }),
        gtap_only(
            "gtap's join form (counts returned through a wait); GTaP has no such variant",
            run(format!("nqueens{nq_n}_join"), false, move || {
                Box::new(NQueensJoin::new(nq_n, nq_cut))
            }),
        ),
        run(format!("tree{tree_h}_thread"), true, move || {
            Box::new(Tree::new(TreeKind::Thread, tree_h, tree_work, tree_work))
        }),
        run(format!("tree{tree_h}_block"), true, move || {
            Box::new(Tree::new(TreeKind::Block, tree_h, tree_work, tree_work))
        }),
        run(
            format!("cilksort{}", size_label(cilksort_n)),
            true,
            move || Box::new(Cilksort::new(cilksort_n)),
        ),
        gtap_only(
            "the same sort without unsafe (parts handed back through the waits); GTaP has no such variant",
            run(
                format!("cilksort{}_parts", size_label(cilksort_n)),
                false,
                move || Box::new(Cilksort::parts(cilksort_n)),
            ),
        ),
        run(
            format!("mergesort{}", size_label(mergesort_n)),
            true,
            move || Box::new(Mergesort::new(mergesort_n)),
        ),
        run(format!("probtree{probtree_d}_thread"), true, move || {
            Box::new(ProbTree::new(probtree_d, 3, tree_work, tree_work))
        }),
        Slot::Missing {
            label: format!("probtree{probtree_d}_block"),
            why: "block mode not implemented in gtap",
        },
        run(format!("bfs_rmat{bfs_scale}_thread"), true, move || {
            Box::new(Bfs::rmat(bfs_scale, 16))
        }),
        run(format!("bfs_rmat{bfs_scale}_block"), true, move || {
            Box::new(Bfs::rmat_block(bfs_scale, 16))
        }),
        gtap_only(
            "a 2D grid graph, a second BFS input of gtap's; GTaP's evaluation has none",
            run(format!("bfs_grid{bfs_side}_thread"), true, move || {
                Box::new(Bfs::grid(bfs_side))
            }),
        ),
        gtap_only(
            "a 2D grid graph, a second BFS input of gtap's; GTaP's evaluation has none",
            run(format!("bfs_grid{bfs_side}_block"), true, move || {
                Box::new(Bfs::grid_block(bfs_side))
            }),
        ),
        run(
            format!("nqueens{nq_n}_cutoff{nq_cut}_q2"),
            false,
            move || Box::new(NQueens::epaq(nq_n, nq_cut, 2)),
        ),
        run(
            format!("nqueens{nq_n}_cutoff{nq_cut}_q1"),
            false,
            move || Box::new(NQueens::epaq(nq_n, nq_cut, 1)),
        ),
    ];
    for queues in [3, 1] {
        slots.push(run(
            format!("tree{epaq_h}_epaq_q{queues}"),
            queues == 3,
            move || {
                Box::new(Tree::new(
                    TreeKind::Epaq { queues },
                    epaq_h,
                    epaq_work,
                    epaq_work,
                ))
            },
        ));
    }
    for queues in [3, 1] {
        slots.push(run(
            format!(
                "cilksort{}_cutoff256_q{queues}",
                size_label(cilksort_epaq_n)
            ),
            false,
            move || Box::new(Cilksort::epaq(cilksort_epaq_n, queues)),
        ));
    }
    slots.push(run(format!("{spmv_label}_thread"), true, move || {
        Box::new(Spmv::new(spmv_rows, spmv_nnz))
    }));
    slots.push(run(format!("{spmv_label}_block"), true, move || {
        Box::new(Spmv::block(spmv_rows, spmv_nnz))
    }));
    for &k in o.fib_cutoffs.iter().filter(|&&k| k != 14) {
        for queues in [3, 1] {
            slots.push(run(
                format!("fib{fib_n}_cutoff{k}_q{queues}"),
                false,
                move || Box::new(FibCutoff::new(fib_n, k, queues)),
            ));
        }
    }
    for &d in o.tree_depths.iter().filter(|&&d| d != tree_h) {
        slots.push(run(format!("tree{d}_thread"), false, move || {
            Box::new(Tree::new(TreeKind::Thread, d, tree_work, tree_work))
        }));
    }
    for &grid in &o.grid_sizes {
        slots.push(gtap_only(
            "grid-size scaling sweep of gtap",
            run(format!("fib{scaling_n}_grid{grid}"), false, move || {
                Box::new(OnGrid {
                    inner: Fib::new(scaling_n),
                    grid,
                })
            }),
        ));
    }
    slots
}

/// GTaP's persistent grid for a label (its Makefiles' `GTAP_GRID_SIZE` blocks of
/// `GTAP_BLOCK_SIZE` threads), for running gtap in GTaP's geometry; `None` for gtap-only rows.
pub fn gtap_geometry(label: &str) -> Option<(u32, u32)> {
    // `<name><number><variant>`, e.g. `fib` `40` `_cutoff14_q3`.
    let (name, rest) = label.split_at(label.find(|c: char| c.is_ascii_digit())?);
    let variant = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    match (name, variant) {
        ("fib", "") => Some((4000, 32)),
        ("fib", s) if s.starts_with("_cutoff") => Some((4000, 32)),
        ("nqueens", "") => Some((2000, 32)),
        ("nqueens", s) if s.starts_with("_cutoff") => Some((2000, 32)),
        ("tree", "_thread") | ("tree", "_block") | ("probtree", "_thread") => Some((1000, 64)),
        ("tree", s) if s.starts_with("_epaq") => Some((2000, 32)),
        ("cilksort", "") => Some((2000, 32)),
        ("cilksort", s) if s.starts_with("_cutoff") => Some((4000, 32)),
        ("mergesort", "") => Some((1000, 32)),
        ("bfs_rmat", "_thread") | ("bfs_rmat", "_block") => Some((4000, 32)),
        ("spmv", "_block") => Some((4000, 128)),
        ("spmv", _) => Some((3000, 64)),
        _ => None,
    }
}

/// A workload on a fixed grid size, for the scaling sweep: label `<label>_grid<g>`.
struct OnGrid<W> {
    inner: W,
    grid: u32,
}

impl<W: Workload> Workload for OnGrid<W> {
    fn label(&self) -> String {
        format!("{}_grid{}", self.inner.label(), self.grid)
    }
    fn config(&self) -> Config {
        self.inner.config().grid_size(self.grid)
    }
    fn gpu(&mut self, rt: &mut Runtime) -> Result<Sample, String> {
        self.inner.gpu(rt)
    }
    fn sequential(&mut self) -> Result<Sample, String> {
        self.inner.sequential()
    }
    fn rayon(&mut self) -> Result<Sample, String> {
        self.inner.rayon()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each constructor's workload carries the label its slot announces (quick sizes).
    #[test]
    fn slot_labels_match_workload_labels() {
        let o = Options {
            quick: true,
            fib_cutoffs: vec![2, 14],
            tree_depths: vec![4],
            grid_sizes: vec![2],
        };
        let mut labels = Vec::new();
        for slot in catalog(&o) {
            if let Slot::Run { label, make, .. } = slot {
                assert_eq!(make().label(), label);
                labels.push(label);
            }
        }
        assert!(labels.contains(&"fib24_cutoff2_q1".to_string()));
        assert!(labels.contains(&"fib20_grid2".to_string()));
        assert!(labels.contains(&"tree4_thread".to_string()));
    }

    #[test]
    fn gtap_geometry_follows_gtap_s_makefiles() {
        assert_eq!(gtap_geometry("fib40"), Some((4000, 32)));
        assert_eq!(gtap_geometry("fib40_cutoff9_q1"), Some((4000, 32)));
        assert_eq!(gtap_geometry("nqueens16"), Some((2000, 32)));
        assert_eq!(gtap_geometry("nqueens16_cutoff7_q2"), Some((2000, 32)));
        assert_eq!(gtap_geometry("tree22_thread"), Some((1000, 64)));
        assert_eq!(gtap_geometry("probtree34_thread"), Some((1000, 64)));
        assert_eq!(gtap_geometry("tree20_epaq_q3"), Some((2000, 32)));
        assert_eq!(gtap_geometry("nqueens16_join"), None);
        assert_eq!(gtap_geometry("fib35_grid8"), None);
    }
}
