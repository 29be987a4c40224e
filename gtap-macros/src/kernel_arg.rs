//! `#[derive(gtap::KernelArg)]`: a user struct as a kernel parameter.
//!
//! A kernel argument is copied byte for byte from the host to the GPU, so the struct must be
//! laid out alike on `x86_64` and `nvptx64`: `#[repr(C)]` (Rust's default layout may differ
//! between targets) of fields that are kernel arguments themselves (integers, floats, bools,
//! views, other derived structs), with no lifetimes or type parameters (a kernel is one PTX
//! entry with one layout). The derive checks all of that and then implements the `unsafe`
//! trait, so users write no `unsafe`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::diagnostics::{Diagnostics, with_help};

/// Expands `#[derive(KernelArg)]`.
pub(crate) fn derive(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut diags = Diagnostics::new();
    let fields = match &input.data {
        Data::Struct(s) => Some(&s.fields),
        Data::Enum(e) => {
            diags.spanned(
                e.enum_token,
                with_help(
                    "`KernelArg` can only be derived for a struct",
                    "pass the discriminant as an integer, or wrap the data in a `#[repr(C)]` struct",
                ),
            );
            None
        }
        Data::Union(u) => {
            diags.spanned(
                u.union_token,
                "`KernelArg` can only be derived for a struct",
            );
            None
        }
    };
    if !has_c_layout(&input) {
        diags.spanned(
            &input.ident,
            with_help(
                "a kernel argument struct needs `#[repr(C)]`: the host and the GPU must lay it \
                 out alike",
                "add `#[repr(C)]` above the struct",
            ),
        );
    }
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        diags.spanned(
            &input.generics,
            with_help(
                "a kernel argument struct cannot be generic or borrow",
                "write one struct per type, with `'static` fields",
            ),
        );
    }
    if diags.has_errors() {
        return diags.to_compile_errors();
    }
    let name = &input.ident;
    let checks = fields.into_iter().flat_map(Fields::iter).map(|f| {
        let ty = &f.ty;
        quote_spanned!(ty.span()=> __gtap_is_kernel_arg::<#ty>();)
    });
    quote! {
        // SAFETY: `#[repr(C)]`, not generic, and every field is a `KernelArg` (checked below),
        // so the struct is plain data laid out alike on the host and the GPU; `Copy + 'static`
        // are `KernelArg`'s supertraits.
        unsafe impl ::gtap::KernelArg for #name {}

        const _: () = {
            fn __gtap_is_kernel_arg<T: ::gtap::KernelArg>() {}
            #[allow(dead_code)]
            fn __gtap_fields_are_kernel_args() {
                #(#checks)*
            }
        };
    }
}

/// Whether the item has `#[repr(C)]` or `#[repr(transparent)]`.
fn has_c_layout(input: &DeriveInput) -> bool {
    input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("repr"))
        .any(|a| {
            let mut c = false;
            let _ = a.parse_nested_meta(|m| {
                c |= m.path.is_ident("C") || m.path.is_ident("transparent");
                if m.input.peek(syn::token::Paren) {
                    let _ = m.input.parse::<proc_macro2::Group>();
                }
                Ok(())
            });
            c
        })
}
