#![no_std]
//! Example gtap programs (placeholder).

/// The PTX of this crate's kernels, built by `build.rs` (or why there is none).
#[cfg(not(target_arch = "nvptx64"))]
pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();

// Links gtap's device runtime (panic handler, probe kernel) into the device build.
#[cfg(target_arch = "nvptx64")]
use gtap as _;
