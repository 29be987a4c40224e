//! Builds this crate's kernels to PTX for the GPU and embeds it (see `gtap-builder`).

fn main() {
    gtap_builder::Builder::new().build_or_exit();
}
