//! Predefined reduction operations (MPI-3.1 §5.9.2) on the basic element kinds.
//!
//! `reduce(op, elem, in, inout, n)` computes `inout[i] = in[i] op inout[i]`. Which ops apply
//! to which type group follows the standard's table; the arithmetic is in `kernels`, whose
//! loops run over slices of primitive types so LLVM vectorises them. `long double` (x86-64
//! 80-bit extended) arithmetic is done with a few x87 instructions in `f80`.
//!
//! User-defined ops are the C layer's business (they take C datatype handles); ordering of
//! non-commutative ops is the collectives' business.

mod f80;
mod kernels;
#[cfg(test)]
mod tests;

pub use f80::F80;

use crate::error::{ErrorClass, MpiError};

/// The type groups of MPI-3.1 §5.9.2, which decide the ops a type admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    CInteger,
    FortranInteger,
    FloatingPoint,
    Logical,
    Complex,
    Byte,
    /// MPI_AINT, MPI_OFFSET, MPI_COUNT.
    MultiLanguage,
    /// The MINLOC/MAXLOC (value, index) pairs.
    Pair,
}

/// In-memory representation of one element (x86-64 LP64 sizes), which picks the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repr {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    /// IEEE binary16, computed in f32 and rounded back (as C `_Float16` arithmetic).
    F16,
    F32,
    F64,
    /// x87 80-bit extended in 16 bytes (C `long double`).
    F80,
    /// IEEE binary128 (Fortran `REAL(16)`), computed by `quad.c`.
    F128,
    /// Complex numbers: (re, im) of F32, F64, F80, F128.
    C32,
    C64,
    C80,
    C128,
    /// Pairs {value, index}: C struct layout, padding included.
    FloatInt,
    DoubleInt,
    LongInt,
    ShortInt,
    IntInt,
    LongDoubleInt,
    RealReal,
    DoubleDouble,
}

impl Repr {
    /// Bytes one element occupies (its extent in a contiguous buffer).
    #[inline]
    pub fn size(self) -> usize {
        match self {
            Repr::I8 | Repr::U8 => 1,
            Repr::I16 | Repr::U16 | Repr::F16 => 2,
            Repr::I32 | Repr::U32 | Repr::F32 => 4,
            Repr::I64 | Repr::U64 | Repr::F64 | Repr::C32 => 8,
            Repr::F80 | Repr::F128 | Repr::C64 => 16,
            Repr::C80 | Repr::C128 => 32,
            Repr::FloatInt | Repr::ShortInt | Repr::IntInt | Repr::RealReal => 8,
            Repr::DoubleInt | Repr::LongInt | Repr::DoubleDouble => 16,
            Repr::LongDoubleInt => 32,
        }
    }

    /// Bytes of data in one element: `size()` less a pair's padding. Staged (packed) data
    /// holds elements this far apart.
    #[inline]
    pub fn packed_size(self) -> usize {
        match self {
            Repr::DoubleInt | Repr::LongInt => 12,
            Repr::ShortInt => 6,
            Repr::LongDoubleInt => 20,
            other => other.size(),
        }
    }
}

/// Declares `Elem` with its MPI name, group and representation in one table.
macro_rules! elems {
    ($($v:ident = $name:literal, $group:ident, $repr:ident;)*) => {
        /// A predefined MPI datatype that reductions work on, one variant per MPI name
        /// (aliases such as MPI_LONG_LONG_INT share one). Error messages name it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Elem { $($v),* }

        impl Elem {
            /// Every element kind, for exhaustive tests and tables.
            pub const ALL: &'static [Elem] = &[$(Elem::$v),*];

            /// The MPI name, e.g. "MPI_DOUBLE".
            pub fn name(self) -> &'static str {
                match self { $(Elem::$v => $name),* }
            }

            #[inline]
            pub const fn group(self) -> Group {
                match self { $(Elem::$v => Group::$group),* }
            }

            #[inline]
            pub const fn repr(self) -> Repr {
                match self { $(Elem::$v => Repr::$repr),* }
            }
        }
    };
}

