//! Tree traversals: a complete binary tree with synthetic work per node (GTaP's
//! `binary_tree` benchmark), and a sum over a tree of random shape read from a device buffer.

use gtap::{Slice, SliceMut};

/// A node's synthetic work: `iters` rounds of integer mixing seeded by the node index.
#[inline]
pub fn node_work(node: u32, iters: u32) -> u64 {
    let mut x = (node as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for i in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(i as u64);
    }
    x
}

/// Visits the subtree rooted at `node` (children `2n+1`, `2n+2`) of height `height`: children
/// first, then the node's own work, written to `out[node]`. Returns the wrapping sum of the
/// subtree's values.
#[gtap::function]
pub fn tree_visit(node: u32, height: u32, iters: u32, out: SliceMut<u64>) -> u64 {
    let mut sum = 0u64;
    if height > 0 {
        let (mut left, mut right) = (0, 0);
        gtap::task!(left = tree_visit(2 * node + 1, height - 1, iters, out));
        gtap::task!(right = tree_visit(2 * node + 2, height - 1, iters, out));
        gtap::taskwait!();
        sum = left.wrapping_add(right);
    }
    let own = node_work(node, iters);
    // Each node is written by its own task only; a relaxed atomic store (the cost of a plain
    // store) writes it without `unsafe`.
    out.atomic_store(node as usize, own);
    sum.wrapping_add(own)
}

/// Root kernel of [`tree_visit`]; `out` holds `2^(height+1) - 1` values.
#[gtap::kernel]
pub fn tree_kernel(height: u32, iters: u32, out: SliceMut<u64>) -> u64 {
    gtap::entry!(tree_visit(0, height, iters, out))
}

/// Sequential reference of [`tree_visit`]: fills `out` and returns the sum.
pub fn tree_visit_seq(height: u32, iters: u32, out: &mut [u64]) -> u64 {
    let mut sum = 0u64;
    for (node, slot) in out
        .iter_mut()
        .enumerate()
        .take((1usize << (height + 1)) - 1)
    {
        *slot = node_work(node as u32, iters);
        sum = sum.wrapping_add(*slot);
    }
    sum
}

/// A node of a tree stored as an array: its children are `first..first + count`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// The node's value.
    pub value: u64,
    /// Index of its first child.
    pub first: u32,
    /// Number of children (at most [`MAX_CHILDREN`]).
    pub count: u32,
}

/// Most children of a [`Node`].
pub const MAX_CHILDREN: usize = 4;

/// Sum of the values in the subtree rooted at `node`.
#[gtap::function]
pub fn tree_sum(nodes: Slice<Node>, node: u32) -> u64 {
    let Node {
        value,
        first,
        count,
    } = nodes[node as usize];
    let mut sums = [0u64; MAX_CHILDREN];
    for i in 0..count.min(MAX_CHILDREN as u32) {
        gtap::task!(sums[i as usize] = tree_sum(nodes, first + i));
    }
    gtap::taskwait!();
    sums.iter().fold(value, |acc, s| acc.wrapping_add(*s))
}

/// Root kernel of [`tree_sum`] over the tree whose root is `nodes[0]`.
#[gtap::kernel]
pub fn tree_sum_kernel(nodes: Slice<Node>) -> u64 {
    gtap::entry!(tree_sum(nodes, 0))
}

/// Sequential reference of [`tree_sum`] (host only).
#[cfg(not(target_arch = "nvptx64"))]
pub fn tree_sum_seq(nodes: &[Node]) -> u64 {
    // Every node is in exactly one subtree of the root, so the sum is over all reachable nodes;
    // walk them iteratively (random trees can be deep).
    let mut stack = std::vec![0u32];
    let mut sum = 0u64;
    while let Some(n) = stack.pop() {
        let node = nodes[n as usize];
        sum = sum.wrapping_add(node.value);
        stack.extend(node.first..node.first + node.count);
    }
    sum
}

/// A random tree of about `target` nodes (host only): breadth-first, each node gets 0 to 4 children with
/// probabilities that keep the tree growing unevenly (some subtrees bushy, others long chains).
#[cfg(not(target_arch = "nvptx64"))]
pub fn random_tree(target: usize, seed: u64) -> std::vec::Vec<Node> {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut nodes = std::vec![Node {
        value: next() >> 16,
        first: 0,
        count: 0
    }];
    let mut i = 0;
    while i < nodes.len() {
        let room = target.saturating_sub(nodes.len());
        let roll = next() % 100;
        let want = match roll {
            0..=29 => 0,
            30..=59 => 1,
            60..=79 => 2,
            80..=91 => 3,
            _ => 4,
        };
        // Keep at least one live branch until the target is reached.
        let want = if i + 1 == nodes.len() && room > 0 {
            want.max(1)
        } else {
            want
        };
        let count = want.min(room) as u32;
        nodes[i].first = nodes.len() as u32;
        nodes[i].count = count;
        for _ in 0..count {
            nodes.push(Node {
                value: next() >> 16,
                first: 0,
                count: 0,
            });
        }
        i += 1;
    }
    nodes
}
