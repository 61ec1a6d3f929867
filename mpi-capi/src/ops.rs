//! Reduction operations as the C API sees them: `MPI_Op` handles (the predefined ones map
//! to the engine's `PredefOp`, user ones to a table of function pointers), the datatype
//! handle → element kind map for predefined datatypes, and `MPI_Op_create(_c)`, `MPI_Op_free`,
//! `MPI_Op_commutative`, `MPI_Reduce_local(_c)`.
//!
//! Collectives should call `lookup_op` once when they start and keep the `OpKind`: the
//! standard lets a user free an op while a nonblocking collective still uses it.

use crate::abi::*;
use crate::errors::{not_initialized, raise};
use mpi_core::op::{self, Elem, PredefOp};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

/// What an `MPI_Op` handle stands for.
#[derive(Clone, Copy, Debug)]
pub enum OpKind {
    Predef(PredefOp),
    User { f: UserFn, commute: bool },
}

/// A user reduction function: `MPI_Op_create`'s (int length) or `MPI_Op_create_c`'s
/// (`MPI_Count` length). Every reduction calls it through `UserFn::call`.
#[derive(Clone, Copy, Debug)]
pub enum UserFn {
    Int(unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)),
    Large(unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype)),
}

impl UserFn {
    /// `inout = input op inout` for `len` items of `dt` (`extent` bytes apart). An int
    /// function gets more than `INT_MAX` items in several calls.
    ///
    /// # Safety
    /// Both buffers hold `len` items of `dt` in its layout.
    pub unsafe fn call(self, input: *mut c_void, inout: *mut c_void, len: usize, dt: MPI_Datatype, extent: isize) {
        let mut t = dt;
        match self {
            UserFn::Large(f) => {
                let mut n = len as MPI_Count;
                // SAFETY: the caller's contract; MPI_User_function_c takes length and
                // datatype by pointer.
                unsafe { f(input, inout, &mut n, &mut t) };
            }
            UserFn::Int(f) => {
                let mut done = 0usize;
                while done < len {
                    let part = (len - done).min(c_int::MAX as usize);
                    let off = extent.wrapping_mul(done as isize);
                    let mut n = part as c_int;
                    // SAFETY: items done..done+part of both buffers (the caller's contract).
                    unsafe { f((input as *mut u8).wrapping_offset(off) as *mut c_void, (inout as *mut u8).wrapping_offset(off) as *mut c_void, &mut n, &mut t) };
                    done += part;
                }
            }
        }
    }
}

impl OpKind {
    pub fn is_commutative(&self) -> bool {
        match *self {
            OpKind::Predef(p) => op::is_commutative(p),
            OpKind::User { commute, .. } => commute,
        }
    }
}

/// User op handles are MPICH "direct" op handles (kind bits 0x98) with the table index in
/// the low 26 bits, so they never collide with predefined ones (0x58…) or MPI_OP_NULL.
const USER_OP_TAG: u32 = 0x9800_0000;
const USER_OP_TAG_MASK: u32 = 0xfc00_0000;
const USER_OP_MAX: usize = 0x03ff_ffff;

/// A created op. `pins`: persistent collectives that use it; an op the program frees
/// while pinned stays (`freed`) until the last of them is freed (MPI 4.1 §6.13 lets the
/// program free it right after `_init`).
struct UserOp {
    kind: OpKind,
    pins: u32,
    freed: bool,
}

/// Created ops by index; freed slots are `None` and get reused.
static USER_OPS: Mutex<Vec<Option<UserOp>>> = Mutex::new(Vec::new());

fn user_ops() -> std::sync::MutexGuard<'static, Vec<Option<UserOp>>> {
    USER_OPS.lock().unwrap_or_else(|p| p.into_inner())
}

fn user_index(op: MPI_Op) -> Option<usize> {
    let h = op as u32;
    (h & USER_OP_TAG_MASK == USER_OP_TAG).then_some((h & !USER_OP_TAG_MASK) as usize)
}

