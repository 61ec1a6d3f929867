//! Predefined basic types: the leaves of every type tree. A basic type is identified by its
//! machine representation (LP64 Linux, x86_64 conventions) and its external32 one, which is
//! what pack, reductions and external32 need; the C layer maps its many handle names onto
//! these.

/// One predefined basic type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Basic {
    /// C `char` (signed on this platform) and Fortran `CHARACTER`.
    Char,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    /// C `long` / `unsigned long`: 8 bytes in memory like I64/U64, but 4 in external32.
    Long,
    ULong,
    /// IEEE binary16 (C `_Float16`; MPICH's `MPIX_C_FLOAT16`).
    F16,
    F32,
    F64,
    /// C `long double`: x87 80-bit extended precision stored in 16 bytes.
    LongDouble,
    /// IEEE binary128 (Fortran `REAL*16`).
    F128,
    ComplexF32,
    ComplexF64,
    ComplexLongDouble,
    ComplexF128,
    /// C `_Bool` / C++ `bool`.
    Bool,
    /// Fortran `LOGICAL` (4 bytes).
    Logical,
    Byte,
    Packed,
    /// C `wchar_t` (4 bytes on Linux, 2 in external32).
    Wchar,
    Aint,
    Offset,
    Count,
}

impl Basic {
    /// Every basic type, for tests and tables.
    pub const ALL: [Basic; 28] = [
        Basic::Char,
        Basic::I8,
        Basic::U8,
        Basic::I16,
        Basic::U16,
        Basic::I32,
        Basic::U32,
        Basic::I64,
        Basic::U64,
        Basic::Long,
        Basic::ULong,
        Basic::F16,
        Basic::F32,
        Basic::F64,
        Basic::LongDouble,
        Basic::F128,
        Basic::ComplexF32,
        Basic::ComplexF64,
        Basic::ComplexLongDouble,
        Basic::ComplexF128,
        Basic::Bool,
        Basic::Logical,
        Basic::Byte,
        Basic::Packed,
        Basic::Wchar,
        Basic::Aint,
        Basic::Offset,
        Basic::Count,
    ];

    /// Bytes one value occupies in memory.
    pub const fn size(self) -> usize {
        match self {
            Basic::Char | Basic::I8 | Basic::U8 | Basic::Bool | Basic::Byte | Basic::Packed => 1,
            Basic::I16 | Basic::U16 | Basic::F16 => 2,
            Basic::I32 | Basic::U32 | Basic::F32 | Basic::Logical | Basic::Wchar => 4,
            Basic::I64 | Basic::U64 | Basic::Long | Basic::ULong | Basic::F64 | Basic::ComplexF32 => 8,
            Basic::Aint | Basic::Offset | Basic::Count => 8,
            Basic::LongDouble | Basic::F128 | Basic::ComplexF64 => 16,
            Basic::ComplexLongDouble | Basic::ComplexF128 => 32,
        }
    }

    /// Alignment in memory: what a struct of these is padded to (the standard's "epsilon").
    pub const fn align(self) -> usize {
        match self {
            Basic::ComplexF32 => 4,
            Basic::ComplexF64 => 8,
            Basic::ComplexLongDouble | Basic::ComplexF128 => 16,
            other => other.size(),
        }
    }

    /// Bytes of one value in the external32 representation (MPI-3.1 table 13.2): the native
    /// size except for C `long` (4, not 8) and `wchar_t` (2, not 4) on LP64 Linux.
    pub const fn external32_size(self) -> usize {
        match self {
            Basic::Long | Basic::ULong => 4,
            Basic::Wchar => 2,
            other => other.size(),
        }
    }

    /// Size of the unit whose bytes are reversed for external32 (a complex number is two
    /// reals, each swapped on its own).
    pub(crate) const fn swap_unit(self) -> usize {
        match self {
            Basic::ComplexF32 => 4,
            Basic::ComplexF64 => 8,
            Basic::ComplexLongDouble | Basic::ComplexF128 => 16,
            other => other.size(),
        }
    }

    /// True for the x87 formats that external32 converts to IEEE binary128.
    pub(crate) const fn is_x87(self) -> bool {
        matches!(self, Basic::LongDouble | Basic::ComplexLongDouble)
    }
}

/// The predefined pair and two-element types (for MINLOC/MAXLOC and Fortran pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pair {
    /// `MPI_FLOAT_INT`: { float; int } — size 8, extent 8.
    FloatInt,
    /// `MPI_DOUBLE_INT`: { double; int } — size 12, extent 16.
    DoubleInt,
    /// `MPI_LONG_INT`: { long; int } — size 12, extent 16.
    LongInt,
    /// `MPI_SHORT_INT`: { short; int } — size 6, extent 8.
    ShortInt,
    /// `MPI_2INT`: { int; int } — size 8, extent 8.
    TwoInt,
    /// `MPI_LONG_DOUBLE_INT`: { long double; int } — size 20, extent 32.
    LongDoubleInt,
    /// `MPI_2REAL`.
    TwoReal,
    /// `MPI_2DOUBLE_PRECISION`.
    TwoDoublePrecision,
    /// `MPI_2INTEGER`.
    TwoInteger,
}

impl Pair {
    /// The two members: (value type, index type).
    pub const fn members(self) -> (Basic, Basic) {
        match self {
            Pair::FloatInt => (Basic::F32, Basic::I32),
            Pair::DoubleInt => (Basic::F64, Basic::I32),
            Pair::LongInt => (Basic::Long, Basic::I32),
            Pair::ShortInt => (Basic::I16, Basic::I32),
            Pair::TwoInt => (Basic::I32, Basic::I32),
            Pair::LongDoubleInt => (Basic::LongDouble, Basic::I32),
            Pair::TwoReal => (Basic::F32, Basic::F32),
            Pair::TwoDoublePrecision => (Basic::F64, Basic::F64),
            Pair::TwoInteger => (Basic::I32, Basic::I32),
        }
    }
}

/// The markers of the deprecated `MPI_Type_struct`: they set lb/ub and hold no data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Marker {
    Lb,
    Ub,
}
