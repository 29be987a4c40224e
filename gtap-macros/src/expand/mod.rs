//! Expansion: the items `#[gtap::function]` and `#[gtap::kernel]` generate, and what the body
//! macros become. Every path emitted is `::gtap::__private::..` or `::core::..`.

pub(crate) mod dispatch;
pub(crate) mod function;
pub(crate) mod kernel;
pub(crate) mod lower;
pub(crate) mod record;
pub(crate) mod shared_args;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Block, FnArg, ItemFn, Pat};

use crate::diagnostics::Diagnostics;
use crate::diagnostics::with_help;
use crate::parse::{FnKind, Mode, parse_item};
use crate::validate::direct::Known;
use crate::validate::signature::{self, Signature};
use crate::walk::{Body, walk};

/// A task function or kernel after parsing, validation and the rewriting of its body macros:
/// what both expansions start from.
pub(crate) struct Lowered {
    pub sig: Signature,
    /// The body with `task!`/`taskwait!`/`entry!` rewritten.
    pub block: Block,
    /// Whether the body has a `taskwait!` (a suspension point of the task's future).
    pub waits: bool,
    /// The kernel's `&LaunchParams` variable (unused by task functions).
    pub launch: Ident,
    pub diags: Diagnostics,
    /// The execution mode the attribute declared.
    pub mode: Mode,
    /// A kernel's `max_registers = R`.
    pub max_registers: Option<u32>,
    /// A kernel's `max_blocks_per_sm = N`, 0 without it.
    pub max_blocks_per_sm: u32,
    /// A kernel's `no_taskwait`.
    pub no_taskwait: bool,
    /// A kernel's `queues = N`, 0 without it.
    pub queues: u32,
    /// A block-mode task function's first parameter (the `&gtap::Block`), taken out of the
    /// signature: the body binds it, `task!` does not pass it.
    pub block_param: Option<(Pat, syn::Type)>,
    /// A task function's `gtap::Context<C>` parameter, taken out of the signature: the body
    /// binds it, `task!` does not pass it.
    pub context_param: Option<ContextParam>,
    /// Block-mode task functions: which parameters the body binds again from the record after
    /// each wait ([`shared_args`]); empty otherwise.
    pub rebind: Vec<bool>,
    /// Whether the body binds the block token and the launch context again after each wait
    /// (so that their first binding may go unused).
    pub rebind_token_and_context: (bool, bool),
    /// The functions the body spawns that its `TaskFunction::poll_spawned` polls directly.
    pub spawned: dispatch::Spawned,
}

