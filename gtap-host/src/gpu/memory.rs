//! Device memory on cudarc's safe layer, stream-ordered, and the error record.
//!
//! Every allocation is a `CudaSlice` made on the runtime's stream: it is allocated, cleared,
//! copied and freed in that stream's order (cudarc uses the driver's stream-ordered allocator
//! where the device has one), so a runtime on an application's stream never races the
//! application's own work on it.
//!
//! The error record is the one piece written by hand: the device writes it into pinned host
//! memory mapped into its address space, so the host can read it even after a fault. cudarc's
//! pinned allocation (`PinnedHostSlice`) takes the mapping flag but gives no device address
//! for the mapped memory, so the record allocates and maps through the driver API itself.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, result};
use gtap_device::abi::ErrorReport;

use crate::error::{Error, Result};

/// One value of a user's buffer as cudarc copies it: any `Copy` type, possibly uninitialised
/// (a download's destination before the copy).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct Raw<T: Copy>(MaybeUninit<T>);

// SAFETY: `Raw<T>` is `Copy` plain data with `T`'s layout; cudarc only copies its bytes
// between host and device, which is how the kernels receive and return `T` values.
unsafe impl<T: Copy> DeviceRepr for Raw<T> {}

/// `bytes` bytes of zeroed device memory, allocated and cleared in `stream`'s order.
pub(crate) fn zeroed(stream: &Arc<CudaStream>, bytes: usize) -> Result<CudaSlice<u8>> {
    stream
        .alloc_zeros::<u8>(bytes.max(1))
        .map_err(Error::driver("allocating device memory"))
}

/// The device address of `memory`, for kernel parameters.
///
/// The launch that uses the address must be enqueued on `stream`, where the memory was made
/// and every copy into it was enqueued: stream order alone puts the launch after them.
pub(crate) fn address<T>(memory: &CudaSlice<T>, stream: &CudaStream) -> CUdeviceptr {
    let (ptr, _recorded) = memory.device_ptr(stream);
    ptr
}

/// A new device copy of `data`, enqueued on `stream`.
pub(crate) fn upload<T: Copy>(stream: &Arc<CudaStream>, data: &[T]) -> Result<CudaSlice<Raw<T>>> {
    // SAFETY: `Raw<T>` is a transparent wrapper of `MaybeUninit<T>`, which has `T`'s layout,
    // so the slice is the same memory read as the same values.
    let raw = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const Raw<T>, data.len()) };
    stream
        .clone_htod(raw)
        .map_err(Error::driver("uploading a buffer"))
}

/// The values of `memory`, copied back in `stream`'s order (after every launch enqueued
/// before), waiting for the copy.
pub(crate) fn download<T: Copy>(
    stream: &Arc<CudaStream>,
    memory: &CudaSlice<Raw<T>>,
) -> Result<Vec<T>> {
    let mut out = vec![Raw(MaybeUninit::<T>::uninit()); memory.len()];
    stream
        .memcpy_dtoh(memory, &mut out)
        .and_then(|()| stream.synchronize())
        .map_err(Error::driver("downloading a buffer"))?;
    // SAFETY: the copy has completed and wrote every value: the device memory holds `T`s
    // (uploaded from valid values, or written by tasks as `T`).
    Ok(out
        .into_iter()
        .map(|v| unsafe { v.0.assume_init() })
        .collect())
}

/// `count` values of `T` at byte `offset` of `memory`, copied back in `stream`'s order (after
/// every launch enqueued before), waiting for the copy.
///
/// `T` must be a plain-data type every bit pattern of which the device may have written there:
/// the kernels' result types and `WarpStats`, read where the device wrote them.
pub(crate) fn read_values<T: Copy>(
    stream: &Arc<CudaStream>,
    memory: &CudaSlice<u8>,
    offset: usize,
    count: usize,
    during: &'static str,
) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let mut bytes = vec![0u8; (count * size).max(1)];
    let view = memory.slice(offset..offset + bytes.len());
    stream
        .memcpy_dtoh(&view, &mut bytes)
        .and_then(|()| stream.synchronize())
        .map_err(Error::driver(during))?;
    Ok((0..count)
        // SAFETY: the copy has completed; value `i` lies in `bytes`, and the device wrote a `T`
        // there (the caller's contract); it is read unaligned because a `Vec<u8>` is byte-aligned.
        .map(|i| unsafe { (bytes.as_ptr().add(i * size) as *const T).read_unaligned() })
        .collect())
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
