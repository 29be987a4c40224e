//! Random task trees for the stress test (`tests/stress.rs`). A tree is a pure function of its
//! root's seed and a shape: each node derives from its seed how many children it spawns (up to
//! [`MAX_FANOUT`]), on which queues, how deep each goes, whether it waits once or twice and on
//! which queues it resumes, and whether it spawns a detached child after its last wait (which
//! the implicit wait at return joins). The same tree is computed three times with different
//! result types (`u64`, `(u32, u64)`, `u16`), and by [`reference()`] sequentially.

use gtap::SliceMut;

/// Most children of one node.
pub const MAX_FANOUT: usize = 6;

/// A tree's shape, packed into one kernel argument: `fanout | queues << 8`.
pub const fn shape(fanout: u32, queues: u32) -> u32 {
    fanout | queues << 8
}

/// splitmix64: a node's randomness from its seed.
pub const fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What one node does, derived from its seed.
#[derive(Clone, Copy)]
pub struct Node {
    hash: u64,
    depth: u32,
    queues: u32,
    /// Children spawned.
    pub kids: u32,
    /// Children spawned before the first wait (the rest before the second).
    pub split: u32,
    /// Whether a detached child is spawned after the last wait.
    pub detached: bool,
}

/// One child of a node.
#[derive(Clone, Copy)]
pub struct Child {
    /// Its seed.
    pub seed: u64,
    /// Its depth budget.
    pub depth: u32,
    /// The queue it is spawned on.
    pub queue: u32,
}

impl Node {
    /// The node of `seed` with `depth` levels left below it, in a tree of `shape`.
    pub const fn new(seed: u64, depth: u32, shape: u32) -> Self {
        let hash = mix(seed);
        let fanout = shape & 0xff;
        let queues = shape >> 8;
        let kids = if depth == 0 {
            0
        } else {
            (hash % (fanout as u64 + 1)) as u32
        };
        Self {
            hash,
            depth,
            queues,
            kids,
            split: ((hash >> 8) % (kids as u64 + 1)) as u32,
            detached: depth > 0 && (hash >> 16) & 3 == 0,
        }
    }

    /// Child `i`: its own seed, a depth one or two levels less, a queue.
    pub const fn child(&self, i: u32) -> Child {
        let seed = mix(self.hash ^ (i as u64 + 1).wrapping_mul(0xd6e8_feb8_6659_fd93));
        let skip = ((self.hash >> (20 + i)) & 1) as u32;
        Child {
            seed,
            depth: (self.depth - 1).saturating_sub(skip),
            queue: (mix(seed) % self.queues as u64) as u32,
        }
    }

    /// The queue the node resumes on after wait `k` (0 or 1).
    pub const fn resume_queue(&self, k: u32) -> u32 {
        ((self.hash >> (32 + 4 * k)) % self.queues as u64) as u32
    }

    /// The queue of the detached child.
    pub const fn detached_queue(&self) -> u32 {
        ((self.hash >> 48) % self.queues as u64) as u32
    }

    /// The node's own value.
    pub const fn value(&self) -> u64 {
        self.hash >> 40
    }

    /// Folds the children's results into the node's, in child order (a result landing in the
    /// wrong place changes it).
    pub fn combine(&self, results: &[u64]) -> u64 {
        results
            .iter()
            .enumerate()
            .fold(self.value(), |acc, (i, &r)| {
                acc.rotate_left(7) ^ r.wrapping_add(i as u64)
            })
    }
}

/// A detached child: counts itself in `counter[0]`.
#[gtap::function]
pub fn ping(counter: SliceMut<u64>) {
    counter.atomic_add(0, 1);
}

