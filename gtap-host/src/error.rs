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
    /// The kernel itself faulted (illegal address, trap, stack overflow, ...), which kills its
    /// CUDA context: this runtime and its buffers cannot be used any more.
    #[error(
        "the kernel faulted ({source}), which kills its CUDA context. Likely causes: a stack overflow in recursive or large-frame code (each GPU thread has {stack_bytes} bytes of stack: raise Config::stack_bytes), an out-of-bounds access through a raw pointer, or a trap; `compute-sanitizer` names the faulting function.{} {after}",
        .record.as_ref().map(|r| format!(" Recorded before the fault: {r}.")).unwrap_or_default()
    )]
    KernelFault {
        /// The driver's error.
        source: DriverError,
        /// A device error recorded before the fault, if any.
        record: Option<Box<DeviceError>>,
        /// The per-thread stack the kernel ran with.
        stack_bytes: u32,
        /// Whether the GPU was made usable again.
        after: AfterFault,
    },
    /// An earlier kernel fault killed the context this runtime or buffer belongs to.
    #[error(
        "an earlier kernel fault killed the CUDA context of this runtime or buffer; create a new Runtime and upload its buffers again"
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

/// What became of the GPU after a kernel fault killed the runtime's CUDA context.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AfterFault {
    /// gtap reset the device's primary context: a new [`Runtime`](crate::Runtime) works.
    #[error(
        "gtap reset the GPU: this runtime and its buffers are unusable, create a new Runtime to continue."
    )]
    Reset,
    /// The runtime ran on an application's stream (`Runtime::gpu_on_stream`), whose context
    /// gtap does not reset.
    #[error(
        "The context is the one of the stream passed to Runtime::gpu_on_stream, which gtap does not reset: drop every object of it (streams, buffers, modules), then reset the device (cuDevicePrimaryCtxReset) before using the GPU again."
    )]
    ApplicationContext,
    /// Resetting the device failed as well.
    #[error("Resetting the GPU failed as well ({0}); restart the process to use the GPU again.")]
    ResetFailed(String),
}

impl Error {
    pub(crate) fn driver(during: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver { during, source }
    }
}

/// Result of a runtime operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::sys::cudaError_enum;

    #[test]
    fn after_a_fault_the_message_says_what_to_do() {
        let reset = AfterFault::Reset.to_string();
        assert!(reset.contains("create a new Runtime"), "{reset}");
        let app = AfterFault::ApplicationContext.to_string();
        assert!(app.contains("gpu_on_stream"), "{app}");
        assert!(app.contains("cuDevicePrimaryCtxReset"), "{app}");
    }

    #[test]
    fn a_fault_names_the_causes_and_the_stack_setting() {
        // A driver error's text comes from the driver library itself.
        // SAFETY: only probes whether the shared library loads.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: formatting a driver error needs the CUDA driver library");
            return;
        }
        let message = Error::KernelFault {
            source: DriverError(cudaError_enum::CUDA_ERROR_ILLEGAL_ADDRESS),
            record: None,
            stack_bytes: 1024,
            after: AfterFault::Reset,
        }
        .to_string();
        assert!(message.contains("stack overflow"), "{message}");
        assert!(message.contains("1024 bytes of stack"), "{message}");
        assert!(message.contains("raise Config::stack_bytes"), "{message}");
        assert!(
            message.ends_with(&AfterFault::Reset.to_string()),
            "{message}"
        );
    }
}
