//! BFS inputs: the R-MAT graph of GTaP's baseline (`bfs_common.cuh`) and a 2D grid, as CSR.

use std::vec;
use std::vec::Vec;

use rayon::prelude::*;

/// A directed graph in CSR form: the out-edges of `v` are `col[row[v]..row[v + 1]]`.
pub struct Graph {
    /// Row offsets, one per vertex plus one.
    pub row: Vec<i32>,
    /// Edge targets.
    pub col: Vec<i32>,
}

impl Graph {
    /// Number of vertices.
    pub fn vertices(&self) -> usize {
        self.row.len() - 1
    }

    /// Builds the CSR of `edges` (source, target), rows by source, each row in edge order.
    fn from_edges(vertices: usize, edges: &[(u32, u32)]) -> Self {
        let mut row = vec![0i32; vertices + 1];
        for &(u, _) in edges {
            row[u as usize + 1] += 1;
        }
        for v in 0..vertices {
            row[v + 1] += row[v];
        }
        let mut fill: Vec<i32> = row[..vertices].to_vec();
        let mut col = vec![0i32; edges.len()];
        for &(u, t) in edges {
            col[fill[u as usize] as usize] = t as i32;
            fill[u as usize] += 1;
        }
        Self { row, col }
    }
}

/// Call `k` of the splitmix64 stream of `seed`.
fn splitmix64_at(seed: u64, k: u64) -> u64 {
    let mut z = seed.wrapping_add(k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Edge `e` of the R-MAT graph of `2^scale` vertices: draws `e * scale ..` of the stream pick
/// one quadrant per level, most significant level first, with probabilities 0.45 / 0.15 / 0.15
/// / 0.25 for (source bit, target bit) = 00 / 01 / 10 / 11.
pub fn rmat_edge(scale: u32, seed: u64, e: u64) -> (u32, u32) {
    let (mut u, mut v) = (0u32, 0u32);
    for l in 0..scale as u64 {
        let r =
            (splitmix64_at(seed, e * scale as u64 + l) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        u <<= 1;
        v <<= 1;
        if r < 0.45 {
        } else if r < 0.60 {
            v |= 1;
        } else if r < 0.75 {
            u |= 1;
        } else {
            u |= 1;
            v |= 1;
        }
    }
    (u, v)
}

/// The R-MAT graph of `bfs_common.cuh`: `2^scale` vertices, `edge_factor * 2^scale` edges,
/// duplicates and self loops kept. `scale` at most 30 and at most `i32::MAX` edges.
pub fn rmat(scale: u32, edge_factor: u32, seed: u64) -> Graph {
    let vertices = 1usize << scale;
    let edges: Vec<(u32, u32)> = (0..(vertices * edge_factor as usize) as u64)
        .into_par_iter()
        .map(|e| rmat_edge(scale, seed, e))
        .collect();
    Graph::from_edges(vertices, &edges)
}

/// The `side x side` grid graph: vertex `y * side + x` has edges to its 4 neighbours (fewer on
/// the border), in the order -y, -x, +x, +y.
pub fn grid(side: usize) -> Graph {
    let mut edges = Vec::with_capacity(4 * side * side);
    for y in 0..side {
        for x in 0..side {
            let v = (y * side + x) as u32;
            let side32 = side as u32;
            if y > 0 {
                edges.push((v, v - side32));
            }
            if x > 0 {
                edges.push((v, v - 1));
            }
            if x + 1 < side {
                edges.push((v, v + 1));
            }
            if y + 1 < side {
                edges.push((v, v + side32));
            }
        }
    }
    Graph::from_edges(side * side, &edges)
}
