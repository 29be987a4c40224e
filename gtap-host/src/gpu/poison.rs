//! After a kernel fault the CUDA driver makes the GPU unusable for the rest of the process;
//! gtap records that once, answers every later request with a typed error, and never hands a
//! handle of the dead GPU state to the driver again.
//!
//! What the driver does (measured on an H200, driver 580.159.04, with a plain driver-API
//! program, after a kernel's illegal-address fault): `cuDevicePrimaryCtxReset` returns success
//! but the next `cuDevicePrimaryCtxRetain` fails with `CUDA_ERROR_ILLEGAL_ADDRESS`; a second
//! context made with `cuCtxCreate` before the fault fails every call afterwards; and after
//! `cuCtxDestroy` of the faulting context, `cuCtxCreate` of a new one fails the same way. There
//! is no in-process recovery, as NVIDIA documents for these errors (see [`STICKY`]).
//!
//! So the first sticky error a driver call returns marks the process-wide [`PoisonState`]:
//! from then on `Runtime::gpu` fails at once with `Error::GpuPoisoned`, and every object gtap
//! keeps on the GPU lives in an [`UntilPoisoned`], which stops using it (`Error::ContextLost`)
//! and leaks it on drop (the driver would refuse the frees anyway).

use std::mem::ManuallyDrop;
use std::sync::OnceLock;

use cudarc::driver::DriverError;
use cudarc::driver::sys::cudaError_enum as Code;

use crate::error::{Error, Result};

/// The driver errors after which the process cannot use CUDA again, with what each means.
///
/// The CUDA Driver API reference (`CUresult`, in "Data types used by CUDA driver") documents
/// each of these, except `CUDA_ERROR_ASSERT`, with: "This leaves the process in an
/// inconsistent state and any further CUDA work will return the same error. To continue using
/// CUDA, the process must be terminated and relaunched." `CUDA_ERROR_ASSERT` (a device-side
/// assert or trap) is documented as "the context cannot be used anymore, and must be
/// destroyed"; since destroying a faulted context did not make a new one work on the driver
/// measured (module docs), gtap treats it as the others.
pub(crate) const STICKY: &[(Code, &str)] = &[
    (Code::CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access"),
    (Code::CUDA_ERROR_LAUNCH_TIMEOUT, "the kernel ran too long"),
    (Code::CUDA_ERROR_ASSERT, "a device-side assert or trap"),
    (
        Code::CUDA_ERROR_HARDWARE_STACK_ERROR,
        "a call-stack error (stack corruption or the stack limit exceeded)",
    ),
    (
        Code::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        "an illegal instruction",
    ),
    (
        Code::CUDA_ERROR_MISALIGNED_ADDRESS,
        "a misaligned memory access",
    ),
    (
        Code::CUDA_ERROR_INVALID_ADDRESS_SPACE,
        "an address outside the address space an instruction accepts",
    ),
    (Code::CUDA_ERROR_INVALID_PC, "an invalid program counter"),
    (
        Code::CUDA_ERROR_LAUNCH_FAILED,
        "an exception while the kernel ran (an invalid pointer, an out-of-bounds access, a trap)",
    ),
    (
        Code::CUDA_ERROR_CONTAINED,
        "an error the GPU's error containment stopped",
    ),
];

/// What a sticky driver error means, or `None` if the error is not one of [`STICKY`].
pub(crate) fn sticky_meaning(error: &DriverError) -> Option<&'static str> {
    STICKY
        .iter()
        .find(|(code, _)| *code == error.0)
        .map(|&(_, meaning)| meaning)
}

/// A driver error as a short text that needs no driver call (cudarc's `Display` asks the
/// driver library for the description): the code's name, and its meaning when it is sticky.
pub(crate) fn describe(error: &DriverError) -> String {
    match sticky_meaning(error) {
        Some(meaning) => format!("{:?}: {meaning}", error.0),
        None => format!("{:?}", error.0),
    }
}

/// Whether the process's GPU state is dead, and what killed it.
pub(crate) struct PoisonState {
    by: OnceLock<String>,
}

impl PoisonState {
    pub(crate) const fn new() -> Self {
        Self {
            by: OnceLock::new(),
        }
    }

    /// Records that `by` (a one-line summary of the fault) made the GPU unusable; the first
    /// record stays. Returns the recorded summary.
    pub(crate) fn mark(&self, by: String) -> &str {
        self.by.get_or_init(|| by)
    }

    /// What poisoned the GPU, if anything did.
    pub(crate) fn by(&self) -> Option<&str> {
        self.by.get().map(String::as_str)
    }

    /// Fails with [`Error::GpuPoisoned`] once the GPU is poisoned.
    pub(crate) fn check(&self) -> Result<()> {
        match self.by() {
            Some(by) => Err(Error::GpuPoisoned { by: by.to_string() }),
            None => Ok(()),
        }
    }