/// The predefined op a handle names, if any.
pub fn predef_op(op: MPI_Op) -> Option<PredefOp> {
    Some(match op {
        MPI_MAX => PredefOp::Max,
        MPI_MIN => PredefOp::Min,
        MPI_SUM => PredefOp::Sum,
        MPI_PROD => PredefOp::Prod,
        MPI_LAND => PredefOp::Land,
        MPI_BAND => PredefOp::Band,
        MPI_LOR => PredefOp::Lor,
        MPI_BOR => PredefOp::Bor,
        MPI_LXOR => PredefOp::Lxor,
        MPI_BXOR => PredefOp::Bxor,
        MPI_MINLOC => PredefOp::Minloc,
        MPI_MAXLOC => PredefOp::Maxloc,
        MPI_REPLACE => PredefOp::Replace,
        MPI_NO_OP => PredefOp::NoOp,
        _ => return None,
    })
}

/// What `op` stands for; None for MPI_OP_NULL, freed or invalid handles.
/// MPI_REPLACE and MPI_NO_OP are for the one-sided accumulate calls only (MPI 4.1
/// §12.3.4): a reduction (collective or `MPI_Reduce_local`) given one is `MPI_ERR_OP`, as
/// in MPICH.
pub fn reduction_op(op: MPI_Op) -> Result<(), (c_int, String)> {
    match lookup_op(op) {
        Some(OpKind::Predef(p)) if !p.reduces() => {
            Err((MPI_ERR_OP, format!("{} is for one-sided accumulate operations (MPI_Accumulate, MPI_Get_accumulate, ...), not for reductions", p.name())))
        }
        _ => Ok(()),
    }
}

pub fn lookup_op(op: MPI_Op) -> Option<OpKind> {
    if let Some(p) = predef_op(op) {
        return Some(OpKind::Predef(p));
    }
    let i = user_index(op)?;
    user_ops().get(i)?.as_ref().map(|u| u.kind)
}

/// Registers a user op; None when the handle space is exhausted.
fn create_user_op(kind: OpKind) -> Option<MPI_Op> {
    let mut t = user_ops();
    let i = match t.iter().position(Option::is_none) {
        Some(i) => i,
        None if t.len() <= USER_OP_MAX => {
            t.push(None);
            t.len() - 1
        }
        None => return None,
    };
    t[i] = Some(UserOp { kind, pins: 0, freed: false });
    Some((USER_OP_TAG | i as u32) as MPI_Op)
}

/// Forgets a user op (once no persistent collective pins it); false if `op` is not a
/// live user op.
fn free_user_op(op: MPI_Op) -> bool {
    let Some(i) = user_index(op) else { return false };
    let mut t = user_ops();
    let Some(slot) = t.get_mut(i) else { return false };
    match slot {
        Some(u) if !u.freed => {
            if u.pins == 0 {
                *slot = None;
            } else {
                u.freed = true;
            }
            true
        }
        _ => false,
    }
}

/// Keeps user op `op` usable until `unpin_op`, even if the program frees it meanwhile
/// (predefined ops need nothing).
pub fn pin_op(op: MPI_Op) {
    let Some(i) = user_index(op) else { return };
    if let Some(Some(u)) = user_ops().get_mut(i) {
        u.pins += 1;
    }
}

/// Ends a `pin_op`; an op freed meanwhile goes now.
pub fn unpin_op(op: MPI_Op) {
    let Some(i) = user_index(op) else { return };
    let mut t = user_ops();
    let Some(slot) = t.get_mut(i) else { return };
    if let Some(u) = slot.as_mut() {
        u.pins = u.pins.saturating_sub(1);
        if u.pins == 0 && u.freed {
            *slot = None;
        }
    }
}

