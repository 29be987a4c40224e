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

/// The execution mode an attribute declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One task per thread (no argument).
    Thread,
    /// One task per thread block: `#[gtap::function(block)]`, or `#[gtap::kernel(block = N)]`
    /// with the kernel's block size.
    Block {
        /// The kernel's threads per block (`None` for a task function).
        threads: Option<u32>,
    },
}

impl Mode {
    /// Whether this is block mode.
    pub(crate) fn is_block(self) -> bool {
        matches!(self, Mode::Block { .. })
    }
}

/// Parses the attribute's arguments: nothing (thread mode), `block` (a block-mode task
/// function) or `block = N` (a block-mode kernel of `N` threads per block).
fn parse_mode(kind: FnKind, attr: TokenStream, diags: &mut Diagnostics) -> Mode {
    if attr.is_empty() {
        return Mode::Thread;
    }
    let wanted = match kind {
        FnKind::Task => {
            "`#[gtap::function]` takes no argument, or `block` (`#[gtap::function(block)]`) for a block-mode task function"
        }
        FnKind::Kernel => {
            "`#[gtap::kernel]` takes no argument, or `block = N` (`#[gtap::kernel(block = 256)]`) for a block-mode kernel of N threads per block"
        }
    };
    let parsed = syn::parse2::<syn::Meta>(attr.clone());
    match (kind, parsed) {
        (FnKind::Task, Ok(syn::Meta::Path(p))) if p.is_ident("block") => {
            Mode::Block { threads: None }
        }
        (FnKind::Kernel, Ok(syn::Meta::NameValue(nv))) if nv.path.is_ident("block") => {
            let threads = match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n),
                    ..
                }) => n.base10_parse::<u32>().ok(),
                _ => None,
            };
            match threads {
                Some(n) if n > 0 && n % 32 == 0 && n <= 1024 => Mode::Block { threads: Some(n) },
                _ => {
                    diags.spanned(
                        &nv.value,
                        with_help(
                            "the block size of a block-mode kernel must be an integer literal, a multiple of 32 from 32 to 1024",
                            "write e.g. `#[gtap::kernel(block = 256)]`",
                        ),
                    );
                    Mode::Block { threads: Some(32) }
                }
            }
        }
        (_, parsed) => {
            diags.spanned(&attr, wanted);
            // Guess the mode meant, so that the body's macros lower without follow-up errors.
            let meant_block = match parsed {
                Ok(meta) => meta.path().is_ident("block"),
                Err(_) => false,
            };
            if meant_block {
                Mode::Block {
                    threads: (kind == FnKind::Kernel).then_some(32),
                }
            } else {
                Mode::Thread
            }
        }
    }
}

/// Parses the annotated item and the mode its attribute declares. A non-function item is an
/// error and gives `Err` with the original tokens, which the caller emits unchanged.
pub(crate) fn parse_item(
    kind: FnKind,
    attr: TokenStream,
    item: TokenStream,
    diags: &mut Diagnostics,
) -> Result<(ItemFn, Mode), TokenStream> {
    let mode = parse_mode(kind, attr, diags);
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(f)) => Ok((f, mode)),
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
