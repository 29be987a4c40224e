//! Launch contexts (`gtap::Context`): binary trees whose tasks read their weights from the
//! launch's context instead of their arguments, in thread and block mode, before and after
//! waits (so a task may read it in another block than the one it started in), with a
//! context-free child spawned under a context.

use gtap::{Context, Slice};

/// The fixtures' launch context: node `i` weighs `w[i % w.len()] * scale`.
#[derive(Clone, Copy)]
pub struct Weights {
    /// The weights, cycled over the node numbers.
    pub w: Slice<u64>,
    /// A factor of every weight.
    pub scale: u64,
}

impl Weights {
    fn of(&self, node: u32) -> u64 {
        self.w[node as usize % self.w.len()] * self.scale
    }
}

/// The weight of the subtree of node `node` (`depth` more levels) of a full binary tree
/// numbered from 1. A node reads its own weight after its children finished, so the context
/// handle lives across the wait; a leaf multiplies its weight by the result of a context-free
/// child ([`factor`]).
#[gtap::function]
pub fn weigh(weights: Context<Weights>, depth: u32, node: u32) -> u64 {
    if depth == 0 {
        let mut f = 0;
        gtap::task!(f = factor(node));
        gtap::taskwait!();
        return f * weights.of(node);
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = weigh(depth - 1, 2 * node));
    gtap::task!(b = weigh(depth - 1, 2 * node + 1));
    gtap::taskwait!();
    a + b + weights.of(node)
}

/// 1 for every node (numbered from 1): a task function without a context, which runs under
/// any.
#[gtap::function]
pub fn factor(node: u32) -> u64 {
    u64::from(node > 0)
}

/// Root of [`weigh`]: the tree of `depth` levels below node 1.
#[gtap::kernel]
pub fn weigh_kernel(w: Slice<u64>, scale: u64, depth: u32) -> u64 {
    gtap::entry!(context(Weights { w, scale }), weigh(depth, 1))
}

/// Threads per block of [`weigh_block_kernel`].
pub const BLOCK: u32 = 64;

/// Block-mode [`weigh`]: threads 0 and 1 each spawn one child (per-thread spawns), the block
/// sums their results after the wait and adds the node's weight, read then.
#[gtap::function(block)]
pub fn weigh_block(block: &gtap::Block, weights: Context<Weights>, depth: u32, node: u32) -> u64 {
    let t = block.thread_index();
    let mut child = 0;
    if depth > 0 && t < 2 {
        gtap::task!(child = weigh_block(depth - 1, 2 * node + t));
    }
    gtap::taskwait!();
    block.sum(child) + weights.of(node)
}

/// Root of [`weigh_block`].
#[gtap::kernel(block = 64)]
pub fn weigh_block_kernel(w: Slice<u64>, scale: u64, depth: u32) -> u64 {
    gtap::entry!(context(Weights { w, scale }), weigh_block(depth, 1))
}

/// What both kernels return: the sum of every node's weight.
pub fn weigh_seq(w: &[u64], scale: u64, depth: u32) -> u64 {
    let nodes = (1u64 << (depth + 1)) - 1;
    (1..=nodes).map(|i| w[i as usize % w.len()] * scale).sum()
}
