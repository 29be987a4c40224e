//! What `task!`, `taskwait!` and `entry!` become inside a lowered body.
//!
//! * `task!([queue(Q),] DST = PATH(ARGS))` →
//!   `::gtap::__private::spawn_thread::<PATH, CONTEXT>(SITE, QUEUE, &raw mut DST, (ARGS,))`,
//!   `CONTEXT` being the spawning function's context type (`()` without a `gtap::Context`
//!   parameter), which the child must run in
//! * `taskwait!([queue(Q)])` →
//!   `{ ::gtap::__private::prepare_wait(SITE, QUEUE); ::gtap::__private::Suspend.await; }`
//! * `entry!([context(VALUE),] [DST =] PATH(ARGS))` →
//!   `[DST =] ::gtap::__private::entry_thread::<PATH, _, QUEUES>(LAUNCH, SITE, (ARGS,), VALUE)`,
//!   or `entry_thread::<PATH, (), QUEUES>(LAUNCH, SITE, (ARGS,), ())` without a context clause,
//!   `QUEUES` being the kernel's `queues = N` (0 without it)
//!
//! In block-mode code (`#[gtap::function(block)]`, `#[gtap::kernel(block = N)]`) the same with
//! `spawn_block`, `prepare_wait_block` and `entry_block`. The `_thread` and `_block` forms bound
//! the task function's mode (`ThreadTask`, `BlockTask`), so mixing modes fails to compile.
//!
//! `SITE` is a `&'static Site` naming the enclosing function and the macro's line, for the
//! runtime's error reports.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Expr;
use syn::spanned::Spanned;

use crate::validate::call::{Call, Entry, Spawn};

/// Where a body macro was written.
pub(crate) struct Site<'a> {
    /// The enclosing task function or kernel.
    pub(crate) function: &'a str,
    /// A span on the invocation's line (its `!`), for `file!()` and `line!()`.
    pub(crate) span: Span,
}

impl ToTokens for Site<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let function = self.function;
        tokens.extend(quote_spanned! {self.span=>
            const {
                &::gtap::__private::Site {
                    function: #function,
                    file: ::core::file!(),
                    line: ::core::line!(),
                }
            }
        });
    }
}

/// `Option<i128>` for a queue clause.
fn queue(index: Option<&Expr>) -> TokenStream {
    match index {
        None => quote!(::core::option::Option::None),
        Some(q) => quote_spanned! {q.span()=>
            ::core::option::Option::Some(::gtap::__private::queue_index(#q))
        },
    }
}

/// The argument tuple `(ARGS,)`, spanned on the call's parentheses so that a mismatch with the
/// task function's parameters is reported there.
fn args_tuple(call: &Call) -> TokenStream {
    let args = call.args.iter();
    let mut group = Group::new(Delimiter::Parenthesis, quote!(#(#args,)*));
    group.set_span(call.paren.span.join());
    group.into_token_stream()
}

/// The task function's path, used as a type path (it names the struct `#[gtap::function]`
/// defines).
fn target(call: &Call) -> TokenStream {
    call.target.to_token_stream()
}

/// The expansion of a checked `task!`.
pub(crate) fn spawn(site: &Site, spawn: &Spawn, context: &TokenStream, block: bool) -> TokenStream {
    let target = target(&spawn.call);
    let queue = queue(spawn.queue.as_ref());
    let dst = match &spawn.dst {
        Some(d) => quote_spanned!(d.span()=> &raw mut #d),
        None => quote!(::core::ptr::null_mut()),
    };
    let args = args_tuple(&spawn.call);
    let f = if block {
        quote!(spawn_block)
    } else {
        quote!(spawn_thread)
    };
    quote!(::gtap::__private::#f::<#target, #context>(#site, #queue, #dst, #args))
}

/// The expansion of `taskwait!`.
pub(crate) fn wait(site: &Site, queue_index: Option<&Expr>, block: bool) -> TokenStream {
    let queue = queue(queue_index);
    let prepare = if block {
        quote!(prepare_wait_block)
    } else {
        quote!(prepare_wait)
    };
    quote!({
        ::gtap::__private::#prepare(#site, #queue);
        ::gtap::__private::Suspend.await;
    })
}

/// The expansion of a checked `entry!`; `launch` is the kernel's `&LaunchParams`, `queues` its
/// fixed queue count (0: any).
pub(crate) fn entry(
    site: &Site,
    launch: &Ident,
    entry: &Entry,
    block: bool,
    queues: u32,
) -> TokenStream {
    let target = target(&entry.call);
    let args = args_tuple(&entry.call);
    let f = if block {
        quote!(entry_block)
    } else {
        quote!(entry_thread)
    };
    // Without a clause the context type is named, so that a root reading a context fails the
    // `RunsIn<()>` bound (whose message says how to give one) rather than a type mismatch;
    // with one it is the value's type, and a mismatch points at the value.
    let (context_type, context) = match &entry.context {
        Some(value) => (quote!(_), value.to_token_stream()),
        None => (quote!(()), quote!(())),
    };
    let call = quote!(::gtap::__private::#f::<#target, #context_type, #queues>(
        #launch, #site, #args, #context
    ));
    match &entry.dst {
        Some(d) => quote!(#d = #call),
        None => call,
    }
}

/// The marker that makes a standalone body macro return the rest of its input.
pub(crate) const LOWERED: &str = "__gtap_lowered";

/// A body macro written with a bare path (`task!` after `use gtap::task`) is expanded through
/// that path, as `task!(__gtap_lowered TOKENS)`, which returns `TOKENS`: the import is then
/// used (no `unused_imports` warning) and IDEs resolve the user's `task!` to its docs.
pub(crate) fn through_import(path: &syn::Path, tokens: TokenStream) -> TokenStream {
    if path.leading_colon.is_some() || path.segments.len() != 1 {
        return tokens;
    }
    let marker = Ident::new(LOWERED, Span::mixed_site());
    quote!(#path!(#marker #tokens))
}

/// What an invalid body macro becomes once its error is reported: an expression that
/// type-checks wherever the macro could stand, so that no follow-up errors appear.
pub(crate) fn neutral(value_needed: bool) -> TokenStream {
    if value_needed {
        // Diverges, so it coerces to the kernel's result type.
        quote!(loop {})
    } else {
        quote!(())
    }
}
