//! Signature rules (9 and 10): what a task function or kernel may look like from outside.
//!
//! A task function becomes a record type with one fixed layout, created by `task!` and resumed
//! by the scheduler, so it cannot be `async`, generic, a method, `const`, `unsafe` or `extern`,
//! and its parameters and result must not borrow from the caller: both live in task records
//! that outlive the spawning poll. Every problem is reported; the returned [`Signature`] has
//! the offending types replaced by harmless ones so that the error expansion still type-checks.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{
    Attribute, FnArg, GenericArgument, Ident, ItemFn, Lifetime, Pat, ReturnType, Type,
    TypeParamBound, TypeReference, Visibility, parse_quote,
};

use crate::diagnostics::{Diagnostics, with_help};
use crate::parse::FnKind;

/// Most parameters a kernel may take (the runtime implements `KernelArgs` up to this arity;
/// more travel together in a `#[derive(gtap::KernelArg)]` struct).
const MAX_KERNEL_PARAMS: usize = 16;

/// A parameter: its pattern as written and its (possibly sanitised) type.
pub(crate) struct Param {
    /// The pattern (`n`, `mut n`, `(a, b)`).
    pub(crate) pat: Pat,
    /// The type.
    pub(crate) ty: Type,
}

/// The user's attributes, sorted by where the expansion puts them.
#[derive(Default)]
pub(crate) struct Attrs {
    /// Doc comments and `#[deprecated]`: on the public type.
    pub(crate) docs: Vec<Attribute>,
    /// `#[cfg(..)]`: on every generated item.
    pub(crate) cfgs: Vec<Attribute>,
    /// Lint levels and tool attributes: on the impl holding the body.
    pub(crate) lints: Vec<Attribute>,
    /// `#[inline]`, `#[cold]`: on the function holding the body.
    pub(crate) codegen: Vec<Attribute>,
}

/// A checked signature.
pub(crate) struct Signature {
    /// Visibility.
    pub(crate) vis: Visibility,
    /// The function's name.
    pub(crate) name: Ident,
    /// The parameters, receivers removed.
    pub(crate) params: Vec<Param>,
    /// The span of the parameter list's parentheses (for errors about the argument tuple).
    pub(crate) params_span: Span,
    /// The return type, `()` when omitted.
    pub(crate) output: Type,
    /// The attributes.
    pub(crate) attrs: Attrs,
    /// `false` when the signature had errors: the body may not type-check against it, so the
    /// error expansion leaves it out.
    pub(crate) sound: bool,
}

