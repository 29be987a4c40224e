//! BFS on the host: the [`Workload`] (GPU launch, sequential and rayon versions of the same
//! task algorithm) and the plain queue BFS every result is compared with.

use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::vec;
use std::vec::Vec;

use gtap_host::Buffer;

use super::graph::{Graph, grid, rmat};
use super::{BFS_BLOCK, INF, SPLIT, bfs_block_kernel, bfs_kernel};
use crate::measure::{Sample, Workload, cpu_sample, gpu_sample};
use crate::resident::Resident;

/// Task slots per warp of the block-mode search (`Bfs::config`).
const BLOCK_SLOTS_PER_WARP: u32 = 16384;

/// Asynchronous BFS from vertex 0 of a graph, checked vertex by vertex against a queue BFS.
pub struct Bfs {
    label: String,
    /// Block mode ([`super::bfs_block`]) rather than thread mode.
    block: bool,
    graph: Graph,
    source: i32,
    reference: Vec<i32>,
    /// The graph on the runtime last used (row offsets, edge targets).
    resident: Resident<(Buffer<i32>, Buffer<i32>)>,
}

impl Bfs {
    /// The R-MAT graph of GTaP's baseline (`2^scale` vertices, `edge_factor` edges per vertex,
    /// seed 1); label `bfs_rmat<scale>_thread`.
    pub fn rmat(scale: u32, edge_factor: u32) -> Self {
        Self::new(
            format!("bfs_rmat{scale}_thread"),
            false,
            rmat(scale, edge_factor, 1),
        )
    }

    /// The `side x side` grid graph; label `bfs_grid<side>_thread`.
    pub fn grid(side: usize) -> Self {
        Self::new(format!("bfs_grid{side}_thread"), false, grid(side))
    }

    /// [`Bfs::rmat`] in block mode; label `bfs_rmat<scale>_block`.
    pub fn rmat_block(scale: u32, edge_factor: u32) -> Self {
        Self::new(
            format!("bfs_rmat{scale}_block"),
            true,
            rmat(scale, edge_factor, 1),
        )
    }

    /// [`Bfs::grid`] in block mode; label `bfs_grid<side>_block`.
    pub fn grid_block(side: usize) -> Self {
        Self::new(format!("bfs_grid{side}_block"), true, grid(side))
    }

    fn new(label: String, block: bool, graph: Graph) -> Self {
        let reference = reference_depths(&graph, 0);
        Self {
            label,
            block,
            graph,
            source: 0,
            reference,
            resident: Resident::default(),
        }
    }

    /// Whether `depth` equals the queue BFS's depths.
    fn verdict(&self, depth: &[i32]) -> Result<(), String> {
        let bad = depth
            .iter()
            .zip(&self.reference)
            .filter(|(a, b)| a != b)
            .count();
        if bad == 0 && depth.len() == self.reference.len() {
            Ok(())
        } else {
            Err(format!(
                "{bad} of {} depths differ from the queue BFS",
                self.reference.len()
            ))
        }
    }

    fn time_host(&self, parallel: bool) -> Result<Sample, String> {
        cpu_sample(
            || run_host(&self.graph, self.source, parallel),
            |depth| self.verdict(&depth),
        )
    }
}

impl Workload for Bfs {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn config(&self) -> gtap_host::Config {
        // Sized when these kernels still joined implicitly (before `no_taskwait`, NOTES entry
        // 27), when a task's record stayed until its subtree finished: the tasks on the paths
        // to every pending task were live, and vertices are re-spawned whenever their depth
        // drops. Room for 384 bytes per edge, between 256 MiB and 24 GiB (GTaP, which frees a
        // record when its task returns, as `no_taskwait` now does, reserves 10.7 GiB). A 2D
        // grid's paths are long (2046 levels for 1024 x 1024) and their records piled up on
        // the warps that ran them: 1.6 GiB (4096 per warp) ran out on the H200, so large graphs
        // get at least 16 GiB. Not measured again since: a smaller pool changes the slots per
        // warp, which the times depend on.
        let floor: u64 = if self.graph.col.len() > 1 << 20 {
            16 << 30
        } else {
            256 << 20
        };
        let bytes = (self.graph.col.len() as u64 * 384).clamp(floor, 24 << 30);
        if self.block {
            // Slots per warp, not bytes: a byte budget gives as many slots as the program's
            // largest block-mode record leaves room for, and the search's order and time depend
            // on the slots (its queues are as long). The budget of 384 bytes per edge times 32
            // gave 14771 (R-MAT) and 11022 (grid) slots of 1088 bytes, the block tree's record
            // at 32 threads, until that record shrank to 64 bytes (`bench/NOTES.md` entry 95):
            // then it gave 48381 and the R-MAT search ran 8 % slower (peak 24037 live tasks a
            // warp instead of 10024). The vertex task borrows no shared memory (as GTaP's
            // declares none): lending none lets more blocks share a multiprocessor.
            return gtap_host::Config::new()
                .block_mode()
                .block_size(BFS_BLOCK)
                .block_shared_bytes(0)
                .max_tasks_per_warp(BLOCK_SLOTS_PER_WARP);
        }
        // The vertex task calls no `gtap::thread::scratch`: without it the blocks leave the L1
        // 8 KiB more each (2.8 % off the R-MAT search on the H200, `bench/NOTES.md` entry 79).
        gtap_host::Config::new()
            .thread_scratch(false)
            .max_task_memory_bytes(bytes)
    }

    fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
        let err = |e: gtap_host::Error| e.to_string();
        let graph = &self.graph;
        let (row, col) = self
            .resident
            .on(rt, |rt| {
                Ok((rt.upload(&graph.row)?, rt.upload(&graph.col)?))
            })
            .map_err(err)?;
        let (row, col) = (row.slice(), col.slice());
        let mut depth = rt.alloc_filled(graph.vertices(), INF).map_err(err)?;
        let args = (row, col, depth.slice_mut(), self.source);
        let run = if self.block {
            rt.launch(bfs_block_kernel, args)
        } else {
            rt.launch(bfs_kernel, args)
        }
        .map_err(err)?;
        let out = rt.download(&depth).map_err(err)?;
        gpu_sample(&run, self.verdict(&out))
    }

    fn sequential(&mut self) -> Result<Sample, String> {
        self.time_host(false)
    }

    fn rayon(&mut self) -> Result<Sample, String> {
        self.time_host(true)
    }
}

/// Depths from `source` by a plain queue BFS (GTaP's `bfs_host_reference`); [`INF`] where
/// unreached.
pub fn reference_depths(g: &Graph, source: i32) -> Vec<i32> {
    let mut depth = vec![INF; g.vertices()];
    let mut queue = VecDeque::from([source]);
    depth[source as usize] = 0;
    while let Some(v) = queue.pop_front() {
        let dv = depth[v as usize];
        for &u in &g.col[g.row[v as usize] as usize..g.row[v as usize + 1] as usize] {
            if dv + 1 < depth[u as usize] {
                depth[u as usize] = dv + 1;
                queue.push_back(u);
            }
        }
    }
    depth
}

/// One task of the BFS: vertex, and the edge range (`start < 0`: all edges, split if many).
type Task = (i32, i32, i32);

/// Runs one task on the host, handing every task it spawns to `spawn`: the body of the GPU's
/// task function, shared by both host versions.
fn run_task(g: &Graph, depth: &[AtomicI32], (v, start, end): Task, mut spawn: impl FnMut(Task)) {
    let dv = depth[v as usize].load(Relaxed);
    let (row_start, row_end) = (g.row[v as usize], g.row[v as usize + 1]);
    let (start, end) = if start >= 0 {
        (start, end)
    } else if row_end - row_start > SPLIT {
        for s in (row_start..row_end).step_by(SPLIT as usize) {
            spawn((v, s, (s + SPLIT).min(row_end)));
        }
        return;
    } else {
        (row_start, row_end)
    };
    for &u in &g.col[start as usize..end as usize] {
        if depth[u as usize].fetch_min(dv + 1, Relaxed) > dv + 1 {
            spawn((u, -1, -1));
        }
    }
}

/// The GPU's task algorithm on the host: tasks run in FIFO order (sequential; then the first
/// depth a vertex gets is final, as in a queue BFS), or as rayon tasks on all cores.
pub fn run_host(g: &Graph, source: i32, parallel: bool) -> Vec<i32> {
    let depth: Vec<AtomicI32> = (0..g.vertices()).map(|_| AtomicI32::new(INF)).collect();
    depth[source as usize].store(0, Relaxed);
    if parallel {
        // FIFO spawns keep the exploration close to breadth-first order; LIFO (`scope`) would
        // walk deep first and lower most depths many times over.
        fn go<'s>(scope: &rayon::ScopeFifo<'s>, g: &'s Graph, depth: &'s [AtomicI32], task: Task) {
            run_task(g, depth, task, |t| {
                scope.spawn_fifo(move |s| go(s, g, depth, t))
            });
        }
        rayon::scope_fifo(|s| go(s, g, &depth, (source, -1, -1)));
    } else {
        let mut tasks = VecDeque::from([(source, -1, -1)]);
        while let Some(task) = tasks.pop_front() {
            run_task(g, &depth, task, |t| tasks.push_back(t));
        }
    }
    depth.into_iter().map(AtomicI32::into_inner).collect()
}

/// BFS at the paper's size (`bfs_rmat22_thread`: scale 22, edge factor 16) and on a grid of
/// 1024 x 1024 vertices (`bfs_grid1024_thread`), in both modes (`_block`).
pub fn paper() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Bfs::rmat(22, 16)),
        Box::new(Bfs::grid(1024)),
        Box::new(Bfs::rmat_block(22, 16)),
        Box::new(Bfs::grid_block(1024)),
    ]
}

/// BFS at small sizes, for a quick run on the CPU.
pub fn quick() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Bfs::rmat(14, 16)),
        Box::new(Bfs::grid(128)),
        Box::new(Bfs::rmat_block(10, 8)),
        Box::new(Bfs::grid_block(24)),
    ]
}
