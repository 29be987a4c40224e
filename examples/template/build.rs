//! Builds this crate's kernels for the GPU and embeds them (`gtap::device_code!()`).

fn main() {
    gtap_builder::Builder::new().build_or_exit();
}
