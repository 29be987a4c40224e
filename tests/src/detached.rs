//! `#[gtap::kernel(no_taskwait)]` fixtures: trees whose tasks spawn their children and return
//! without waiting, counting their nodes by atomics, in thread and block mode; and kernels
//! whose tasks reach a `taskwait!` where none may.

/// Node `node` of a full binary tree with `depth` levels below it: adds 1 to `out[0]` and the
/// node's number to `out[1]` (wrapping), spawns its two children and returns.
#[gtap::function]
pub fn visit(depth: u32, node: u32, out: gtap::SliceMut<u32>) {
    out.atomic_add(0, 1);
    out.atomic_add(1, node);
    if depth > 0 {
        gtap::task!(visit(depth - 1, 2 * node, out));
        gtap::task!(visit(depth - 1, 2 * node + 1, out));
    }
}

/// Spawns the tree's root node (number 1) and returns `depth + 1000` at once: the kernel's
/// result comes from a root that finished long before its tree.
#[gtap::function]
pub fn visit_root(depth: u32, out: gtap::SliceMut<u32>) -> u32 {
    gtap::task!(visit(depth, 1, out));
    depth + 1000
}

/// [`visit_root`] without joins: the launch ends when no task is left.
#[gtap::kernel(no_taskwait)]
pub fn visit_kernel(depth: u32, out: gtap::SliceMut<u32>) -> u32 {
    gtap::entry!(visit_root(depth, out))
}

/// The same tree with joins (every task's implicit wait): the same counts.
#[gtap::kernel]
pub fn visit_joined_kernel(depth: u32, out: gtap::SliceMut<u32>) -> u32 {
    gtap::entry!(visit_root(depth, out))
}

/// What [`visit_kernel`] leaves in `out[0]` and `out[1]`: the node count `2^(depth+1) - 1` and
/// the wrapping sum of the node numbers `1..2^(depth+1)`.
pub fn visit_seq(depth: u32) -> [u32; 2] {
    let nodes = (1u64 << (depth + 1)) - 1;
    let sum = nodes * (nodes + 1) / 2;
    [nodes as u32, sum as u32]
}

/// A task that waits, under a kernel that declares none of its tasks does: the device error
/// `WaitInNoTaskwaitKernel`, naming `crate::fib`'s wait.
#[gtap::kernel(no_taskwait)]
pub fn waits_kernel(n: u32) -> u64 {
    gtap::entry!(crate::fib(n))
}

/// Threads per block of the block-mode fixtures here.
pub const BLOCK: u32 = 64;

/// Block-mode [`visit`]: thread 0 counts the node; threads 0 and 1 each spawn one child
/// (per-thread spawns), and every thread adds 1 to `out[2]`.
#[gtap::function(block)]
pub fn visit_block(block: &gtap::Block, depth: u32, node: u32, out: gtap::SliceMut<u32>) {
    let t = block.thread_index();
    if t == 0 {
        out.atomic_add(0, 1);
        out.atomic_add(1, node);
    }
    out.atomic_add(2, 1);
    if depth > 0 && t < 2 {
        gtap::task!(visit_block(depth - 1, 2 * node + t, out));
    }
}

/// Block-mode [`visit_root`].
#[gtap::function(block)]
pub fn visit_block_root(block: &gtap::Block, depth: u32, out: gtap::SliceMut<u32>) -> u32 {
    if block.thread_index() == 0 {
        gtap::task!(visit_block(depth, 1, out));
    }
    depth + 2000
}

/// [`visit_block_root`] without joins.
#[gtap::kernel(block = 64, no_taskwait)]
pub fn visit_block_kernel(depth: u32, out: gtap::SliceMut<u32>) -> u32 {
    gtap::entry!(visit_block_root(depth, out))
}

/// A block-mode task that waits (every thread at the same wait), under `no_taskwait`.
#[gtap::kernel(block = 64, no_taskwait)]
pub fn block_waits_kernel() -> u32 {
    gtap::entry!(crate::block::partial_wait(false))
}

/// Block mode: thread 0 spawns `n` children [`ranked`]`(i)`, which record the order they run in.
#[gtap::function(block)]
pub fn rank_children(block: &gtap::Block, n: u32, out: gtap::SliceMut<u32>) {
    if block.thread_index() == 0 {
        for i in 0..n {
            gtap::task!(ranked(i, out));
        }
    }
}

/// Thread 0 takes the next rank from `out[0]` and stores it, plus 1, in `out[1 + i]`.
#[gtap::function(block)]
pub fn ranked(block: &gtap::Block, i: u32, out: gtap::SliceMut<u32>) {
    if block.thread_index() == 0 {
        let rank = out.atomic_add(0, 1);
        out.atomic_add(1 + i as usize, rank + 1);
    }
}

/// [`rank_children`] in a launch without joins: its block runs the oldest tasks first.
#[gtap::kernel(block = 64, no_taskwait)]
pub fn rank_detached_kernel(n: u32, out: gtap::SliceMut<u32>) {
    gtap::entry!(rank_children(n, out))
}

/// [`rank_children`] with joins: its block runs the newest tasks first.
#[gtap::kernel(block = 64)]
pub fn rank_joined_kernel(n: u32, out: gtap::SliceMut<u32>) {
    gtap::entry!(rank_children(n, out))
}

/// Launches `kernel` (one of the `rank_*_kernel`s) with `n` children on `rt` and returns the
/// rank each child ran at (0 first).
#[cfg(not(target_arch = "nvptx64"))]
pub fn launch_ranks<K>(rt: &mut gtap_host::Runtime, kernel: K, n: u32) -> std::vec::Vec<u32>
where
    K: gtap_host::Kernel<Args = (u32, gtap::SliceMut<u32>), Output = ()>,
{
    let mut out = rt.alloc_filled(1 + n as usize, 0u32).unwrap();
    rt.launch(kernel, (n, out.slice_mut()))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = rt.download(&out).unwrap();
    assert_eq!(out[0], n, "every child ran once");
    out[1..].iter().map(|r| r - 1).collect()
}

/// The rank each of the `n` children of [`rank_children`] runs at on one block: the first child
/// at once (the fold keeps it), then the others from the block's ring, oldest end first in a
/// launch without joins (`detached`), newest first with them. The fold leaves a step's
/// children past the first 32 in the ring ahead of the first 32, which wait in shared memory
/// until the fold (see the `queue` module of `gtap-device`).
#[cfg(not(target_arch = "nvptx64"))]
pub fn expected_ranks(n: u32, detached: bool) -> std::vec::Vec<u32> {
    let keep = n.min(32);
    let mut ring: std::vec::Vec<u32> = (keep..n).chain(1..keep).collect();
    if !detached {
        ring.reverse();
    }
    let mut ranks = std::vec![0; n as usize];
    for (rank, child) in ring.into_iter().enumerate() {
        ranks[child as usize] = rank as u32 + 1;
    }
    ranks
}
