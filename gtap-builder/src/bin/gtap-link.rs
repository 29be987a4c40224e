//! The gtap device linker on its own, for building a device crate by hand:
//!
//! ```text
//! RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 GTAP_DEVICE_BUILD=1 CARGO_ENCODED_RUSTFLAGS=-Ctarget-cpu=sm_90 \
//!   /usr/bin/cargo rustc --release -p <crate> --lib --crate-type cdylib \
//!   --target nvptx64-nvidia-cuda -Zbuild-std=core -- -Clinker=$PWD/target/debug/gtap-link
//! ```
//!
//! rustc calls it with the arguments it would pass to `llvm-bitcode-linker`; see
//! `gtap_builder::run_if_invoked_as_linker`.

fn main() {
    gtap_builder::run_if_invoked_as_linker();
    eprintln!(
        "gtap-link: this is the device linker that rustc runs (`-Clinker=<path of gtap-link>` \
         when building for nvptx64-nvidia-cuda); it was started without rustc's linker arguments"
    );
    std::process::exit(2);
}