/// The tree of `seed`, results as `u64`.
#[gtap::function]
pub fn tree_u64(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> u64 {
    let node = Node::new(seed, depth, shape);
    let mut r = [0u64; MAX_FANOUT];
    let mut i = 0;
    while i < node.split {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_u64(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(0)));
    while i < node.kids {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_u64(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(1)));
    if node.detached {
        gtap::task!(queue(node.detached_queue()), ping(counter));
    }
    node.combine(&r[..node.kids as usize])
}

/// The tree of `seed`, results as (nodes, checksum).
#[gtap::function]
pub fn tree_pair(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> (u32, u64) {
    let node = Node::new(seed, depth, shape);
    let mut r = [(0u32, 0u64); MAX_FANOUT];
    let mut i = 0;
    while i < node.split {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_pair(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(0)));
    while i < node.kids {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_pair(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(1)));
    if node.detached {
        gtap::task!(queue(node.detached_queue()), ping(counter));
    }
    let mut sums = [0u64; MAX_FANOUT];
    let mut nodes = 1;
    for (k, &(n, s)) in r[..node.kids as usize].iter().enumerate() {
        nodes += n;
        sums[k] = s;
    }
    (nodes, node.combine(&sums[..node.kids as usize]))
}

/// The tree of `seed`, results folded to `u16` (sub-word writes into the parent's record).
#[gtap::function]
pub fn tree_u16(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> u16 {
    let node = Node::new(seed, depth, shape);
    let mut r = [0u16; MAX_FANOUT];
    let mut i = 0;
    while i < node.split {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_u16(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(0)));
    while i < node.kids {
        let c = node.child(i);
        gtap::task!(
            queue(c.queue),
            r[i as usize] = tree_u16(c.seed, c.depth, shape, counter)
        );
        i += 1;
    }
    gtap::taskwait!(queue(node.resume_queue(1)));
    if node.detached {
        gtap::task!(queue(node.detached_queue()), ping(counter));
    }
    let mut wide = [0u64; MAX_FANOUT];
    for (k, &v) in r[..node.kids as usize].iter().enumerate() {
        wide[k] = v as u64;
    }
    fold16(node.combine(&wide[..node.kids as usize]))
}

/// A `u64` folded to 16 bits.
pub const fn fold16(x: u64) -> u16 {
    (x ^ (x >> 16) ^ (x >> 32) ^ (x >> 48)) as u16
}

/// Root of [`tree_u64`].
#[gtap::kernel]
pub fn tree_u64_kernel(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> u64 {
    gtap::entry!(tree_u64(seed, depth, shape, counter))
}

/// Root of [`tree_u64`], compiled for runtimes of one queue (`queues = 1`).
#[gtap::kernel(queues = 1)]
pub fn tree_u64_one_queue_kernel(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> u64 {
    gtap::entry!(tree_u64(seed, depth, shape, counter))
}

/// Root of [`tree_u64`], compiled for runtimes of three queues (`queues = 3`).
#[gtap::kernel(queues = 3)]
pub fn tree_u64_three_queues_kernel(
    seed: u64,
    depth: u32,
    shape: u32,
    counter: SliceMut<u64>,
) -> u64 {
    gtap::entry!(tree_u64(seed, depth, shape, counter))
}

/// Root of [`tree_pair`].
#[gtap::kernel]
pub fn tree_pair_kernel(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> (u32, u64) {
    gtap::entry!(tree_pair(seed, depth, shape, counter))
}

/// Root of [`tree_u16`].
#[gtap::kernel]
pub fn tree_u16_kernel(seed: u64, depth: u32, shape: u32, counter: SliceMut<u64>) -> u16 {
    gtap::entry!(tree_u16(seed, depth, shape, counter))
}

/// The sequential result of a tree: (nodes, detached children, checksum as computed by
/// [`tree_u64`] and [`tree_pair`], checksum of [`tree_u16`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Task nodes of the tree (detached children not included).
    pub nodes: u32,
    /// Detached children.
    pub detached: u64,
    /// The `u64` result.
    pub sum: u64,
    /// The `u16` result.
    pub sum16: u16,
}

/// Computes a tree sequentially.
pub fn reference(seed: u64, depth: u32, shape: u32) -> Reference {
    let node = Node::new(seed, depth, shape);
    let mut out = Reference {
        nodes: 1,
        detached: node.detached as u64,
        sum: 0,
        sum16: 0,
    };
    let mut sums = [0u64; MAX_FANOUT];
    let mut sums16 = [0u64; MAX_FANOUT];
    for i in 0..node.kids {
        let c = node.child(i);
        let r = reference(c.seed, c.depth, shape);
        out.nodes += r.nodes;
        out.detached += r.detached;
        sums[i as usize] = r.sum;
        sums16[i as usize] = r.sum16 as u64;
    }
    out.sum = node.combine(&sums[..node.kids as usize]);
    out.sum16 = fold16(node.combine(&sums16[..node.kids as usize]));
    out
}
