//! `#[gtap::function]`: a task function becomes a type implementing `TaskFunction`.
//!
//! For `vis fn NAME(p1: T1, p2: T2) -> R { body }`:
//!
//! 1. `vis struct NAME { _private: () }` in the type namespace, with the user's docs;
//! 2. `impl TaskFunction for NAME` whose `start` returns the lowered body as an `async move`
//!    block (`taskwait!` is its only suspension point);
//! 3. the direct-call trap, `vis fn NAME(..)` in the value namespace, whose unsatisfiable bound
//!    reports any direct call with the message of `DirectCall`;
//! 4. the record-size export: a `#[used]` PTX global on the GPU, a `TASK_RECORDS` entry on the
//!    host (thread mode: the record's bytes; block mode: its frame layout, see
//!    `gtap_device::abi::RecordSize`);
//! 5. the mode marker, `impl ThreadTask` or `impl BlockTask`, which `task!` and `entry!` bound;
//! 6. the contexts it runs in, `impl RunsIn<C>` (see `gtap::Context`), which they bound too.
//!
//! A block-mode function (`#[gtap::function(block)]`) has its first parameter, the
//! `&gtap::Block`, taken out of the signature and bound at the top of the body; so has a
//! `gtap::Context<C>` parameter, the first one after that.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Pat;
use syn::ext::IdentExt;

use crate::expand::record::{self, Origin};
use crate::expand::{Lowered, bind_block_token, bind_context, emitted_body, lower_item, unused};
use crate::expand::{dispatch, shared_args};
use crate::parse::FnKind;
use crate::validate::signature::{Attrs, Signature};