/// The element kind of a predefined datatype handle (None for derived types, MPI_PACKED,
/// MPI_CHARACTER, MPI_LB/UB).
pub fn elem_of(dt: MPI_Datatype) -> Option<Elem> {
    Some(match dt {
        MPI_CHAR => Elem::Char,
        MPI_SIGNED_CHAR => Elem::SignedChar,
        MPI_UNSIGNED_CHAR => Elem::UnsignedChar,
        MPI_BYTE => Elem::Byte,
        MPI_WCHAR => Elem::Wchar,
        MPI_SHORT => Elem::Short,
        MPI_UNSIGNED_SHORT => Elem::UnsignedShort,
        MPI_INT => Elem::Int,
        MPI_UNSIGNED => Elem::Unsigned,
        MPI_LONG => Elem::Long,
        MPI_UNSIGNED_LONG => Elem::UnsignedLong,
        MPI_FLOAT => Elem::Float,
        MPI_DOUBLE => Elem::Double,
        MPI_LONG_DOUBLE => Elem::LongDouble,
        // Also MPI_LONG_LONG_INT (same handle).
        MPI_LONG_LONG => Elem::LongLong,
        MPI_UNSIGNED_LONG_LONG => Elem::UnsignedLongLong,
        MPI_FLOAT_INT => Elem::FloatInt,
        MPI_DOUBLE_INT => Elem::DoubleInt,
        MPI_LONG_INT => Elem::LongInt,
        MPI_SHORT_INT => Elem::ShortInt,
        MPI_2INT => Elem::TwoInt,
        MPI_LONG_DOUBLE_INT => Elem::LongDoubleInt,
        MPI_COMPLEX => Elem::Complex,
        MPI_DOUBLE_COMPLEX => Elem::DoubleComplex,
        MPI_LOGICAL => Elem::Logical,
        MPI_REAL => Elem::Real,
        MPI_DOUBLE_PRECISION => Elem::DoublePrecision,
        MPI_INTEGER => Elem::Integer,
        MPI_2INTEGER => Elem::TwoInteger,
        MPI_2REAL => Elem::TwoReal,
        MPI_2DOUBLE_PRECISION => Elem::TwoDoublePrecision,
        MPI_REAL4 => Elem::Real4,
        MPI_REAL8 => Elem::Real8,
        MPIX_C_FLOAT16 => Elem::CFloat16,
        MPI_COMPLEX8 => Elem::Complex8,
        MPI_COMPLEX16 => Elem::Complex16,
        MPI_REAL16 => Elem::Real16,
        MPI_COMPLEX32 => Elem::Complex32,
        MPI_INTEGER1 => Elem::Integer1,
        MPI_INTEGER2 => Elem::Integer2,
        MPI_INTEGER4 => Elem::Integer4,
        MPI_INTEGER8 => Elem::Integer8,
        MPI_INT8_T => Elem::Int8,
        MPI_INT16_T => Elem::Int16,
        MPI_INT32_T => Elem::Int32,
        MPI_INT64_T => Elem::Int64,
        MPI_UINT8_T => Elem::Uint8,
        MPI_UINT16_T => Elem::Uint16,
        MPI_UINT32_T => Elem::Uint32,
        MPI_UINT64_T => Elem::Uint64,
        MPI_C_BOOL => Elem::CBool,
        // Also MPI_C_COMPLEX (same handle).
        MPI_C_FLOAT_COMPLEX => Elem::CFloatComplex,
        MPI_C_DOUBLE_COMPLEX => Elem::CDoubleComplex,
        MPI_C_LONG_DOUBLE_COMPLEX => Elem::CLongDoubleComplex,
        MPI_AINT => Elem::Aint,
        MPI_OFFSET => Elem::Offset,
        MPI_COUNT => Elem::Count,
        MPI_CXX_BOOL => Elem::CxxBool,
        MPI_CXX_FLOAT_COMPLEX => Elem::CxxFloatComplex,
        MPI_CXX_DOUBLE_COMPLEX => Elem::CxxDoubleComplex,
        MPI_CXX_LONG_DOUBLE_COMPLEX => Elem::CxxLongDoubleComplex,
        _ => return None,
    })
}

