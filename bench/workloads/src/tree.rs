//! GTaP's synthetic binary tree: a complete tree of the given height, children first, then
//! every node's own work written to `out[node]`.
//!
//! * [`tree_work`] (`tree<d>_thread`): `evaluation/2-comparison/binary_tree/
//!   gtap_thread_binary_tree.cu`, per node [`do_memory_and_compute`];
//! * [`tree_work_epaq`] (`tree<d>_epaq_q3`, `_q1`): `evaluation/3-epaq/tree/tree_queue_3.cu`,
//!   per node the divergent [`do_memory_or_compute_divergent`], children and continuations
//!   sent to queue `hash32(node) % 3` when the runtime has 3 queues (`tree_queue_1`: none);
//! * [`tree_work_block`] (`tree<d>_block`): `gtap_block_binary_tree.cu`, block mode (one task
//!   per block of [`BLOCK`] threads, GTaP's `GTAP_BLOCK_SIZE=64`): every thread does its
//!   strided share of the node's work ([`do_memory_and_compute_strided`]), thread 0 spawns the
//!   children and writes its value.

use gtap::{Slice, SliceMut};

use crate::node_work::{
    do_memory_and_compute, do_memory_and_compute_strided, do_memory_or_compute_divergent, hash32,
};

/// Threads per block of [`tree_block_kernel`] (GTaP's block tree: `GTAP_BLOCK_SIZE=64`).
pub const BLOCK: u32 = 64;

/// What every node of a tree reads, the launch's context: the per-node work's parameters, its
/// input and the output. The task functions read it again after their wait rather than keep
/// copies across it, so their records hold only the node and its height.
#[derive(Clone, Copy)]
pub struct Nodes {
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
}

impl Nodes {
    /// A tree launch's context: `mem_ops` and `compute_iters` of the per-node work, its
    /// `input`, and `out` for every node's value (what each tree kernel receives).
    fn new(mem_ops: i32, compute_iters: i32, input: Slice<f64>, out: SliceMut<f64>) -> Self {
        Self {
            mem_ops,
            compute_iters,
            input,
            out,
        }
    }

    /// Writes node `node`'s value. Every node of the tree is visited by exactly one task.
    fn store(&self, node: i32, value: f64) {
        // SAFETY: node indices are distinct across tasks (the children of `n` are 2n+1 and
        // 2n+2), so no other task reads or writes element `node`.
        unsafe { self.out.write(node as usize, value) }
    }

    /// Node `node`'s work ([`do_memory_and_compute`]).
    fn work(&self, node: i32) -> f64 {
        do_memory_and_compute(self.input, node as u32, self.mem_ops, self.compute_iters)
    }

    /// Thread `t`'s share of node `node`'s work in a block of `threads`
    /// ([`do_memory_and_compute_strided`]).
    fn work_strided(&self, node: i32, t: u32, threads: u32) -> f64 {
        do_memory_and_compute_strided(
            self.input,
            node as u32,
            self.mem_ops,
            self.compute_iters,
            t,
            threads,
        )
    }

    /// Node `node`'s work on a whole block ([`Nodes::work_strided`]); thread 0's share is the
    /// node's value, as in GTaP, whose other threads' shares are discarded.
    fn block_work(&self, block: &gtap::Block, node: i32) {
        let (t, threads) = (block.thread_index(), block.size());
        let v = self.work_strided(node, t, threads);
        if t == 0 {
            self.store(node, v);
        }
    }

    /// Node `node`'s divergent work ([`do_memory_or_compute_divergent`]).
    fn work_divergent(&self, node: i32) -> f64 {
        do_memory_or_compute_divergent(self.input, node as u32, self.mem_ops, self.compute_iters)
    }
}

/// GTaP's binary-tree `tree_work`: leaves do their work at once, inner nodes after their two
/// children.
#[gtap::function]
pub fn tree_work(nodes: gtap::Context<Nodes>, node: i32, height: i32) {
    if height == 0 {
        nodes.store(node, nodes.work(node));
        return;
    }
    gtap::task!(tree_work(node * 2 + 1, height - 1));
    gtap::task!(tree_work(node * 2 + 2, height - 1));
    gtap::taskwait!();
    nodes.store(node, nodes.work(node));
}

/// Root kernel of [`tree_work`]; `out` holds `2^(height+1) - 1` values.
#[gtap::kernel(queues = 1)]
pub fn tree_kernel(
    height: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
) {
    let nodes = Nodes::new(mem_ops, compute_iters, input, out);
    gtap::entry!(context(nodes), tree_work(0, height));
}

/// GTaP's block-mode `tree_work`: as [`tree_work`], on a whole block; the node's value is
/// thread 0's share of the work (as in GTaP, whose other threads' shares are discarded).
///
/// As GTaP's, the body reads the thread's index where it uses it rather than keeping it across
/// the wait, so the task's frames hold nothing but the future's state (`bench/NOTES.md` entry
/// 95).
#[gtap::function(block)]
pub fn tree_work_block(block: &gtap::Block, nodes: gtap::Context<Nodes>, node: i32, height: i32) {
    if height == 0 {
        nodes.block_work(block, node);
        return;
    }
    if block.thread_index() == 0 {
        gtap::task!(tree_work_block(node * 2 + 1, height - 1));
        gtap::task!(tree_work_block(node * 2 + 2, height - 1));
    }
    gtap::taskwait!();
    nodes.block_work(block, node);
}

