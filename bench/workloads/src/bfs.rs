//! Asynchronous BFS, one task per discovered vertex (GTaP's
//! `evaluation/2-comparison/bfs/gtap_thread_bfs.cu`, thread mode).
//!
//! A task for vertex `v` reads `v`'s current depth and relaxes each out-edge with an atomic
//! minimum; every neighbour whose depth it lowered gets a task of its own. A vertex with more
//! than [`SPLIT`] out-edges first splits its edge list into chunks of [`SPLIT`] edges, one task
//! per chunk. No task waits for its children.
//!
//! [`bfs_block`] is GTaP's block-mode variant (`gtap_block_bfs.cu`, label `bfs_rmat22_block`,
//! blocks of [`BFS_BLOCK`] threads): a task per discovered vertex whose block's threads share its
//! edges, every thread spawning a task for each neighbour it lowered. No splitting.

use gtap::{Slice, SliceMut};

#[cfg(not(target_arch = "nvptx64"))]
mod graph;
#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub use graph::{Graph, grid, rmat, rmat_edge};
#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Bfs, paper, quick, reference_depths, run_host};

/// What every task of a search reads, the launch's context: the graph in CSR form (`row`
/// offsets into `col`, the edge targets) and the depths the tasks lower. As GTaP's tasks read
/// the graph from globals, these are not copied into every task's record.
#[derive(Clone, Copy)]
pub struct Search {
    row: Slice<i32>,
    col: Slice<i32>,
    depth: SliceMut<i32>,
}

/// Vertices with more out-edges than this are split into chunk tasks of this many edges
/// (`BFS_SPLIT_THRESHOLD`).
pub const SPLIT: i32 = 64;

/// The depth of an unreached vertex (GTaP's mains `cudaMemset` the depths to `0x3f`).
pub const INF: i32 = 0x3f3f_3f3f;

/// Relaxes the out-edges `start..end` of vertex `v` (all of them, split if there are many, when
/// `start < 0`) of the launch's graph, spawning a task for every neighbour whose depth it
/// lowers.
#[gtap::function]
pub fn bfs(search: gtap::Context<Search>, v: i32, start: i32, end: i32) {
    let Search { row, col, depth } = *search;
    // A relaxed atomic read: other tasks lower depths concurrently (GTaP reads with `ld.cg`).
    let dv = depth.atomic_load(v as usize);
    let (row_start, row_end) = (row[v as usize], row[v as usize + 1]);
    let (mut start, mut end) = (start, end);
    if start < 0 {
        if row_end - row_start > SPLIT {
            let mut s = row_start;
            while s < row_end {
                gtap::task!(bfs(v, s, (s + SPLIT).min(row_end)));
                s += SPLIT;
            }
            return;
        }
        (start, end) = (row_start, row_end);
    }
    for e in start..end {
        let u = col[e as usize];
        if depth.atomic_min(u as usize, dv + 1) > dv + 1 {
            gtap::task!(bfs(u, -1, -1));
        }
    }
}

/// Threads per block of [`bfs_block_kernel`] (GTaP's block BFS: `GTAP_BLOCK_SIZE=32`).
pub const BFS_BLOCK: u32 = 32;

/// Block mode: relaxes vertex `v`'s out-edges, the block's threads taking every
/// `size()`-th edge; each thread spawns a task for every neighbour whose depth it lowered.
#[gtap::function(block)]
pub fn bfs_block(block: &gtap::Block, search: gtap::Context<Search>, v: i32) {
    let Search { row, col, depth } = *search;
    let dv = depth.atomic_load(v as usize);
    let (row_start, row_end) = (row[v as usize], row[v as usize + 1]);
    // `for_each` takes a closure, and `task!` cannot be written in one: the strided loop by hand.
    let mut e = row_start + block.thread_index() as i32;
    while e < row_end {
        let u = col[e as usize];
        if depth.atomic_min(u as usize, dv + 1) > dv + 1 {
            gtap::task!(bfs_block(u));
        }
        e += block.size() as i32;
    }
}

/// Root kernel of [`bfs_block`] from `source`; `depth` holds [`INF`] for every vertex. At most
/// 64 registers a thread: with no shared memory lent to tasks, 32 blocks a multiprocessor, the
/// most there are (21 % faster on the H200's R-MAT graph than 28 blocks at 72; `bench/NOTES.md`
/// entry 63). No task waits: `no_taskwait`, as GTaP builds it (`-DGTAP_ASSUME_NO_TASKWAIT`).
#[gtap::kernel(block = 32, max_registers = 64, no_taskwait, queues = 1)]
pub fn bfs_block_kernel(row: Slice<i32>, col: Slice<i32>, depth: SliceMut<i32>, source: i32) {
    depth.atomic_min(source as usize, 0);
    gtap::entry!(context(Search { row, col, depth }), bfs_block(source))
}

/// Root kernel of [`bfs`] from `source`; `depth` holds [`INF`] for every vertex. At most 72
/// registers a thread: 28 warps a multiprocessor instead of 16, for a search that waits on
/// memory in every lane (`bench/NOTES.md` entries 18 and 31: 64 spilled more once the
/// scheduler's state stayed in registers, 72 is 6 % faster on the grid graph; entry 101: at 64
/// after the spawn's reports went out of line, the R-MAT graph 3.9 % faster, the grid 2.0 %
/// slower). No task waits: `no_taskwait`, as GTaP builds it (`-DGTAP_ASSUME_NO_TASKWAIT`).
#[gtap::kernel(max_registers = 72, no_taskwait, queues = 1)]
pub fn bfs_kernel(row: Slice<i32>, col: Slice<i32>, depth: SliceMut<i32>, source: i32) {
    // Every thread runs this, as in GTaP's kernel; all store the same 0.
    depth.atomic_min(source as usize, 0);
    gtap::entry!(context(Search { row, col, depth }), bfs(source, -1, -1))
}
