//! Device memory and the pinned error record, released on drop.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, result};
use gtap_device::abi::ErrorReport;

use crate::error::{Error, Result};

/// A device allocation, freed on drop.
pub(crate) struct DeviceMemory {
    pub(crate) ptr: CUdeviceptr,
    pub(crate) bytes: usize,
    ctx: Arc<CudaContext>,
}

impl DeviceMemory {
    pub(crate) fn alloc(ctx: &Arc<CudaContext>, bytes: usize) -> Result<Self> {
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        // SAFETY: plain allocation; the result is owned by the returned value.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }
            .map_err(Error::driver("allocating device memory"))?;
        Ok(Self {
            ptr,
            bytes,
            ctx: ctx.clone(),
        })
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from `malloc_sync` and is freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

/// The error record: pinned host memory that the device writes directly.
pub(crate) struct PinnedRecord {
    host: *mut ErrorReport,
    pub(crate) device: CUdeviceptr,
    ctx: Arc<CudaContext>,
}

impl PinnedRecord {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let bytes = std::mem::size_of::<ErrorReport>();
        // SAFETY: allocates pinned, device-mapped host memory owned by the returned value.
        let host = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(Error::driver("allocating the error record"))?
            as *mut ErrorReport;
        let mut device: CUdeviceptr = 0;
        // SAFETY: `host` was allocated with DEVICEMAP just above.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host as *mut c_void, 0) }
            .result()
            .map_err(Error::driver("mapping the error record"))?;
        let rec = Self {
            host,
            device,
            ctx: ctx.clone(),
        };
        rec.clear();
        Ok(rec)
    }

    pub(crate) fn clear(&self) {
        // SAFETY: the record is valid host memory; no kernel runs while the host writes it.
        unsafe { self.host.write_volatile(ErrorReport::EMPTY) };
    }

    pub(crate) fn read(&self) -> ErrorReport {
        // SAFETY: as above; the kernel that wrote it has completed (or faulted).
        unsafe { self.host.read_volatile() }
    }
}

impl Drop for PinnedRecord {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `malloc_host`, freed once.
            let _ = unsafe { result::free_host(self.host as *mut c_void) };
        }
    }
}