    /// The error for a driver call that failed while `during`: if the code is sticky the GPU
    /// is poisoned from now on and the error is [`Error::GpuPoisoned`], else [`Error::Driver`].
    pub(crate) fn driver_error(&self, during: &'static str, source: DriverError) -> Error {
        if sticky_meaning(&source).is_none() {
            return Error::Driver { during, source };
        }
        let by = self.mark(format!(
            "a CUDA driver call failed while {during} with {} (a kernel of this process faulted earlier)",
            describe(&source)
        ));
        Error::GpuPoisoned { by: by.to_string() }
    }
}

/// The state of this process's GPU.
pub(crate) static GPU: PoisonState = PoisonState::new();

/// A value holding driver handles (memory, streams, modules, events): usable and dropped
/// normally until the GPU is poisoned, then never used nor dropped again (leaked without a
/// driver call: every handle of the process is dead, and the driver refuses their frees).
pub(crate) struct UntilPoisoned<T> {
    value: ManuallyDrop<T>,
    state: &'static PoisonState,
}

impl<T> UntilPoisoned<T> {
    /// Wraps `value`, made just now on the process's GPU.
    pub(crate) fn new(value: T) -> Self {
        Self::in_state(&GPU, value)
    }

    fn in_state(state: &'static PoisonState, value: T) -> Self {
        Self {
            value: ManuallyDrop::new(value),
            state,
        }
    }

    /// The value, unless the GPU is poisoned.
    pub(crate) fn get(&self) -> Result<&T> {
        match self.state.by() {
            Some(_) => Err(Error::ContextLost),
            None => Ok(&self.value),
        }
    }

    /// The value, mutably, unless the GPU is poisoned.
    pub(crate) fn get_mut(&mut self) -> Result<&mut T> {
        match self.state.by() {
            Some(_) => Err(Error::ContextLost),
            None => Ok(&mut self.value),
        }
    }
}

impl<T> Drop for UntilPoisoned<T> {
    fn drop(&mut self) {
        if self.state.by().is_none() {
            // SAFETY: dropped once, here; `value` is not used afterwards.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A state of its own for each test (the process's [`GPU`] is never poisoned here).
    fn fresh() -> &'static PoisonState {
        Box::leak(Box::new(PoisonState::new()))
    }

    struct CountsDrops<'a>(&'a Cell<u32>);
    impl Drop for CountsDrops<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn sticky_codes_are_recognised_and_others_are_not() {
        for &(code, _) in STICKY {
            assert!(sticky_meaning(&DriverError(code)).is_some(), "{code:?}");
        }
        for code in [
            Code::CUDA_ERROR_OUT_OF_MEMORY,
            Code::CUDA_ERROR_INVALID_VALUE,
            Code::CUDA_ERROR_NO_DEVICE,
            Code::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        ] {
            assert!(sticky_meaning(&DriverError(code)).is_none(), "{code:?}");
        }
        let text = describe(&DriverError(Code::CUDA_ERROR_ILLEGAL_ADDRESS));
        assert_eq!(text, "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access");
    }

    #[test]
    fn the_first_poisoning_is_kept_and_checked() {
        let state = fresh();
        assert!(state.check().is_ok());
        assert_eq!(state.mark("first fault".into()), "first fault");
        assert_eq!(state.mark("second fault".into()), "first fault");
        match state.check() {
            Err(Error::GpuPoisoned { by }) => assert_eq!(by, "first fault"),
            other => panic!("expected GpuPoisoned, got {other:?}"),
        }
    }

    #[test]
    fn a_sticky_driver_error_poisons_and_another_does_not() {
        let state = fresh();
        let oom = DriverError(Code::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(matches!(
            state.driver_error("allocating", oom),
            Error::Driver { .. }
        ));
        assert!(state.check().is_ok(), "out of memory is not sticky");
        let fault = DriverError(Code::CUDA_ERROR_LAUNCH_FAILED);
        let Error::GpuPoisoned { by } = state.driver_error("copying back", fault) else {
            panic!("a sticky code poisons")
        };
        assert!(
            by.contains("while copying back with CUDA_ERROR_LAUNCH_FAILED"),
            "{by}"
        );
        assert!(state.check().is_err());
    }

    #[test]
    fn a_value_is_used_and_dropped_until_the_gpu_is_poisoned() {
        let state = fresh();
        let drops = Cell::new(0);
        let mut live = UntilPoisoned::in_state(state, CountsDrops(&drops));
        assert!(live.get().is_ok() && live.get_mut().is_ok());
        drop(live);
        assert_eq!(drops.get(), 1);
        let mut dead = UntilPoisoned::in_state(state, CountsDrops(&drops));
        state.mark("a fault".into());
        assert!(matches!(dead.get(), Err(Error::ContextLost)));
        assert!(matches!(dead.get_mut(), Err(Error::ContextLost)));
        drop(dead);
        assert_eq!(drops.get(), 1, "a dead value must not reach the driver");
    }
}
