//! `TaskFunction::poll_spawned`: the functions a task function spawns directly, which the
//! scheduler of a kernel rooted at it polls with direct calls (see that method in
//! `gtap-device`).
//!
//! The method sits at the function's item scope, not inside its body, so a `task!` target has
//! to name the same function there as in the body. The body's top-level `use` items are copied
//! into the method. A target that may name something only the body can see (an item declared
//! in the body, a name a `use` in a nested block brings in) is left out: its records are polled
//! through their poll pointer, as every record was before. A body with a `#[cfg]` or
//! `#[cfg_attr]` on any of its statements or expressions gets no method at all: a target under
//! a configuration that is off may not exist.

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::visit::Visit;
use syn::{Block, Expr, Item, ItemUse, Macro, Path, Stmt, UseTree};

use crate::names::{GtapMacro, path_key};
use crate::parse::TaskInput;

/// What a body spawns, as [`collect`] found it.
pub(crate) struct Spawned {
    /// The `task!` targets that name the same function at the item's scope, deduplicated, in
    /// order of appearance; the function itself left out.
    targets: Vec<Path>,
    /// The body's top-level `use` items.
    uses: Vec<ItemUse>,
}

/// The `task!` targets of `body` (a task function named `own`) and the `use` items they may
/// rely on.
pub(crate) fn collect(own: &Ident, body: &Block) -> Spawned {
    let mut scan = Scan::default();
    let mut uses = Vec::new();
    for stmt in &body.stmts {
        match stmt {
            Stmt::Item(Item::Use(u)) => uses.push(u.clone()),
            Stmt::Item(item) => scan.declare(item),
            other => scan.visit_stmt(other),
        }
    }
    if scan.conditional {
        return Spawned {
            targets: Vec::new(),
            uses,
        };
    }
    let mut seen = HashSet::new();
    let targets = scan
        .targets
        .into_iter()
        .filter(|p| !p.is_ident(own) && scan.hidden.visible(p))
        .filter(|p| seen.insert(path_key(p)))
        .collect();
    Spawned { targets, uses }
}

/// The `poll_spawned` method of the function's `TaskFunction` impl (nothing when it spawns no
/// other function: the trait's default).
pub(crate) fn poll_spawned(spawned: &Spawned) -> TokenStream {
    let Spawned { targets, uses } = spawned;
    if targets.is_empty() {
        return TokenStream::new();
    }
    let request = Ident::new("__gtap_request", Span::mixed_site());
    let done = Ident::new("__gtap_done", Span::mixed_site());
    quote! {
        #[inline(always)]
        #[allow(unused_imports)]
        unsafe fn poll_spawned(
            #request: &::gtap::__private::PollRequest,
        ) -> ::core::option::Option<bool> {
            #(#uses)*
            // Each target as a generic argument, as in the `task!` expansion: a target that is not
            // a task function then fails there with the same error, which is reported once.
            #(
                // SAFETY: the caller's contract is `poll_child`'s.
                if let ::core::option::Option::Some(#done) = unsafe {
                    ::gtap::__private::poll_child::<#targets>(#request)
                } {
                    return ::core::option::Option::Some(#done);
                }
            )*
            ::core::option::Option::None
        }
    }
}

/// Names a body declares that the item's scope does not see.
#[derive(Default)]
struct Hidden {
    names: HashSet<String>,
    /// A glob `use` inside a nested block: any name may come from it.
    glob: bool,
}

impl Hidden {
    /// Whether `path` names the same thing at the item's scope as in the body.
    fn visible(&self, path: &Path) -> bool {
        let Some(first) = path.segments.first() else {
            return false;
        };
        let first = first.ident.to_string();
        if path.leading_colon.is_some() || ["crate", "self", "super"].contains(&first.as_str()) {
            return true;
        }
        !self.glob && !self.names.contains(&first)
    }

