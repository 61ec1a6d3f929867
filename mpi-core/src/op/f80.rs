//! C `long double` on x86-64: the x87 80-bit extended format stored in 16 bytes. Rust has
//! no such type, so the four operations reductions need (add, sub, mul, compare) are a few
//! x87 instructions each. Values round-trip bit-exactly through x87 registers, so MAX/MIN
//! and REPLACE return the caller's bytes unchanged.

#[cfg(target_arch = "x86_64")]
use std::cmp::Ordering;

/// One `long double`: 10 significant bytes, 6 bytes of padding, aligned like C's.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub struct F80(pub [u8; 16]);

#[cfg(target_arch = "x86_64")]
mod x87 {
    use super::F80;
    use std::arch::asm;

    /// `a OP b` computed in st(0) by the non-popping x87 form `OP st(0), st(1)`.
    macro_rules! arith {
        ($name:ident, $insn:literal) => {
            pub fn $name(a: F80, b: F80) -> F80 {
                let mut out = F80([0; 16]);
                // SAFETY: reads 10 bytes at &a and &b and writes 10 bytes at &mut out, all
                // valid locals; every st register is declared clobbered and the two values
                // pushed are popped, so the x87 stack is empty again on exit.
                unsafe {
                    asm!(
                        "fld tbyte ptr [{b}]",
                        "fld tbyte ptr [{a}]",
                        concat!($insn, " st(0), st(1)"),
                        "fstp tbyte ptr [{out}]",
                        "fstp st(0)",
                        a = in(reg) &a as *const F80,
                        b = in(reg) &b as *const F80,
                        out = in(reg) &mut out as *mut F80,
                        out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                        out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                        options(nostack),
                    );
                }
                out
            }
        };
    }

    arith!(add, "fadd");
    arith!(sub, "fsub");
    arith!(mul, "fmul");

    /// Compares `a` with `b`; None when either is NaN.
    pub fn cmp(a: F80, b: F80) -> Option<std::cmp::Ordering> {
        let (gt, lt, unordered): (u8, u8, u8);
        // SAFETY: reads 10 bytes at &a and &b; both pushed values are popped (fstp does not
        // touch EFLAGS, and the flags are read before it anyway).
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fucomip st, st(1)",
                "seta {gt}",
                "setb {lt}",
                "setp {un}",
                "fstp st(0)",
                a = in(reg) &a as *const F80,
                b = in(reg) &b as *const F80,
                gt = out(reg_byte) gt,
                lt = out(reg_byte) lt,
                un = out(reg_byte) unordered,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        if unordered != 0 {
            None
        } else if gt != 0 {
            Some(std::cmp::Ordering::Greater)
        } else if lt != 0 {
            Some(std::cmp::Ordering::Less)
        } else {
            Some(std::cmp::Ordering::Equal)
        }
    }

    pub fn from_f64(x: f64) -> F80 {
        let mut out = F80([0; 16]);
        // SAFETY: reads 8 bytes at &x, writes 10 bytes into `out`; the stack is left empty.
        unsafe {
            asm!(
                "fld qword ptr [{x}]",
                "fstp tbyte ptr [{out}]",
                x = in(reg) &x as *const f64,
                out = in(reg) &mut out as *mut F80,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        out
    }

    pub fn to_f64(a: F80) -> f64 {
        let mut out = 0f64;
        // SAFETY: reads 10 bytes at &a, writes 8 bytes into `out`; the stack is left empty.
        unsafe {
            asm!(
                "fld tbyte ptr [{a}]",
                "fstp qword ptr [{out}]",
                a = in(reg) &a as *const F80,
                out = in(reg) &mut out as *mut f64,
                out("st(0)") _, out("st(1)") _, out("st(2)") _, out("st(3)") _,
                out("st(4)") _, out("st(5)") _, out("st(6)") _, out("st(7)") _,
                options(nostack),
            );
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
impl F80 {
    /// The `long double` nearest `x` (exact: every f64 is representable).
    pub fn from_f64(x: f64) -> F80 {
        x87::from_f64(x)
    }

    /// `self` rounded to the nearest f64.
    pub fn to_f64(self) -> f64 {
        x87::to_f64(self)
    }
}

#[cfg(target_arch = "x86_64")]
impl std::ops::Add for F80 {
    type Output = F80;
    fn add(self, o: F80) -> F80 {
        x87::add(self, o)
    }
}

#[cfg(target_arch = "x86_64")]
impl std::ops::Sub for F80 {
    type Output = F80;
    fn sub(self, o: F80) -> F80 {
        x87::sub(self, o)
    }
}

#[cfg(target_arch = "x86_64")]
impl std::ops::Mul for F80 {
    type Output = F80;
    fn mul(self, o: F80) -> F80 {
        x87::mul(self, o)
    }
}

/// Numeric (not bitwise) equality, as C's `==` on long double.
#[cfg(target_arch = "x86_64")]
impl PartialEq for F80 {
    fn eq(&self, o: &F80) -> bool {
        x87::cmp(*self, *o) == Some(Ordering::Equal)
    }
}

#[cfg(target_arch = "x86_64")]
impl PartialOrd for F80 {
    fn partial_cmp(&self, o: &F80) -> Option<Ordering> {
        x87::cmp(*self, *o)
    }
}
