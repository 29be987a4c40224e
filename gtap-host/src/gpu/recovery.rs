//! After a fault that kills a CUDA context (illegal address, trap, stack overflow): make the
//! GPU usable again without letting anything of the dead context touch the new one.
//!
//! A context-killing fault is sticky: every later call on that context fails, and since gtap
//! runs on the device's primary context, which every `CudaContext::new` of the process shares,
//! a new `Runtime` would fail too. The faulting runtime therefore drops everything it made on
//! the dead context (the driver refuses those frees, harmlessly: the reset below frees them)
//! and then resets the primary context, through the driver API (cudarc has no reset). A reset invalidates every handle of the old context,
//! and a stale handle handed to the driver afterwards could name an object of the new one (a
//! freed device address is reused). So every cudarc object gtap keeps is wrapped in an
//! [`Epoch`]: made before a reset of its device, it is never used again (`get` fails with
//! [`Error::ContextLost`]) and never dropped (leaked, without calling the driver).

use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::sync::Mutex;

use cudarc::driver::sys;

use crate::error::{Error, Result};

/// Resets so far of each device's primary context, by device ordinal.
static RESETS: Mutex<BTreeMap<usize, u64>> = Mutex::new(BTreeMap::new());

fn resets(device: usize) -> u64 {
    // A poisoned lock only means a panic elsewhere while counting; the count is still right.
    let map = RESETS.lock().unwrap_or_else(|e| e.into_inner());
    map.get(&device).copied().unwrap_or(0)
}

/// A value holding handles of one device's context, made since that context's last reset.
pub(crate) struct Epoch<T> {
    value: ManuallyDrop<T>,
    device: usize,
    resets: u64,
}

impl<T> Epoch<T> {
    /// Wraps `value`, made just now on device `device`.
    pub(crate) fn new(device: usize, value: T) -> Self {
        Self {
            value: ManuallyDrop::new(value),
            device,
            resets: resets(device),
        }
    }

    /// Whether the device's context was reset since the value was made.
    pub(crate) fn is_stale(&self) -> bool {
        resets(self.device) != self.resets
    }

    /// The value, unless its context was reset since it was made.
    pub(crate) fn get(&self) -> Result<&T> {
        if self.is_stale() {
            return Err(Error::ContextLost);
        }
        Ok(&self.value)
    }

    /// The value, mutably, unless its context was reset since it was made.
    pub(crate) fn get_mut(&mut self) -> Result<&mut T> {
        if self.is_stale() {
            return Err(Error::ContextLost);
        }
        Ok(&mut self.value)
    }
}

impl<T> Drop for Epoch<T> {
    fn drop(&mut self) {
        if !self.is_stale() {
            // SAFETY: dropped once, here; `value` is not used afterwards.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

/// Resets the primary context of device `device` (driver handle `cu_device`) after a fault
/// killed it, and marks everything made on it before as stale. The caller must have dropped
/// what it made on the context, and the context must be one gtap made (never one an
/// application owns).
pub(crate) fn reset_primary(device: usize, cu_device: sys::CUdevice) -> Result<()> {
    // Counted first: from here on no `Epoch` of the old context passes a handle to the driver.
    {
        let mut map = RESETS.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(device).or_insert(0) += 1;
    }
    // SAFETY: resets the device's primary context; every gtap object of it is dropped or now
    // stale (never used again), and `CudaContext`'s own release of its reference after the
    // reset is allowed by the driver API.
    unsafe { sys::cuDevicePrimaryCtxReset_v2(cu_device) }
        .result()
        .map_err(Error::driver("resetting the GPU after a fault"))?;
    // The dead context may still be this thread's current one; a new `CudaContext` binds the
    // re-created context from an unbound thread.
    // SAFETY: unbinding (a null context) is always allowed.
    unsafe { sys::cuCtxSetCurrent(std::ptr::null_mut()) }
        .result()
        .map_err(Error::driver("resetting the GPU after a fault"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Device ordinals no real GPU has, so that these tests share no count with GPU runs.
    const TEST_DEVICE: usize = 1 << 20;

    fn bump(device: usize) {
        let mut map = RESETS.lock().unwrap();
        *map.entry(device).or_insert(0) += 1;
    }

    struct CountsDrops<'a>(&'a std::cell::Cell<u32>);
    impl Drop for CountsDrops<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn a_value_of_a_live_context_is_used_and_dropped() {
        let drops = std::cell::Cell::new(0);
        let mut v = Epoch::new(TEST_DEVICE, CountsDrops(&drops));
        assert!(v.get().is_ok());
        assert!(v.get_mut().is_ok());
        drop(v);
        assert_eq!(drops.get(), 1);
    }

    #[test]
    fn a_value_made_before_a_reset_is_neither_used_nor_dropped() {
        let drops = std::cell::Cell::new(0);
        let device = TEST_DEVICE + 1;
        let old = Epoch::new(device, CountsDrops(&drops));
        bump(device);
        assert!(matches!(old.get(), Err(Error::ContextLost)));
        drop(old);
        assert_eq!(drops.get(), 0, "a stale value must not reach the driver");
        // A value made after the reset is live; other devices are unaffected.
        let new = Epoch::new(device, CountsDrops(&drops));
        let other = Epoch::new(TEST_DEVICE + 2, 0u8);
        assert!(new.get().is_ok() && other.get().is_ok());
        drop(new);
        assert_eq!(drops.get(), 1);
    }
}
