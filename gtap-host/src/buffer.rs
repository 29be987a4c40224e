//! Device buffers for kernel arguments: uploaded from host data, viewed by tasks through
//! `gtap::Slice`/`gtap::SliceMut`, downloaded after a launch.

use std::marker::PhantomData;

use gtap_device::{Slice, SliceMut};

use cudarc::driver::CudaSlice;
use cudarc::driver::sys::CUdeviceptr;

use crate::gpu::{Raw, UntilPoisoned};

pub(crate) enum Storage<T: Copy> {
    /// Device memory made on the runtime's stream, and its address (read once, so that taking
    /// a view never calls the driver, not even for a buffer of a poisoned GPU).
    Gpu {
        memory: UntilPoisoned<CudaSlice<Raw<T>>>,
        ptr: CUdeviceptr,
    },
    Cpu(Vec<T>),
}

/// `len` values of `T` in the runtime's memory (device memory on the GPU, host memory on the
/// CPU executor). Create one with [`Runtime::upload`](crate::Runtime::upload) or
/// [`Runtime::alloc_filled`](crate::Runtime::alloc_filled); pass [`Buffer::slice`] or
/// [`Buffer::slice_mut`] to a kernel; read it back with
/// [`Runtime::download`](crate::Runtime::download). The views carry no lifetime: keep the
/// buffer alive until the launch that uses them has returned.
///
/// On the GPU a buffer is allocated, filled, read back and freed in the order of its runtime's
/// stream, so pass its views only to launches of the runtime that made it. After a kernel
/// fault, which the CUDA driver never recovers from in the same process, GPU buffers are
/// unusable ([`Runtime::download`](crate::Runtime::download) fails with
/// [`Error::ContextLost`](crate::Error::ContextLost)) and dropping them calls no driver.
pub struct Buffer<T: Copy> {
    pub(crate) owner: u64,
    pub(crate) storage: Storage<T>,
    pub(crate) len: usize,
    pub(crate) _t: PhantomData<T>,
}

impl<T: Copy + 'static> Buffer<T> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A read-only view for kernels.
    pub fn slice(&self) -> Slice<T> {
        let ptr = match &self.storage {
            Storage::Gpu { ptr, .. } => *ptr as *const T,
            Storage::Cpu(v) => v.as_ptr(),
        };
        // SAFETY: `ptr` addresses `len` initialised values owned by this buffer.
        unsafe { Slice::from_raw_parts(ptr, self.len) }
    }

    /// A writable view for kernels.
    pub fn slice_mut(&mut self) -> SliceMut<T> {
        let ptr = match &mut self.storage {
            Storage::Gpu { ptr, .. } => *ptr as *mut T,
            Storage::Cpu(v) => v.as_mut_ptr(),
        };
        // SAFETY: `ptr` addresses `len` initialised values owned by this buffer.
        unsafe { SliceMut::from_raw_parts(ptr, self.len) }
    }
}
