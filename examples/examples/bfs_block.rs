//! Asynchronous breadth-first search in block mode (GTaP's block BFS): a task per vertex whose
//! depth dropped, run by a whole thread block: its threads share the vertex's edges, and every
//! thread that lowers a neighbour's depth spawns that neighbour's task.
//!
//! Shows per-thread spawns (each thread of the block spawns its own children, with no wait)
//! beside the thread-mode `bfs` example; the depths equal a sequential queue BFS's. The task function
//! is in `bench/workloads/src/bfs.rs`.
//!
//! ```sh
//! cargo run --release --example bfs_block [SCALE [EDGE_FACTOR]]     # default: 2^12 vertices, 16
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::bfs::{BFS_BLOCK, INF, bfs_block_kernel, reference_depths, rmat};

fn main() -> ExitCode {
    let scale: u32 = common::arg(1, 12);
    let edge_factor: u32 = common::arg(2, 16);
    let graph = rmat(scale, edge_factor, 1);
    let want = reference_depths(&graph, 0);
    // The default task budget: on the GPU sized from the kernel's records (a frame per thread
    // in block mode) and the grid; a budget set here would have to know both.
    let config = Config::new().block_mode().block_size(BFS_BLOCK);
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &config);
    let row = rt.upload(&graph.row).expect("upload");
    let col = rt.upload(&graph.col).expect("upload");
    let mut depth = rt.alloc_filled(graph.vertices(), INF).expect("depths");
    let got = rt
        .launch(
            bfs_block_kernel,
            (row.slice(), col.slice(), depth.slice_mut(), 0),
        )
        .expect("bfs_block launch");
    common::report(
        &format!(
            "block-mode BFS of an R-MAT graph, {} vertices, {} edges",
            graph.vertices(),
            graph.col.len()
        ),
        &got,
    );
    common::verdict(rt.download(&depth).expect("download") == want, "bfs_block")
}
