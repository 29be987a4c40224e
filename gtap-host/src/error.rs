//! Everything that can go wrong on the host side of a launch.

use cudarc::driver::DriverError;

use crate::config::ConfigError;
use crate::device_error::DeviceError;
use crate::stall::StallReport;

/// A failed runtime operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable GPU (no driver, no device, or the driver refused).
    #[error("no GPU available: {reason}")]
    NoGpu {
        /// Why.
        reason: String,
    },
    /// The program was built without device code.
    #[error("this binary has no device code, so it cannot launch on the GPU: {reason}")]
    NoDeviceCode {
        /// Why the build produced none.
        reason: String,
    },
    /// The configuration is unusable.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A CUDA driver call failed.
    #[error("CUDA driver call failed while {during}: {source}")]
    Driver {
        /// What the runtime was doing.
        during: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// The driver rejected the PTX.
    #[error(
        "the GPU driver could not load the device code: {log}; rebuild for an older architecture (GTAP_ARCH=sm_70) or update the driver"
    )]
    ModuleLoad {
        /// The driver's error and its JIT log.
        log: String,
    },
    /// A block-mode kernel was launched on a runtime of another block size.
    #[error(
        "kernel `{kernel}` is a block-mode kernel of {kernel_block} threads per block (`#[gtap::kernel(block = {kernel_block})]`), but this runtime's blocks have {runtime_block} threads; create the runtime with `Config::new().block_mode().block_size({kernel_block})`, or change the kernel's `block = ..`"
    )]
    BlockSizeMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// Its compile-time block size.
        kernel_block: u32,
        /// The runtime's block size.
        runtime_block: u32,
    },
    /// A kernel compiled for a queue count (`#[gtap::kernel(queues = N)]`) was launched on a
    /// runtime with another.
    #[error(
        "kernel `{kernel}` is compiled for {kernel_queues} queue(s) per worker (`#[gtap::kernel(queues = {kernel_queues})]`), but this runtime has {runtime_queues}; create the runtime with `Config::new().num_queues({kernel_queues})`, or change or remove the kernel's `queues = ..`"
    )]
    QueueCountMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// Its compile-time queue count.
        kernel_queues: u32,
        /// The runtime's queue count.
        runtime_queues: u32,
    },
    /// A block-mode kernel was launched on a runtime not sized for block-mode tasks.
    #[error(
        "kernel `{kernel}` is a block-mode kernel, but this runtime was not configured for block mode, so its task slots are too small for block-mode records; create it with `Config::new().block_mode().block_size({kernel_block})`"
    )]
    NotBlockMode {
        /// The kernel's name.
        kernel: &'static str,
        /// Its compile-time block size.
        kernel_block: u32,
    },
    /// The kernel is not in the device code.
    #[error(
        "kernel `{name}` is not in the device code; it must be a #[gtap::kernel] in the crate whose DEVICE_CODE is passed to the runtime"
    )]
    KernelNotFound {
        /// The kernel's name.
        name: &'static str,
    },
    /// A device failure stopped the launch (pool exhausted, bad queue index,
    /// panic in user code, ...).
    #[error("{0}")]
    Device(Box<DeviceError>),
    /// The launch made no progress: the watchdog ([`Config::watchdog`](crate::Config::watchdog))
    /// stopped it, or the deterministic CPU executor found nothing to run before the root
    /// finished. The report lists what every warp was doing. When
    /// [`StallReport::stopped`] is `true` the runtime stays usable; otherwise a task is still
    /// running on the GPU and only ending the process stops it.
    #[error("{0}")]
    Stalled(Box<StallReport>),
    /// A task of a launch that the watchdog stopped never returned, so that launch's kernel
    /// still runs and this runtime cannot launch again.
    #[error(
        "a task of an earlier launch never returned after the watchdog stopped it, so its kernel still runs on the GPU: this runtime cannot launch again, and only ending the process stops that kernel (make waiting loops check gtap::thread::stop_requested())"
    )]
    KernelStillRunning,
    /// The kernel faulted (illegal address, trap, stack overflow, ...). The CUDA driver makes
    /// the GPU unusable for the rest of the process after such a fault: this runtime, its
    /// buffers and every other GPU runtime of the process answer [`Error::ContextLost`], and
    /// [`Runtime::gpu`](crate::Runtime::gpu) fails with [`Error::GpuPoisoned`].
    #[error(
        "kernel `{kernel}` faulted on the GPU ({}). Likely causes: a stack overflow in recursive or large-frame code (each GPU thread has {stack_bytes} bytes of stack, set by Config::stack_bytes: raise it), an out-of-bounds access through a raw pointer, or a trap; `compute-sanitizer` names the faulting function.{} {POISONED_ADVICE}",
        crate::gpu::describe(source),
        .record.as_ref().map(|r| format!(" Recorded before the fault: {r}.")).unwrap_or_default()
    )]
    KernelFault {
        /// The kernel that faulted.
        kernel: &'static str,
        /// The driver's error.
        source: DriverError,
        /// A device error recorded before the fault, if any.
        record: Option<Box<DeviceError>>,
        /// The per-thread stack the kernel ran with.
        stack_bytes: u32,
    },
    /// A kernel fault earlier in this process (of gtap or of the application) made the GPU
    /// unusable until the process restarts; nothing was asked of the driver.
    #[error("the GPU is unusable for the rest of this process: {by}. {POISONED_ADVICE}")]
    GpuPoisoned {
        /// What poisoned it: the first fault's summary.
        by: String,
    },
    /// A kernel fault earlier in this process killed the GPU state this runtime or buffer
    /// belongs to.
    #[error(
        "a kernel fault earlier in this process (reported as Error::KernelFault or Error::GpuPoisoned) made the GPU unusable, and this runtime or buffer with it. {POISONED_ADVICE}"
    )]
    ContextLost,
    /// The kernel returns a type too large to copy back.
    #[error(
        "kernel `{name}` returns {bytes} bytes, more than the {max} the runtime copies back; return a smaller value"
    )]
    OutputTooLarge {
        /// The kernel.
        name: &'static str,
        /// Size of its output.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The kernel body itself (outside any task) panicked on the CPU executor.
    #[error("the kernel body panicked on the CPU executor: {message}")]
    HostPanic {
        /// The panic message.
        message: String,
    },
    /// The built-in probe kernel gave a wrong answer: the device, driver or toolchain is broken.
    #[error("the GPU self-test failed: {detail}; check the driver and rebuild the device code")]
    SelfTest {
        /// What was wrong.
        detail: String,
    },
    /// A buffer belongs to another runtime or backend.
    #[error("this buffer belongs to another runtime")]
    ForeignBuffer,
}

