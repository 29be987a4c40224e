//! The item under `#[gtap::function]` or `#[gtap::kernel]`.

use proc_macro2::TokenStream;
use syn::{Item, ItemFn};

use crate::diagnostics::{Diagnostics, with_help};

/// Which attribute is being expanded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FnKind {
    /// `#[gtap::function]`.
    Task,
    /// `#[gtap::kernel]`.
    Kernel,
}

impl FnKind {
    /// The attribute as the user writes it.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Self::Task => "#[gtap::function]",
            Self::Kernel => "#[gtap::kernel]",
        }
    }

    /// What the annotated function is called in messages.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Self::Task => "task function",
            Self::Kernel => "kernel",
        }
    }
}

/// Parses the annotated item. Arguments to the attribute are reported; a non-function item is
/// an error and gives `Err` with the original tokens, which the caller emits unchanged.
pub(crate) fn parse_item(
    kind: FnKind,
    attr: TokenStream,
    item: TokenStream,
    diags: &mut Diagnostics,
) -> Result<ItemFn, TokenStream> {
    if !attr.is_empty() {
        diags.spanned(&attr, format!("`{}` takes no arguments", kind.attribute()));
    }
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(f)) => Ok(f),
        Ok(other) => {
            diags.spanned(
                &other,
                with_help(
                    format!("`{}` applies to a free function", kind.attribute()),
                    format!("write `{} fn name(..) {{ .. }}`", kind.attribute()),
                ),
            );
            Err(item)
        }
        Err(e) => {
            diags.push(e);
            Err(item)
        }
    }
}
