//! `#[gtap::kernel]`: a function whose body starts the root task with `entry!`.
//!
//! For `vis fn NAME(a: A, b: B) -> R { body }`:
//!
//! * on the host, `vis struct NAME;` implementing `Kernel`, whose `run_cpu` runs the lowered
//!   body (the CPU executor calls it);
//! * on the GPU, a PTX entry `NAME` defined through `::gtap::__private::ptx_kernel!`, which
//!   takes the runtime's launch parameters before `a` and `b` and stores the body's value for
//!   the host.
//!
//! A block-mode kernel (`#[gtap::kernel(block = N)]`) also sets `Kernel::BLOCK_SIZE = N`, which
//! the host checks against the runtime's block size at launch; `queues = N` likewise sets
//! `Kernel::QUEUES = N` (and `entry!` passes `N` to the runtime, see `lower`), and
//! `max_blocks_per_sm = N` sets `Kernel::MAX_BLOCKS_PER_SM = N`, which the host applies where it
//! sizes the kernel's grid. `max_registers = R` exports, on
//! the GPU, the `u32` `__gtap_maxnreg_NAME = R`, from which `gtap-builder` gives the kernel's
//! PTX entry the directive `.maxnreg R`.
//!
//! Both bodies start by setting (`no_taskwait`) or clearing `OPT_NO_TASKWAIT` in their copy of
//! the launch parameters, so the runtime, on the GPU and in the CPU executor alike, runs the
//! launch without joins or with them (see "Kernels without waits" in
//! `gtap_device::scheduler`). On the GPU the option is then a constant of the kernel, and
//! `entry!` compiles only the scheduler of its kind of launch.
//!
//! Both bodies see the launch parameters as `__gtap_launch: &LaunchParams`, through one
//! identifier that the lowered `entry!` uses too.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::Pat;
use syn::ext::IdentExt;

use crate::expand::{Lowered, emitted_body, lower_item};
use crate::parse::{FnKind, Mode};
use crate::validate::signature::{Attrs, Signature};

/// Expands `#[gtap::kernel]`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let lowered = match lower_item(FnKind::Kernel, attr, item) {
        Ok(l) => l,
        Err(expansion) => return expansion,
    };
    let host_body = emitted_body(&lowered);
    let Lowered {
        sig,
        block,
        launch,
        diags,
        mode,
        max_registers,
        max_blocks_per_sm,
        no_taskwait,
        queues,
        ..
    } = lowered;
    let errors = diags.to_compile_errors();
    let threads = match mode {
        Mode::Block { threads } => threads.unwrap_or(0),
        Mode::Thread => 0,
    };
    // The kernel's own options, set or cleared in its copy of the launch parameters before
    // `entry!`: a constant there, so that on the GPU the kernel holds only the scheduler of its
    // own kind of launch.
    let options = if no_taskwait {
        quote!(#launch.options | ::gtap::__private::OPT_NO_TASKWAIT)
    } else {
        quote!(#launch.options & !::gtap::__private::OPT_NO_TASKWAIT)
    };
    let options = quote! {
        let #launch = &::gtap::__private::LaunchParams {
            options: #options,
            ..*#launch
        };
    };
    let host_body = quote!({ #options #host_body });
    let host = host(
        &sig,
        &launch,
        &host_body,
        diags.has_errors(),
        Consts {
            threads,
            queues,
            max_blocks_per_sm,
        },
    );
    // A block-mode kernel's block size, constant on the GPU.
    let block_size = (threads != 0).then(|| {
        quote! {
            // SAFETY: `gtap-host` launches this kernel only in blocks of its declared size
            // (`Kernel::BLOCK_SIZE`, checked at every launch).
            unsafe { ::gtap::__private::assume_block_size(#threads) };
        }
    });
    let options = quote!(#options #block_size);
    // The device build of a kernel with errors would only repeat them.
    let device =
        (!diags.has_errors()).then(|| device(&sig, &launch, &block, max_registers, &options));
    quote!(#errors #host #device)
}

/// The `Kernel` constants the attribute sets (0 where it sets none).
struct Consts {
    threads: u32,
    queues: u32,
    max_blocks_per_sm: u32,
}

/// The host's `struct NAME` and its `Kernel` impl.
fn host(
    sig: &Signature,
    launch: &Ident,
    body: &TokenStream,
    errors: bool,
    consts: Consts,
) -> TokenStream {
    let Consts {
        threads,
        queues,
        max_blocks_per_sm,
    } = consts;
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
    // With a broken signature the types may not be kernel arguments; `()` keeps the error
    // expansion free of follow-up errors.
    let (args, pats) = if sig.sound {
        let pats = params.iter().map(|p| &p.pat);
        (sig.args_type(), quote!((#(#pats,)*)))
    } else {
        (quote!(()), quote!(_))
    };
    let quiet = errors.then(|| quote!(#[allow(unreachable_code, unused)]));
    quote! {
        #(#cfgs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #(#docs)*
        #[derive(Clone, Copy, Debug)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name;

        #(#cfgs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #(#lints)*
        #quiet
        impl ::gtap::__private::Kernel for #name {
            const NAME: &'static str = #name_str;
            const BLOCK_SIZE: u32 = #threads;
            const QUEUES: u32 = #queues;
            const MAX_BLOCKS_PER_SM: u32 = #max_blocks_per_sm;
            type Args = #args;
            type Output = #output;
            #(#codegen)*
            fn run_cpu(
                #launch: &::gtap::__private::LaunchParams,
                #pats: Self::Args,
            ) -> #output #body
        }
    }
}

/// The GPU's PTX entry. `ptx_kernel!` takes plain identifiers as parameters, so other patterns
/// (`mut n`, tuples) get a generated name and are bound at the start of the body.
fn device(
    sig: &Signature,
    launch: &Ident,
    body: &syn::Block,
    max_registers: Option<u32>,
    options: &TokenStream,
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
        docs, cfgs, lints, ..
    } = attrs;
    let mut prelude = Vec::new();
    let mut idents = Vec::new();
    for (i, p) in params.iter().enumerate() {
        match &p.pat {
            Pat::Ident(pi)
                if pi.by_ref.is_none() && pi.mutability.is_none() && pi.subpat.is_none() =>
            {
                idents.push(pi.ident.clone());
            }
            pat => {
                let id = Ident::new(&format!("__gtap_arg{i}"), Span::mixed_site());
                prelude.push(quote!(let #pat = #id;));
                idents.push(id);
            }
        }
    }
    let tys = params.iter().map(|p| &p.ty);
    let stmts = &body.stmts;
    let limit = max_registers.map(|r| {
        let symbol = format!("__gtap_maxnreg_{}", name.unraw());
        let item = Ident::new(
            &format!("__GTAP_MAXNREG_{}", name.unraw()),
            Span::mixed_site(),
        );
        quote! {
            // SAFETY (of `export_name`): kernels are unmangled and unique in a crate's device
            // code, so no other item exports `__gtap_maxnreg_` and the kernel's name; a plain
            // `u32` that only `gtap-builder` reads.
            #(#cfgs)*
            #[cfg(target_arch = "nvptx64")]
            #[allow(non_upper_case_globals)]
            #[unsafe(export_name = #symbol)]
            #[used]
            static #item: u32 = #r;
        }
    });
    quote! {
        #limit
        #(#cfgs)*
        #[cfg(target_arch = "nvptx64")]
        ::gtap::__private::ptx_kernel! {
            #(#docs)*
            #(#lints)*
            #vis fn #name(#launch #(, #idents: #tys)*) -> #output {
                #options
                #(#prelude)*
                #(#stmts)*
            }
        }
    }
}
