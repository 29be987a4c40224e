//! Structural facts about one statement, computed before the body walk rewrites it: whether it
//! waits on every path, whether it waits at all, and which `break`/`continue`s leave it.

use syn::visit::{self, Visit};
use syn::{Block, Expr, ExprBreak, ExprContinue, Item, Lifetime, Macro, Stmt};

use crate::names::GtapMacro;

/// A `break` or `continue` that leaves the statement it appears in.
#[derive(Clone)]
pub(crate) struct Escape {
    /// Its label, if any.
    pub(crate) label: Option<String>,
    /// `"break"` or `"continue"`.
    pub(crate) keyword: &'static str,
    /// Where it is.
    pub(crate) span: proc_macro2::Span,
}

/// What the scope rule needs to know about a statement.
pub(crate) struct StmtFacts {
    /// Every path through the statement that completes normally passes a `taskwait!`.
    pub(crate) waits: bool,
    /// A `taskwait!` appears somewhere in it (outside closures, async blocks and items).
    pub(crate) any_wait: bool,
    /// The `break`s and `continue`s that leave it.
    pub(crate) escapes: Vec<Escape>,
}

impl StmtFacts {
    /// Computes the facts of `stmt`.
    pub(crate) fn of(stmt: &Stmt) -> Self {
        let mut scan = Scan::default();
        scan.visit_stmt(stmt);
        Self {
            waits: stmt_waits(stmt),
            any_wait: scan.any_wait,
            escapes: scan.escapes,
        }
    }
}

fn is_wait(mac: &Macro) -> bool {
    GtapMacro::of(&mac.path) == Some(GtapMacro::Wait)
}

fn stmt_waits(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Macro(m) => is_wait(&m.mac),
        Stmt::Expr(e, _) => expr_waits(e),
        Stmt::Local(l) => l.init.as_ref().is_some_and(|i| expr_waits(&i.expr)),
        Stmt::Item(_) => false,
    }
}

fn block_waits(block: &Block) -> bool {
    block.stmts.iter().any(stmt_waits)
}

/// Whether every normally completing path through `expr` passes a `taskwait!`.
fn expr_waits(expr: &Expr) -> bool {
    match expr {
        Expr::Macro(m) => is_wait(&m.mac),
        Expr::Block(b) => block_waits(&b.block),
        Expr::Unsafe(u) => block_waits(&u.block),
        Expr::Loop(l) => block_waits(&l.body),
        Expr::Paren(p) => expr_waits(&p.expr),
        Expr::Let(l) => expr_waits(&l.expr),
        Expr::Assign(a) => expr_waits(&a.left) || expr_waits(&a.right),
        Expr::If(i) => {
            expr_waits(&i.cond)
                || i.else_branch
                    .as_ref()
                    .is_some_and(|(_, e)| block_waits(&i.then_branch) && expr_waits(e))
        }
        Expr::Match(m) => expr_waits(&m.expr) || m.arms.iter().all(|a| expr_waits(&a.body)),
        _ => false,
    }
}

/// Finds waits and escaping jumps, tracking the loops and labels entered inside the statement.
#[derive(Default)]
struct Scan {
    any_wait: bool,
    escapes: Vec<Escape>,
    loops: usize,
    labels: Vec<String>,
}

impl Scan {
    fn jump(&mut self, label: Option<&Lifetime>, keyword: &'static str, span: proc_macro2::Span) {
        let escapes = match label {
            Some(l) => !self.labels.iter().any(|x| l.ident == x),
            None => self.loops == 0,
        };
        if escapes {
            self.escapes.push(Escape {
                label: label.map(|l| l.ident.to_string()),
                keyword,
                span,
            });
        }
    }

    fn enter(&mut self, label: Option<&syn::Label>, is_loop: bool, f: impl FnOnce(&mut Self)) {
        if let Some(l) = label {
            self.labels.push(l.name.ident.to_string());
        }
        self.loops += usize::from(is_loop);
        f(self);
        self.loops -= usize::from(is_loop);
        if label.is_some() {
            self.labels.pop();
        }
    }
}

impl<'a> Visit<'a> for Scan {
    fn visit_macro(&mut self, mac: &'a Macro) {
        self.any_wait |= is_wait(mac);
    }
    fn visit_expr_break(&mut self, b: &'a ExprBreak) {
        self.jump(b.label.as_ref(), "break", b.break_token.span);
        visit::visit_expr_break(self, b);
    }
    fn visit_expr_continue(&mut self, c: &'a ExprContinue) {
        self.jump(c.label.as_ref(), "continue", c.continue_token.span);
    }
    fn visit_expr_loop(&mut self, l: &'a syn::ExprLoop) {
        self.enter(l.label.as_ref(), true, |s| visit::visit_expr_loop(s, l));
    }
    fn visit_expr_while(&mut self, w: &'a syn::ExprWhile) {
        self.enter(w.label.as_ref(), true, |s| visit::visit_expr_while(s, w));
    }
    fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
        self.enter(f.label.as_ref(), true, |s| visit::visit_expr_for_loop(s, f));
    }
    fn visit_expr_block(&mut self, b: &'a syn::ExprBlock) {
        self.enter(b.label.as_ref(), false, |s| visit::visit_expr_block(s, b));
    }
    // Jumps and waits inside these belong to another body.
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'a Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn definite_waits() {
        let s: Stmt = parse_quote!(gtap::taskwait!(););
        assert!(StmtFacts::of(&s).waits);
        let s: Stmt = parse_quote!(if c { taskwait!() } else { gtap::taskwait!() });
        assert!(StmtFacts::of(&s).waits);
        let s: Stmt = parse_quote!(if c {
            taskwait!()
        });
        let f = StmtFacts::of(&s);
        assert!(!f.waits && f.any_wait);
        let s: Stmt = parse_quote!(match k {
            0 => taskwait!(queue(0)),
            _ => {
                taskwait!();
            }
        });
        assert!(StmtFacts::of(&s).waits);
        let s: Stmt = parse_quote!(let v = || taskwait!(););
        assert!(!StmtFacts::of(&s).any_wait);
    }

    #[test]
    fn escapes() {
        let s: Stmt = parse_quote!(if c {
            break;
        });
        assert_eq!(StmtFacts::of(&s).escapes.len(), 1);
        let s: Stmt = parse_quote!(for i in 0..3 {
            if i > 1 {
                break;
            }
            continue;
        });
        assert!(StmtFacts::of(&s).escapes.is_empty());
        let s: Stmt = parse_quote!('a: {
            if c {
                break 'a;
            }
        });
        assert!(StmtFacts::of(&s).escapes.is_empty());
        let s: Stmt = parse_quote!(loop {
            break 'outer;
        });
        assert_eq!(StmtFacts::of(&s).escapes[0].label.as_deref(), Some("outer"));
    }
}