/// Root kernel of [`tree_work_block`], blocks of [`BLOCK`] threads. At most 64 registers a
/// thread: 16 blocks a multiprocessor (10 at 96, 14 at 72; `bench/NOTES.md` entries 60 and
/// 63).
#[gtap::kernel(block = 64, max_registers = 64, queues = 1)]
pub fn tree_block_kernel(
    height: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
) {
    let nodes = Nodes::new(mem_ops, compute_iters, input, out);
    gtap::entry!(context(nodes), tree_work_block(0, height));
}

/// `tree_queue_3.cu`'s clause `queue(hash32(node) % 3)` with 3 queues, queue 0 otherwise.
fn epaq_queue(node: i32) -> u32 {
    if gtap::thread::num_queues() >= 3 {
        hash32(node as u32) % 3
    } else {
        0
    }
}

/// GTaP's EPAQ `tree_work`: the binary tree with divergent per-node work and queue clauses.
#[gtap::function]
pub fn tree_work_epaq(nodes: gtap::Context<Nodes>, node: i32, height: i32) {
    if height == 0 {
        nodes.store(node, nodes.work_divergent(node));
        return;
    }
    let (l, r) = (node * 2 + 1, node * 2 + 2);
    gtap::task!(queue(epaq_queue(l)), tree_work_epaq(l, height - 1));
    gtap::task!(queue(epaq_queue(r)), tree_work_epaq(r, height - 1));
    gtap::taskwait!(queue(epaq_queue(node)));
    nodes.store(node, nodes.work_divergent(node));
}

/// Root kernel of [`tree_work_epaq`] for any queue count; `out` holds `2^(height+1) - 1`
/// values. At most 96 registers a thread: 20 warps a multiprocessor instead of 16 (see
/// `bench/NOTES.md`).
#[gtap::kernel(max_registers = 96)]
pub fn tree_epaq_kernel(
    height: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
) {
    let nodes = Nodes::new(mem_ops, compute_iters, input, out);
    gtap::entry!(context(nodes), tree_work_epaq(0, height));
}

/// [`tree_epaq_kernel`] compiled for 1 queue, as GTaP builds `tree_queue_1` (`tree20_epaq_q1`).
#[gtap::kernel(max_registers = 96, queues = 1)]
pub fn tree_epaq_q1_kernel(
    height: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
) {
    let nodes = Nodes::new(mem_ops, compute_iters, input, out);
    gtap::entry!(context(nodes), tree_work_epaq(0, height));
}

/// [`tree_epaq_kernel`] compiled for 3 queues, as GTaP builds `tree_queue_3` (`tree20_epaq_q3`).
#[gtap::kernel(max_registers = 96, queues = 3)]
pub fn tree_epaq_q3_kernel(
    height: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    out: SliceMut<f64>,
) {
    let nodes = Nodes::new(mem_ops, compute_iters, input, out);
    gtap::entry!(context(nodes), tree_work_epaq(0, height));
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Tree, TreeKind};

