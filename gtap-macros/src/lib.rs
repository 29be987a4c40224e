//! Procedural macros of gtap (placeholder until the lowering lands).

use proc_macro::TokenStream;

/// Marks a task function.
#[proc_macro_attribute]
pub fn function(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Marks a kernel.
#[proc_macro_attribute]
pub fn kernel(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Spawns a child task.
#[proc_macro]
pub fn task(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Waits for children.
#[proc_macro]
pub fn taskwait(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Creates the root task.
#[proc_macro]
pub fn entry(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