/// Expands `#[gtap::function]`; `locate` gives the origin of the function's name (for the
/// record symbol).
pub(crate) fn expand(
    attr: TokenStream,
    item: TokenStream,
    locate: &dyn Fn(Span) -> Origin,
) -> TokenStream {
    let lowered = match lower_item(FnKind::Task, attr, item) {
        Ok(l) => l,
        Err(expansion) => return expansion,
    };
    let body = emitted_body(&lowered);
    let Lowered {
        sig,
        diags,
        mode,
        block_param,
        context_param,
        waits,
        rebind,
        rebind_token_and_context: (token_again, context_again),
        spawned,
        ..
    } = lowered;
    // A first binding that is bound again after each wait may be used only after a wait.
    let first = |stmt, again| if again { unused(stmt) } else { stmt };
    let body = match &block_param {
        Some((pat, ty)) => {
            let bind = first(bind_block_token(pat, ty), token_again);
            quote!({
                #bind
                #body
            })
        }
        None => body,
    };
    let body = match &context_param {
        Some(c) => {
            let bind = first(bind_context(c), context_again);
            quote!({
                #bind
                #body
            })
        }
        None => body,
    };
    let origin = locate(sig.name.span());
    let (start, block_task) = if mode.is_block() {
        block_starts(&sig, &body, waits, &rebind)
    } else {
        (start(&sig, &body, waits), TokenStream::new())
    };
    // With errors the targets may not be task functions: the trait's defaults keep the
    // expansion free of follow-up errors.
    let polls = (!diags.has_errors()).then(|| polls(mode.is_block(), &spawned));
    let start = quote!(#start #polls);
    let items = items(
        &sig,
        &start,
        &block_task,
        &origin,
        diags.has_errors(),
        mode.is_block(),
    );
    let runs_in = runs_in(&sig, context_param.as_ref().map(|c| &c.context));
    let errors = diags.to_compile_errors();
    quote!(#errors #items #runs_in)
}

/// The contexts the function runs in (`gtap::__private::RunsIn`): its `gtap::Context`
/// parameter's type, or every type for a function without one.
fn runs_in(sig: &Signature, context: Option<&syn::Type>) -> TokenStream {
    let Signature { name, attrs, .. } = sig;
    let cfgs = &attrs.cfgs;
    match context {
        Some(ty) => quote! {
            #(#cfgs)*
            impl ::gtap::__private::RunsIn<#ty> for #name {}
        },
        None => {
            let any = Ident::new("__GtapContext", Span::mixed_site());
            quote! {
                #(#cfgs)*
                impl<#any: ?::core::marker::Sized> ::gtap::__private::RunsIn<#any> for #name {}
            }
        }
    }
}

/// `TaskFunction::poll_this` (a direct call of the function's own poll) and
/// `poll_spawned` (see [`dispatch`]).
fn polls(block: bool, spawned: &dispatch::Spawned) -> TokenStream {
    let poll = if block {
        quote!(poll_block)
    } else {
        quote!(poll_thread)
    };
    let request = Ident::new("__gtap_request", Span::mixed_site());
    let spawned = dispatch::poll_spawned(spawned);
    quote! {
        #[inline(always)]
        unsafe fn poll_this(
            #request: &::gtap::__private::PollRequest,
        ) -> ::core::option::Option<bool> {
            // SAFETY: the caller's contract is this method's.
            unsafe { ::gtap::__private::#poll::<Self>(#request) }
        }
        #spawned
    }
}

/// The generated items around `start` (the `TaskFunction::start` that `start()` writes); `errors` adds
/// the allowances that keep an error expansion quiet.
fn items(
    sig: &Signature,
    start: &TokenStream,
    block_task: &TokenStream,
    origin: &Origin,
    errors: bool,
    block: bool,
) -> TokenStream {
    let Signature {
        vis,
        name,
        params,
        output,
        attrs,
        ..
    } = sig;
    let Attrs {
        docs,
        cfgs,
        lints,
        codegen,
    } = attrs;
    let name_str = name.unraw().to_string();
    let tys: Vec<_> = params.iter().map(|p| &p.ty).collect();
    let args = sig.args_type();
    let line = quote_spanned!(name.span()=> ::core::line!());
    let quiet = errors.then(|| quote!(#[allow(unreachable_code, unused)]));
    let symbol = record::symbol(origin, &name_str);
    let record = format_ident!("__GTAP_RECORD_{}", name_str);
    let (marker, record_size) = if block {
        (quote!(BlockTask), quote!(block_record_size_u32))
    } else {
        (quote!(ThreadTask), quote!(record_bytes_u32))
    };
    // The user's codegen attributes (`#[inline]`, ..) go on `start_shared` too.
    let marker_items = if block_task.is_empty() {
        TokenStream::new()
    } else {
        quote!(#(#codegen)* #block_task)
    };
    let trap = quote_spanned! {name.span()=>
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, unused_variables, dead_code, clippy::all, clippy::pedantic)]
        #vis fn #name<'gtap, UseGtapTaskToSpawn>(#(_: #tys),*) -> UseGtapTaskToSpawn
        where
            &'gtap #name: ::gtap::__private::DirectCall<#name>,
        {
            loop {}
        }
    };
    quote! {
        #(#cfgs)*
        #(#docs)*
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {
            _private: (),
        }

        #(#cfgs)*
        #(#lints)*
        #quiet
        impl ::gtap::__private::TaskFunction for #name {
            type Args = #args;
            type Output = #output;
            const INFO: ::gtap::__private::TaskInfo = ::gtap::__private::TaskInfo {
                name: #name_str,
                file: ::core::file!(),
                line: #line,
            };
            #(#codegen)*
            #start
        }

        #(#cfgs)*
        #(#lints)*
        #quiet
        impl ::gtap::__private::#marker for #name {
            #marker_items
        }

        #trap

        // SAFETY (of `export_name`): the symbol is `__gtap_record_` followed by the crate, the
        // function and a hash of its source position, so no other item exports it; it is a
        // plain `u32` that the host only reads.
        #(#cfgs)*
        #[cfg(target_arch = "nvptx64")]
        #[allow(non_upper_case_globals)]
        #[unsafe(export_name = #symbol)]
        #[used]
        static #record: u32 = ::gtap::__private::#record_size::<#name>();

        #(#cfgs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(non_upper_case_globals)]
        #[::gtap::__private::linkme::distributed_slice(::gtap::__private::TASK_RECORDS)]
        #[linkme(crate = ::gtap::__private::linkme)]
        static #record: ::gtap::__private::HostRecord = ::gtap::__private::HostRecord {
            name: #name_str,
            bytes: ::gtap::__private::#record_size::<#name>(),
        };
    }
}

/// `TaskFunction::start`: the body as an `async move` block over the arguments; without a wait
/// also `SUSPENDS = false` (the future completes in its first poll).
///
/// Without a wait the arguments are bound again as locals at the start of the body. A captured
/// argument is a field of the future, and rustc reads it there at each use: in a loop that
/// indexes a view behind a bounds check, LLVM cannot hoist that read, so every iteration loads
/// the view's pointer and length from the record again (block-mode SpMV: six scattered loads per
/// nonzero). As a local it is an SSA value that stays in a register. With a wait, locals that
/// live across it are saved in the future beside the captured arguments, so the record would
/// grow; the arguments stay captured there.
fn start(sig: &Signature, body: &TokenStream, waits: bool) -> TokenStream {
    let Signature { params, output, .. } = sig;
    let pats = params.iter().map(|p| &p.pat);
    if waits {
        return quote! {
            fn start((#(#pats,)*): Self::Args) -> impl ::core::future::Future<Output = #output> {
                async move #body
            }
        };
    }
    let args = Ident::new("__gtap_args", Span::mixed_site());
    // After `start`: the user's codegen attributes (`#[inline]`, ..) precede this and apply to
    // `start`.
    quote! {
        fn start(#args: Self::Args) -> impl ::core::future::Future<Output = #output> {
            async move {
                let (#(#pats,)*) = #args;
                #body
            }
        }
        const SUSPENDS: bool = false;
    }
}

/// A block-mode function's `TaskFunction::start` and `BlockTask::start_shared`. With a wait,
/// `start_shared` binds the arguments from the record's copy (`__gtap_args`, a `PolledArgs`
/// that reads the polled task's record) as locals and the body binds the rebindable ones again
/// after each wait ([`shared_args`]); `start` runs the same body over a copy of its own, through
/// a reference (never polled in a frame: the records use `start_shared`).
/// Without a wait, `start_shared` is `start` over a copy (the records keep such a future on the
/// stack, never in a frame).
///
/// [`shared_args`]: crate::expand::shared_args
fn block_starts(
    sig: &Signature,
    body: &TokenStream,
    waits: bool,
    rebind: &[bool],
) -> (TokenStream, TokenStream) {
    let output = &sig.output;
    let args = shared_args::args_ident();
    let read = shared_args::read(&args);
    if !waits {
        let start = start(sig, body, false);
        let shared = quote! {
            fn start_shared(#args: &'static Self::Args) -> impl ::core::future::Future<Output = #output> {
                <Self as ::gtap::__private::TaskFunction>::start(#read)
            }
        };
        return (start, shared);
    }
    let params: Vec<Pat> = sig.params.iter().map(|p| p.pat.clone()).collect();
    let kept: Vec<bool> = rebind.iter().map(|r| !r).collect();
    let (kept, rebound) = (
        shared_args::pattern(&params, &kept),
        shared_args::pattern(&params, rebind),
    );
    // The rebound arguments may be used only after a wait: no warning for their first binding.
    let bind = quote! {
        let #kept = #read;
        #[allow(unused_variables)]
        let #rebound = #read;
    };
    let value = Ident::new("__gtap_value", Span::mixed_site());
    let start = quote! {
        fn start(#value: Self::Args) -> impl ::core::future::Future<Output = #output> {
            async move {
                let #args = &#value;
                #bind
                #body
            }
        }
    };
    // The future reads the arguments from the polled task's record (`PolledArgs`, zero-sized)
    // rather than through a captured reference, which every thread's frame would hold.
    let shared = quote! {
        fn start_shared(_: &'static Self::Args) -> impl ::core::future::Future<Output = #output> {
            async move {
                let #args = ::gtap::__private::PolledArgs::<
                    <Self as ::gtap::__private::TaskFunction>::Args,
                >::new();
                #bind
                #body
            }
        }
    };
    (start, shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expansion of the documentation's `fib`, pretty-printed, is checked in as
    /// `docs/fib.expanded.rs` and shown in the crate docs. `GTAP_BLESS=1` rewrites it.
    #[test]
    fn fib_expansion_matches_the_docs() {
        let item = quote! {
            /// Fibonacci numbers, two children per call.
            #[gtap::function]
            pub fn fib(n: u32) -> u64 {
                if n < 2 {
                    return n as u64;
                }
                let (mut a, mut b) = (0, 0);
                gtap::task!(a = fib(n - 1));
                gtap::task!(queue(1), b = fib(n - 2));
                gtap::taskwait!();
                a + b
            }
        };
        let mut item: syn::ItemFn = syn::parse2(item).unwrap();
        item.attrs.retain(|a| a.path().is_ident("doc"));
        let origin = |_| Origin {
            crate_name: "example".into(),
            file: "src/lib.rs".into(),
            line: 3,
            column: 7,
        };
        let out = expand(TokenStream::new(), quote!(#item), &origin);
        let file: syn::File = syn::parse2(out).expect("the expansion parses as items");
        let text = format!(
            "// #[gtap::function] pub fn fib(n: u32) -> u64 {{ .. }} expands to:\n\n{}",
            prettyplease::unparse(&file)
        );
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fib.expanded.rs");
        if std::env::var_os("GTAP_BLESS").is_some() {
            std::fs::write(path, &text).unwrap();
        } else {
            let want = std::fs::read_to_string(path).unwrap_or_default();
            assert!(
                want == text,
                "docs/fib.expanded.rs is stale; rerun with GTAP_BLESS=1. New expansion:\n{text}"
            );
        }
    }

    /// Without a wait the arguments are bound again as locals inside the future and the
    /// function does not suspend; with one they stay the future's captures and `SUSPENDS` keeps
    /// its default (see `start`).
    #[test]
    fn arguments_become_locals_only_without_a_wait() {
        let origin = |_| Origin {
            crate_name: "example".into(),
            file: "src/lib.rs".into(),
            line: 1,
            column: 1,
        };
        let start_of = |item: TokenStream| {
            let file: syn::File = syn::parse2(expand(TokenStream::new(), item, &origin)).unwrap();
            let text = prettyplease::unparse(&file);
            let at = text.find("fn start(").expect("an impl with `start`");
            let suspends = text.find("const SUSPENDS: bool = false;").is_none();
            (
                text[at..].lines().take(3).collect::<Vec<_>>().join(" "),
                suspends,
            )
        };
        let leaf = start_of(quote! {
            fn leaf(v: gtap::Slice<u32>, mut i: u32) -> u32 { i += 1; v[i as usize] }
        });
        assert!(
            leaf.0.contains("fn start(__gtap_args: Self::Args)")
                && leaf.0.contains("let (v, mut i) = __gtap_args;")
                && !leaf.1,
            "{leaf:?}"
        );
        let waits = start_of(quote! {
            fn waits(n: u32) -> u32 { gtap::taskwait!(); n }
        });
        assert!(
            waits.0.contains("fn start((n,): Self::Args)")
                && !waits.0.contains("__gtap_args")
                && waits.1,
            "{waits:?}"
        );
    }
}
