//! Binary tree traversal (GTaP's `binary_tree` benchmark): a task per node of a complete binary
//! tree, each doing synthetic work and writing its value into a device buffer.
//!
//! Shows a kernel that takes a `gtap::SliceMut` of a device buffer the host allocated, children
//! that write disjoint elements of it, and the buffer downloaded and compared element by
//! element. The task functions are in `examples/src/tree.rs`.
//!
//! ```sh
//! cargo run --release --example tree [HEIGHT [WORK]]     # default: height 18, work 64
//! ```

mod common;

use std::process::ExitCode;

use gtap_examples::{DEVICE_CODE, tree};
use gtap_host::Config;

fn main() -> ExitCode {
    let height: u32 = common::arg(1, 18);
    let work: u32 = common::arg(2, 64);
    let nodes = (1usize << (height + 1)) - 1;
    let mut want = vec![0u64; nodes];
    let sum = tree::tree_visit_seq(height, work, &mut want);
    let mut rt = common::runtime(&DEVICE_CODE, &Config::new());
    let mut out = rt.alloc_filled(nodes, 0u64).expect("device buffer");
    let got = rt
        .launch(tree::tree_kernel, (height, work, out.slice_mut()))
        .expect("tree launch");
    common::report(&format!("tree of height {height}, {nodes} nodes"), &got);
    let values = rt.download(&out).expect("download");
    common::verdict(got.result == sum && values == want, "tree")
}
