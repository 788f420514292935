//! Operator boilerplate shared by the field types.

/// `+`, `-`, unary `-` as XOR / identity for a characteristic-2 newtype over an integer.
/// (Addition in characteristic 2 *is* XOR, hence the clippy allowances.)
macro_rules! impl_char2_additive {
    ($t:ty) => {
        impl core::ops::Add for $t {
            type Output = Self;
            #[inline]
            #[allow(clippy::suspicious_arithmetic_impl)]
            fn add(self, rhs: Self) -> Self {
                Self(self.0 ^ rhs.0)
            }
        }
        impl core::ops::AddAssign for $t {
            #[inline]
            #[allow(clippy::suspicious_op_assign_impl)]
            fn add_assign(&mut self, rhs: Self) {
                self.0 ^= rhs.0;
            }
        }
        impl core::ops::Sub for $t {
            type Output = Self;
            #[inline]
            #[allow(clippy::suspicious_arithmetic_impl)]
            fn sub(self, rhs: Self) -> Self {
                Self(self.0 ^ rhs.0)
            }
        }
        impl core::ops::SubAssign for $t {
            #[inline]
            #[allow(clippy::suspicious_op_assign_impl)]
            fn sub_assign(&mut self, rhs: Self) {
                self.0 ^= rhs.0;
            }
        }
        impl core::ops::Neg for $t {
            type Output = Self;
            #[inline]
            fn neg(self) -> Self {
                self
            }
        }
    };
}

/// `*`, `*=` from an inherent `fn mul_elem(self, Self) -> Self`, plus `Sum` and `Product`.
macro_rules! impl_mul_sum_product {
    ($t:ty) => {
        impl core::ops::Mul for $t {
            type Output = Self;
            #[inline]
            fn mul(self, rhs: Self) -> Self {
                self.mul_elem(rhs)
            }
        }
        impl core::ops::MulAssign for $t {
            #[inline]
            fn mul_assign(&mut self, rhs: Self) {
                *self = self.mul_elem(rhs);
            }
        }
        impl core::iter::Sum for $t {
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold(<$t as $crate::Field>::ZERO, |a, b| a + b)
            }
        }
        impl<'a> core::iter::Sum<&'a $t> for $t {
            fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.fold(<$t as $crate::Field>::ZERO, |a, b| a + *b)
            }
        }
        impl core::iter::Product for $t {
            fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold(<$t as $crate::Field>::ONE, |a, b| a * b)
            }
        }
    };
}

/// `Debug` and `Display` as `Name(0x..)` / plain hex with `$digits` digits
/// (`$dbg` = `$digits` + 2 for the `0x` prefix).
macro_rules! impl_hex_fmt {
    ($t:ty, $name:literal, $digits:literal, $dbg:literal) => {
        impl core::fmt::Debug for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!($name, "({:#0", $dbg, "x})"), self.0)
            }
        }
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!("{:0", $digits, "x}"), self.0)
            }
        }
    };
}

pub(crate) use impl_char2_additive;
pub(crate) use impl_hex_fmt;
pub(crate) use impl_mul_sum_product;
