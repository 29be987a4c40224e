//! GTaP's probabilistic B-ary tree (`probtree<d>_thread`,
//! `evaluation/2-comparison/prob_Bary_tree/gtap_thread_tree_load_compute.cu`): each node
//! considers B children and spawns each with a probability that falls with depth; every node
//! does [`do_memory_and_compute`] and stores the value into a fixed sink of 2^20 slots at
//! `hash32(node)`, where colliding nodes overwrite each other (last writer wins, by design).

use gtap::{Slice, SliceMut};

use crate::node_work::{do_memory_and_compute, hash32, xorshift32};

/// GTaP's `sink_store`: the slot is `hash32(node) & (len - 1)` (a power-of-two sink).
fn sink_store(sink: SliceMut<u64>, node: u32, value: f64) {
    let slot = hash32(node) & (sink.len() as u32).wrapping_sub(1);
    // Colliding nodes store to one slot concurrently; an atomic store keeps that defined
    // (one of the values wins) at the cost of a plain store.
    sink.atomic_store(slot as usize, value.to_bits());
}

/// The children node `node` spawns at depth `depth` (root 0) with `rem_h` levels below it, in
/// GTaP's order: child k (1-based id `node * B + k`) exists when its draw is below `rem_h`.
/// Calls `spawn(child)` for each.
#[inline(always)]
pub fn for_each_child(node: u32, rem_h: i32, depth_total: i32, b: i32, mut spawn: impl FnMut(u32)) {
    let d = depth_total - rem_h;
    let mut s = hash32(node ^ (d as u32).wrapping_mul(0x9e37_79b9));
    for k in 0..b {
        s = xorshift32(s.wrapping_add(k as u32));
        let r = (s % depth_total as u32) as i32;
        if r < rem_h {
            spawn(node.wrapping_mul(b as u32).wrapping_add(k as u32 + 1));
        }
    }
}

/// What every node of a B-ary tree reads, the launch's context: the tree's shape, the
/// per-node work's parameters, its input and the sink of the nodes' values. The task function
/// reads it again after its wait rather than keep copies across it.
#[derive(Clone, Copy)]
pub struct ProbTreeWork {
    depth_total: i32,
    b: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    sink: SliceMut<u64>,
}

impl ProbTreeWork {
    /// Node `node`'s work ([`do_memory_and_compute`]), stored into the sink.
    fn work(&self, node: u32) {
        let v = do_memory_and_compute(self.input, node, self.mem_ops, self.compute_iters);
        sink_store(self.sink, node, v);
    }
}

/// GTaP's B-ary `tree_work`.
#[gtap::function]
pub fn probtree_work(tree: gtap::Context<ProbTreeWork>, node: u32, rem_h: i32) {
    if rem_h == 0 {
        tree.work(node);
        return;
    }
    let (depth_total, b) = (tree.depth_total, tree.b);
    let d = depth_total - rem_h;
    let mut s = hash32(node ^ (d as u32).wrapping_mul(0x9e37_79b9));
    let mut spawned = 0;
    for k in 0..b {
        s = xorshift32(s.wrapping_add(k as u32));
        let r = (s % depth_total as u32) as i32;
        if r < rem_h {
            let child = node.wrapping_mul(b as u32).wrapping_add(k as u32 + 1);
            gtap::task!(probtree_work(child, rem_h - 1));
            spawned += 1;
        }
    }
    if spawned > 0 {
        gtap::taskwait!();
    }
    tree.work(node);
}

