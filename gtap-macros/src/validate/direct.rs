//! Rule 2: a task function is never called directly, not even from another task function.
//!
//! Outside gtap bodies the direct-call trap that `#[gtap::function]` puts in the value
//! namespace reports such calls through the type checker. Inside a task function or kernel the
//! macro knows some task functions by name and reports calls to them here, with a message that
//! says which macro to use: the function itself, and every path used as a `task!` or `entry!`
//! target in the same body.

use std::collections::HashSet;

use syn::visit::{self, Visit};
use syn::{Expr, ExprCall, Item, Macro, Path};

use crate::diagnostics::with_help;
use crate::names::{GtapMacro, path_key, snippet};
use crate::parse::{EntryInput, FnKind, TaskInput};

/// Paths known to name task functions in one body.
pub(crate) struct Known {
    paths: HashSet<String>,
}

impl Known {
    /// The function's own name (for a task function) and every `task!`/`entry!` target found
    /// in `body`.
    pub(crate) fn collect(kind: FnKind, own_name: &syn::Ident, body: &syn::Block) -> Self {
        let mut paths = HashSet::new();
        if kind == FnKind::Task {
            paths.insert(own_name.to_string());
        }
        let mut collector = Collector { paths: &mut paths };
        collector.visit_block(body);
        Self { paths }
    }

    /// Whether `path` names a known task function.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        self.paths.contains(&path_key(path))
    }

    /// The called path if `expr` is a call of a known task function.
    pub(crate) fn call<'e>(&self, expr: &'e Expr) -> Option<&'e ExprCall> {
        match expr {
            Expr::Call(call) => match &*call.func {
                Expr::Path(p) if p.qself.is_none() && self.contains(&p.path) => Some(call),
                _ => None,
            },
            _ => None,
        }
    }

    /// The first call of a known task function inside `expr`, at any depth.
    pub(crate) fn find_call<'e>(&self, expr: &'e Expr) -> Option<&'e ExprCall> {
        struct Find<'k, 'e> {
            known: &'k Known,
            found: Option<&'e ExprCall>,
        }
        impl<'e> Visit<'e> for Find<'_, 'e> {
            fn visit_expr(&mut self, e: &'e Expr) {
                if self.found.is_none() {
                    if let Some(call) = self.known.call(e) {
                        self.found = Some(call);
                    } else {
                        visit::visit_expr(self, e);
                    }
                }
            }
            fn visit_item(&mut self, _: &'e Item) {}
        }
        let mut find = Find {
            known: self,
            found: None,
        };
        find.visit_expr(expr);
        find.found
    }
}

/// Visits a body for `task!`/`entry!` targets (not inside nested items).
struct Collector<'a> {
    paths: &'a mut HashSet<String>,
}

impl Collector<'_> {
    fn target(&mut self, call: &Expr) {
        let call = match call {
            Expr::Assign(a) => &*a.right,
            other => other,
        };
        if let Expr::Call(c) = call
            && let Expr::Path(p) = &*c.func
            && p.qself.is_none()
        {
            self.paths.insert(path_key(&p.path));
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_macro(&mut self, mac: &'ast Macro) {
        match GtapMacro::of(&mac.path) {
            Some(GtapMacro::Task) => {
                if let Ok(input) = mac.parse_body::<TaskInput>() {
                    self.target(&input.spawn);
                }
            }
            Some(GtapMacro::Entry) => {
                if let Ok(input) = mac.parse_body::<EntryInput>() {
                    self.target(&input.call);
                }
            }
            _ => {}
        }
    }

    /// A nested item is another function (a nested `#[gtap::function]` has its own body).
    fn visit_item(&mut self, _: &'ast Item) {}
}

/// The error for a direct call of a known task function inside a `kind` body.
pub(crate) fn direct_call_error(kind: FnKind, call: &ExprCall) -> syn::Error {
    let callee = snippet(&call.func);
    let help = match kind {
        FnKind::Task => format!(
            "spawn it as a child with `gtap::task!(x = {callee}(..))` and join it with \
             `gtap::taskwait!()`"
        ),
        FnKind::Kernel => format!("start it as the root task with `gtap::entry!({callee}(..))`"),
    };
    syn::Error::new_spanned(
        call,
        with_help(
            format!("`{callee}` is a gtap task function and cannot be called directly"),
            help,
        ),
    )
}