/// Names of the predefined datatypes that have no `Elem`, for error messages.
fn other_predefined_name(dt: MPI_Datatype) -> Option<&'static str> {
    Some(match dt {
        MPI_PACKED => "MPI_PACKED",
        MPI_CHARACTER => "MPI_CHARACTER",
        MPI_LB => "MPI_LB",
        MPI_UB => "MPI_UB",
        _ => return None,
    })
}

/// The element kind `op` can work on for `dt`, or the (class, message) to raise.
fn elem_for(p: PredefOp, dt: MPI_Datatype) -> Result<Elem, (c_int, String)> {
    if let Some(e) = elem_of(dt) {
        return Ok(e);
    }
    let name = p.name();
    Err(match other_predefined_name(dt) {
        Some(t) => (MPI_ERR_OP, format!("{name} is not defined for {t}")),
        None if dt == MPI_DATATYPE_NULL => (MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL".to_string()),
        None => (
            MPI_ERR_TYPE,
            format!("{name} on datatype {dt:#x}: predefined operations on derived datatypes need the datatype engine, which reductions do not use yet"),
        ),
    })
}

/// `inout = input op inout` for `count` items of `dt`: the engine's kernel for predefined
/// ops (predefined datatypes only), else the user function, called with `dt` as given.
/// Errors are (MPI error class, message) for the caller to raise.
///
/// # Safety
/// `input` readable and `inout` readable and writable for `count` items of `dt`.
pub unsafe fn apply(op: MPI_Op, dt: MPI_Datatype, input: *const c_void, inout: *mut c_void, count: MPI_Count) -> Result<(), (c_int, String)> {
    if count < 0 {
        return Err((MPI_ERR_COUNT, format!("count is {count}; counts must be non-negative")));
    }
    match lookup_op(op) {
        None if op == MPI_OP_NULL => Err((MPI_ERR_OP, "the operation is MPI_OP_NULL".to_string())),
        None => Err((MPI_ERR_OP, format!("invalid operation handle {op:#x} (freed, or never created)"))),
        Some(OpKind::Predef(p)) if elem_of(dt).is_none() && other_predefined_name(dt).is_none() && dt != MPI_DATATYPE_NULL => {
            // SAFETY: caller's contract.
            unsafe { apply_derived(p, dt, input as *const u8, inout as *mut u8, count as usize) }
        }
        Some(OpKind::Predef(p)) => {
            let elem = elem_for(p, dt)?;
            crate::p2p_args::byte_len(count as usize, elem.size())?;
            // SAFETY: caller's contract; `elem.size()` is the extent of predefined `dt`.
            unsafe { op::reduce(p, elem, input as *const u8, inout as *mut u8, count as usize) }
                .map_err(|e| (e.class as c_int, e.msg))
        }
        Some(OpKind::User { .. }) if count == 0 => Ok(()),
        Some(OpKind::User { f, .. }) => {
            let extent = crate::types::lookup(dt).map_or(0, |t| t.extent());
            // SAFETY: the buffers hold `count` items of `dt` (the caller's contract).
            unsafe { f.call(input as *mut c_void, inout, count as usize, dt, extent) };
            Ok(())
        }
    }
}

/// A predefined datatype handle for a basic element type (for the reduction kernels).
pub fn basic_handle(b: mpi_core::datatype::Basic) -> Option<MPI_Datatype> {
    use mpi_core::datatype::Basic;
    Some(match b {
        Basic::Char => MPI_CHAR,
        Basic::I8 => MPI_SIGNED_CHAR,
        Basic::U8 => MPI_UNSIGNED_CHAR,
        Basic::I16 => MPI_SHORT,
        Basic::U16 => MPI_UNSIGNED_SHORT,
        Basic::I32 => MPI_INT,
        Basic::U32 => MPI_UNSIGNED,
        Basic::I64 => MPI_INT64_T,
        Basic::U64 => MPI_UINT64_T,
        Basic::Long => MPI_LONG,
        Basic::ULong => MPI_UNSIGNED_LONG,
        Basic::F16 => MPIX_C_FLOAT16,
        Basic::F32 => MPI_FLOAT,
        Basic::F64 => MPI_DOUBLE,
        Basic::LongDouble => MPI_LONG_DOUBLE,
        Basic::F128 => MPI_REAL16,
        Basic::ComplexF128 => MPI_COMPLEX32,
        Basic::ComplexF32 => MPI_C_FLOAT_COMPLEX,
        Basic::ComplexF64 => MPI_C_DOUBLE_COMPLEX,
        Basic::ComplexLongDouble => MPI_C_LONG_DOUBLE_COMPLEX,
        Basic::Bool => MPI_C_BOOL,
        Basic::Logical => MPI_LOGICAL,
        Basic::Byte => MPI_BYTE,
        Basic::Wchar => MPI_WCHAR,
        Basic::Aint => MPI_AINT,
        Basic::Offset => MPI_OFFSET,
        Basic::Count => MPI_COUNT,
        _ => return None,
    })
}

/// The predefined datatype handle of a pair type.
fn pair_handle(p: mpi_core::datatype::Pair) -> MPI_Datatype {
    use mpi_core::datatype::Pair;
    match p {
        Pair::FloatInt => MPI_FLOAT_INT,
        Pair::DoubleInt => MPI_DOUBLE_INT,
        Pair::LongInt => MPI_LONG_INT,
        Pair::ShortInt => MPI_SHORT_INT,
        Pair::TwoInt => MPI_2INT,
        Pair::LongDoubleInt => MPI_LONG_DOUBLE_INT,
        Pair::TwoReal => MPI_2REAL,
        Pair::TwoDoublePrecision => MPI_2DOUBLE_PRECISION,
        Pair::TwoInteger => MPI_2INTEGER,
    }
}

/// The element kind a predefined op combines in a derived datatype: its one basic or pair
/// type (`Datatype::reduction_unit`), or the (class, message) to raise.
pub fn elem_of_derived(p: PredefOp, ty: &mpi_core::datatype::Datatype) -> Result<Elem, (c_int, String)> {
    use mpi_core::datatype::Unit;
    let handle = match ty.reduction_unit() {
        Some(Unit::Basic(b)) => basic_handle(b),
        Some(Unit::Pair(q)) => Some(pair_handle(q)),
        None => None,
    };
    match handle {
        Some(h) => elem_for(p, h),
        None => Err((
            MPI_ERR_TYPE,
            format!("{} on a derived datatype needs a type built from one basic or pair type (this one mixes several, or is built on MPI_PACKED or MPI_CHARACTER)", p.name()),
        )),
    }
}

/// A predefined op on a derived datatype built from one basic or pair type: contiguous
/// items are reduced where they are; otherwise both operands are packed, reduced packed and
/// the result unpacked, so gaps (and a pair's padding) are neither read nor written.
///
/// # Safety
/// Both buffers must hold `count` items of `dt`.
unsafe fn apply_derived(p: PredefOp, dt: MPI_Datatype, input: *const u8, inout: *mut u8, count: usize) -> Result<(), (c_int, String)> {
    let t = crate::types::lookup(dt).filter(|t| t.committed()).ok_or_else(|| elem_for(p, dt).unwrap_err())?;
    let elem = elem_of_derived(p, &t)?;
    let bytes = crate::p2p_args::byte_len(count, t.size())?;
    if t.is_contiguous() {
        // SAFETY: `count` contiguous items start at true_lb in both buffers (caller's
        // contract): packed data.
        return unsafe { op::reduce_packed(p, elem, input.wrapping_offset(t.true_lb()), inout.wrapping_offset(t.true_lb()), bytes / elem.packed_size()) }
            .map_err(|e| (e.class as c_int, e.msg));
    }
    let (mut a, mut b) = (vec![0u8; bytes], vec![0u8; bytes]);
    // SAFETY: both buffers hold `count` items of `t` (caller's contract); a and b hold
    // their packed bytes.
    unsafe {
        t.pack(input, count, &mut a);
        t.pack(inout, count, &mut b);
        op::reduce_packed(p, elem, a.as_ptr(), b.as_mut_ptr(), bytes / elem.packed_size()).map_err(|e| (e.class as c_int, e.msg))?;
        t.unpack(&b, inout, count);
    }
    Ok(())
}

/// MPICH's `MPI_IN_PLACE` sentinel, `(void *)-1`.
fn is_in_place(p: *const c_void) -> bool {
    p as usize == usize::MAX
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create(user_fn: MPI_User_function, commute: c_int, op: *mut MPI_Op) -> c_int {
    // SAFETY: the caller passes an MPI_Op to write.
    unsafe { op_create("MPI_Op_create", user_fn.map(UserFn::Int), commute, op) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_create_c(user_fn: MPI_User_function_c, commute: c_int, op: *mut MPI_Op) -> c_int {
    // SAFETY: the caller passes an MPI_Op to write.
    unsafe { op_create("MPI_Op_create_c", user_fn.map(UserFn::Large), commute, op) }
}

/// # Safety
/// `op` is NULL or points to an `MPI_Op`.
unsafe fn op_create(func: &str, user_fn: Option<UserFn>, commute: c_int, op: *mut MPI_Op) -> c_int {
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized(func);
    }
    let Some(f) = user_fn else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "user_fn is NULL");
    };
    if op.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "op is NULL");
    }
    match create_user_op(OpKind::User { f, commute: commute != 0 }) {
        Some(h) => {
            // SAFETY: checked non-null; the caller provides an MPI_Op.
            unsafe { *op = h };
            MPI_SUCCESS
        }
        None => raise(MPI_COMM_WORLD, func, MPI_ERR_OTHER, "too many user-defined operations; free some with MPI_Op_free"),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_free(op: *mut MPI_Op) -> c_int {
    const F: &str = "MPI_Op_free";
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized(F);
    }
    if op.is_null() {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_ARG, "op is NULL");
    }
    // SAFETY: checked non-null; the caller provides an MPI_Op.
    let h = unsafe { *op };
    if let Some(p) = predef_op(h) {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_OP, format!("cannot free the predefined operation {}", p.name()));
    }
    if !free_user_op(h) {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_OP, format!("invalid operation handle {h:#x} (MPI_OP_NULL, already freed, or never created)"));
    }
    // SAFETY: as above.
    unsafe { *op = MPI_OP_NULL };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_commutative(op: MPI_Op, commute: *mut c_int) -> c_int {
    const F: &str = "MPI_Op_commutative";
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized(F);
    }
    if commute.is_null() {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_ARG, "commute is NULL");
    }
    match lookup_op(op) {
        Some(k) => {
            // SAFETY: checked non-null; the caller provides an int.
            unsafe { *commute = k.is_commutative() as c_int };
            MPI_SUCCESS
        }
        None => raise(MPI_COMM_WORLD, F, MPI_ERR_OP, format!("invalid operation handle {op:#x}")),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count.into(), datatype, op) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op) }
}