elems! {
    Char = "MPI_CHAR", CInteger, I8;
    SignedChar = "MPI_SIGNED_CHAR", CInteger, I8;
    UnsignedChar = "MPI_UNSIGNED_CHAR", CInteger, U8;
    Wchar = "MPI_WCHAR", CInteger, I32;
    Short = "MPI_SHORT", CInteger, I16;
    UnsignedShort = "MPI_UNSIGNED_SHORT", CInteger, U16;
    Int = "MPI_INT", CInteger, I32;
    Unsigned = "MPI_UNSIGNED", CInteger, U32;
    Long = "MPI_LONG", CInteger, I64;
    UnsignedLong = "MPI_UNSIGNED_LONG", CInteger, U64;
    LongLong = "MPI_LONG_LONG", CInteger, I64;
    UnsignedLongLong = "MPI_UNSIGNED_LONG_LONG", CInteger, U64;
    Int8 = "MPI_INT8_T", CInteger, I8;
    Int16 = "MPI_INT16_T", CInteger, I16;
    Int32 = "MPI_INT32_T", CInteger, I32;
    Int64 = "MPI_INT64_T", CInteger, I64;
    Uint8 = "MPI_UINT8_T", CInteger, U8;
    Uint16 = "MPI_UINT16_T", CInteger, U16;
    Uint32 = "MPI_UINT32_T", CInteger, U32;
    Uint64 = "MPI_UINT64_T", CInteger, U64;
    Aint = "MPI_AINT", MultiLanguage, I64;
    Offset = "MPI_OFFSET", MultiLanguage, I64;
    Count = "MPI_COUNT", MultiLanguage, I64;
    Integer = "MPI_INTEGER", FortranInteger, I32;
    Integer1 = "MPI_INTEGER1", FortranInteger, I8;
    Integer2 = "MPI_INTEGER2", FortranInteger, I16;
    Integer4 = "MPI_INTEGER4", FortranInteger, I32;
    Integer8 = "MPI_INTEGER8", FortranInteger, I64;
    Float = "MPI_FLOAT", FloatingPoint, F32;
    Double = "MPI_DOUBLE", FloatingPoint, F64;
    LongDouble = "MPI_LONG_DOUBLE", FloatingPoint, F80;
    CFloat16 = "MPIX_C_FLOAT16", FloatingPoint, F16;
    Real = "MPI_REAL", FloatingPoint, F32;
    DoublePrecision = "MPI_DOUBLE_PRECISION", FloatingPoint, F64;
    Real4 = "MPI_REAL4", FloatingPoint, F32;
    Real8 = "MPI_REAL8", FloatingPoint, F64;
    Real16 = "MPI_REAL16", FloatingPoint, F128;
    Logical = "MPI_LOGICAL", Logical, I32;
    CBool = "MPI_C_BOOL", Logical, U8;
    CxxBool = "MPI_CXX_BOOL", Logical, U8;
    Complex = "MPI_COMPLEX", Complex, C32;
    DoubleComplex = "MPI_DOUBLE_COMPLEX", Complex, C64;
    Complex8 = "MPI_COMPLEX8", Complex, C32;
    Complex16 = "MPI_COMPLEX16", Complex, C64;
    Complex32 = "MPI_COMPLEX32", Complex, C128;
    CFloatComplex = "MPI_C_FLOAT_COMPLEX", Complex, C32;
    CDoubleComplex = "MPI_C_DOUBLE_COMPLEX", Complex, C64;
    CLongDoubleComplex = "MPI_C_LONG_DOUBLE_COMPLEX", Complex, C80;
    CxxFloatComplex = "MPI_CXX_FLOAT_COMPLEX", Complex, C32;
    CxxDoubleComplex = "MPI_CXX_DOUBLE_COMPLEX", Complex, C64;
    CxxLongDoubleComplex = "MPI_CXX_LONG_DOUBLE_COMPLEX", Complex, C80;
    Byte = "MPI_BYTE", Byte, U8;
    FloatInt = "MPI_FLOAT_INT", Pair, FloatInt;
    DoubleInt = "MPI_DOUBLE_INT", Pair, DoubleInt;
    LongInt = "MPI_LONG_INT", Pair, LongInt;
    ShortInt = "MPI_SHORT_INT", Pair, ShortInt;
    TwoInt = "MPI_2INT", Pair, IntInt;
    LongDoubleInt = "MPI_LONG_DOUBLE_INT", Pair, LongDoubleInt;
    TwoInteger = "MPI_2INTEGER", Pair, IntInt;
    TwoReal = "MPI_2REAL", Pair, RealReal;
    TwoDoublePrecision = "MPI_2DOUBLE_PRECISION", Pair, DoubleDouble;
}

