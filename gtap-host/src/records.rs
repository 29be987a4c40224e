//! Task record sizes, as the compiler produced them: from the build's manifest embedded in the
//! device code for the GPU, from the task functions linked into the program for the CPU
//! executor.

use gtap_device::DeviceCode;

/// Record sizes of every task function of the device code (measured by the builder on the
/// linked crate, before it was split into one module per kernel).
pub(crate) fn device(code: &DeviceCode) -> impl Iterator<Item = (&'static str, u32)> {
    code.records().iter().copied()
}

/// Record sizes of every task function linked into this program (for the CPU executor).
pub(crate) fn host() -> impl Iterator<Item = (&'static str, u32)> {
    gtap_device::cpu::task_records()
}