#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use std::format;
    use std::string::{String, ToString};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::vec::Vec;

    use rayon::prelude::*;

    use super::*;
    use crate::measure::{Sample, Workload, cpu_sample, gpu_sample};
    use crate::rng::tree_inputs;

    /// Which of GTaP's binary trees.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum TreeKind {
        /// `gtap_thread_binary_tree`: [`do_memory_and_compute`] per node, 1 queue.
        Thread,
        /// `tree_queue_<queues>`: [`do_memory_or_compute_divergent`] per node.
        Epaq {
            /// 3 (GTaP's queue clauses) or 1 (none).
            queues: u32,
        },
        /// `gtap_block_binary_tree`: block mode, thread 0's share of
        /// [`do_memory_and_compute_strided`] per node.
        Block,
    }

    /// Before each GPU launch `out` is filled with this NaN pattern (as GTaP's baseline), so
    /// a node no task wrote cannot pass the check.
    const UNWRITTEN: u64 = u64::MAX;

    /// A binary tree workload with GTaP's inputs (label `tree<h>_thread` or
    /// `tree<h>_epaq_q<queues>`); every node's value is checked bit for bit.
    pub struct Tree {
        kind: TreeKind,
        height: i32,
        mem_ops: i32,
        compute_iters: i32,
        input: Vec<f64>,
        reference: Vec<u64>,
    }

    impl Tree {
        /// The tree of `height` with `mem_ops` loads and `compute_iters` rounds per node
        /// (GTaP: thread tree 22/256/256, EPAQ tree 20/512/512). Computes the reference
        /// values (the node function on all cores).
        pub fn new(kind: TreeKind, height: i32, mem_ops: i32, compute_iters: i32) -> Self {
            let (input, _indices) = tree_inputs();
            let nodes = (1usize << (height + 1)) - 1;
            let reference = (0..nodes)
                .into_par_iter()
                .map(|node| node_value(kind, &input, node as u32, mem_ops, compute_iters).to_bits())
                .collect();
            Self {
                kind,
                height,
                mem_ops,
                compute_iters,
                input,
                reference,
            }
        }

        fn verify(&self, bits: impl IntoIterator<Item = u64>) -> Result<(), String> {
            let mut wrong = 0usize;
            let mut first = None;
            for (node, (got, want)) in bits.into_iter().zip(&self.reference).enumerate() {
                if got != *want {
                    wrong += 1;
                    first.get_or_insert(node);
                }
            }
            match first {
                None => Ok(()),
                Some(node) => Err(format!(
                    "{wrong} of {} node values differ from the reference (first: node {node})",
                    self.reference.len()
                )),
            }
        }

        fn value(&self, node: u32) -> f64 {
            node_value(
                self.kind,
                &self.input,
                node,
                self.mem_ops,
                self.compute_iters,
            )
        }

        /// The sequential peer: GTaP's recursion (children, then the node), one thread.
        fn visit_seq(&self, node: i32, height: i32, out: &mut [f64]) {
            if height > 0 {
                self.visit_seq(node * 2 + 1, height - 1, out);
                self.visit_seq(node * 2 + 2, height - 1, out);
            }
            out[node as usize] = self.value(node as u32);
        }

        /// The rayon peer: the same recursion with `rayon::join` for the children.
        fn visit_rayon(&self, node: i32, height: i32, out: &[AtomicU64]) {
            if height > 0 {
                rayon::join(
                    || self.visit_rayon(node * 2 + 1, height - 1, out),
                    || self.visit_rayon(node * 2 + 2, height - 1, out),
                );
            }
            out[node as usize].store(self.value(node as u32).to_bits(), Ordering::Relaxed);
        }
    }

    fn node_value(kind: TreeKind, input: &[f64], node: u32, mem: i32, compute: i32) -> f64 {
        match kind {
            TreeKind::Thread => do_memory_and_compute(input, node, mem, compute),
            TreeKind::Epaq { .. } => do_memory_or_compute_divergent(input, node, mem, compute),
            TreeKind::Block => do_memory_and_compute_strided(input, node, mem, compute, 0, BLOCK),
        }
    }

    impl Workload for Tree {
        fn label(&self) -> String {
            match self.kind {
                TreeKind::Thread => format!("tree{}_thread", self.height),
                TreeKind::Epaq { queues } => format!("tree{}_epaq_q{queues}", self.height),
                TreeKind::Block => format!("tree{}_block", self.height),
            }
        }
        fn config(&self) -> gtap_host::Config {
            match self.kind {
                TreeKind::Thread => gtap_host::Config::new(),
                TreeKind::Epaq { queues } => gtap_host::Config::new().num_queues(queues),
                // The node task borrows no shared memory (as GTaP's declares none).
                TreeKind::Block => gtap_host::Config::new()
                    .block_mode()
                    .block_size(BLOCK)
                    .block_shared_bytes(0),
            }
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            let err = |e: gtap_host::Error| e.to_string();
            let input = rt.upload(&self.input).map_err(err)?;
            let mut out = rt
                .alloc_filled(self.reference.len(), f64::from_bits(UNWRITTEN))
                .map_err(err)?;
            let args = (
                self.height,
                self.mem_ops,
                self.compute_iters,
                input.slice(),
                out.slice_mut(),
            );
            let launch = match self.kind {
                TreeKind::Thread => rt.launch(tree_kernel, args),
                TreeKind::Epaq { queues: 1 } => rt.launch(tree_epaq_q1_kernel, args),
                TreeKind::Epaq { queues: 3 } => rt.launch(tree_epaq_q3_kernel, args),
                TreeKind::Epaq { .. } => rt.launch(tree_epaq_kernel, args),
                TreeKind::Block => rt.launch(tree_block_kernel, args),
            }
            .map_err(err)?;
            let got = rt.download(&out).map_err(err)?;
            gpu_sample(&launch, self.verify(got.iter().map(|v| v.to_bits())))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            let this = &*self;
            let mut out = std::vec![f64::from_bits(UNWRITTEN); this.reference.len()];
            cpu_sample(
                move || {
                    this.visit_seq(0, this.height, &mut out);
                    out
                },
                |out| this.verify(out.iter().map(|v| v.to_bits())),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let this = &*self;
            let out: Vec<AtomicU64> = (0..this.reference.len())
                .map(|_| AtomicU64::new(UNWRITTEN))
                .collect();
            cpu_sample(
                move || {
                    this.visit_rayon(0, this.height, &out);
                    out
                },
                |out| this.verify(out.iter().map(|v| v.load(Ordering::Relaxed))),
            )
        }
    }
}
