//! The item under `#[gtap::function]` or `#[gtap::kernel]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Item, ItemFn, Token};

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

/// What an attribute's arguments declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attr {
    /// The execution mode.
    pub(crate) mode: Mode,
    /// A kernel's `max_registers = R`: the most registers per thread its code may use.
    pub(crate) max_registers: Option<u32>,
    /// A kernel's `no_taskwait`: none of its tasks waits, so each finishes when it returns and
    /// the launch when no task is left.
    pub(crate) no_taskwait: bool,
    /// A kernel's `queues = N`: the queue count its schedulers are compiled for.
    pub(crate) queues: Option<u32>,
    /// A kernel's `max_blocks_per_sm = N`: the most blocks a multiprocessor its launches use.
    pub(crate) max_blocks_per_sm: Option<u32>,
}

/// The fewest and the most registers per thread `max_registers` accepts (PTX's `.maxnreg`;
/// the hardware's maximum is 255).
const REGISTERS: core::ops::RangeInclusive<u32> = 16..=255;

/// The queue counts `queues = N` accepts: those a runtime can be configured with
/// (`gtap_device::abi::MAX_QUEUES`; `entry!` asserts the same bound at compile time).
const QUEUES: core::ops::RangeInclusive<u32> = 1..=16;

/// The blocks a multiprocessor `max_blocks_per_sm = N` accepts (32 is the most any
/// architecture gtap builds for keeps resident).
const BLOCKS_PER_SM: core::ops::RangeInclusive<u32> = 1..=32;

/// Parses the attribute's arguments: nothing (thread mode), `block` (a block-mode task
/// function); for a kernel, `block = N` (a block-mode kernel of `N` threads per block),
/// `max_registers = R`, `max_blocks_per_sm = N`, `queues = N` and `no_taskwait`, in any order.
fn parse_attr(kind: FnKind, attr: TokenStream, diags: &mut Diagnostics) -> Attr {
    let mut out = Attr {
        mode: Mode::Thread,
        max_registers: None,
        no_taskwait: false,
        queues: None,
        max_blocks_per_sm: None,
    };
    if attr.is_empty() {
        return out;
    }
    let wanted = match kind {
        FnKind::Task => {
            "`#[gtap::function]` takes no argument, or `block` (`#[gtap::function(block)]`) for a block-mode task function"
        }
        FnKind::Kernel => {
            "`#[gtap::kernel]` takes no argument, `block = N` (`#[gtap::kernel(block = 256)]`) for a block-mode kernel of N threads per block, `max_registers = R` to cap its registers per thread, `max_blocks_per_sm = N` to cap the blocks a multiprocessor its launches use, `queues = N` to compile it for N queues per worker, or `no_taskwait` when none of its tasks waits"
        }
    };
    let metas = match Punctuated::<syn::Meta, Token![,]>::parse_terminated.parse2(attr.clone()) {
        Ok(metas) => metas,
        Err(_) => {
            diags.spanned(&attr, wanted);
            return out;
        }
    };
    if kind == FnKind::Task && metas.len() > 1 {
        diags.spanned(&attr, wanted);
    }
    let mut seen: Vec<String> = Vec::new();
    for meta in &metas {
        let name = meta.path().get_ident().map(ToString::to_string);
        if let Some(n) = &name {
            if seen.contains(n) {
                diags.spanned(meta, format!("`{n}` is given twice"));
                continue;
            }
            seen.push(n.clone());
        }
        match (kind, meta, name.as_deref()) {
            (FnKind::Task, syn::Meta::Path(_), Some("block")) => {
                out.mode = Mode::Block { threads: None };
            }
            (FnKind::Kernel, syn::Meta::NameValue(nv), Some("block")) => {
                let threads = int_literal(&nv.value)
                    .filter(|&n| n > 0 && n % 32 == 0 && n <= 1024)
                    .unwrap_or_else(|| {
                        diags.spanned(
                            &nv.value,
                            with_help(
                                "the block size of a block-mode kernel must be an integer literal, a multiple of 32 from 32 to 1024",
                                "write e.g. `#[gtap::kernel(block = 256)]`",
                            ),
                        );
                        32
                    });
                out.mode = Mode::Block {
                    threads: Some(threads),
                };
            }
            (FnKind::Kernel, syn::Meta::NameValue(nv), Some("max_registers")) => {
                out.max_registers = literal_in(
                    &nv.value,
                    REGISTERS,
                    "max_registers",
                    "",
                    "write e.g. `#[gtap::kernel(max_registers = 96)]`",
                    diags,
                );
            }
            (FnKind::Kernel, syn::Meta::NameValue(nv), Some("max_blocks_per_sm")) => {
                out.max_blocks_per_sm = literal_in(
                    &nv.value,
                    BLOCKS_PER_SM,
                    "max_blocks_per_sm",
                    "",
                    "write e.g. `#[gtap::kernel(max_blocks_per_sm = 4)]`",
                    diags,
                );
            }
            (FnKind::Kernel, syn::Meta::NameValue(nv), Some("queues")) => {
                out.queues = literal_in(
                    &nv.value,
                    QUEUES,
                    "queues",
                    ": the queues per worker of the runtimes that launch the kernel",
                    "write e.g. `#[gtap::kernel(queues = 1)]` for a runtime of \
                     `Config::new().num_queues(1)`, the default",
                    diags,
                );
            }
            (FnKind::Kernel, syn::Meta::Path(_), Some("no_taskwait")) => {
                out.no_taskwait = true;
            }
            (_, meta, name) => {
                diags.spanned(meta, wanted);
                // Guess the mode meant, so that the body's macros lower without follow-up
                // errors.
                if name == Some("block") {
                    out.mode = Mode::Block {
                        threads: (kind == FnKind::Kernel).then_some(32),
                    };
                }
            }
        }
    }
    out
}

/// The value of an integer literal that fits a `u32`.
/// The argument `name = e` as an integer literal in `range`; otherwise an error on `e` saying
/// so (its message ends with `detail`, its help is `help`) and `None`.
fn literal_in(
    e: &syn::Expr,
    range: core::ops::RangeInclusive<u32>,
    name: &str,
    detail: &str,
    help: &str,
    diags: &mut Diagnostics,
) -> Option<u32> {
    let n = int_literal(e).filter(|n| range.contains(n));
    if n.is_none() {
        let (lo, hi) = (range.start(), range.end());
        diags.spanned(
            e,
            with_help(
                format!("`{name}` must be an integer literal from {lo} to {hi}{detail}"),
                help,
            ),
        );
    }
    n
}

fn int_literal(e: &syn::Expr) -> Option<u32> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<u32>().ok(),
        _ => None,
    }
}

/// Parses the annotated item and what its attribute declares. A non-function item is an
/// error and gives `Err` with the original tokens, which the caller emits unchanged.
pub(crate) fn parse_item(
    kind: FnKind,
    attr: TokenStream,
    item: TokenStream,
    diags: &mut Diagnostics,
) -> Result<(ItemFn, Attr), TokenStream> {
    let attr = parse_attr(kind, attr, diags);
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(f)) => Ok((f, attr)),
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
