//! Unit tests of the body walk: lowering, and the rules with no false positives on the shapes
//! they must accept.

use proc_macro2::TokenStream;

use super::*;
use quote::{ToTokens, quote};

fn lowered(body: TokenStream) -> (String, Option<String>) {
    let mut block: Block = syn::parse2(quote!({ #body })).unwrap();
    let name: Ident = syn::parse_quote!(f);
    let params: Vec<Pat> = vec![syn::parse_quote!(n)];
    let known = Known::collect(FnKind::Task, &name, &block);
    let launch: Ident = syn::parse_quote!(__gtap_launch);
    let context = quote!(());
    let body = Body {
        block_mode: false,
        queues: 0,
        context: &context,
        kind: FnKind::Task,
        name: &name,
        params: &params,
        known: &known,
        launch: &launch,
    };
    let mut diags = Diagnostics::new();
    walk(&body, &mut block, &mut diags);
    let errors = diags.into_error().map(|e| {
        e.into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n---\n")
    });
    (block.to_token_stream().to_string(), errors)
}

#[test]
fn accepts_fib() {
    let (_, errors) = lowered(quote! {
        if n < 2 { return n as u64; }
        let (mut a, mut b) = (0, 0);
        gtap::task!(a = f(n - 1));
        gtap::task!(queue(1), b = f(n - 2));
        gtap::taskwait!();
        a + b
    });
    assert_eq!(errors, None);
}

#[test]
fn read_before_wait() {
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(n - 1));
        let c = a + 1;
        gtap::taskwait!();
        c
    });
    assert!(errors.unwrap().contains("`a` is used before"));
}

#[test]
fn nested_scope_needs_a_definite_wait() {
    let (_, errors) = lowered(quote! {
        let mut s = 0;
        for i in 0..n {
            let mut a = 0;
            gtap::task!(a = f(i));
            if i > 2 { break; }
            gtap::taskwait!();
            s += a;
        }
        s
    });
    assert!(
        errors
            .unwrap()
            .contains("this `break` leaves the scope of `a`")
    );
    let (_, errors) = lowered(quote! {
        let mut s = 0;
        for i in 0..n {
            let mut a = 0;
            gtap::task!(a = f(i));
            gtap::taskwait!();
            if i > 2 { break; }
            s += a;
        }
        s
    });
    assert_eq!(errors, None);
}

#[test]
fn no_false_positives_on_accepted_shapes() {
    let cases = [
        // A wait on both branches of an `if` inside the declaring block.
        quote! {
            let mut acc = 0;
            for i in 0..n {
                let mut x = 0;
                gtap::task!(x = f(i));
                if i % 2 == 0 { gtap::taskwait!(); } else { gtap::taskwait!(queue(1)); }
                acc += x;
            }
            acc
        },
        // A `break` of an inner loop stays in the destination's scope.
        quote! {
            for i in 0..n {
                let mut x = 0;
                gtap::task!(x = f(i));
                for j in 0..3 { if j == 1 { break; } }
                gtap::taskwait!();
                let _ = x;
            }
        },
        // A `loop` whose body waits first.
        quote! {
            {
                let mut x = 0;
                gtap::task!(x = f(1));
                loop { gtap::taskwait!(); break; }
                let _ = x;
            }
        },
        // `continue` and `break` out of a loop around indexed spawns, with the wait after.
        quote! {
            let done = {
                let mut parts = [0; 4];
                for i in 0..4 {
                    gtap::task!(parts[i] = f(i));
                    if i == 1 { continue; }
                    if i == 2 { break; }
                }
                gtap::taskwait!();
                parts
            };
            done[0]
        },
        // A `let` rebinding ends the tracking; a parameter as destination.
        quote! {
            let mut a = 0;
            gtap::task!(a = f(1));
            let a = 5;
            gtap::task!(n = f(a));
            gtap::taskwait!();
            a + n
        },
        // Early returns between the spawn and the wait.
        quote! {
            let mut a = 0;
            {
                let mut b = 0;
                gtap::task!(b = f(1));
                if n == 0 { return 0; }
                gtap::taskwait!();
                a += b;
            }
            gtap::task!(a = f(2));
            gtap::taskwait!();
            a
        },
    ];
    for case in cases {
        let text = case.to_string();
        let (_, errors) = lowered(case);
        assert_eq!(errors, None, "{text}");
    }
}

#[test]
fn labeled_break_past_the_wait() {
    let (_, errors) = lowered(quote! {
        'outer: for i in 0..n {
            let mut x = 0;
            gtap::task!(x = f(i));
            for _ in 0..2 { if i > 1 { break 'outer; } }
            gtap::taskwait!();
            let _ = x;
        }
    });
    assert!(
        errors
            .unwrap()
            .contains("this `break` leaves the scope of `x`")
    );
}

#[test]
fn mentions_in_closures_and_macros() {
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(1));
        let g = || a + 1;
        gtap::taskwait!();
        g()
    });
    assert!(errors.unwrap().contains("`a` is used before"));
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(1));
        gtap::taskwait!();
        let g = || a + 1;
        assert_eq!(g(), a + 1, "{a}");
        a
    });
    assert_eq!(errors, None);
}

#[test]
fn shadowing_bindings_are_other_variables() {
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(1));
        let g = |a: u64| a + 1;
        let k = match n { a => a };
        gtap::taskwait!();
        g(a) + k
    });
    assert_eq!(errors, None);
    // A `let` in an inner block shadows only inside it.
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(1));
        { let a = 2; let _ = a; }
        let early = a;
        gtap::taskwait!();
        early
    });
    assert!(errors.unwrap().contains("`a` is used before"));
}

#[test]
fn top_level_destination_needs_some_later_wait() {
    let (_, errors) = lowered(quote! {
        let mut a = 0;
        gtap::task!(a = f(n));
    });
    assert!(errors.unwrap().contains("no `gtap::taskwait!()` follows"));
}
