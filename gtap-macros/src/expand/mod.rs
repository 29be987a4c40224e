//! Expansion: the items `#[gtap::function]` and `#[gtap::kernel]` generate, and what the body
//! macros become. Every path emitted is `::gtap::__private::..` or `::core::..`.

pub(crate) mod function;
pub(crate) mod kernel;
pub(crate) mod lower;
pub(crate) mod record;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::ItemFn;

/// The kernel's `&LaunchParams` variable. One identifier with mixed-site hygiene serves as the
/// parameter and in every lowered `entry!`, so user code cannot see or shadow it.
pub(crate) fn launch_ident() -> Ident {
    Ident::new("__gtap_launch", Span::mixed_site())
}

/// What a method annotated by mistake becomes: its signature with a diverging body, so that
/// the receiver error is the only one and calls of the method still resolve.
pub(crate) fn method_stub(f: &ItemFn) -> TokenStream {
    let mut stub = f.clone();
    stub.block = syn::parse_quote!({ loop {} });
    quote! {
        #[allow(unreachable_code, unused)]
        #stub
    }
}