impl Elem {
    /// Whether an accumulate may combine elements `self` and `other`: the same kind, or the
    /// same representation among the integer groups or within one group (MPI_INTEGER and
    /// MPI_INT, MPI_REAL and MPI_FLOAT, MPI_LONG and MPI_INT64_T). A derived datatype's
    /// elements are known by representation only (its basic units have C names), so an
    /// origin of contiguous MPI_INTEGERs must match a target of MPI_INTEGER; MPICH checks
    /// nothing here.
    pub fn combines_with(self, other: Elem) -> bool {
        let integer = |g| matches!(g, Group::CInteger | Group::FortranInteger | Group::MultiLanguage);
        self == other
            || (self.repr() == other.repr()
                && (self.group() == other.group() || (integer(self.group()) && integer(other.group()))))
    }

    /// Bytes one element occupies in memory (its extent).
    #[inline]
    pub fn size(self) -> usize {
        self.repr().size()
    }

    /// Bytes of data in one element (`size()` less a pair's padding).
    #[inline]
    pub fn packed_size(self) -> usize {
        self.repr().packed_size()
    }
}

/// The predefined reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredefOp {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Maxloc,
    Minloc,
    Replace,
    NoOp,
}

impl PredefOp {
    pub const ALL: [PredefOp; 14] = [
        PredefOp::Max,
        PredefOp::Min,
        PredefOp::Sum,
        PredefOp::Prod,
        PredefOp::Land,
        PredefOp::Band,
        PredefOp::Lor,
        PredefOp::Bor,
        PredefOp::Lxor,
        PredefOp::Bxor,
        PredefOp::Maxloc,
        PredefOp::Minloc,
        PredefOp::Replace,
        PredefOp::NoOp,
    ];

    /// The MPI name, e.g. "MPI_SUM".
    pub fn name(self) -> &'static str {
        match self {
            PredefOp::Max => "MPI_MAX",
            PredefOp::Min => "MPI_MIN",
            PredefOp::Sum => "MPI_SUM",
            PredefOp::Prod => "MPI_PROD",
            PredefOp::Land => "MPI_LAND",
            PredefOp::Band => "MPI_BAND",
            PredefOp::Lor => "MPI_LOR",
            PredefOp::Bor => "MPI_BOR",
            PredefOp::Lxor => "MPI_LXOR",
            PredefOp::Bxor => "MPI_BXOR",
            PredefOp::Maxloc => "MPI_MAXLOC",
            PredefOp::Minloc => "MPI_MINLOC",
            PredefOp::Replace => "MPI_REPLACE",
            PredefOp::NoOp => "MPI_NO_OP",
        }
    }

    /// Whether this op is defined on `group`: the standard's table (MPI-3.1 §5.9.2) and, as
    /// in MPICH, the logical ops also on Fortran integers, floating-point types and
    /// `MPI_AINT`/`MPI_OFFSET`/`MPI_COUNT` (MPICH's test suite uses them). REPLACE and
    /// NO_OP (meant for one-sided accumulate) apply to every type.
    #[inline]
    pub fn applies_to(self, group: Group) -> bool {
        use Group::*;
        match self {
            PredefOp::Max | PredefOp::Min => {
                matches!(group, CInteger | FortranInteger | FloatingPoint | MultiLanguage)
            }
            PredefOp::Sum | PredefOp::Prod => {
                matches!(group, CInteger | FortranInteger | FloatingPoint | Complex | MultiLanguage)
            }
            PredefOp::Land | PredefOp::Lor | PredefOp::Lxor => {
                matches!(group, CInteger | FortranInteger | Logical | FloatingPoint | MultiLanguage)
            }
            PredefOp::Band | PredefOp::Bor | PredefOp::Bxor => {
                matches!(group, CInteger | FortranInteger | Byte | MultiLanguage)
            }
            PredefOp::Maxloc | PredefOp::Minloc => group == Pair,
            PredefOp::Replace | PredefOp::NoOp => true,
        }
    }

    /// Whether the op may reduce (collectives, `MPI_Reduce_local`): all but MPI_REPLACE
    /// and MPI_NO_OP, which are for the one-sided accumulate calls only.
    pub fn reduces(self) -> bool {
        !matches!(self, PredefOp::Replace | PredefOp::NoOp)
    }

    /// The groups an op applies to, in words, for error messages.
    fn domain(self) -> &'static str {
        match self {
            PredefOp::Max | PredefOp::Min => "integer and floating-point types",
            PredefOp::Sum | PredefOp::Prod => "integer, floating-point and complex types",
            PredefOp::Land | PredefOp::Lor | PredefOp::Lxor => "integer, logical and floating-point types",
            PredefOp::Band | PredefOp::Bor | PredefOp::Bxor => "integer types and MPI_BYTE",
            PredefOp::Maxloc | PredefOp::Minloc => "the pair types (MPI_2INT, MPI_DOUBLE_INT, ...)",
            PredefOp::Replace | PredefOp::NoOp => "all types",
        }
    }
}

