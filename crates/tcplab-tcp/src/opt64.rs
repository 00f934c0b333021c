//! [`Opt64`]: an `Option<u64>` in 8 bytes instead of 16.
//!
//! An endpoint carries a dozen optional times and sequence offsets (deadlines, the FIN's
//! offset, the handshake's send time...); as `Option<u64>` each takes 16 bytes, and an idle
//! connection pays for all of them (issue 28: idle flows ≤ 2 KB each). Here `u64::MAX` stands
//! for `None`: no time in nanoseconds (584 years) and no offset in a sequence space reaches it.
//! [`Opt64::some`] checks that in debug builds (the tests).

use std::fmt;

/// `Option<u64>` with `u64::MAX` as `None` (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Opt64(u64);

impl Opt64 {
    pub const NONE: Opt64 = Opt64(u64::MAX);

    /// `Some(v)`; `v` must not be `u64::MAX`.
    #[inline]
    pub fn some(v: u64) -> Opt64 {
        debug_assert!(v != u64::MAX, "Opt64 cannot hold u64::MAX");
        Opt64(v)
    }

    #[inline]
    pub fn get(self) -> Option<u64> {
        if self.0 == u64::MAX {
            None
        } else {
            Some(self.0)
        }
    }

    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != u64::MAX
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == u64::MAX
    }

    /// The value, leaving `None` in its place.
    #[inline]
    pub fn take(&mut self) -> Option<u64> {
        std::mem::replace(self, Opt64::NONE).get()
    }
}

impl Default for Opt64 {
    fn default() -> Opt64 {
        Opt64::NONE
    }
}

impl From<Option<u64>> for Opt64 {
    #[inline]
    fn from(v: Option<u64>) -> Opt64 {
        v.map_or(Opt64::NONE, Opt64::some)
    }
}

impl fmt::Debug for Opt64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::Opt64;

    #[test]
    fn holds_every_value_but_the_largest_and_none() {
        for v in [0u64, 1, 1 << 40, u64::MAX - 1] {
            let mut o = Opt64::some(v);
            assert_eq!(o.get(), Some(v));
            assert!(o.is_some());
            assert_eq!(o.take(), Some(v));
            assert_eq!(o, Opt64::NONE);
            assert_eq!(o.take(), None);
        }
        assert_eq!(Opt64::default().get(), None);
        assert_eq!(Opt64::from(Some(7)).get(), Some(7));
        assert_eq!(Opt64::from(None).get(), None);
        assert_eq!(std::mem::size_of::<Opt64>(), 8);
    }
}