/// What a user can do once the GPU is poisoned, shared by the messages of every error that
/// says so.
const POISONED_ADVICE: &str = "The CUDA driver keeps the GPU failing for the rest of a process after a kernel fault (in every context: resetting the device or creating a new context does not help), so restart the process to use the GPU again, or continue on the CPU executor (Runtime::cpu; Runtime::gpu_or_cpu falls back to it)";

impl Error {
    /// Maps a failed driver call made while `during`; a sticky error poisons the GPU (see
    /// `gpu/poison.rs`) and becomes [`Error::GpuPoisoned`].
    pub(crate) fn driver(during: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| crate::gpu::GPU.driver_error(during, source)
    }
}

/// Result of a runtime operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::cudaError_enum;

    #[test]
    fn a_fault_names_the_kernel_the_causes_the_stack_setting_and_the_restart() {
        let message = Error::KernelFault {
            kernel: "subsets_kernel",
            source: DriverError(cudaError_enum::CUDA_ERROR_ILLEGAL_ADDRESS),
            record: None,
            stack_bytes: 1024,
        }
        .to_string();
        for part in [
            "kernel `subsets_kernel` faulted",
            "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access",
            "stack overflow",
            "1024 bytes of stack, set by Config::stack_bytes",
            "restart the process",
            "CPU executor",
        ] {
            assert!(message.contains(part), "{part:?} missing from: {message}");
        }
        assert!(!message.contains("reset the GPU"), "{message}");
    }

    #[test]
    fn a_poisoned_gpu_and_a_lost_context_say_to_restart() {
        let poisoned = Error::GpuPoisoned {
            by: "kernel `k` faulted".into(),
        }
        .to_string();
        assert!(
            poisoned.starts_with(
                "the GPU is unusable for the rest of this process: kernel `k` faulted."
            ),
            "{poisoned}"
        );
        for message in [poisoned, Error::ContextLost.to_string()] {
            assert!(message.contains("restart the process"), "{message}");
            assert!(message.contains("Runtime::gpu_or_cpu"), "{message}");
        }
    }
}