/// Parses and validates `item` as a `kind` and rewrites its body; `Err` holds the whole
/// expansion when nothing more can be generated (unparsable item, method).
pub(crate) fn lower_item(
    kind: FnKind,
    attr: TokenStream,
    item: TokenStream,
) -> Result<Lowered, TokenStream> {
    let mut diags = Diagnostics::new();
    let (mut f, attr) = match parse_item(kind, attr, item, &mut diags) {
        Ok(parsed) => parsed,
        Err(original) => {
            let errors = diags.to_compile_errors();
            return Err(quote!(#errors #original));
        }
    };
    let mode = attr.mode;
    let block_param = if kind == FnKind::Task && mode.is_block() {
        take_block_param(&mut f, &mut diags)
    } else {
        None
    };
    let context_param = if kind == FnKind::Task {
        take_context_param(&mut f, &mut diags)
    } else {
        None
    };
    let sig = signature::check(kind, &f, &mut diags);
    if f.sig.inputs.iter().any(|a| matches!(a, FnArg::Receiver(_))) {
        let errors = diags.to_compile_errors();
        let stub = method_stub(&f);
        return Err(quote!(#errors #stub));
    }
    let mut block = *f.block;
    let mut rebind_token_and_context = (false, false);
    let rebind = if kind == FnKind::Task && mode.is_block() {
        let params: Vec<Pat> = sig.params.iter().map(|p| p.pat.clone()).collect();
        let rebind = shared_args::rebindable(&params, &block);
        let mut stmts = Vec::from_iter(shared_args::rebinding(&params, &rebind));
        // The block token and the launch context are bound again as at the start (used or
        // not after the wait).
        let rebindable = |pat: &Pat| shared_args::rebindable(std::slice::from_ref(pat), &block)[0];
        if let Some((pat, ty)) = block_param.as_ref().filter(|(p, _)| rebindable(p)) {
            stmts.push(unused(bind_block_token(pat, ty)));
            rebind_token_and_context.0 = true;
        }
        if let Some(c) = context_param.as_ref().filter(|c| rebindable(&c.pat)) {
            stmts.push(unused(bind_context(c)));
            rebind_token_and_context.1 = true;
        }
        shared_args::insert(&stmts, &mut block);
        rebind
    } else {
        Vec::new()
    };
    let pats: Vec<Pat> = block_param
        .iter()
        .map(|(p, _)| p.clone())
        .chain(context_param.iter().map(|c| c.pat.clone()))
        .chain(sig.params.iter().map(|p| p.pat.clone()))
        .collect();
    let context = match &context_param {
        Some(c) => c.context.to_token_stream(),
        None => quote!(()),
    };
    let known = Known::collect(kind, &sig.name, &block);
    let launch = launch_ident();
    let body = Body {
        kind,
        name: &sig.name,
        params: &pats,
        known: &known,
        launch: &launch,
        block_mode: mode.is_block(),
        queues: attr.queues.unwrap_or(0),
        context: &context,
    };
    let spawned = dispatch::collect(&sig.name, &block);
    let waits = walk(&body, &mut block, &mut diags);
    Ok(Lowered {
        sig,
        block,
        waits,
        launch,
        diags,
        mode,
        max_registers: attr.max_registers,
        max_blocks_per_sm: attr.max_blocks_per_sm.unwrap_or(0),
        no_taskwait: attr.no_taskwait,
        queues: attr.queues.unwrap_or(0),
        block_param,
        context_param,
        rebind,
        rebind_token_and_context,
        spawned,
    })
}

/// `stmt` (a `let`) with `#[allow(unused_variables)]`: a binding that the body may only use
/// through the one made again after a wait.
pub(crate) fn unused(mut stmt: syn::Stmt) -> syn::Stmt {
    if let syn::Stmt::Local(l) = &mut stmt {
        l.attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
    }
    stmt
}

/// `let PAT: TY = block_token();`: a block-mode body's binding of its block token.
pub(crate) fn bind_block_token(pat: &Pat, ty: &syn::Type) -> syn::Stmt {
    syn::parse_quote! {
        let #pat: #ty = ::gtap::__private::block_token();
    }
}

/// `let PAT: Context<C> = launch_context();`: a body's binding of its launch context, with the
/// parameter's type as the user wrote it (so that an import of `gtap::Context` is used).
pub(crate) fn bind_context(c: &ContextParam) -> syn::Stmt {
    let ContextParam { pat, ty, context } = c;
    syn::parse_quote! {
        // SAFETY: the function runs in `#context` contexts only (its `RunsIn` impl), so the
        // launch running it gave one.
        let #pat: #ty = unsafe { ::gtap::__private::launch_context::<#context>() };
    }
}

/// A task function's launch-context parameter, `PAT: Context<C>`.
pub(crate) struct ContextParam {
    /// Its pattern.
    pub pat: Pat,
    /// Its type as written (`gtap::Context<C>`, or `Context<C>` through the user's import).
    pub ty: syn::Type,
    /// `C`.
    pub context: syn::Type,
}

/// Takes a task function's `gtap::Context<C>` parameter out of its signature: the first one
/// left after the block token.
fn take_context_param(f: &mut ItemFn, diags: &mut Diagnostics) -> Option<ContextParam> {
    let mut found = None;
    let mut kept = syn::punctuated::Punctuated::new();
    for (i, arg) in f.sig.inputs.iter().enumerate() {
        let context = match arg {
            FnArg::Typed(t) => context_type(&t.ty).map(|context| ContextParam {
                pat: (*t.pat).clone(),
                ty: (*t.ty).clone(),
                context,
            }),
            FnArg::Receiver(_) => None,
        };
        match context {
            Some(param) if i == 0 && found.is_none() => found = Some(param),
            Some(_) => diags.spanned(
                arg,
                with_help(
                    "a task function's launch context is its first parameter (after the \
                     `&gtap::Block` in block mode), and it has one",
                    "write `fn name(ctx: gtap::Context<T>, ..)`; `task!` does not pass it",
                ),
            ),
            None => kept.push(arg.clone()),
        }
    }
    f.sig.inputs = kept;
    found
}

/// `C` if `ty` is written `Context<C>` (any path ending so, as `gtap::Context<C>`).
fn context_type(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match (last.ident == "Context", args.args.first(), args.args.len()) {
        (true, Some(syn::GenericArgument::Type(c)), 1) => Some(c.clone()),
        _ => None,
    }
}

/// Takes a block-mode task function's first parameter, the block token, out of its signature.
fn take_block_param(f: &mut ItemFn, diags: &mut Diagnostics) -> Option<(Pat, syn::Type)> {
    let first = f.sig.inputs.first().cloned();
    match first {
        Some(FnArg::Typed(t)) if matches!(*t.ty, syn::Type::Reference(_)) => {
            f.sig.inputs = f.sig.inputs.iter().skip(1).cloned().collect();
            Some(((*t.pat).clone(), (*t.ty).clone()))
        }
        _ => {
            diags.spanned(
                &f.sig.ident,
                with_help(
                    "a block-mode task function takes the block as its first parameter",
                    "write `fn name(block: &gtap::Block, ..)`; `task!` does not pass it",
                ),
            );
            None
        }
    }
}

/// The body to emit: the rewritten one, or a diverging stand-in when an error makes it unsound
/// to keep (the errors are reported either way).
pub(crate) fn emitted_body(lowered: &Lowered) -> TokenStream {
    let block = &lowered.block;
    if lowered.sig.sound {
        quote!(#block)
    } else {
        quote!({ loop {} })
    }
}

/// The kernel's `&LaunchParams` variable. One identifier with mixed-site hygiene serves as the
/// parameter and in every lowered `entry!`, so user code cannot see or shadow it.
fn launch_ident() -> Ident {
    Ident::new("__gtap_launch", Span::mixed_site())
}

/// What a method annotated by mistake becomes: its signature with a diverging body, so that
/// the receiver error is the only one and calls of the method still resolve.
fn method_stub(f: &ItemFn) -> TokenStream {
    let mut stub = f.clone();
    stub.block = syn::parse_quote!({ loop {} });
    quote! {
        #[allow(unreachable_code, unused)]
        #stub
    }
}