/// # Safety
/// The buffers hold `count` items of `datatype`, as MPI requires.
unsafe fn reduce_local(func: &str, inbuf: *const c_void, inoutbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op) -> c_int {
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized(func);
    }
    if is_in_place(inbuf) || is_in_place(inoutbuf) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in MPI_Reduce_local");
    }
    if let Err((class, msg)) = reduction_op(op) {
        return raise(MPI_COMM_WORLD, func, class, msg);
    }
    // The same buffer twice is erroneous (MPI 4.1 §6.9.7); MPICH reports it, as its
    // errors/coll/reduce_local checks.
    if count > 0 && !inbuf.is_null() && std::ptr::eq(inbuf, inoutbuf) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_BUFFER, "inbuf and inoutbuf are the same buffer (aliased arguments)");
    }
    // NULL is MPI_BOTTOM, meaningful only with derived types of absolute addresses.
    if count > 0 && elem_of(datatype).is_some() && (inbuf.is_null() || inoutbuf.is_null()) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_BUFFER, "inbuf or inoutbuf is NULL with a positive count");
    }
    // SAFETY: the caller passes buffers of `count` items of `datatype`, as MPI requires.
    match unsafe { apply(op, datatype, inbuf, inoutbuf, count) } {
        Ok(()) => MPI_SUCCESS,
        Err((class, msg)) => raise(MPI_COMM_WORLD, func, class, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every predefined datatype handle of the ABI.
    const PREDEFINED: &[MPI_Datatype] = &[
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_LONG_LONG_INT,
        MPI_UNSIGNED_LONG_LONG, MPI_LONG_LONG, MPI_PACKED, MPI_LB, MPI_UB, MPI_FLOAT_INT, MPI_DOUBLE_INT,
        MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT, MPI_LONG_DOUBLE_INT, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
        MPI_REAL, MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_CHARACTER,
        MPI_REAL4, MPI_REAL8, MPI_REAL16, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32, MPI_INTEGER1, MPI_INTEGER2,
        MPI_INTEGER4, MPI_INTEGER8, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_C_BOOL, MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_CXX_BOOL, MPI_CXX_FLOAT_COMPLEX,
        MPI_CXX_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX, MPIX_C_FLOAT16,
    ];

    #[test]
    fn every_predefined_datatype_maps_with_its_extent() {
        let mut seen = Vec::new();
        for &dt in PREDEFINED {
            match elem_of(dt) {
                Some(e) => {
                    assert_eq!(Some(e.size()), crate::types::lookup(dt).map(|t| t.extent() as usize), "{}", e.name());
                    seen.push(e);
                }
                None => assert!(other_predefined_name(dt).is_some(), "{dt:#x} has no element kind"),
            }
        }
        for e in Elem::ALL {
            assert!(seen.contains(e), "{} has no handle", e.name());
        }
        assert_eq!(elem_of(MPI_DATATYPE_NULL), None);
        assert_eq!(elem_of(0x4c00_0000 | 0x12345), None);
    }

    #[test]
    fn predefined_ops_map() {
        let handles = [
            MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC,
            MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP,
        ];
        for h in handles {
            let p = predef_op(h).unwrap();
            let name = p.name();
            assert!(matches!(lookup_op(h), Some(OpKind::Predef(q)) if q == p), "{name}");
        }
        assert_eq!(predef_op(MPI_MINLOC), Some(PredefOp::Minloc));
        assert!(lookup_op(MPI_OP_NULL).is_none());
        assert!(lookup_op(0x1234).is_none());
    }

    /// A non-commutative user op: 2×2 matrix product, inout = in · inout.
    unsafe extern "C" fn matmul(a: *mut c_void, b: *mut c_void, len: *mut c_int, _dt: *mut MPI_Datatype) {
        // SAFETY: the test passes *len arrays of 4 ints each.
        unsafe {
            let n = *len as usize;
            let a = std::slice::from_raw_parts(a as *const [i32; 4], n);
            let b = std::slice::from_raw_parts_mut(b as *mut [i32; 4], n);
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = [x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2], x[2] * y[1] + x[3] * y[3]];
            }
        }
    }

    #[test]
    fn user_ops_create_apply_free_reuse() {
        let h = create_user_op(OpKind::User { f: UserFn::Int(matmul), commute: false }).unwrap();
        assert_eq!(h as u32 & 0xfc00_0000, 0x9800_0000);
        assert!(matches!(lookup_op(h), Some(OpKind::User { commute: false, .. })));
        let a = [[1, 1, 0, 1]];
        let mut b = [[1, 0, 1, 1]];
        // SAFETY: one item of 4 ints in each buffer; the user function reads the datatype
        // handle only.
        unsafe { apply(h, MPI_INT, a.as_ptr() as *const c_void, b.as_mut_ptr() as *mut c_void, 1) }.unwrap();
        assert_eq!(b, [[2, 1, 1, 1]]);
        assert!(free_user_op(h));
        assert!(lookup_op(h).is_none());
        assert!(!free_user_op(h));
        // SAFETY: the op is invalid, nothing is accessed.
        let err = unsafe { apply(h, MPI_INT, std::ptr::null(), std::ptr::null_mut(), 1) }.unwrap_err();
        assert_eq!(err.0, MPI_ERR_OP);
        let h2 = create_user_op(OpKind::User { f: UserFn::Int(matmul), commute: true }).unwrap();
        assert!(lookup_op(h2).unwrap().is_commutative());
        assert!(free_user_op(h2));
    }

    /// An int user function gets a count beyond INT_MAX in pieces of at most INT_MAX items,
    /// each at its own offset; a large-count function in one call.
    #[test]
    fn user_fn_pieces() {
        use std::sync::Mutex;
        static SEEN: Mutex<Vec<(usize, i64)>> = Mutex::new(Vec::new());
        unsafe extern "C" fn small(a: *mut c_void, _b: *mut c_void, len: *mut c_int, _dt: *mut MPI_Datatype) {
            // SAFETY: `call` passes a valid length; the buffers are not touched.
            SEEN.lock().unwrap().push((a as usize, unsafe { *len } as i64));
        }
        unsafe extern "C" fn large(a: *mut c_void, _b: *mut c_void, len: *mut MPI_Count, _dt: *mut MPI_Datatype) {
            // SAFETY: as above.
            SEEN.lock().unwrap().push((a as usize, unsafe { *len }));
        }
        let n = c_int::MAX as usize * 2 + 3;
        // SAFETY: the functions record their arguments only.
        unsafe {
            UserFn::Int(small).call(std::ptr::null_mut(), std::ptr::null_mut(), n, MPI_INT, 4);
            UserFn::Large(large).call(std::ptr::null_mut(), std::ptr::null_mut(), n, MPI_INT, 4);
        }
        let m = c_int::MAX as i64;
        let step = (m * 4) as usize;
        assert_eq!(*SEEN.lock().unwrap(), vec![(0, m), (step, m), (2 * step, 3), (0, n as i64)]);
    }

    #[test]
    fn apply_predefined_and_errors() {
        let a = [1.5f64, 2.0];
        let mut b = [2.0f64, 0.25];
        // SAFETY: two doubles in each buffer.
        unsafe { apply(MPI_SUM, MPI_DOUBLE, a.as_ptr() as *const c_void, b.as_mut_ptr() as *mut c_void, 2) }.unwrap();
        assert_eq!(b, [3.5, 2.25]);
        let call = |op, dt, count| {
            // SAFETY: the buffers hold 2 doubles; every call below fails before touching
            // more than that.
            unsafe { apply(op, dt, a.as_ptr() as *const c_void, b.as_ptr() as *mut c_void, count) }.unwrap_err()
        };
        let (class, msg) = call(MPI_BAND, MPI_DOUBLE, 2);
        assert_eq!(class, MPI_ERR_OP);
        assert!(msg.starts_with("MPI_BAND is not defined for MPI_DOUBLE"), "{msg}");
        assert_eq!(call(MPI_SUM, MPI_PACKED, 1), (MPI_ERR_OP, "MPI_SUM is not defined for MPI_PACKED".into()));
        assert_eq!(call(MPI_BAND, MPI_REAL16, 1).0, MPI_ERR_OP);
        assert_eq!(call(MPI_SUM, MPI_DATATYPE_NULL, 1).0, MPI_ERR_TYPE);
        assert_eq!(call(MPI_SUM, 0x8c00_0100u32 as MPI_Datatype, 1).0, MPI_ERR_TYPE);
        assert_eq!(call(MPI_OP_NULL, MPI_DOUBLE, 1).0, MPI_ERR_OP);
        assert_eq!(call(MPI_SUM, MPI_DOUBLE, -1).0, MPI_ERR_COUNT);
    }
}
