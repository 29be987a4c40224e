//! A self-test kernel built into every device module, for first light on a new machine: each
//! thread writes a value derived from its global index and lane, and counts itself with an
//! acquire-release atomic from [`crate::arch`]. The host checks both
//! ([`crate::abi::probe_value`]).
//!
//! The kernel exists only on the GPU: on the host this module is empty, so it has no unit
//! tests. The value it writes is tested with [`crate::abi`]; the kernel itself is checked on a
//! GPU by `gtap_host::Runtime::self_test`, which the GPU tests run.

/// `out[gid] = abi::probe_value(gid) + lane` for `gid < n`; every thread adds 1 to `*counter`.
///
/// # Safety
/// `out` holds `n` `u32`s and `counter` one, both in device memory.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gtap_probe(out: *mut u32, counter: *mut u32, n: u32) {
    use core::sync::atomic::Ordering;
    let block = crate::arch::block_index();
    // SAFETY: reads a special register.
    let ntid = unsafe { core::arch::nvptx::_block_dim_x() } as u32;
    let gid = block * ntid + crate::arch::thread_index();
    if gid < n {
        // SAFETY: `gid < n` and `out` holds `n` values.
        unsafe {
            out.add(gid as usize)
                .write(crate::abi::probe_value(gid).wrapping_add(crate::arch::lane_index()))
        };
    }
    // SAFETY: `counter` points to a u32 in device memory, which `AtomicU32` wraps transparently.
    let c = unsafe { &*(counter as *const crate::arch::AtomicU32) };
    c.fetch_add(1, Ordering::AcqRel);
}
