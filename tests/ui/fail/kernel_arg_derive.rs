//! `#[derive(gtap::KernelArg)]` accepts only `#[repr(C)]`, non-generic structs whose fields
//! are kernel arguments.

#[derive(Clone, Copy, gtap::KernelArg)]
struct NoRepr {
    a: u32,
}

#[derive(Clone, Copy, gtap::KernelArg)]
#[repr(C)]
struct BadField {
    a: u32,
    name: &'static str,
    pointer: *const u8,
}

#[derive(Clone, Copy, gtap::KernelArg)]
#[repr(C)]
struct Generic<T> {
    a: T,
}

#[derive(Clone, Copy, gtap::KernelArg)]
#[repr(C)]
enum Choice {
    A,
    B,
}

#[derive(gtap::KernelArg)]
#[repr(C)]
struct NotCopy {
    a: u32,
}

fn main() {}
