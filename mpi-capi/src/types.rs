//! Datatypes as the C layer sees them: the handle table (predefined and derived handles to
//! shared engine types), every `MPI_Type_*` function, `MPI_Pack`/`MPI_Unpack` and their
//! external32 forms, and `MPI_Get_address`. The type engine is `mpi_core::datatype`.

use crate::abi::*;
use crate::errors::{raise, write_c_string};
use mpi_core::datatype::{Basic, Datatype, Distrib, Kind, Marker, Order, Pair};
use mpi_core::error::MpiError;
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

// ---- handle table ------------------------------------------------------------------------

/// Derived types get handles `DERIVED_TAG | slot` (slot < 2^26).
const DERIVED_TAG: u32 = 0xcc00_0000;
const DERIVED_MASK: u32 = 0xfc00_0000;
const MAX_SLOTS: usize = 1 << 26;

/// What a predefined handle stands for.
#[derive(Clone, Copy)]
enum Def {
    B(Basic),
    P(Pair),
    M(Marker),
}

/// Every predefined datatype handle with its standard name. A handle with two names is
/// listed under the one MPICH's `MPI_Type_get_name` reports, first (the first entry of a
/// handle wins): MPI_LONG_LONG_INT (= MPI_LONG_LONG), MPI_C_COMPLEX (= MPI_C_FLOAT_COMPLEX).
const PREDEFINED: &[(MPI_Datatype, &str, Def)] = &[
    (MPI_CHAR, "MPI_CHAR", Def::B(Basic::Char)),
    (MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", Def::B(Basic::I8)),
    (MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", Def::B(Basic::U8)),
    (MPI_BYTE, "MPI_BYTE", Def::B(Basic::Byte)),
    (MPI_WCHAR, "MPI_WCHAR", Def::B(Basic::Wchar)),
    (MPI_SHORT, "MPI_SHORT", Def::B(Basic::I16)),
    (MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", Def::B(Basic::U16)),
    (MPI_INT, "MPI_INT", Def::B(Basic::I32)),
    (MPI_UNSIGNED, "MPI_UNSIGNED", Def::B(Basic::U32)),
    (MPI_LONG, "MPI_LONG", Def::B(Basic::Long)),
    (MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", Def::B(Basic::ULong)),
    (MPI_FLOAT, "MPI_FLOAT", Def::B(Basic::F32)),
    (MPI_DOUBLE, "MPI_DOUBLE", Def::B(Basic::F64)),
    (MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", Def::B(Basic::LongDouble)),
    (MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", Def::B(Basic::I64)),
    (MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", Def::B(Basic::U64)),
    (MPI_PACKED, "MPI_PACKED", Def::B(Basic::Packed)),
    (MPI_LB, "MPI_LB", Def::M(Marker::Lb)),
    (MPI_UB, "MPI_UB", Def::M(Marker::Ub)),
    (MPI_FLOAT_INT, "MPI_FLOAT_INT", Def::P(Pair::FloatInt)),
    (MPI_DOUBLE_INT, "MPI_DOUBLE_INT", Def::P(Pair::DoubleInt)),
    (MPI_LONG_INT, "MPI_LONG_INT", Def::P(Pair::LongInt)),
    (MPI_SHORT_INT, "MPI_SHORT_INT", Def::P(Pair::ShortInt)),
    (MPI_2INT, "MPI_2INT", Def::P(Pair::TwoInt)),
    (MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", Def::P(Pair::LongDoubleInt)),
    (MPI_COMPLEX, "MPI_COMPLEX", Def::B(Basic::ComplexF32)),
    (MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", Def::B(Basic::ComplexF64)),
    (MPI_LOGICAL, "MPI_LOGICAL", Def::B(Basic::Logical)),
    (MPI_REAL, "MPI_REAL", Def::B(Basic::F32)),
    (MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", Def::B(Basic::F64)),
    (MPI_INTEGER, "MPI_INTEGER", Def::B(Basic::I32)),
    (MPI_2INTEGER, "MPI_2INTEGER", Def::P(Pair::TwoInteger)),
    (MPI_2REAL, "MPI_2REAL", Def::P(Pair::TwoReal)),
    (MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", Def::P(Pair::TwoDoublePrecision)),
    (MPI_CHARACTER, "MPI_CHARACTER", Def::B(Basic::Char)),
    (MPI_REAL4, "MPI_REAL4", Def::B(Basic::F32)),
    (MPI_REAL8, "MPI_REAL8", Def::B(Basic::F64)),
    (MPIX_C_FLOAT16, "MPIX_C_FLOAT16", Def::B(Basic::F16)),
    (MPI_REAL16, "MPI_REAL16", Def::B(Basic::F128)),
    (MPI_COMPLEX8, "MPI_COMPLEX8", Def::B(Basic::ComplexF32)),
    (MPI_COMPLEX16, "MPI_COMPLEX16", Def::B(Basic::ComplexF64)),
    (MPI_COMPLEX32, "MPI_COMPLEX32", Def::B(Basic::ComplexF128)),
    (MPI_INTEGER1, "MPI_INTEGER1", Def::B(Basic::I8)),
    (MPI_INTEGER2, "MPI_INTEGER2", Def::B(Basic::I16)),
    (MPI_INTEGER4, "MPI_INTEGER4", Def::B(Basic::I32)),
    (MPI_INTEGER8, "MPI_INTEGER8", Def::B(Basic::I64)),
    (MPI_INT8_T, "MPI_INT8_T", Def::B(Basic::I8)),
    (MPI_INT16_T, "MPI_INT16_T", Def::B(Basic::I16)),
    (MPI_INT32_T, "MPI_INT32_T", Def::B(Basic::I32)),
    (MPI_INT64_T, "MPI_INT64_T", Def::B(Basic::I64)),
    (MPI_UINT8_T, "MPI_UINT8_T", Def::B(Basic::U8)),
    (MPI_UINT16_T, "MPI_UINT16_T", Def::B(Basic::U16)),
    (MPI_UINT32_T, "MPI_UINT32_T", Def::B(Basic::U32)),
    (MPI_UINT64_T, "MPI_UINT64_T", Def::B(Basic::U64)),
    (MPI_C_BOOL, "MPI_C_BOOL", Def::B(Basic::Bool)),
    (MPI_C_COMPLEX, "MPI_C_COMPLEX", Def::B(Basic::ComplexF32)),
    (MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", Def::B(Basic::ComplexF32)),
    (MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", Def::B(Basic::ComplexF64)),
    (MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", Def::B(Basic::ComplexLongDouble)),
    (MPI_AINT, "MPI_AINT", Def::B(Basic::Aint)),
    (MPI_OFFSET, "MPI_OFFSET", Def::B(Basic::Offset)),
    (MPI_COUNT, "MPI_COUNT", Def::B(Basic::Count)),
    (MPI_CXX_BOOL, "MPI_CXX_BOOL", Def::B(Basic::Bool)),
    (MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", Def::B(Basic::ComplexF32)),
    (MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", Def::B(Basic::ComplexF64)),
    (MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", Def::B(Basic::ComplexLongDouble)),
];

/// One engine type per predefined handle (distinct `Arc`s, so a child type found in
/// `MPI_Type_get_contents` maps back to the handle it was made from).
/// Is `dt` one of the builtin-encoded predefined handles (`0x4c......`)? A table indexed by
/// the handle's low byte (unique among builtins) makes this a load and a compare, for the
/// point-to-point hot path.
#[inline]
pub fn is_builtin_handle(dt: MPI_Datatype) -> bool {
    static BY_INDEX: OnceLock<[u32; 256]> = OnceLock::new();
    let table = BY_INDEX.get_or_init(|| {
        let mut t = [0u32; 256];
        for &(h, _, _) in PREDEFINED {
            let u = h as u32;
            if u & 0xff00_0000 == 0x4c00_0000 {
                t[(u & 0xff) as usize] = u;
            }
        }
        t
    });
    let u = dt as u32;
    u & 0xff00_0000 == 0x4c00_0000 && table[(u & 0xff) as usize] == u
}

fn predefined() -> &'static HashMap<MPI_Datatype, (&'static str, Arc<Datatype>)> {
    static TABLE: OnceLock<HashMap<MPI_Datatype, (&'static str, Arc<Datatype>)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut m = HashMap::new();
        for &(h, name, def) in PREDEFINED {
            let t = match def {
                Def::B(b) => Datatype::basic(b),
                Def::P(p) => Datatype::pair(p),
                Def::M(mk) => Datatype::marker(mk),
            };
            m.entry(h).or_insert((name, t));
        }
        m
    })
}

struct Entry {
    ty: Arc<Datatype>,
    name: String,
    /// Persistent collectives that use this handle; a handle the program frees while
    /// pinned stays (`freed`) until the last of them is freed (MPI 4.1 §6.13).
    pins: u32,
    freed: bool,
}

struct Table {
    slots: Vec<Option<Entry>>,
    free: Vec<usize>,
    /// Names given to predefined types with `MPI_Type_set_name`.
    predefined_names: Vec<(MPI_Datatype, String)>,
}

static TABLE: Mutex<Table> = Mutex::new(Table { slots: Vec::new(), free: Vec::new(), predefined_names: Vec::new() });

fn table() -> std::sync::MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn slot_of(dt: MPI_Datatype) -> Option<usize> {
    let h = dt as u32;
    (h & DERIVED_MASK == DERIVED_TAG).then_some((h & !DERIVED_MASK) as usize)
}

/// The engine type of a handle: predefined types, and derived types whether committed or
/// not (check `committed()` before communicating). `None` for invalid or freed handles.
pub fn lookup(dt: MPI_Datatype) -> Option<Arc<Datatype>> {
    if let Some(slot) = slot_of(dt) {
        return table().slots.get(slot)?.as_ref().map(|e| e.ty.clone());
    }
    predefined().get(&dt).map(|(_, t)| t.clone())
}

/// A new handle for `ty` (`None` when the table is full).
fn insert(ty: Arc<Datatype>) -> Option<MPI_Datatype> {
    let mut t = table();
    let slot = match t.free.pop() {
        Some(s) => s,
        None if t.slots.len() < MAX_SLOTS => {
            t.slots.push(None);
            t.slots.len() - 1
        }
        None => return None,
    };
    t.slots[slot] = Some(Entry { ty, name: String::new(), pins: 0, freed: false });
    Some((DERIVED_TAG | slot as u32) as MPI_Datatype)
}

/// Frees the slot of a derived handle. Requests holding the type keep their own Arc: it
/// lives until they complete.
fn release_slot(slot: usize) {
    let mut t = table();
    if let Some(e) = t.slots[slot].as_mut().filter(|e| e.pins > 0) {
        e.freed = true;
        return;
    }
    t.slots[slot] = None;
    t.free.push(slot);
}

/// Keeps derived handle `dt` valid until `unpin`, even if the program frees it meanwhile
/// (predefined handles need nothing).
pub fn pin(dt: MPI_Datatype) {
    if let Some(slot) = slot_of(dt) {
        if let Some(Some(e)) = table().slots.get_mut(slot) {
            e.pins += 1;
        }
    }
}

/// Ends a `pin`; a handle freed meanwhile goes now.
pub fn unpin(dt: MPI_Datatype) {
    let Some(slot) = slot_of(dt) else { return };
    let gone = match table().slots.get_mut(slot) {
        Some(Some(e)) => {
            e.pins = e.pins.saturating_sub(1);
            e.pins == 0 && e.freed
        }
        _ => false,
    };
    if gone {
        release_slot(slot);
    }
}

/// Whether derived handle `dt` was freed by the program (and lives on only for pins).
fn freed(dt: MPI_Datatype) -> bool {
    slot_of(dt).is_some_and(|s| matches!(table().slots.get(s), Some(Some(e)) if e.freed))
}

/// Frees a derived handle just made (no attributes, never given to the user).
fn release(h: MPI_Datatype) {
    if let Some(slot) = slot_of(h) {
        release_slot(slot);
    }
}

/// The handle to give back for a child type in `MPI_Type_get_contents`: its predefined
/// handle, or a new handle to the same type.
fn handle_for(ty: &Arc<Datatype>) -> Option<MPI_Datatype> {
    if let Some(h) = f90_types().iter().find(|f| Arc::ptr_eq(&f.ty, ty)).map(|f| f.handle) {
        return Some(h);
    }
    if ty.is_named() {
        if let Some((h, _)) = predefined().iter().find(|(_, (_, t))| Arc::ptr_eq(t, ty)) {
            return Some(*h);
        }
    }
    insert(ty.clone())
}

// ---- argument helpers ----------------------------------------------------------------------

fn fail(func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    raise(MPI_COMM_WORLD, func, class, msg)
}

fn engine_err(func: &str, e: MpiError) -> c_int {
    fail(func, e.class as c_int, e.msg)
}

/// Runs a function body written with `?` and turns it into an MPI return code.
fn run(body: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(code) => code,
    }
}

fn get(func: &str, dt: MPI_Datatype) -> Result<Arc<Datatype>, c_int> {
    if dt == MPI_DATATYPE_NULL {
        return Err(fail(func, MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL"));
    }
    lookup(dt).ok_or_else(|| fail(func, MPI_ERR_TYPE, format!("invalid datatype handle {dt:#x}")))
}

/// A type usable for pack/unpack: committed.
fn get_committed(func: &str, dt: MPI_Datatype) -> Result<Arc<Datatype>, c_int> {
    let t = get(func, dt)?;
    if !t.committed() {
        return Err(fail(func, MPI_ERR_TYPE, "the datatype is not committed (call MPI_Type_commit first)"));
    }
    Ok(t)
}

fn count(func: &str, what: &str, n: c_int) -> Result<usize, c_int> {
    usize::try_from(n).map_err(|_| fail(func, MPI_ERR_COUNT, format!("{what} is negative ({n})")))
}

fn nonneg(func: &str, what: &str, n: c_int) -> Result<usize, c_int> {
    usize::try_from(n).map_err(|_| fail(func, MPI_ERR_ARG, format!("{what} is negative ({n})")))
}

fn out<T>(func: &str, what: &str, p: *mut T) -> Result<*mut T, c_int> {
    if p.is_null() {
        Err(fail(func, MPI_ERR_ARG, format!("{what} is NULL")))
    } else {
        Ok(p)
    }
}

/// The `n` entries of a C array argument.
///
/// # Safety
/// `p` must point to `n` readable values when `n > 0`.
unsafe fn array<'a, T>(func: &str, what: &str, p: *const T, n: usize) -> Result<&'a [T], c_int> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(fail(func, MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: non-null; the caller guarantees `n` readable values.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Stores a new handle for `ty` in `*newtype`.
///
/// # Safety
/// `newtype` must be valid for a write when non-null.
unsafe fn give(func: &str, ty: Result<Arc<Datatype>, MpiError>, newtype: *mut MPI_Datatype) -> Result<(), c_int> {
    let newtype = out(func, "newtype", newtype)?;
    let ty = ty.map_err(|e| engine_err(func, e))?;
    let h = insert(ty).ok_or_else(|| fail(func, MPI_ERR_INTERN, "too many datatypes exist at once"))?;
    // SAFETY: non-null; the caller provides an MPI_Datatype.
    unsafe { *newtype = h };
    Ok(())
}

/// Writes `v` through a nullable out pointer.
///
/// # Safety
/// `p` must be valid for a write when non-null.
unsafe fn put<T>(func: &str, what: &str, p: *mut T, v: T) -> Result<(), c_int> {
    let p = out(func, what, p)?;
    // SAFETY: non-null; the caller provides the out value.
    unsafe { p.write(v) };
    Ok(())
}

fn order_arg(func: &str, order: c_int) -> Result<Order, c_int> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        _ => Err(fail(func, MPI_ERR_ARG, format!("order {order} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"))),
    }
}

// ---- constructors --------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_contiguous(count_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_contiguous";
    run(|| {
        let n = count(F, "count", count_)?;
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::contiguous(n, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_vector(count_: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_vector";
    run(|| {
        let n = count(F, "count", count_)?;
        let bl = nonneg(F, "blocklength", blocklength)?;
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::vector(n, bl, stride as isize, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hvector(count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    hvector("MPI_Type_create_hvector", count_, blocklength, stride, oldtype, newtype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hvector(count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    hvector("MPI_Type_hvector", count_, blocklength, stride, oldtype, newtype)
}

fn hvector(f: &str, count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        let bl = nonneg(f, "blocklength", blocklength)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, Datatype::hvector(n, bl, stride as isize, &old), newtype) }
    })
}

/// Block lengths from a C array, each non-negative.
///
/// # Safety
/// `p` must point to `n` ints when `n > 0`.
unsafe fn blocklens(f: &str, p: *const c_int, n: usize) -> Result<Vec<usize>, c_int> {
    // SAFETY: forwarded from the caller.
    let raw = unsafe { array(f, "array_of_blocklengths", p, n)? };
    raw.iter().map(|&b| nonneg(f, "a blocklength", b)).collect()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_indexed(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_indexed";
    run(|| {
        let n = count(F, "count", count_)?;
        // SAFETY: the caller passes `count` blocklengths and displacements.
        let (bl, d) = unsafe { (blocklens(F, array_of_blocklengths, n)?, array(F, "array_of_displacements", array_of_displacements, n)?) };
        let d: Vec<isize> = d.iter().map(|&x| x as isize).collect();
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::indexed(&bl, &d, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { hindexed("MPI_Type_create_hindexed", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hindexed(count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { hindexed("MPI_Type_hindexed", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype) }
}

/// # Safety
/// The arrays hold `count_` values; `newtype` is writable.
unsafe fn hindexed(f: &str, count_: c_int, bls: *const c_int, displs: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        // SAFETY: forwarded from the caller.
        let (bl, d) = unsafe { (blocklens(f, bls, n)?, array(f, "array_of_displacements", displs, n)?) };
        let d: Vec<isize> = d.iter().map(|&x| x as isize).collect();
        let old = get(f, oldtype)?;
        // SAFETY: forwarded from the caller.
        unsafe { give(f, Datatype::hindexed(&bl, &d, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_indexed_block(count_: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_indexed_block";
    run(|| {
        let n = count(F, "count", count_)?;
        let bl = nonneg(F, "blocklength", blocklength)?;
        // SAFETY: the caller passes `count` displacements.
        let d = unsafe { array(F, "array_of_displacements", array_of_displacements, n)? };
        let d: Vec<isize> = d.iter().map(|&x| x as isize).collect();
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::indexed_block(bl, &d, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed_block(count_: c_int, blocklength: c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_hindexed_block";
    run(|| {
        let n = count(F, "count", count_)?;
        let bl = nonneg(F, "blocklength", blocklength)?;
        // SAFETY: the caller passes `count` displacements.
        let d = unsafe { array(F, "array_of_displacements", array_of_displacements, n)? };
        let d: Vec<isize> = d.iter().map(|&x| x as isize).collect();
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::hindexed_block(bl, &d, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_struct(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { structure("MPI_Type_create_struct", count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_struct(count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, array_of_types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { structure("MPI_Type_struct", count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype) }
}

/// # Safety
/// The arrays hold `count_` values; `newtype` is writable.
unsafe fn structure(f: &str, count_: c_int, bls: *const c_int, displs: *const MPI_Aint, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        // SAFETY: forwarded from the caller.
        let (bl, d, ts) = unsafe {
            (blocklens(f, bls, n)?, array(f, "array_of_displacements", displs, n)?, array(f, "array_of_types", types, n)?)
        };
        let d: Vec<isize> = d.iter().map(|&x| x as isize).collect();
        let ts = ts.iter().map(|&t| get(f, t)).collect::<Result<Vec<_>, _>>()?;
        // SAFETY: forwarded from the caller.
        unsafe { give(f, Datatype::structure(&bl, &d, &ts), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_subarray";
    run(|| {
        let n = nonneg(F, "ndims", ndims)?;
        // SAFETY: the caller passes `ndims` values in each array.
        let (s, ss, st) = unsafe {
            (array(F, "array_of_sizes", array_of_sizes, n)?, array(F, "array_of_subsizes", array_of_subsizes, n)?, array(F, "array_of_starts", array_of_starts, n)?)
        };
        let conv = |v: &[c_int], what: &str| v.iter().map(|&x| nonneg(F, what, x)).collect::<Result<Vec<_>, _>>();
        let (s, ss, st) = (conv(s, "a size")?, conv(ss, "a subsize")?, conv(st, "a start")?);
        let order = order_arg(F, order)?;
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::subarray(&s, &ss, &st, order, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_darray";
    run(|| {
        let size = nonneg(F, "size", size)?;
        let rank = nonneg(F, "rank", rank)?;
        let n = nonneg(F, "ndims", ndims)?;
        // SAFETY: the caller passes `ndims` values in each array.
        let (g, d, a, p) = unsafe {
            (
                array(F, "array_of_gsizes", array_of_gsizes, n)?,
                array(F, "array_of_distribs", array_of_distribs, n)?,
                array(F, "array_of_dargs", array_of_dargs, n)?,
                array(F, "array_of_psizes", array_of_psizes, n)?,
            )
        };
        let conv = |v: &[c_int], what: &str| v.iter().map(|&x| nonneg(F, what, x)).collect::<Result<Vec<_>, _>>();
        let (g, p) = (conv(g, "a gsize")?, conv(p, "a psize")?);
        let d = d
            .iter()
            .map(|&x| match x {
                MPI_DISTRIBUTE_BLOCK => Ok(Distrib::Block),
                MPI_DISTRIBUTE_CYCLIC => Ok(Distrib::Cyclic),
                MPI_DISTRIBUTE_NONE => Ok(Distrib::None),
                _ => Err(fail(F, MPI_ERR_ARG, format!("unknown distribution {x}"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let order = order_arg(F, order)?;
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::darray(size, rank, &g, &d, a, &p, order, &old), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_resized(oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_resized";
    run(|| {
        let old = get(F, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, Datatype::resized(&old, lb as isize, extent as isize), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_dup";
    run(|| {
        let old = get(F, oldtype)?;
        let dup = Datatype::dup(&old);
        if let Ok(t) = &dup {
            // A duplicate of a committed type is committed.
            if old.committed() {
                t.commit();
            }
        }
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(F, dup, newtype) }?;
        // Attribute copy callbacks run on the duplicate. When one fails, the duplicate goes
        // again and newtype is MPI_DATATYPE_NULL (as MPICH leaves it).
        // SAFETY: `give` checked and wrote newtype.
        let h = unsafe { *newtype };
        if let Err(rc) = crate::attributes::type_attrs_on_dup(oldtype, h) {
            release(h);
            // SAFETY: as above.
            unsafe { *newtype = MPI_DATATYPE_NULL };
            return Err(rc); // raised already, with the callback's own code (as MPICH)
        }
        Ok(())
    })
}

// ---- Fortran 90 parameterized types --------------------------------------------------------

/// A type returned by `MPI_Type_create_f90_*`: predefined (it is never freed, and the same
/// arguments give the same handle), but with its own envelope — the combiner and the
/// arguments it was asked with.
struct F90Type {
    handle: MPI_Datatype,
    combiner: c_int,
    args: Vec<c_int>,
    ty: Arc<Datatype>,
}

/// Every F90 type handed out so far (a program asks for a few kinds).
fn f90_types() -> std::sync::MutexGuard<'static, Vec<F90Type>> {
    static F90: Mutex<Vec<F90Type>> = Mutex::new(Vec::new());
    F90.lock().unwrap_or_else(|p| p.into_inner())
}

/// The combiner and arguments of `dt` if `MPI_Type_create_f90_*` returned it.
fn f90_of(dt: MPI_Datatype) -> Option<F90Type> {
    let list = f90_types();
    let f = list.iter().find(|f| f.handle == dt)?;
    Some(F90Type { handle: f.handle, combiner: f.combiner, args: f.args.clone(), ty: f.ty.clone() })
}

/// Sized REAL kinds as `SELECTED_REAL_KIND` ranks them (gfortran on x86-64: kinds 4, 8,
/// and 10/16, both stored in 16 bytes): (decimal precision, decimal exponent range).
const REAL_KINDS: [(c_int, c_int); 3] = [(6, 37), (15, 307), (33, 4931)];

/// The handle for (`combiner`, `args`) of base type `base`: the one handed out before for
/// the same arguments, or a new one.
///
/// # Safety
/// `newtype` must be valid for a write when non-null.
unsafe fn give_f90(func: &str, combiner: c_int, args: Vec<c_int>, base: MPI_Datatype, newtype: *mut MPI_Datatype) -> Result<(), c_int> {
    let newtype = out(func, "newtype", newtype)?;
    // Held throughout, so two threads asking at once get one handle (lock order: this
    // list, then the handle table).
    let mut list = f90_types();
    let h = match list.iter().find(|f| f.combiner == combiner && f.args == args) {
        Some(f) => f.handle,
        None => {
            let ty = Datatype::dup(&get(func, base)?).map_err(|e| engine_err(func, e))?;
            ty.commit();
            let h = insert(ty.clone()).ok_or_else(|| fail(func, MPI_ERR_INTERN, "too many datatypes exist at once"))?;
            list.push(F90Type { handle: h, combiner, args, ty });
            h
        }
    };
    // SAFETY: non-null; the caller provides an MPI_Datatype.
    unsafe { *newtype = h };
    Ok(())
}

/// `MPI_Type_create_f90_real`/`_complex`: the type among `bases` (one per entry of
/// `REAL_KINDS`) of the kind `SELECTED_REAL_KIND(p, r)` picks; either of p and r may be
/// `MPI_UNDEFINED` (omitted), not both.
///
/// # Safety
/// `newtype` must be valid for a write when non-null.
unsafe fn create_f90_real_like(func: &str, combiner: c_int, bases: [MPI_Datatype; 3], p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
    run(|| {
        if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
            return Err(fail(func, MPI_ERR_ARG, "p and r are both MPI_UNDEFINED; give at least one"));
        }
        let (p_min, r_min) = (if p == MPI_UNDEFINED { 0 } else { p }, if r == MPI_UNDEFINED { 0 } else { r });
        let Some(kind) = REAL_KINDS.iter().position(|&(kp, kr)| p_min <= kp && r_min <= kr) else {
            return Err(fail(func, MPI_ERR_ARG, format!("no REAL kind has precision {p} and exponent range {r} (at most 33 digits and 4931)")));
        };
        // SAFETY: passed on from the caller.
        unsafe { give_f90(func, combiner, vec![p, r], bases[kind], newtype) }
    })
}

/// `MPI_Type_create_f90_real`: the type of `REAL(KIND=SELECTED_REAL_KIND(p, r))`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the caller passes a writable newtype.
    unsafe { create_f90_real_like("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, [MPI_REAL4, MPI_REAL8, MPI_REAL16], p, r, newtype) }
}

/// `MPI_Type_create_f90_complex`: the type of `COMPLEX(KIND=SELECTED_REAL_KIND(p, r))`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: the caller passes a writable newtype.
    unsafe { create_f90_real_like("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, [MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32], p, r, newtype) }
}

/// `MPI_Type_create_f90_integer`: the type of `INTEGER(KIND=SELECTED_INT_KIND(r))`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_f90_integer(r: c_int, newtype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_create_f90_integer";
    run(|| {
        // Decimal exponent range of INTEGER(1), (2), (4), (8).
        let kinds = [(2, MPI_INTEGER1), (4, MPI_INTEGER2), (9, MPI_INTEGER4), (18, MPI_INTEGER8)];
        let found = kinds.iter().find(|&&(kr, _)| r != MPI_UNDEFINED && r <= kr);
        let Some(&(_, base)) = found else {
            return Err(fail(F, MPI_ERR_ARG, format!("no INTEGER kind has exponent range {r} (at most 18)")));
        };
        // SAFETY: the caller passes a writable newtype.
        unsafe { give_f90(F, MPI_COMBINER_F90_INTEGER, vec![r], base, newtype) }
    })
}

// ---- commit, free, names -------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_commit";
    run(|| {
        let p = out(F, "datatype", datatype)?;
        // SAFETY: non-null; the caller provides an MPI_Datatype.
        let t = get(F, unsafe { *p })?;
        t.commit();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_free";
    run(|| {
        let p = out(F, "datatype", datatype)?;
        // SAFETY: non-null; the caller provides an MPI_Datatype.
        let dt = unsafe { *p };
        get(F, dt)?;
        if freed(dt) {
            return Err(fail(F, MPI_ERR_TYPE, format!("invalid datatype handle {dt:#x} (freed already)")));
        }
        let Some(slot) = slot_of(dt).filter(|_| f90_of(dt).is_none()) else {
            return Err(fail(F, MPI_ERR_TYPE, "predefined datatypes cannot be freed (those of MPI_Type_create_f90_* neither)"));
        };
        // Attribute delete callbacks run before the handle goes away; when one fails the
        // type stays (without its attributes) and the free fails, as MPI_Comm_free does.
        if let Err(rc) = crate::attributes::type_attrs_on_free(dt) {
            return Err(rc); // raised already, with the callback's own code (as MPICH)
        }
        release_slot(slot);
        // SAFETY: as above.
        unsafe { *p = MPI_DATATYPE_NULL };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_set_name(datatype: MPI_Datatype, type_name: *const c_char) -> c_int {
    const F: &str = "MPI_Type_set_name";
    run(|| {
        get(F, datatype)?;
        if type_name.is_null() {
            return Err(fail(F, MPI_ERR_ARG, "type_name is NULL"));
        }
        // SAFETY: non-null; the caller passes a NUL-terminated string.
        let mut name = unsafe { std::ffi::CStr::from_ptr(type_name) }.to_string_lossy().into_owned();
        let max = MPI_MAX_OBJECT_NAME as usize - 1;
        if name.len() > max {
            let mut cut = max;
            while !name.is_char_boundary(cut) {
                cut -= 1;
            }
            name.truncate(cut);
        }
        let mut t = table();
        match slot_of(datatype) {
            Some(slot) => {
                if let Some(e) = t.slots[slot].as_mut() {
                    e.name = name;
                }
            }
            None => {
                t.predefined_names.retain(|(h, _)| *h != datatype);
                t.predefined_names.push((datatype, name));
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_name(datatype: MPI_Datatype, type_name: *mut c_char, resultlen: *mut c_int) -> c_int {
    const F: &str = "MPI_Type_get_name";
    run(|| {
        get(F, datatype)?;
        let name_ptr = out(F, "type_name", type_name)?;
        let len_ptr = out(F, "resultlen", resultlen)?;
        let name = {
            let t = table();
            match slot_of(datatype) {
                Some(slot) => t.slots[slot].as_ref().map(|e| e.name.clone()).unwrap_or_default(),
                None => t
                    .predefined_names
                    .iter()
                    .find(|(h, _)| *h == datatype)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_else(|| predefined().get(&datatype).map(|(n, _)| n.to_string()).unwrap_or_default()),
            }
        };
        // SAFETY: the caller provides MPI_MAX_OBJECT_NAME bytes and an int.
        unsafe { *len_ptr = write_c_string(name_ptr, MPI_MAX_OBJECT_NAME as usize, &name) };
        Ok(())
    })
}

// ---- queries -------------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int {
    const F: &str = "MPI_Type_size";
    run(|| {
        let t = get(F, datatype)?;
        let v = c_int::try_from(t.size()).unwrap_or(MPI_UNDEFINED);
        // SAFETY: the caller passes an int.
        unsafe { put(F, "size", size, v) }
    })
}

/// The predefined type of a type class and byte size: the sized Fortran types, as the
/// standard's advice to implementors has it (MPI 4.1 §19.1.9). The result is the named
/// type itself (not a duplicate; it must not be freed).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_match_size";
    run(|| {
        let candidates: &[(c_int, MPI_Datatype)] = match typeclass {
            MPI_TYPECLASS_REAL => &[(4, MPI_REAL4), (8, MPI_REAL8), (16, MPI_REAL16)],
            MPI_TYPECLASS_INTEGER => &[(1, MPI_INTEGER1), (2, MPI_INTEGER2), (4, MPI_INTEGER4), (8, MPI_INTEGER8)],
            MPI_TYPECLASS_COMPLEX => &[(8, MPI_COMPLEX8), (16, MPI_COMPLEX16), (32, MPI_COMPLEX32)],
            _ => {
                let msg = format!("type class {typeclass} is none of MPI_TYPECLASS_REAL, _INTEGER, _COMPLEX");
                return Err(fail(F, MPI_ERR_ARG, msg));
            }
        };
        let class = ["REAL", "INTEGER", "COMPLEX"][(typeclass - 1) as usize];
        let Some(&(_, t)) = candidates.iter().find(|c| c.0 == size) else {
            let sizes: Vec<String> = candidates.iter().map(|c| c.0.to_string()).collect();
            return Err(fail(F, MPI_ERR_ARG, format!("no predefined {class} type of {size} bytes (sizes: {})", sizes.join(", "))));
        };
        // SAFETY: the caller passes an MPI_Datatype.
        unsafe { put(F, "datatype", datatype, t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_size_x(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    const F: &str = "MPI_Type_size_x";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes an MPI_Count.
        unsafe { put(F, "size", size, t.size() as MPI_Count) }
    })
}

/// Writes two values of a query (`lb`/`extent` style).
///
/// # Safety
/// Both pointers must be writable when non-null.
unsafe fn put2<T>(f: &str, a: *mut T, va: T, b: *mut T, vb: T) -> Result<(), c_int> {
    let (a, b) = (out(f, "first output", a)?, out(f, "second output", b)?);
    // SAFETY: non-null; the caller provides the outputs.
    unsafe {
        a.write(va);
        b.write(vb);
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_extent(datatype: MPI_Datatype, lb: *mut MPI_Aint, extent: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Type_get_extent";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes two MPI_Aint.
        unsafe { put2(F, lb, t.lb() as MPI_Aint, extent, t.extent() as MPI_Aint) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_extent_x(datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
    const F: &str = "MPI_Type_get_extent_x";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes two MPI_Count.
        unsafe { put2(F, lb, t.lb() as MPI_Count, extent, t.extent() as MPI_Count) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_true_extent(datatype: MPI_Datatype, true_lb: *mut MPI_Aint, true_extent: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Type_get_true_extent";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes two MPI_Aint.
        unsafe { put2(F, true_lb, t.true_lb() as MPI_Aint, true_extent, t.true_extent() as MPI_Aint) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_true_extent_x(datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) -> c_int {
    const F: &str = "MPI_Type_get_true_extent_x";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes two MPI_Count.
        unsafe { put2(F, true_lb, t.true_lb() as MPI_Count, true_extent, t.true_extent() as MPI_Count) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_extent(datatype: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Type_extent";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes an MPI_Aint.
        unsafe { put(F, "extent", extent, t.extent() as MPI_Aint) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_lb(datatype: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Type_lb";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes an MPI_Aint.
        unsafe { put(F, "displacement", displacement, t.lb() as MPI_Aint) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_ub(datatype: MPI_Datatype, displacement: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Type_ub";
    run(|| {
        let t = get(F, datatype)?;
        // SAFETY: the caller passes an MPI_Aint.
        unsafe { put(F, "displacement", displacement, t.ub() as MPI_Aint) }
    })
}

// ---- envelope and contents -----------------------------------------------------------------

/// The arguments a type was created with, as `MPI_Type_get_contents` returns them.
struct Contents {
    combiner: c_int,
    ints: Vec<c_int>,
    addrs: Vec<MPI_Aint>,
    types: Vec<Arc<Datatype>>,
}

fn order_c(o: Order) -> c_int {
    match o {
        Order::C => MPI_ORDER_C,
        Order::Fortran => MPI_ORDER_FORTRAN,
    }
}

/// The envelope and contents of handle `dt`: an `MPI_Type_create_f90_*` type's own
/// combiner and arguments, else those of its engine type.
fn contents_of(dt: MPI_Datatype, t: &Datatype) -> Contents {
    match f90_of(dt) {
        Some(f) => Contents { combiner: f.combiner, ints: f.args, addrs: vec![], types: vec![] },
        None => contents(t),
    }
}

fn contents(t: &Datatype) -> Contents {
    let i = |n: usize| n as c_int;
    let c = |combiner, ints, addrs, types| Contents { combiner, ints, addrs, types };
    match t.kind() {
        Kind::Basic(_) | Kind::Marker(_) | Kind::Pair { .. } => c(MPI_COMBINER_NAMED, vec![], vec![], vec![]),
        Kind::Dup { old } => c(MPI_COMBINER_DUP, vec![], vec![], vec![old.clone()]),
        Kind::Contiguous { count, old } => c(MPI_COMBINER_CONTIGUOUS, vec![i(*count)], vec![], vec![old.clone()]),
        Kind::Vector { count, blocklen, stride, old } => {
            c(MPI_COMBINER_VECTOR, vec![i(*count), i(*blocklen), *stride as c_int], vec![], vec![old.clone()])
        }
        Kind::Hvector { count, blocklen, stride, old } => {
            c(MPI_COMBINER_HVECTOR, vec![i(*count), i(*blocklen)], vec![*stride as MPI_Aint], vec![old.clone()])
        }
        Kind::Indexed { blocklens, displs, old } => {
            let mut ints = vec![i(blocklens.len())];
            ints.extend(blocklens.iter().map(|&b| i(b)));
            ints.extend(displs.iter().map(|&d| d as c_int));
            c(MPI_COMBINER_INDEXED, ints, vec![], vec![old.clone()])
        }
        Kind::Hindexed { blocklens, displs, old } => {
            let mut ints = vec![i(blocklens.len())];
            ints.extend(blocklens.iter().map(|&b| i(b)));
            c(MPI_COMBINER_HINDEXED, ints, displs.iter().map(|&d| d as MPI_Aint).collect(), vec![old.clone()])
        }
        Kind::IndexedBlock { blocklen, displs, old } => {
            let mut ints = vec![i(displs.len()), i(*blocklen)];
            ints.extend(displs.iter().map(|&d| d as c_int));
            c(MPI_COMBINER_INDEXED_BLOCK, ints, vec![], vec![old.clone()])
        }
        Kind::HindexedBlock { blocklen, displs, old } => c(
            MPI_COMBINER_HINDEXED_BLOCK,
            vec![i(displs.len()), i(*blocklen)],
            displs.iter().map(|&d| d as MPI_Aint).collect(),
            vec![old.clone()],
        ),
        Kind::Struct { blocklens, displs, types } => {
            let mut ints = vec![i(blocklens.len())];
            ints.extend(blocklens.iter().map(|&b| i(b)));
            c(MPI_COMBINER_STRUCT, ints, displs.iter().map(|&d| d as MPI_Aint).collect(), types.clone())
        }
        Kind::Subarray { sizes, subsizes, starts, order, old, .. } => {
            let mut ints = vec![i(sizes.len())];
            for v in [sizes, subsizes, starts] {
                ints.extend(v.iter().map(|&x| i(x)));
            }
            ints.push(order_c(*order));
            c(MPI_COMBINER_SUBARRAY, ints, vec![], vec![old.clone()])
        }
        Kind::Darray { size, rank, gsizes, distribs, dargs, psizes, order, old, .. } => {
            let mut ints = vec![i(*size), i(*rank), i(gsizes.len())];
            ints.extend(gsizes.iter().map(|&x| i(x)));
            ints.extend(distribs.iter().map(|d| match d {
                Distrib::Block => MPI_DISTRIBUTE_BLOCK,
                Distrib::Cyclic => MPI_DISTRIBUTE_CYCLIC,
                Distrib::None => MPI_DISTRIBUTE_NONE,
            }));
            ints.extend(dargs.iter().copied());
            ints.extend(psizes.iter().map(|&x| i(x)));
            ints.push(order_c(*order));
            c(MPI_COMBINER_DARRAY, ints, vec![], vec![old.clone()])
        }
        Kind::Resized { lb, extent, old } => {
            c(MPI_COMBINER_RESIZED, vec![], vec![*lb as MPI_Aint, *extent as MPI_Aint], vec![old.clone()])
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_envelope(datatype: MPI_Datatype, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) -> c_int {
    const F: &str = "MPI_Type_get_envelope";
    run(|| {
        let t = get(F, datatype)?;
        let c = contents_of(datatype, &t);
        // SAFETY: the caller passes four ints.
        unsafe {
            put(F, "num_integers", num_integers, c.ints.len() as c_int)?;
            put(F, "num_addresses", num_addresses, c.addrs.len() as c_int)?;
            put(F, "num_datatypes", num_datatypes, c.types.len() as c_int)?;
            put(F, "combiner", combiner, c.combiner)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_contents(datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_get_contents";
    run(|| {
        let t = get(F, datatype)?;
        let c = contents_of(datatype, &t);
        if c.combiner == MPI_COMBINER_NAMED {
            return Err(fail(F, MPI_ERR_TYPE, "a predefined datatype has no contents (its combiner is MPI_COMBINER_NAMED)"));
        }
        if (max_integers as i64) < c.ints.len() as i64 || (max_addresses as i64) < c.addrs.len() as i64 || (max_datatypes as i64) < c.types.len() as i64 {
            return Err(fail(F, MPI_ERR_ARG, "the output arrays are smaller than MPI_Type_get_envelope reports"));
        }
        let mut handles = Vec::with_capacity(c.types.len());
        for ty in &c.types {
            handles.push(handle_for(ty).ok_or_else(|| fail(F, MPI_ERR_INTERN, "too many datatypes exist at once"))?);
        }
        // SAFETY: the caller provides arrays of at least the envelope's sizes (checked
        // against the max_* arguments above); empty outputs are not touched.
        unsafe {
            if !c.ints.is_empty() {
                std::ptr::copy_nonoverlapping(c.ints.as_ptr(), out(F, "array_of_integers", array_of_integers)?, c.ints.len());
            }
            if !c.addrs.is_empty() {
                std::ptr::copy_nonoverlapping(c.addrs.as_ptr(), out(F, "array_of_addresses", array_of_addresses)?, c.addrs.len());
            }
            if !handles.is_empty() {
                std::ptr::copy_nonoverlapping(handles.as_ptr(), out(F, "array_of_datatypes", array_of_datatypes)?, handles.len());
            }
        }
        Ok(())
    })
}

// ---- pack and unpack -----------------------------------------------------------------------

/// `MPI_Pack`: appends `incount` items to `outbuf` at `*position`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack(inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: MPI_Comm) -> c_int {
    const F: &str = "MPI_Pack";
    run(|| {
        let n = count(F, "incount", incount)?;
        let t = get_committed(F, datatype)?;
        let pos_ptr = out(F, "position", position)?;
        // SAFETY: non-null; the caller provides an int.
        let pos = unsafe { *pos_ptr };
        let need = t.packed_size(n).ok_or_else(|| raise(comm, F, MPI_ERR_COUNT, "the packed size overflows"))?;
        // SAFETY: forwarded from the caller (outsize bytes at outbuf, inbuf laid out by the type).
        let wrote = unsafe { pack_into(F, comm, &t, inbuf, n, outbuf, outsize as i64, pos as i64, need, false)? };
        // SAFETY: as above.
        unsafe { *pos_ptr = pos + wrote as c_int };
        Ok(())
    })
}

/// `MPI_Unpack`: reads `outcount` items from `inbuf` at `*position`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    const F: &str = "MPI_Unpack";
    run(|| {
        let n = count(F, "outcount", outcount)?;
        let t = get_committed(F, datatype)?;
        let pos_ptr = out(F, "position", position)?;
        // SAFETY: non-null; the caller provides an int.
        let pos = unsafe { *pos_ptr };
        let need = t.packed_size(n).ok_or_else(|| raise(comm, F, MPI_ERR_COUNT, "the packed size overflows"))?;
        // SAFETY: forwarded from the caller.
        let read = unsafe { unpack_from(F, comm, &t, inbuf, insize as i64, pos as i64, outbuf, n, need, false)? };
        // SAFETY: as above.
        unsafe { *pos_ptr = pos + read as c_int };
        Ok(())
    })
}

/// Packs `n` items (`need` bytes) into `outbuf[pos..outsize]`; returns the bytes written.
///
/// # Safety
/// `outbuf` holds `outsize` bytes; `inbuf` holds the items as the type lays them out.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_into(f: &str, comm: MPI_Comm, t: &Datatype, inbuf: *const c_void, n: usize, outbuf: *mut c_void, outsize: i64, pos: i64, need: usize, external: bool) -> Result<usize, c_int> {
    if pos < 0 || outsize < 0 || pos > outsize {
        return Err(raise(comm, f, MPI_ERR_ARG, format!("position {pos} is outside the buffer of {outsize} bytes")));
    }
    if need as i64 > outsize - pos {
        return Err(raise(comm, f, MPI_ERR_TRUNCATE, format!("{need} bytes do not fit in the {} bytes left in the pack buffer", outsize - pos)));
    }
    if need == 0 {
        return Ok(0);
    }
    if outbuf.is_null() {
        return Err(raise(comm, f, MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    // SAFETY: pos + need <= outsize bytes of outbuf (checked above).
    let dst = unsafe { std::slice::from_raw_parts_mut((outbuf as *mut u8).add(pos as usize), need) };
    // SAFETY: the caller guarantees `inbuf` holds the items (MPI_BOTTOM: absolute addresses).
    Ok(unsafe {
        if external {
            t.pack_external32(inbuf as *const u8, n, dst)
        } else {
            t.pack(inbuf as *const u8, n, dst)
        }
    })
}

/// Unpacks `n` items (`need` bytes) from `inbuf[pos..insize]`; returns the bytes read.
///
/// # Safety
/// `inbuf` holds `insize` bytes; `outbuf` can hold the items as the type lays them out.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_from(f: &str, comm: MPI_Comm, t: &Datatype, inbuf: *const c_void, insize: i64, pos: i64, outbuf: *mut c_void, n: usize, need: usize, external: bool) -> Result<usize, c_int> {
    if pos < 0 || insize < 0 || pos > insize {
        return Err(raise(comm, f, MPI_ERR_ARG, format!("position {pos} is outside the buffer of {insize} bytes")));
    }
    if need as i64 > insize - pos {
        return Err(raise(comm, f, MPI_ERR_TRUNCATE, format!("{need} bytes to unpack but only {} left in the buffer", insize - pos)));
    }
    if need == 0 {
        return Ok(0);
    }
    if inbuf.is_null() {
        return Err(raise(comm, f, MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    // SAFETY: pos + need <= insize bytes of inbuf (checked above).
    let src = unsafe { std::slice::from_raw_parts((inbuf as *const u8).add(pos as usize), need) };
    // SAFETY: the caller guarantees `outbuf` can hold the items.
    Ok(unsafe {
        if external {
            t.unpack_external32(src, outbuf as *mut u8, n)
        } else {
            t.unpack(src, outbuf as *mut u8, n)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_size(incount: c_int, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut c_int) -> c_int {
    const F: &str = "MPI_Pack_size";
    run(|| {
        let n = count(F, "incount", incount)?;
        let t = get(F, datatype)?;
        let bytes = t.packed_size(n).and_then(|b| c_int::try_from(b).ok());
        let bytes = bytes.ok_or_else(|| raise(comm, F, MPI_ERR_COUNT, "the packed size does not fit in an int"))?;
        // SAFETY: the caller passes an int.
        unsafe { put(F, "size", size, bytes) }
    })
}

/// Only "external32" is a known data representation.
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string.
unsafe fn check_datarep(f: &str, datarep: *const c_char) -> Result<(), c_int> {
    if datarep.is_null() {
        return Err(fail(f, MPI_ERR_ARG, "datarep is NULL"));
    }
    // SAFETY: non-null; the caller passes a C string.
    let rep = unsafe { std::ffi::CStr::from_ptr(datarep) }.to_string_lossy();
    if rep != "external32" {
        return Err(fail(f, MPI_ERR_ARG, format!("unknown data representation \"{rep}\" (only \"external32\" exists)")));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Aint, position: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Pack_external";
    run(|| {
        // SAFETY: the caller passes a C string.
        unsafe { check_datarep(F, datarep)? };
        let n = count(F, "incount", incount)?;
        let t = get_committed(F, datatype)?;
        let pos_ptr = out(F, "position", position)?;
        // SAFETY: non-null; the caller provides an MPI_Aint.
        let pos = unsafe { *pos_ptr };
        let need = t.external32_size(n).ok_or_else(|| fail(F, MPI_ERR_COUNT, "the packed size overflows"))?;
        // SAFETY: forwarded from the caller.
        let wrote = unsafe { pack_into(F, MPI_COMM_WORLD, &t, inbuf, n, outbuf, outsize, pos, need, true)? };
        // SAFETY: as above.
        unsafe { *pos_ptr = pos + wrote as MPI_Aint };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype) -> c_int {
    const F: &str = "MPI_Unpack_external";
    run(|| {
        // SAFETY: the caller passes a C string.
        unsafe { check_datarep(F, datarep)? };
        let n = count(F, "outcount", outcount)?;
        let t = get_committed(F, datatype)?;
        let pos_ptr = out(F, "position", position)?;
        // SAFETY: non-null; the caller provides an MPI_Aint.
        let pos = unsafe { *pos_ptr };
        let need = t.external32_size(n).ok_or_else(|| fail(F, MPI_ERR_COUNT, "the packed size overflows"))?;
        // SAFETY: forwarded from the caller.
        let read = unsafe { unpack_from(F, MPI_COMM_WORLD, &t, inbuf, insize, pos, outbuf, n, need, true)? };
        // SAFETY: as above.
        unsafe { *pos_ptr = pos + read as MPI_Aint };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, datatype: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
    const F: &str = "MPI_Pack_external_size";
    run(|| {
        // SAFETY: the caller passes a C string.
        unsafe { check_datarep(F, datarep)? };
        let n = count(F, "incount", incount)?;
        let t = get(F, datatype)?;
        let bytes = t.external32_size(n).ok_or_else(|| fail(F, MPI_ERR_COUNT, "the packed size overflows"))?;
        // SAFETY: the caller passes an MPI_Aint.
        unsafe { put(F, "size", size, bytes as MPI_Aint) }
    })
}

// ---- addresses -----------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
    // SAFETY: the caller passes an MPI_Aint.
    run(|| unsafe { put("MPI_Get_address", "address", address, location as usize as MPI_Aint) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Address(location: *mut c_void, address: *mut MPI_Aint) -> c_int {
    // SAFETY: the caller passes an MPI_Aint.
    run(|| unsafe { put("MPI_Address", "address", address, location as usize as MPI_Aint) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_sizes_match_handle_encoding() {
        assert!(!is_builtin_handle(0x4c00_ff77u32 as MPI_Datatype), "garbage builtin-looking handle");
        assert!(!is_builtin_handle(MPI_DATATYPE_NULL));
        for &(h, name, _) in PREDEFINED {
            assert_eq!(is_builtin_handle(h), (h as u32) & 0xff00_0000 == 0x4c00_0000, "{name}");
            let t = lookup(h).unwrap();
            let u = h as u32;
            if u & 0xff00_0000 == 0x4c00_0000 && h != MPI_LB && h != MPI_UB {
                assert_eq!(t.size(), ((u >> 8) & 0xff) as usize, "{name}");
            }
        }
    }

    #[test]
    fn derived_handles_round_trip() {
        let mut v = 0;
        // SAFETY: valid out pointers.
        unsafe {
            assert_eq!(PMPI_Type_vector(3, 2, 4, MPI_INT, &mut v), MPI_SUCCESS);
            assert_eq!(v as u32 & DERIVED_MASK, DERIVED_TAG);
            assert!(!lookup(v).unwrap().committed());
            assert_eq!(PMPI_Type_commit(&mut v), MPI_SUCCESS);
            assert!(lookup(v).unwrap().committed());
            let (mut ni, mut na, mut nd, mut comb) = (0, 0, 0, 0);
            PMPI_Type_get_envelope(v, &mut ni, &mut na, &mut nd, &mut comb);
            assert_eq!((ni, na, nd, comb), (3, 0, 1, MPI_COMBINER_VECTOR));
            let (mut ints, mut addrs, mut types) = ([0; 3], [0 as MPI_Aint; 1], [0; 1]);
            PMPI_Type_get_contents(v, 3, 0, 1, ints.as_mut_ptr(), addrs.as_mut_ptr(), types.as_mut_ptr());
            assert_eq!((ints, types[0]), ([3, 2, 4], MPI_INT));
            let held = lookup(v).unwrap();
            assert_eq!(PMPI_Type_free(&mut v), MPI_SUCCESS);
            assert_eq!(v, MPI_DATATYPE_NULL);
            assert_eq!(held.size(), 24, "a freed type stays valid while referenced");
        }
    }

    #[test]
    fn pack_position_semantics() {
        let data = [1i32, 2, 3, 4, 5, 6];
        let mut v = 0;
        let mut buf = [0u8; 64];
        let mut pos = 0;
        // SAFETY: valid buffers of the stated sizes.
        unsafe {
            PMPI_Type_vector(3, 1, 2, MPI_INT, &mut v);
            PMPI_Type_commit(&mut v);
            assert_eq!(PMPI_Pack(data.as_ptr() as *const c_void, 1, v, buf.as_mut_ptr() as *mut c_void, 64, &mut pos, MPI_COMM_WORLD), MPI_SUCCESS);
            assert_eq!(pos, 12);
            assert_eq!(PMPI_Pack(data.as_ptr() as *const c_void, 2, MPI_INT, buf.as_mut_ptr() as *mut c_void, 64, &mut pos, MPI_COMM_WORLD), MPI_SUCCESS);
            assert_eq!(pos, 20);
            let mut back = [0i32; 5];
            let mut rpos = 0;
            PMPI_Unpack(buf.as_ptr() as *const c_void, 20, &mut rpos, back.as_mut_ptr() as *mut c_void, 5, MPI_INT, MPI_COMM_WORLD);
            assert_eq!(back, [1, 3, 5, 1, 2]);
            let mut sz = 0;
            PMPI_Pack_size(4, v, MPI_COMM_WORLD, &mut sz);
            assert_eq!(sz, 48);
            PMPI_Type_free(&mut v);
        }
    }

    #[test]
    fn names() {
        let mut buf = [0 as c_char; MPI_MAX_OBJECT_NAME as usize];
        let mut len = 0;
        // SAFETY: valid buffers.
        unsafe {
            PMPI_Type_get_name(MPI_DOUBLE_INT, buf.as_mut_ptr(), &mut len);
            assert_eq!(std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), "MPI_DOUBLE_INT");
            // Aliased handles report the name MPICH gives them.
            for (h, want) in [(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX"), (MPI_LONG_LONG, "MPI_LONG_LONG_INT")] {
                PMPI_Type_get_name(h, buf.as_mut_ptr(), &mut len);
                assert_eq!(std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), want);
            }
            let mut v = 0;
            PMPI_Type_contiguous(2, MPI_INT, &mut v);
            PMPI_Type_get_name(v, buf.as_mut_ptr(), &mut len);
            assert_eq!(len, 0);
            PMPI_Type_set_name(v, c"pair".as_ptr());
            PMPI_Type_get_name(v, buf.as_mut_ptr(), &mut len);
            assert_eq!(std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), "pair");
            PMPI_Type_free(&mut v);
        }
    }
}
