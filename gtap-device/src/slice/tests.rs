//! The views' bounds, splits and joins on host memory.

use std::panic::catch_unwind;
use std::vec::Vec;

use super::{Part, Slice, SliceMut};

fn part_of(values: &mut [u32]) -> Part<u32> {
    // SAFETY: the tests use `values` only through the part while it lives.
    unsafe { SliceMut::from_raw_parts(values.as_mut_ptr(), values.len()).claim() }
}

#[test]
fn lent_halves_join_back_into_the_whole() {
    let mut values: Vec<u32> = (0..10).collect();
    let (mut left, mut right, loan) = part_of(&mut values).lend(4);
    assert_eq!((left.len(), right.len()), (4, 6));
    left.iter_mut().for_each(|v| *v += 100);
    right[0] = 7;
    let whole = loan.join(left, right);
    assert_eq!(&*whole, &[100, 101, 102, 103, 7, 5, 6, 7, 8, 9]);
}

#[test]
fn splits_at_the_ends_give_empty_parts() {
    let mut values = [1u32, 2, 3];
    let (empty, all, loan) = part_of(&mut values).lend(0);
    assert!(empty.is_empty());
    let whole = loan.join(empty, all);
    let (all, empty, loan) = whole.lend(3);
    assert!(empty.is_empty());
    assert_eq!(loan.join(all, empty).len(), 3);
}

#[test]
fn join_rejects_swapped_or_foreign_halves() {
    let mut values = [0u32; 8];
    let mut other = [0u32; 4];
    let swapped = catch_unwind(|| {
        let (left, right, loan) = part_of(&mut values.clone()).lend(4);
        loan.join(right, left)
    });
    assert!(swapped.is_err());
    let foreign = catch_unwind(move || {
        let (left, _right, loan) = part_of(&mut values).lend(4);
        loan.join(left, part_of(&mut other))
    });
    assert!(foreign.is_err());
}

#[test]
fn range_takes_every_kind_of_range_and_rejects_bad_ones() {
    let values: Vec<u32> = (0..6).collect();
    // SAFETY: `values` outlives the view and is not modified.
    let all = unsafe { Slice::from_raw_parts(values.as_ptr(), values.len()) };
    assert_eq!(&*all.range(1..3), &[1, 2]);
    assert_eq!(&*all.range(4..), &[4, 5]);
    assert_eq!(&*all.range(..=1), &[0, 1]);
    assert_eq!(all.range(..).len(), 6);
    assert!(all.range(6..).is_empty());
    let (start, end) = (3, 2);
    assert!(catch_unwind(|| all.range(start..end)).is_err());
    assert!(catch_unwind(|| all.range(..7)).is_err());
    assert!(catch_unwind(|| all.range(..=usize::MAX)).is_err());
    let (left, right) = all.split_at(2);
    assert_eq!((left[1], right[0]), (1, 2));
    assert!(catch_unwind(|| all.split_at(7)).is_err());
}

#[test]
fn out_of_bounds_indices_panic_with_the_views_message() {
    let mut values = [5u32; 3];
    let part = part_of(&mut values);
    let message = catch_unwind(move || part[3])
        .expect_err("index 3 of 3 values")
        .downcast::<&str>()
        .ok()
        .map(|m| *m);
    assert_eq!(message, Some("gtap slice index out of bounds"));
}

#[test]
fn shared_mut_views_split_and_index_like_the_others() {
    let mut values = [1u64, 2, 3, 4];
    // SAFETY: `values` outlives the view and is only used through it.
    let view = unsafe { SliceMut::from_raw_parts(values.as_mut_ptr(), 4) };
    let (left, right) = view.split_at(1);
    assert_eq!(right.atomic_add(0, 10), 2);
    assert_eq!(left.range(..1).atomic_add(0, 0), 1);
    assert!(catch_unwind(|| right.atomic_add(3, 1)).is_err());
    assert_eq!(values, [1, 12, 3, 4]);
}
