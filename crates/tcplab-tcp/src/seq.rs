//! Sequence-number arithmetic modulo 2³² (RFC 793 §3.3, BSD `SEQ_LT`/`SEQ_GT` in tcp_seq.h).
//!
//! The wire carries 32-bit sequence numbers; comparisons are done on the signed 32-bit difference,
//! valid while the two numbers are less than 2³¹ apart. The endpoint converts wire numbers to
//! 64-bit offsets with [`unwrap`] relative to a reference it already knows (snd_una, rcv_nxt).

#[inline]
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
#[inline]
pub fn seq_leq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}
#[inline]
pub fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
#[inline]
pub fn seq_geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// Unwrap a wire sequence number `wire` into the 64-bit space, given a reference point whose
/// 64-bit value is `ref64` and whose wire value is `ref_wire`. Returns `None` if the result would
/// be negative (a number from before the start of the connection).
#[inline]
pub fn unwrap(wire: u32, ref_wire: u32, ref64: u64) -> Option<u64> {
    let d = wire.wrapping_sub(ref_wire) as i32 as i64;
    let v = ref64 as i64 + d;
    if v < 0 {
        None
    } else {
        Some(v as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn wrapping_compare() {
        assert!(seq_lt(u32::MAX - 5, 3));
        assert!(seq_gt(3, u32::MAX - 5));
        assert!(seq_leq(7, 7) && seq_geq(7, 7));
        assert_eq!(unwrap(3, u32::MAX - 5, 100), Some(109));
        assert_eq!(unwrap(u32::MAX - 5, 3, 109), Some(100));
        assert_eq!(unwrap(0, 10, 5), None);
    }

    #[test]
    fn each_comparison_is_false_where_it_must_be() {
        // Equal numbers: neither strictly less nor strictly greater.
        assert!(!seq_lt(7, 7) && !seq_gt(7, 7));
        // Across the wrap, the other way round.
        assert!(!seq_lt(3, u32::MAX - 5) && !seq_leq(3, u32::MAX - 5));
        assert!(!seq_gt(u32::MAX - 5, 3) && !seq_geq(u32::MAX - 5, 3));
        // Half the space apart minus one: still ordered by the signed difference.
        assert!(seq_lt(0, (1 << 31) - 1) && seq_gt((1 << 31) - 1, 0));
    }

    #[test]
    fn strict_and_non_strict_differ_only_at_equality() {
        // Every comparison, on a < b, a == b, a > b (and across the wrap), exactly as RFC 793.
        for (a, b) in [(5u32, 9u32), (u32::MAX - 1, 2)] {
            assert_eq!((seq_lt(a, b), seq_leq(a, b), seq_gt(a, b), seq_geq(a, b)), (true, true, false, false), "{a} < {b}");
            assert_eq!((seq_lt(b, a), seq_leq(b, a), seq_gt(b, a), seq_geq(b, a)), (false, false, true, true), "{b} > {a}");
            assert_eq!((seq_lt(a, a), seq_leq(a, a), seq_gt(a, a), seq_geq(a, a)), (false, true, false, true), "{a} = {a}");
        }
    }

    #[test]
    fn unwrap_at_zero_and_the_reference_itself() {
        assert_eq!(unwrap(10, 10, 0), Some(0));
        assert_eq!(unwrap(10, 10, 77), Some(77));
        assert_eq!(unwrap(9, 10, 0), None);
        assert_eq!(unwrap(11, 10, 0), Some(1));
    }
}