    fn add_use(&mut self, tree: &UseTree) {
        match tree {
            UseTree::Path(p) => self.add_use(&p.tree),
            UseTree::Name(n) if n.ident == "self" => self.glob = true,
            UseTree::Name(n) => {
                self.names.insert(n.ident.to_string());
            }
            UseTree::Rename(r) => {
                self.names.insert(r.rename.to_string());
            }
            UseTree::Glob(_) => self.glob = true,
            UseTree::Group(g) => g.items.iter().for_each(|t| self.add_use(t)),
        }
    }
}

/// Walks a body for `task!` targets, noting the names it declares on the way.
#[derive(Default)]
struct Scan {
    targets: Vec<Path>,
    hidden: Hidden,
    /// A `#[cfg]` or `#[cfg_attr]` inside the body.
    conditional: bool,
}

impl Scan {
    /// An item of the body: its name is the body's alone (a nested `use` brings in names the
    /// item's scope may not have).
    fn declare(&mut self, item: &Item) {
        let name = match item {
            Item::Use(u) => return self.hidden.add_use(&u.tree),
            Item::Const(i) => &i.ident,
            Item::Enum(i) => &i.ident,
            Item::Fn(i) => &i.sig.ident,
            Item::Mod(i) => &i.ident,
            Item::Static(i) => &i.ident,
            Item::Struct(i) => &i.ident,
            Item::Trait(i) => &i.ident,
            Item::Type(i) => &i.ident,
            Item::Union(i) => &i.ident,
            Item::Macro(i) => match &i.ident {
                Some(ident) => ident,
                // A macro call in item position may declare anything.
                None => return self.hidden.glob = true,
            },
            _ => return,
        };
        self.hidden.names.insert(name.to_string());
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_macro(&mut self, mac: &'ast Macro) {
        if GtapMacro::of(&mac.path) != Some(GtapMacro::Task) {
            return;
        }
        let Ok(input) = mac.parse_body::<TaskInput>() else {
            return;
        };
        let call = match &input.spawn {
            Expr::Assign(a) => &*a.right,
            other => other,
        };
        if let Expr::Call(c) = call
            && let Expr::Path(p) = &*c.func
            && p.qself.is_none()
        {
            self.targets.push(p.path.clone());
        }
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr") {
            self.conditional = true;
        }
    }

    /// A nested item is another scope: only its name matters here.
    fn visit_item(&mut self, item: &'ast Item) {
        self.declare(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(body: Block) -> Vec<String> {
        let own: Ident = syn::parse_quote!(me);
        collect(&own, &body).targets.iter().map(path_key).collect()
    }

    #[test]
    fn targets_are_deduplicated_without_the_function_itself() {
        let body: Block = syn::parse_quote!({
            gtap::task!(a = me(n - 1));
            gtap::task!(queue(1), b = leaf(n));
            if n > 3 {
                gtap::task!(leaf(n - 2));
                gtap::task!(other::deep(n));
            }
            gtap::taskwait!();
        });
        assert_eq!(targets(body), ["leaf", "other::deep"]);
    }

    #[test]
    fn names_the_body_declares_are_left_out() {
        let body: Block = syn::parse_quote!({
            use crate::kids::leaf;
            fn helper() {}
            {
                use crate::more::nested;
                gtap::task!(nested(1));
            }
            gtap::task!(leaf(1));
            gtap::task!(helper(1));
            gtap::task!(crate::far::away(1));
        });
        let spawned = collect(&syn::parse_quote!(me), &body);
        assert_eq!(spawned.uses.len(), 1, "the top-level use is copied");
        assert_eq!(targets(body), ["leaf", "crate::far::away"]);
    }

    #[test]
    fn a_configured_statement_leaves_out_every_target() {
        let body: Block = syn::parse_quote!({
            gtap::task!(leaf(1));
            #[cfg(feature = "extra")]
            gtap::task!(extra(1));
        });
        assert!(targets(body).is_empty());
    }

    #[test]
    fn a_nested_glob_use_leaves_out_every_plain_name() {
        let body: Block = syn::parse_quote!({
            {
                use crate::kids::*;
            }
            gtap::task!(leaf(1));
            gtap::task!(super::kid(1));
        });
        assert_eq!(targets(body), ["super::kid"]);
    }
}