/// Checks `f`'s signature and attributes against the rules for `kind`.
pub(crate) fn check(kind: FnKind, f: &ItemFn, diags: &mut Diagnostics) -> Signature {
    let mut errors = Diagnostics::new();
    let sig = &f.sig;
    let noun = kind.noun();

    if let Some(t) = &sig.constness {
        errors.spanned(
            t,
            with_help(format!("a {noun} cannot be `const`"), "remove `const`"),
        );
    }
    if let Some(t) = &sig.asyncness {
        let help = match kind {
            FnKind::Task => {
                "remove `async`: `#[gtap::function]` already makes the body resumable; wait for \
                 children with `gtap::taskwait!()`"
            }
            FnKind::Kernel => "remove `async`: a kernel runs to completion on every thread",
        };
        errors.spanned(t, with_help(format!("a {noun} cannot be `async`"), help));
    }
    if let Some(t) = &sig.unsafety {
        errors.spanned(
            t,
            with_help(
                format!("a {noun} cannot be `unsafe`"),
                "remove `unsafe` and use `unsafe { .. }` blocks inside the body",
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            with_help(
                format!("a {noun} cannot declare an ABI"),
                format!("remove `{}`", abi.to_token_stream()),
            ),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let help = match kind {
            FnKind::Task => {
                "a task record has one layout per task function: write one function per type \
                 (a `macro_rules!` can stamp them out)"
            }
            FnKind::Kernel => "a kernel is one PTX entry: write one kernel per type",
        };
        let tokens = match &sig.generics.where_clause {
            Some(w) if sig.generics.params.is_empty() => w.to_token_stream(),
            _ => sig.generics.to_token_stream(),
        };
        errors.spanned(
            tokens,
            with_help(format!("a {noun} cannot be generic"), help),
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("a {noun} cannot be variadic"));
    }

    let generic_types: Vec<Ident> = sig
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    let mut params = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => errors.spanned(
                r,
                with_help(
                    format!("a {noun} cannot take `self`"),
                    "make it a free function and pass what it needs as parameters",
                ),
            ),
            FnArg::Typed(t) => {
                let ty = sanitize(kind, Role::Param, &t.ty, &generic_types, &mut errors);
                params.push(Param {
                    pat: (*t.pat).clone(),
                    ty,
                });
            }
        }
    }
    if kind == FnKind::Kernel && params.len() > MAX_KERNEL_PARAMS {
        errors.spanned(
            &sig.inputs,
            with_help(
                format!("a kernel takes at most {MAX_KERNEL_PARAMS} parameters"),
                "group parameters in a `#[repr(C)]` struct with `#[derive(gtap::KernelArg)]`, or \
                 pass larger inputs as a `gtap::Slice` of a `Copy` struct",
            ),
        );
    }
    let output = match &sig.output {
        ReturnType::Default => parse_quote!(()),
        ReturnType::Type(_, ty) => sanitize(kind, Role::Output, ty, &generic_types, &mut errors),
    };

    let attrs = sort_attrs(kind, &f.attrs, &mut errors);
    let sound = !errors.has_errors();
    if let Some(e) = errors.into_error() {
        diags.push(e);
    }
    Signature {
        vis: f.vis.clone(),
        name: sig.ident.clone(),
        params,
        params_span: sig.paren_token.span.join(),
        output,
        attrs,
        sound,
    }
}

impl Signature {
    /// The parameter types as a tuple type `(T1, T2,)`, spanned on the parameter list so that
    /// a trait bound the tuple fails (`KernelArgs`) is reported there.
    pub(crate) fn args_type(&self) -> TokenStream {
        let tys = self.params.iter().map(|p| &p.ty);
        let mut group = Group::new(Delimiter::Parenthesis, quote!(#(#tys,)*));
        group.set_span(self.params_span);
        group.into_token_stream()
    }
}

/// Where a type appears.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Param,
    Output,
}

/// Reports `impl Trait` and non-`'static` borrows in `ty` and returns it with them replaced
/// (`()`, `'static`), and generic parameters replaced by `()`.
fn sanitize(
    kind: FnKind,
    role: Role,
    ty: &Type,
    generics: &[Ident],
    diags: &mut Diagnostics,
) -> Type {
    let mut ty = ty.clone();
    let mut s = Sanitizer {
        kind,
        role,
        generics,
        diags,
    };
    s.visit_type_mut(&mut ty);
    ty
}

struct Sanitizer<'a> {
    kind: FnKind,
    role: Role,
    generics: &'a [Ident],
    diags: &'a mut Diagnostics,
}

impl Sanitizer<'_> {
    fn borrowed(&mut self, span_of: &dyn ToTokens) {
        let (message, help) = match (self.kind, self.role) {
            (FnKind::Task, Role::Param) => (
                "a task argument cannot borrow non-`'static` data: task arguments are stored in \
                 the task record and may outlive the caller",
                "pass raw pointers, `gtap::Slice`, indices or `&'static` data",
            ),
            (FnKind::Task, Role::Output) => (
                "a task's result cannot borrow non-`'static` data: it is written into the \
                 parent's record after the task has ended",
                "return owned data, raw pointers or `&'static` data",
            ),
            (FnKind::Kernel, _) => (
                "a kernel's arguments and result cannot borrow: they are copied between the \
                 host and the GPU",
                "pass plain values, `gtap::Slice` / `gtap::SliceMut` views of device buffers, or \
                 `#[derive(gtap::KernelArg)]` structs of those",
            ),
        };
        self.diags.spanned(span_of, with_help(message, help));
    }

    fn is_static(lifetime: Option<&Lifetime>) -> bool {
        lifetime.is_some_and(|l| l.ident == "static")
    }
}