/// Root kernel of [`probtree_work`]: the tree of depth `depth`; `sink.len()` a power of two.
/// At most 96 registers a thread: 20 warps a multiprocessor instead of 16. Compiled for any
/// queue count, as `queues = 1` measured slower (see `bench/NOTES.md` for both).
#[gtap::kernel(max_registers = 96)]
pub fn probtree_kernel(
    depth: i32,
    b: i32,
    mem_ops: i32,
    compute_iters: i32,
    input: Slice<f64>,
    sink: SliceMut<u64>,
) {
    let tree = ProbTreeWork {
        depth_total: depth,
        b,
        mem_ops,
        compute_iters,
        input,
        sink,
    };
    gtap::entry!(context(tree), probtree_work(0, depth));
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::ProbTree;

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

    /// Slots of the sink (GTaP's mains: 2^20).
    pub const SINK_SLOTS: usize = 1 << 20;

    /// The sink's fill before a run: a NaN pattern no node value has.
    const UNWRITTEN: u64 = u64::MAX;

    /// The B-ary tree with GTaP's inputs (label `probtree<depth>_thread`).
    ///
    /// Check (as GTaP's baseline): each sink slot must hold the value of one of the nodes that
    /// hash to it, or the fill pattern if none does. The host enumerates the tree once and keeps,
    /// per slot, the values of the nodes hashing there.
    pub struct ProbTree {
        depth: i32,
        b: i32,
        mem_ops: i32,
        compute_iters: i32,
        input: Vec<f64>,
        /// `slot_values[slot_start[s]..slot_start[s + 1]]`: the values (bits) slot `s` may hold.
        slot_start: Vec<usize>,
        slot_values: Vec<u64>,
    }

    impl ProbTree {
        /// The tree of `depth` with `b` candidate children per node and `mem_ops` / `compute_iters`
        /// per node (GTaP: 34, 3, 256, 256). The sequential peer supports `b` up to 8.
        pub fn new(depth: i32, b: i32, mem_ops: i32, compute_iters: i32) -> Self {
            let (input, _indices) = tree_inputs();
            let mut nodes = Vec::new();
            let mut stack = std::vec![(0u32, depth)];
            while let Some((node, rem_h)) = stack.pop() {
                nodes.push(node);
                if rem_h > 0 {
                    for_each_child(node, rem_h, depth, b, |child| {
                        stack.push((child, rem_h - 1))
                    });
                }
            }
            let slot_of = |node: u32| (hash32(node) as usize) & (SINK_SLOTS - 1);
            let mut keyed: Vec<(u32, u64)> = nodes
                .par_iter()
                .map(|&node| {
                    let v = do_memory_and_compute(&input[..], node, mem_ops, compute_iters);
                    (slot_of(node) as u32, v.to_bits())
                })
                .collect();
            keyed.par_sort_unstable();
            let mut slot_start = std::vec![0usize; SINK_SLOTS + 1];
            for &(slot, _) in &keyed {
                slot_start[slot as usize + 1] += 1;
            }
            for s in 0..SINK_SLOTS {
                slot_start[s + 1] += slot_start[s];
            }
            let slot_values = keyed.into_iter().map(|(_, v)| v).collect();
            Self {
                depth,
                b,
                mem_ops,
                compute_iters,
                input,
                slot_start,
                slot_values,
            }
        }

        /// Nodes in the tree.
        pub fn nodes(&self) -> usize {
            self.slot_values.len()
        }

        fn verify(&self, sink: impl IntoIterator<Item = u64>) -> Result<(), String> {
            let mut bad = 0usize;
            for (s, got) in sink.into_iter().enumerate() {
                let allowed = &self.slot_values[self.slot_start[s]..self.slot_start[s + 1]];
                let ok = if allowed.is_empty() {
                    got == UNWRITTEN
                } else {
                    allowed.contains(&got)
                };
                bad += usize::from(!ok);
            }
            if bad == 0 {
                Ok(())
            } else {
                Err(format!(
                    "{bad} of {SINK_SLOTS} sink slots hold no value of a node hashing there"
                ))
            }
        }

        fn value(&self, node: u32) -> f64 {
            do_memory_and_compute(&self.input[..], node, self.mem_ops, self.compute_iters)
        }

        /// The sequential peer: GTaP's recursion on one thread.
        fn visit_seq(&self, node: u32, rem_h: i32, sink: &mut [u64]) {
            if rem_h > 0 {
                let mut children = [0u32; MAX_B];
                let mut count = 0;
                for_each_child(node, rem_h, self.depth, self.b, |c| {
                    children[count] = c;
                    count += 1;
                });
                for &c in &children[..count] {
                    self.visit_seq(c, rem_h - 1, sink);
                }
            }
            sink[(hash32(node) as usize) & (SINK_SLOTS - 1)] = self.value(node).to_bits();
        }

        /// The rayon peer: the children in a rayon scope.
        fn visit_rayon(&self, node: u32, rem_h: i32, sink: &[AtomicU64]) {
            if rem_h > 0 {
                rayon::scope(|scope| {
                    for_each_child(node, rem_h, self.depth, self.b, |c| {
                        scope.spawn(move |_| self.visit_rayon(c, rem_h - 1, sink));
                    });
                });
            }
            sink[(hash32(node) as usize) & (SINK_SLOTS - 1)]
                .store(self.value(node).to_bits(), Ordering::Relaxed);
        }
    }

    /// Most candidate children the host peers support.
    const MAX_B: usize = 8;

    impl Workload for ProbTree {
        fn label(&self) -> String {
            format!("probtree{}_thread", self.depth)
        }
        fn config(&self) -> gtap_host::Config {
            gtap_host::Config::new()
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            let err = |e: gtap_host::Error| e.to_string();
            let input = rt.upload(&self.input).map_err(err)?;
            let mut sink = rt.alloc_filled(SINK_SLOTS, UNWRITTEN).map_err(err)?;
            let launch = rt
                .launch(
                    probtree_kernel,
                    (
                        self.depth,
                        self.b,
                        self.mem_ops,
                        self.compute_iters,
                        input.slice(),
                        sink.slice_mut(),
                    ),
                )
                .map_err(err)?;
            let got = rt.download(&sink).map_err(err)?;
            gpu_sample(&launch, self.verify(got))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            let this = &*self;
            let mut sink = std::vec![UNWRITTEN; SINK_SLOTS];
            cpu_sample(
                move || {
                    this.visit_seq(0, this.depth, &mut sink);
                    sink
                },
                |sink| this.verify(sink),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let this = &*self;
            let sink: Vec<AtomicU64> = (0..SINK_SLOTS).map(|_| AtomicU64::new(UNWRITTEN)).collect();
            cpu_sample(
                move || {
                    this.visit_rayon(0, this.depth, &sink);
                    sink
                },
                |sink| this.verify(sink.iter().map(|v| v.load(Ordering::Relaxed))),
            )
        }
    }
}
