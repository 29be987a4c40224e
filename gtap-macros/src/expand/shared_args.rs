//! Block-mode arguments read from the record after each wait, instead of kept in every
//! thread's frame.
//!
//! A block-mode task's record holds its arguments once, and one frame per thread for what the
//! body keeps across a wait (`gtap_device::block::record`). The future the frames hold
//! (`BlockTask::start_shared`) refers to the record's arguments and binds them as locals at the
//! start of the body; an argument used after a `taskwait!` would be a local live across the
//! wait, saved in every thread's frame. So after each `taskwait!` statement the arguments are
//! bound again from the record:
//!
//! ```text
//! gtap::taskwait!();            gtap::taskwait!();
//! use(node);              →     let (node, _, height) = *__gtap_args;
//!                               use(node);
//! ```
//!
//! and the old binding is dead at the wait. The block token and the launch context
//! parameters are found again the same way (`block_token()`, `launch_context()`), so no frame
//! holds them either. The new binding has the same value (the record's
//! arguments never change), so this is sound for every argument that the body cannot change or
//! bind again: an argument is rebound only if its pattern is a plain name (not `mut`, not
//! `ref`), no pattern in the body binds the same name, and no macro other than gtap's receives
//! the name (a macro could bind it). A wait that ends its block (no `;`) needs no rebinding.
//! A new binding only shadows within its own block, so an argument used after the block that
//! contains a wait is still kept in the frames: correct, only not smaller.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::quote;
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, Ident, Item, Macro, Pat, Stmt};

use crate::names::GtapMacro;

/// The name of the `&'static Args` reference in the generated futures.
pub(crate) fn args_ident() -> Ident {
    Ident::new("__gtap_args", Span::mixed_site())
}

/// Which of `params` (in order) may be bound again after a wait in `body`.
pub(crate) fn rebindable(params: &[Pat], body: &Block) -> Vec<bool> {
    let mut seen = Bound::default();
    seen.visit_block(body);
    params
        .iter()
        .map(|p| match p {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                let name = p.ident.to_string();
                !seen.names.contains(&name) && !seen.in_macros.contains(&name)
            }
            _ => false,
        })
        .collect()
}

/// The arguments read from the record: `*args`, without a second `Copy` error when they are not
/// `Copy` (`BlockTask` reports that).
pub(crate) fn read(args: &Ident) -> TokenStream {
    // SAFETY (of the expansion): `BlockTask`'s arguments are `Copy`.
    quote!(unsafe { ::gtap::__private::block_args(#args) })
}

/// The pattern that binds the rebindable arguments and skips the others: `(a, _, c,)`.
pub(crate) fn pattern(params: &[Pat], rebind: &[bool]) -> TokenStream {
    let pats = params
        .iter()
        .zip(rebind)
        .map(|(p, &r)| if r { quote!(#p) } else { quote!(_) });
    quote!((#(#pats,)*))
}

/// The statement that binds the rebindable arguments again, `let (a, _, c,) = ..;` (`None`
/// when no argument is rebindable).
pub(crate) fn rebinding(params: &[Pat], rebind: &[bool]) -> Option<Stmt> {
    if !rebind.contains(&true) {
        return None;
    }
    let pat = pattern(params, rebind);
    let read = read(&args_ident());
    Some(syn::parse_quote! {
        #[allow(unused_variables)]
        let #pat = #read;
    })
}

/// Inserts `stmts` after every `taskwait!` statement of `body` (nothing when there are none).
pub(crate) fn insert(stmts: &[Stmt], body: &mut Block) {
    if stmts.is_empty() {
        return;
    }
    Inserter {
        stmts: stmts.to_vec(),
    }
    .visit_block_mut(body);
}

/// Names bound by patterns anywhere in a body, and identifiers handed to macros other than
/// gtap's.
#[derive(Default)]
struct Bound {
    names: Vec<String>,
    in_macros: Vec<String>,
}

impl<'ast> Visit<'ast> for Bound {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.names.push(p.ident.to_string());
        visit::visit_pat_ident(self, p);
    }

    fn visit_macro(&mut self, m: &'ast Macro) {
        if GtapMacro::of(&m.path).is_none() {
            idents(m.tokens.clone(), &mut self.in_macros);
        }
    }
}

/// Every identifier in `tokens`, groups included.
fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for t in tokens {
        match t {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

struct Inserter {
    stmts: Vec<Stmt>,
}

/// Whether `stmt` is a `taskwait!` followed by a `;`.
fn is_wait_statement(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Macro(m) => {
            m.semi_token.is_some() && GtapMacro::of(&m.mac.path) == Some(GtapMacro::Wait)
        }
        Stmt::Expr(Expr::Macro(m), Some(_)) => GtapMacro::of(&m.mac.path) == Some(GtapMacro::Wait),
        _ => false,
    }
}

impl VisitMut for Inserter {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mut i = 0;
        while i < block.stmts.len() {
            self.visit_stmt_mut(&mut block.stmts[i]);
            if is_wait_statement(&block.stmts[i]) {
                let n = self.stmts.len();
                block.stmts.splice(i + 1..i + 1, self.stmts.iter().cloned());
                i += n;
            }
            i += 1;
        }
    }

    // Waits are only allowed in the body itself: closures, async blocks and nested items keep
    // their own bindings.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_expr_async_mut(&mut self, _: &mut syn::ExprAsync) {}
    fn visit_item_mut(&mut self, _: &mut Item) {}

    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        visit_mut::visit_stmt_mut(self, stmt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn params(ps: &[&str]) -> Vec<Pat> {
        ps.iter()
            .map(|p| syn::parse::Parser::parse_str(Pat::parse_single, p).unwrap())
            .collect()
    }

    #[test]
    fn plain_unshadowed_arguments_are_rebound_after_each_wait_statement() {
        let ps = params(&["node", "mut depth", "(a, b)", "out", "seen", "named"]);
        let mut body: Block = syn::parse_quote!({
            let seen = 1;
            my_macro!(named);
            gtap::taskwait!();
            if node > 0 {
                gtap::taskwait!();
                use_it(node, out);
            }
            gtap::taskwait!()
        });
        let rebind = rebindable(&ps, &body);
        assert_eq!(rebind, [true, false, false, true, false, false]);
        insert(rebinding(&ps, &rebind).as_slice(), &mut body);
        let text = body.to_token_stream().to_string();
        // After the first wait and the nested one; not after the tail wait.
        assert_eq!(
            text.matches("let (node , _ , _ , out , _ , _ ,) = unsafe { :: gtap :: __private :: block_args (__gtap_args) }")
                .count(),
            2,
            "{text}"
        );
    }

    #[test]
    fn nothing_is_inserted_when_no_argument_can_be_rebound() {
        let ps = params(&["mut n"]);
        let mut body: Block = syn::parse_quote!({
            gtap::taskwait!();
            n += 1;
        });
        let rebind = rebindable(&ps, &body);
        insert(rebinding(&ps, &rebind).as_slice(), &mut body);
        assert!(!body.to_token_stream().to_string().contains("__gtap_args"));
    }

    #[test]
    fn waits_inside_closures_and_items_are_left_alone() {
        let ps = params(&["n"]);
        let mut body: Block = syn::parse_quote!({
            let f = || {
                gtap::taskwait!();
            };
            fn inner() {
                gtap::taskwait!();
            }
        });
        let rebind = rebindable(&ps, &body);
        insert(rebinding(&ps, &rebind).as_slice(), &mut body);
        assert!(!body.to_token_stream().to_string().contains("__gtap_args"));
    }
}