impl VisitMut for Sanitizer<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        match ty {
            Type::ImplTrait(it) => {
                let noun = self.kind.noun();
                let message = match self.role {
                    Role::Param => format!("`impl Trait` is not allowed in {noun} parameters"),
                    Role::Output => format!("`impl Trait` is not allowed as a {noun}'s result"),
                };
                self.diags
                    .spanned(&*it, with_help(message, "name a concrete type"));
                *ty = parse_quote!(());
            }
            Type::Path(p)
                if p.qself.is_none()
                    && p.path
                        .get_ident()
                        .is_some_and(|i| self.generics.contains(i)) =>
            {
                // Already reported as "cannot be generic".
                *ty = parse_quote!(());
            }
            _ => visit_mut::visit_type_mut(self, ty),
        }
    }

    fn visit_type_reference_mut(&mut self, r: &mut TypeReference) {
        if !Self::is_static(r.lifetime.as_ref()) {
            let span_of: Vec<&dyn ToTokens> = match &r.lifetime {
                Some(l) => vec![&r.and_token, l],
                None => vec![&r.and_token],
            };
            let tokens = quote::quote!(#(#span_of)*);
            self.borrowed(&tokens);
            r.lifetime = Some(Lifetime::new("'static", r.and_token.span()));
        }
        self.visit_type_mut(&mut r.elem);
    }

    fn visit_generic_argument_mut(&mut self, arg: &mut GenericArgument) {
        match arg {
            GenericArgument::Lifetime(l) if l.ident != "static" => {
                self.borrowed(l);
                *l = Lifetime::new("'static", l.span());
            }
            _ => visit_mut::visit_generic_argument_mut(self, arg),
        }
    }

    fn visit_type_param_bound_mut(&mut self, bound: &mut TypeParamBound) {
        match bound {
            TypeParamBound::Lifetime(l) if l.ident != "static" => {
                self.borrowed(l);
                *l = Lifetime::new("'static", l.span());
            }
            _ => visit_mut::visit_type_param_bound_mut(self, bound),
        }
    }

    // Function pointers and `Fn(&T)` sugar bind their own (higher-ranked) lifetimes.
    fn visit_type_bare_fn_mut(&mut self, _: &mut syn::TypeBareFn) {}
    fn visit_parenthesized_generic_arguments_mut(
        &mut self,
        _: &mut syn::ParenthesizedGenericArguments,
    ) {
    }
}

/// Sorts the attributes by destination; unsupported ones are errors.
fn sort_attrs(kind: FnKind, attrs: &[Attribute], diags: &mut Diagnostics) -> Attrs {
    let mut out = Attrs::default();
    for attr in attrs {
        let path = attr.path();
        let name = path.get_ident().map(Ident::to_string);
        match name.as_deref() {
            Some("doc" | "deprecated") => out.docs.push(attr.clone()),
            Some("cfg") => out.cfgs.push(attr.clone()),
            Some("allow" | "warn" | "deny" | "forbid" | "expect") => out.lints.push(attr.clone()),
            Some("inline" | "cold") => out.codegen.push(attr.clone()),
            None if path.segments.len() > 1 => out.lints.push(attr.clone()),
            _ => diags.spanned(
                attr,
                with_help(
                    format!("this attribute is not supported on a {}", kind.noun()),
                    "supported are doc comments, `#[cfg]`, `#[deprecated]`, lint levels \
                     (`#[allow]`, ..), `#[inline]`, `#[cold]` and tool attributes",
                ),
            ),
        }
    }
    out
}