/// Predefined ops are all commutative (the collectives may reorder them freely).
pub fn is_commutative(_op: PredefOp) -> bool {
    true
}

/// The error for an op the standard does not define on a type.
pub fn undefined(op: PredefOp, elem: Elem) -> MpiError {
    MpiError::new(
        ErrorClass::Op,
        format!("{} is not defined for {} ({} applies to {})", op.name(), elem.name(), op.name(), op.domain()),
    )
}

/// `inout[i] = input[i] op inout[i]` for `count` elements of kind `elem` laid out as in
/// memory (`elem.size()` bytes apart, pairs with their C struct padding, which is neither
/// read nor written).
///
/// Buffers need no particular alignment. They should not overlap, except that `input ==
/// inout` is allowed (each element is then combined with itself).
///
/// # Safety
/// `input` must be valid for reads and `inout` for reads and writes of
/// `count * elem.size()` bytes.
pub unsafe fn reduce(op: PredefOp, elem: Elem, input: *const u8, inout: *mut u8, count: usize) -> Result<(), MpiError> {
    // SAFETY: forwarded caller's contract.
    unsafe { reduce_in(op, elem, input, inout, count, false) }
}

/// As `reduce`, on packed data (what pack produces and collectives stage): elements
/// `elem.packed_size()` bytes apart, a pair's value and index adjacent.
///
/// # Safety
/// `input` must be valid for reads and `inout` for reads and writes of
/// `count * elem.packed_size()` bytes.
pub unsafe fn reduce_packed(op: PredefOp, elem: Elem, input: *const u8, inout: *mut u8, count: usize) -> Result<(), MpiError> {
    // SAFETY: forwarded caller's contract.
    unsafe { reduce_in(op, elem, input, inout, count, true) }
}

/// `reduce` (`packed` false) or `reduce_packed` (true).
///
/// # Safety
/// As those, for the layout `packed` names.
unsafe fn reduce_in(op: PredefOp, elem: Elem, input: *const u8, inout: *mut u8, count: usize, packed: bool) -> Result<(), MpiError> {
    if !op.applies_to(elem.group()) {
        return Err(undefined(op, elem));
    }
    if count == 0 || op == PredefOp::NoOp {
        return Ok(());
    }
    if op == PredefOp::Replace {
        let len = count * if packed { elem.packed_size() } else { elem.size() };
        // SAFETY: both buffers hold count elements in that layout (caller's contract);
        // `move_bytes` allows overlap. A padded pair's padding travels along as plain bytes.
        unsafe { crate::copy::move_bytes(input, inout, len) };
        return Ok(());
    }
    // SAFETY: forwarded caller's contract; each kernel reads/writes count elements of the
    // representation and layout named.
    let done = unsafe { kernels::dispatch(op, elem.repr(), input, inout, count, packed) };
    if done {
        Ok(())
    } else {
        Err(undefined(op, elem))
    }
}
