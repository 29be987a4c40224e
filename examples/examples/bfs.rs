//! Asynchronous breadth-first search (GTaP's `bfs` example): every task that lowers a vertex's
//! depth spawns tasks for the vertex's edges, in ranges of at most 64, with no wait.
//!
//! Shows fire-and-forget tasks (no `taskwait!`: a task's record lives until its subtree ends),
//! device atomics on a shared array (`atomic_min` on the depths), and a launch context (the
//! graph and the depths reach every task as a `gtap::Context`, not in its record), on an R-MAT
//! power-law graph; the depths equal a sequential queue BFS's. The task function is in
//! `bench/workloads/src/bfs.rs`.
//!
//! ```sh
//! cargo run --release --example bfs [SCALE [EDGE_FACTOR]]     # default: 2^18 vertices, 16
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::bfs::{INF, bfs_kernel, reference_depths, rmat};

fn main() -> ExitCode {
    let scale: u32 = common::arg(1, 18);
    let edge_factor: u32 = common::arg(2, 16);
    let graph = rmat(scale, edge_factor, 1);
    let want = reference_depths(&graph, 0);
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &Config::new());
    let row = rt.upload(&graph.row).expect("upload");
    let col = rt.upload(&graph.col).expect("upload");
    let mut depth = rt.alloc_filled(graph.vertices(), INF).expect("depths");
    let got = rt
        .launch(bfs_kernel, (row.slice(), col.slice(), depth.slice_mut(), 0))
        .expect("bfs launch");
    common::report(
        &format!(
            "BFS of an R-MAT graph, {} vertices, {} edges",
            graph.vertices(),
            graph.col.len()
        ),
        &got,
    );
    common::verdict(rt.download(&depth).expect("download") == want, "bfs")
}
