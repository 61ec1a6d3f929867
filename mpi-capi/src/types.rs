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

/// The predefined types `dt` is built from, each once, in the order met (markers left
/// out): the types a user data representation's extent function is asked about.
pub fn predefined_parts(dt: MPI_Datatype) -> Vec<MPI_Datatype> {
    let mut out = Vec::new();
    match lookup(dt) {
        Some(t) if t.is_named() => {
            if t.size() > 0 {
                out.push(dt);
            }
        }
        Some(t) => collect_parts(&t, &mut out),
        None => {}
    }
    out
}

fn collect_parts(t: &Arc<Datatype>, out: &mut Vec<MPI_Datatype>) {
    let f90 = f90_types().iter().find(|f| Arc::ptr_eq(&f.ty, t)).map(|f| f.handle);
    let handle = f90.or_else(|| t.is_named().then(|| predefined().iter().find(|(_, (_, p))| Arc::ptr_eq(p, t)).map(|(h, _)| *h)).flatten());
    match handle {
        Some(h) => {
            if t.size() > 0 && !out.contains(&h) {
                out.push(h);
            }
        }
        None => {
            for c in contents(t).types {
                collect_parts(&c, out);
            }
        }
    }
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

/// A count argument, int or `MPI_Count` (the `_c` functions).
fn count(func: &str, what: &str, n: impl Into<MPI_Count>) -> Result<usize, c_int> {
    let n = n.into();
    usize::try_from(n).map_err(|_| fail(func, MPI_ERR_COUNT, format!("{what} is negative ({n})")))
}

fn nonneg(func: &str, what: &str, n: impl Into<MPI_Count>) -> Result<usize, c_int> {
    let n = n.into();
    usize::try_from(n).map_err(|_| fail(func, MPI_ERR_ARG, format!("{what} is negative ({n})")))
}

/// Displacements (int, `MPI_Aint` or `MPI_Count`) as the engine's byte or extent offsets.
fn displs<D: Copy + Into<MPI_Count>>(d: &[D]) -> Vec<isize> {
    d.iter().map(|&x| x.into() as isize).collect()
}

/// The result of a constructor, marked when a large-count (`_c`) constructor made it.
fn mark(large: bool, ty: Result<Arc<Datatype>, MpiError>) -> Result<Arc<Datatype>, MpiError> {
    if let (true, Ok(t)) = (large, &ty) {
        t.mark_large_counts();
    }
    ty
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
//
// Each constructor has one body, generic over the integer types of its count and
// displacement arguments: the int form (`C = c_int`) and the `_c` form (`C = MPI_Count`,
// `large` set, so the envelope reports large counts).

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_contiguous(count_: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { contiguous("MPI_Type_contiguous", count_, oldtype, newtype, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_contiguous_c(count_: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { contiguous("MPI_Type_contiguous_c", count_, oldtype, newtype, true) }
}

/// # Safety
/// `newtype` is writable when non-null.
unsafe fn contiguous(f: &str, count_: impl Into<MPI_Count>, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::contiguous(n, &old)), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_vector(count_: c_int, blocklength: c_int, stride: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { vector("MPI_Type_vector", count_, blocklength, stride, oldtype, newtype, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_vector_c(count_: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { vector("MPI_Type_vector_c", count_, blocklength, stride, oldtype, newtype, true) }
}

/// # Safety
/// `newtype` is writable when non-null.
unsafe fn vector<C: Into<MPI_Count>>(f: &str, count_: C, blocklength: C, stride: C, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        let bl = nonneg(f, "blocklength", blocklength)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::vector(n, bl, stride.into() as isize, &old)), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hvector(count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    hvector("MPI_Type_create_hvector", count_, blocklength, stride, oldtype, newtype, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hvector_c(count_: MPI_Count, blocklength: MPI_Count, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    hvector("MPI_Type_create_hvector_c", count_, blocklength, stride, oldtype, newtype, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hvector(count_: c_int, blocklength: c_int, stride: MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    hvector("MPI_Type_hvector", count_, blocklength, stride, oldtype, newtype, false)
}

fn hvector<C: Into<MPI_Count>>(f: &str, count_: C, blocklength: C, stride: MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        let bl = nonneg(f, "blocklength", blocklength)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::hvector(n, bl, stride as isize, &old)), newtype) }
    })
}

/// Block lengths from a C array (int or `MPI_Count`), each non-negative.
///
/// # Safety
/// `p` must point to `n` values when `n > 0`.
unsafe fn blocklens<C: Copy + Into<MPI_Count>>(f: &str, p: *const C, n: usize) -> Result<Vec<usize>, c_int> {
    // SAFETY: forwarded from the caller.
    let raw = unsafe { array(f, "array_of_blocklengths", p, n)? };
    raw.iter().map(|&b| nonneg(f, "a blocklength", b)).collect()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_indexed(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed("MPI_Type_indexed", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, false, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_indexed_c(count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed("MPI_Type_indexed_c", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, false, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed("MPI_Type_create_hindexed", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, true, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed_c(count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed("MPI_Type_create_hindexed_c", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, true, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_hindexed(count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed("MPI_Type_hindexed", count_, array_of_blocklengths, array_of_displacements, oldtype, newtype, true, false) }
}

/// Indexed (displacements in extents) or hindexed (`bytes`: in bytes).
///
/// # Safety
/// The arrays hold `count_` values; `newtype` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn indexed<C: Copy + Into<MPI_Count>, D: Copy + Into<MPI_Count>>(f: &str, count_: C, bls: *const C, displs_: *const D, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, bytes: bool, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        // SAFETY: forwarded from the caller.
        let (bl, d) = unsafe { (blocklens(f, bls, n)?, array(f, "array_of_displacements", displs_, n)?) };
        let d = displs(d);
        let old = get(f, oldtype)?;
        let ty = if bytes { Datatype::hindexed(bl, d, &old) } else { Datatype::indexed(bl, d, &old) };
        // SAFETY: forwarded from the caller.
        unsafe { give(f, mark(large, ty), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_indexed_block(count_: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed_block("MPI_Type_create_indexed_block", count_, blocklength, array_of_displacements, oldtype, newtype, false, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_indexed_block_c(count_: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed_block("MPI_Type_create_indexed_block_c", count_, blocklength, array_of_displacements, oldtype, newtype, false, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed_block(count_: c_int, blocklength: c_int, array_of_displacements: *const MPI_Aint, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed_block("MPI_Type_create_hindexed_block", count_, blocklength, array_of_displacements, oldtype, newtype, true, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_hindexed_block_c(count_: MPI_Count, blocklength: MPI_Count, array_of_displacements: *const MPI_Count, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { indexed_block("MPI_Type_create_hindexed_block_c", count_, blocklength, array_of_displacements, oldtype, newtype, true, true) }
}

/// Indexed-block (displacements in extents) or hindexed-block (`bytes`: in bytes).
///
/// # Safety
/// The array holds `count_` values; `newtype` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn indexed_block<C: Copy + Into<MPI_Count>, D: Copy + Into<MPI_Count>>(f: &str, count_: C, blocklength: C, displs_: *const D, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, bytes: bool, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        let bl = nonneg(f, "blocklength", blocklength)?;
        // SAFETY: the caller passes `count` displacements.
        let d = displs(unsafe { array(f, "array_of_displacements", displs_, n)? });
        let old = get(f, oldtype)?;
        let ty = if bytes { Datatype::hindexed_block(bl, d, &old) } else { Datatype::indexed_block(bl, d, &old) };
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, ty), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_struct(count_: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const MPI_Aint, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { structure("MPI_Type_create_struct", count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_struct_c(count_: MPI_Count, array_of_blocklengths: *const MPI_Count, array_of_displacements: *const MPI_Count, array_of_types: *const MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { structure("MPI_Type_create_struct_c", count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_struct(count_: c_int, array_of_blocklengths: *mut c_int, array_of_displacements: *mut MPI_Aint, array_of_types: *mut MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { structure("MPI_Type_struct", count_, array_of_blocklengths, array_of_displacements, array_of_types, newtype, false) }
}

/// # Safety
/// The arrays hold `count_` values; `newtype` is writable.
unsafe fn structure<C: Copy + Into<MPI_Count>, D: Copy + Into<MPI_Count>>(f: &str, count_: C, bls: *const C, displs_: *const D, types: *const MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let n = count(f, "count", count_)?;
        // SAFETY: forwarded from the caller.
        let (bl, d, ts) = unsafe {
            (blocklens(f, bls, n)?, array(f, "array_of_displacements", displs_, n)?, array(f, "array_of_types", types, n)?)
        };
        let d = displs(d);
        let ts = ts.iter().map(|&t| get(f, t)).collect::<Result<Vec<_>, _>>()?;
        // SAFETY: forwarded from the caller.
        unsafe { give(f, mark(large, Datatype::structure(&bl, &d, &ts)), newtype) }
    })
}

/// Non-negative values of a C array argument (int or `MPI_Count`) of `n` entries.
///
/// # Safety
/// `p` must point to `n` values when `n > 0`.
unsafe fn nonneg_array<C: Copy + Into<MPI_Count>>(f: &str, what: &str, item: &str, p: *const C, n: usize) -> Result<Vec<usize>, c_int> {
    // SAFETY: forwarded from the caller.
    let raw = unsafe { array(f, what, p, n)? };
    raw.iter().map(|&x| nonneg(f, item, x)).collect()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_subarray_c(ndims: c_int, array_of_sizes: *const MPI_Count, array_of_subsizes: *const MPI_Count, array_of_starts: *const MPI_Count, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { subarray("MPI_Type_create_subarray_c", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype, true) }
}

/// # Safety
/// The arrays hold `ndims` values; `newtype` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn subarray<C: Copy + Into<MPI_Count>>(f: &str, ndims: c_int, sizes: *const C, subsizes: *const C, starts: *const C, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let n = nonneg(f, "ndims", ndims)?;
        // SAFETY: the caller passes `ndims` values in each array.
        let (s, ss, st) = unsafe {
            (nonneg_array(f, "array_of_sizes", "a size", sizes, n)?, nonneg_array(f, "array_of_subsizes", "a subsize", subsizes, n)?, nonneg_array(f, "array_of_starts", "a start", starts, n)?)
        };
        let order = order_arg(f, order)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::subarray(&s, &ss, &st, order, &old)), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const MPI_Count, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype, true) }
}

/// # Safety
/// The arrays hold `ndims` values; `newtype` is writable.
#[allow(clippy::too_many_arguments)]
unsafe fn darray<C: Copy + Into<MPI_Count>>(f: &str, size: c_int, rank: c_int, ndims: c_int, gsizes: *const C, distribs: *const c_int, dargs: *const c_int, psizes: *const c_int, order: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let size = nonneg(f, "size", size)?;
        let rank = nonneg(f, "rank", rank)?;
        let n = nonneg(f, "ndims", ndims)?;
        // SAFETY: the caller passes `ndims` values in each array.
        let (g, d, a, p) = unsafe {
            (
                nonneg_array(f, "array_of_gsizes", "a gsize", gsizes, n)?,
                array(f, "array_of_distribs", distribs, n)?,
                array(f, "array_of_dargs", dargs, n)?,
                nonneg_array(f, "array_of_psizes", "a psize", psizes, n)?,
            )
        };
        let d = d
            .iter()
            .map(|&x| match x {
                MPI_DISTRIBUTE_BLOCK => Ok(Distrib::Block),
                MPI_DISTRIBUTE_CYCLIC => Ok(Distrib::Cyclic),
                MPI_DISTRIBUTE_NONE => Ok(Distrib::None),
                _ => Err(fail(f, MPI_ERR_ARG, format!("unknown distribution {x}"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let order = order_arg(f, order)?;
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::darray(size, rank, &g, &d, a, &p, order, &old)), newtype) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_resized(oldtype: MPI_Datatype, lb: MPI_Aint, extent: MPI_Aint, newtype: *mut MPI_Datatype) -> c_int {
    resized("MPI_Type_create_resized", oldtype, lb, extent, newtype, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_resized_c(oldtype: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype) -> c_int {
    resized("MPI_Type_create_resized_c", oldtype, lb, extent, newtype, true)
}

fn resized(f: &str, oldtype: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype, large: bool) -> c_int {
    run(|| {
        let old = get(f, oldtype)?;
        // SAFETY: the caller passes a writable newtype.
        unsafe { give(f, mark(large, Datatype::resized(&old, lb as isize, extent as isize)), newtype) }
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
    // SAFETY: forwarded from the caller.
    unsafe { size_count("MPI_Type_size_x", datatype, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_size_c(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { size_count("MPI_Type_size_c", datatype, size) }
}

/// # Safety
/// `size` is NULL or points to an `MPI_Count`.
unsafe fn size_count(f: &str, datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    run(|| {
        let t = get(f, datatype)?;
        // SAFETY: the caller passes an MPI_Count.
        unsafe { put(f, "size", size, t.size() as MPI_Count) }
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
    // SAFETY: forwarded from the caller.
    unsafe { extent_count("MPI_Type_get_extent_x", datatype, lb, extent, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_extent_c(datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { extent_count("MPI_Type_get_extent_c", datatype, lb, extent, false) }
}

/// The (true, with `true_extent`) lower bound and extent as `MPI_Count`s.
///
/// # Safety
/// Both pointers are NULL or point to an `MPI_Count`.
unsafe fn extent_count(f: &str, datatype: MPI_Datatype, lb: *mut MPI_Count, extent: *mut MPI_Count, true_extent: bool) -> c_int {
    run(|| {
        let t = get(f, datatype)?;
        let (l, e) = if true_extent { (t.true_lb(), t.true_extent()) } else { (t.lb(), t.extent()) };
        // SAFETY: the caller passes two MPI_Count.
        unsafe { put2(f, lb, l as MPI_Count, extent, e as MPI_Count) }
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
    // SAFETY: forwarded from the caller.
    unsafe { extent_count("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_true_extent_c(datatype: MPI_Datatype, true_lb: *mut MPI_Count, true_extent: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { extent_count("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, true) }
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

/// The arguments a type was created with, as `MPI_Type_get_contents` returns them: the
/// integer arguments held as `MPI_Count` (a `_c` constructor's may exceed an int), split
/// into integers and large counts by `decode`.
struct Contents {
    combiner: c_int,
    ints: Vec<MPI_Count>,
    addrs: Vec<MPI_Aint>,
    types: Vec<Arc<Datatype>>,
}

/// A type's envelope and contents as the decoding functions return them.
struct Decoded {
    combiner: c_int,
    ints: Vec<c_int>,
    addrs: Vec<MPI_Aint>,
    large: Vec<MPI_Count>,
    types: Vec<Arc<Datatype>>,
}

/// The decoded arguments of handle `dt`. A type from a large-count (`_c`) constructor
/// reports every count, displacement and bound as a large count (MPI-4.0 §5.1.13); of
/// subarray and darray only the array sizes are large counts (ndims, order, the process
/// grid and distributions stay integers), as in MPICH.
fn decode(dt: MPI_Datatype, t: &Datatype) -> Decoded {
    let Contents { combiner, ints, addrs, types } = contents_of(dt, t);
    let small = |v: &[MPI_Count]| v.iter().map(|&x| x as c_int).collect::<Vec<_>>();
    if !t.large_counts() {
        return Decoded { combiner, ints: small(&ints), addrs, large: vec![], types };
    }
    let (ints, large) = match combiner {
        // [ndims, sizes, subsizes, starts, order]
        MPI_COMBINER_SUBARRAY => (vec![ints[0], ints[ints.len() - 1]], ints[1..ints.len() - 1].to_vec()),
        // [size, rank, ndims, gsizes, distribs, dargs, psizes, order]
        MPI_COMBINER_DARRAY => {
            let n = ints[2] as usize;
            let rest: Vec<MPI_Count> = ints[..3].iter().chain(&ints[3 + n..]).copied().collect();
            (rest, ints[3..3 + n].to_vec())
        }
        _ => (vec![], ints.iter().copied().chain(addrs.iter().map(|&a| a as MPI_Count)).collect()),
    };
    let addrs = if matches!(combiner, MPI_COMBINER_SUBARRAY | MPI_COMBINER_DARRAY) { addrs } else { vec![] };
    Decoded { combiner, ints: small(&ints), addrs, large, types }
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
        Some(f) => Contents { combiner: f.combiner, ints: f.args.iter().map(|&a| a as MPI_Count).collect(), addrs: vec![], types: vec![] },
        None => contents(t),
    }
}

fn contents(t: &Datatype) -> Contents {
    let i = |n: usize| n as MPI_Count;
    let c = |combiner, ints, addrs, types| Contents { combiner, ints, addrs, types };
    match t.kind() {
        Kind::Basic(_) | Kind::Marker(_) | Kind::Pair { .. } => c(MPI_COMBINER_NAMED, vec![], vec![], vec![]),
        Kind::Dup { old } => c(MPI_COMBINER_DUP, vec![], vec![], vec![old.clone()]),
        Kind::Contiguous { count, old } => c(MPI_COMBINER_CONTIGUOUS, vec![i(*count)], vec![], vec![old.clone()]),
        Kind::Vector { count, blocklen, stride, old } => {
            c(MPI_COMBINER_VECTOR, vec![i(*count), i(*blocklen), *stride as MPI_Count], vec![], vec![old.clone()])
        }
        Kind::Hvector { count, blocklen, stride, old } => {
            c(MPI_COMBINER_HVECTOR, vec![i(*count), i(*blocklen)], vec![*stride as MPI_Aint], vec![old.clone()])
        }
        Kind::Indexed { blocklens, displs, old } => {
            let mut ints = vec![i(blocklens.len())];
            ints.extend(blocklens.iter().map(|&b| i(b)));
            ints.extend(displs.iter().map(|&d| d as MPI_Count));
            c(MPI_COMBINER_INDEXED, ints, vec![], vec![old.clone()])
        }
        Kind::Hindexed { blocklens, displs, old } => {
            let mut ints = vec![i(blocklens.len())];
            ints.extend(blocklens.iter().map(|&b| i(b)));
            c(MPI_COMBINER_HINDEXED, ints, displs.iter().map(|&d| d as MPI_Aint).collect(), vec![old.clone()])
        }
        Kind::IndexedBlock { blocklen, displs, old } => {
            let mut ints = vec![i(displs.len()), i(*blocklen)];
            ints.extend(displs.iter().map(|&d| d as MPI_Count));
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
            ints.push(order_c(*order) as MPI_Count);
            c(MPI_COMBINER_SUBARRAY, ints, vec![], vec![old.clone()])
        }
        Kind::Darray { size, rank, gsizes, distribs, dargs, psizes, order, old, .. } => {
            let mut ints = vec![i(*size), i(*rank), i(gsizes.len())];
            ints.extend(gsizes.iter().map(|&x| i(x)));
            ints.extend(distribs.iter().map(|d| match d {
                Distrib::Block => MPI_DISTRIBUTE_BLOCK as MPI_Count,
                Distrib::Cyclic => MPI_DISTRIBUTE_CYCLIC as MPI_Count,
                Distrib::None => MPI_DISTRIBUTE_NONE as MPI_Count,
            }));
            ints.extend(dargs.iter().map(|&a| a as MPI_Count));
            ints.extend(psizes.iter().map(|&x| i(x)));
            ints.push(order_c(*order) as MPI_Count);
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
        let c = decoded_small(F, datatype)?;
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
pub unsafe extern "C" fn PMPI_Type_get_envelope_c(datatype: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count, num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, combiner: *mut c_int) -> c_int {
    const F: &str = "MPI_Type_get_envelope_c";
    run(|| {
        let t = get(F, datatype)?;
        let c = decode(datatype, &t);
        // SAFETY: the caller passes four MPI_Counts and an int.
        unsafe {
            put(F, "num_integers", num_integers, c.ints.len() as MPI_Count)?;
            put(F, "num_addresses", num_addresses, c.addrs.len() as MPI_Count)?;
            put(F, "num_large_counts", num_large_counts, c.large.len() as MPI_Count)?;
            put(F, "num_datatypes", num_datatypes, c.types.len() as MPI_Count)?;
            put(F, "combiner", combiner, c.combiner)
        }
    })
}

/// The decoded arguments for the int decoding functions, which cannot return large counts:
/// a type from a `_c` constructor (with large counts) is MPI_ERR_TYPE there.
fn decoded_small(f: &str, datatype: MPI_Datatype) -> Result<Decoded, c_int> {
    let t = get(f, datatype)?;
    let c = decode(datatype, &t);
    if !c.large.is_empty() {
        let c_name = format!("{f}_c");
        return Err(fail(f, MPI_ERR_TYPE, format!("the datatype was made by a large-count constructor; decode it with {c_name}")));
    }
    Ok(c)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_contents(datatype: MPI_Datatype, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_datatypes: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_get_contents";
    run(|| {
        let c = decoded_small(F, datatype)?;
        // SAFETY: forwarded from the caller (no large counts to write).
        unsafe { write_contents(F, c, [max_integers.into(), max_addresses.into(), 0, max_datatypes.into()], array_of_integers, array_of_addresses, std::ptr::null_mut(), array_of_datatypes) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_contents_c(datatype: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, max_large_counts: MPI_Count, max_datatypes: MPI_Count, array_of_integers: *mut c_int, array_of_addresses: *mut MPI_Aint, array_of_large_counts: *mut MPI_Count, array_of_datatypes: *mut MPI_Datatype) -> c_int {
    const F: &str = "MPI_Type_get_contents_c";
    run(|| {
        let t = get(F, datatype)?;
        let c = decode(datatype, &t);
        // SAFETY: forwarded from the caller.
        unsafe { write_contents(F, c, [max_integers, max_addresses, max_large_counts, max_datatypes], array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes) }
    })
}

/// Writes decoded contents into the caller's arrays, whose sizes are `max` (integers,
/// addresses, large counts, datatypes).
///
/// # Safety
/// Each array holds at least its `max` entry's values (or is not written when empty).
#[allow(clippy::too_many_arguments)]
unsafe fn write_contents(f: &str, c: Decoded, max: [MPI_Count; 4], ints: *mut c_int, addrs: *mut MPI_Aint, large: *mut MPI_Count, types: *mut MPI_Datatype) -> Result<(), c_int> {
    if c.combiner == MPI_COMBINER_NAMED {
        return Err(fail(f, MPI_ERR_TYPE, "a predefined datatype has no contents (its combiner is MPI_COMBINER_NAMED)"));
    }
    let lens = [c.ints.len(), c.addrs.len(), c.large.len(), c.types.len()];
    if max.iter().zip(lens).any(|(&m, n)| m < n as MPI_Count) {
        return Err(fail(f, MPI_ERR_ARG, "the output arrays are smaller than MPI_Type_get_envelope reports"));
    }
    let mut handles = Vec::with_capacity(c.types.len());
    for ty in &c.types {
        handles.push(handle_for(ty).ok_or_else(|| fail(f, MPI_ERR_INTERN, "too many datatypes exist at once"))?);
    }
    // SAFETY: the caller provides arrays of at least the envelope's sizes (checked
    // against `max` above); empty outputs are not touched.
    unsafe {
        copy_out(f, "array_of_integers", &c.ints, ints)?;
        copy_out(f, "array_of_addresses", &c.addrs, addrs)?;
        copy_out(f, "array_of_large_counts", &c.large, large)?;
        copy_out(f, "array_of_datatypes", &handles, types)
    }
}

/// # Safety
/// `dst` holds `src.len()` values when `src` is not empty.
unsafe fn copy_out<T: Copy>(f: &str, what: &str, src: &[T], dst: *mut T) -> Result<(), c_int> {
    if !src.is_empty() {
        // SAFETY: per the function contract; `out` checks non-null.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out(f, what, dst)?, src.len()) };
    }
    Ok(())
}

// ---- pack and unpack -----------------------------------------------------------------------

/// `MPI_Pack`: appends `incount` items to `outbuf` at `*position`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack(inbuf: *const c_void, incount: c_int, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: MPI_Comm) -> c_int {
    // SAFETY: forwarded from the caller; the new position is at most outsize, an int.
    unsafe { at_position("MPI_Pack", position, |pos| pack("MPI_Pack", comm, inbuf, incount.into(), datatype, outbuf, outsize.into(), pos, false)) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_c(inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count, comm: MPI_Comm) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { at_position("MPI_Pack_c", position, |pos| pack("MPI_Pack_c", comm, inbuf, incount, datatype, outbuf, outsize, pos, false)) }
}

/// `MPI_Unpack`: reads `outcount` items from `inbuf` at `*position`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    // SAFETY: forwarded from the caller; the new position is at most insize, an int.
    unsafe { at_position("MPI_Unpack", position, |pos| unpack("MPI_Unpack", comm, inbuf, insize.into(), pos, outbuf, outcount.into(), datatype, false)) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack_c(inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { at_position("MPI_Unpack_c", position, |pos| unpack("MPI_Unpack_c", comm, inbuf, insize, pos, outbuf, outcount, datatype, false)) }
}

/// Runs a pack or unpack at `*position` (an int, `MPI_Aint` or `MPI_Count`) and stores the
/// position it returns; the buffer size bounds that position, so it fits the caller's type.
///
/// # Safety
/// `position` is NULL or points to a `P`.
unsafe fn at_position<P: Copy + Into<MPI_Count> + TryFrom<MPI_Count>>(f: &str, position: *mut P, op: impl FnOnce(MPI_Count) -> Result<MPI_Count, c_int>) -> c_int {
    run(|| {
        let pos_ptr = out(f, "position", position)?;
        // SAFETY: non-null; the caller provides the position.
        let new = op(unsafe { *pos_ptr }.into())?;
        let new = P::try_from(new).map_err(|_| fail(f, MPI_ERR_VALUE_TOO_LARGE, format!("the new position {new} does not fit in the position argument")))?;
        // SAFETY: as above.
        unsafe { *pos_ptr = new };
        Ok(())
    })
}

/// Packs `incount` items (in external32 when `external`) into `outbuf[pos..outsize]`;
/// returns the new position.
///
/// # Safety
/// `outbuf` holds `outsize` bytes; `inbuf` holds the items as the type lays them out.
#[allow(clippy::too_many_arguments)]
unsafe fn pack(f: &str, comm: MPI_Comm, inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, pos: MPI_Count, external: bool) -> Result<MPI_Count, c_int> {
    let n = count(f, "incount", incount)?;
    let t = get_committed(f, datatype)?;
    let need = packed_len(f, comm, &t, n, external)?;
    // SAFETY: forwarded from the caller (outsize bytes at outbuf, inbuf laid out by the type).
    let wrote = unsafe { pack_into(f, comm, &t, inbuf, n, outbuf, outsize, pos, need, external)? };
    Ok(pos + wrote as MPI_Count)
}

/// Unpacks `outcount` items (from external32 when `external`) from `inbuf[pos..insize]`;
/// returns the new position.
///
/// # Safety
/// `inbuf` holds `insize` bytes; `outbuf` can hold the items as the type lays them out.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack(f: &str, comm: MPI_Comm, inbuf: *const c_void, insize: MPI_Count, pos: MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype, external: bool) -> Result<MPI_Count, c_int> {
    let n = count(f, "outcount", outcount)?;
    let t = get_committed(f, datatype)?;
    let need = packed_len(f, comm, &t, n, external)?;
    // SAFETY: forwarded from the caller.
    let read = unsafe { unpack_from(f, comm, &t, inbuf, insize, pos, outbuf, n, need, external)? };
    Ok(pos + read as MPI_Count)
}

/// Bytes `n` items of `t` take packed (in external32 when `external`).
fn packed_len(f: &str, comm: MPI_Comm, t: &Datatype, n: usize, external: bool) -> Result<usize, c_int> {
    let len = if external { t.external32_size(n) } else { t.packed_size(n) };
    len.ok_or_else(|| raise(comm, f, MPI_ERR_COUNT, "the packed size overflows"))
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
    // SAFETY: forwarded from the caller.
    unsafe { pack_size("MPI_Pack_size", comm, incount.into(), datatype, size, false) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_size_c(incount: MPI_Count, datatype: MPI_Datatype, comm: MPI_Comm, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { pack_size("MPI_Pack_size_c", comm, incount, datatype, size, false) }
}

/// `MPI_Pack_size` and `MPI_Pack_external_size` in every form: the packed size in the
/// caller's type `S`, MPI_ERR_VALUE_TOO_LARGE when it does not fit (an int).
///
/// # Safety
/// `size` is NULL or points to an `S`.
unsafe fn pack_size<S: TryFrom<usize>>(f: &str, comm: MPI_Comm, incount: MPI_Count, datatype: MPI_Datatype, size: *mut S, external: bool) -> c_int {
    run(|| {
        let n = count(f, "incount", incount)?;
        let t = get(f, datatype)?;
        let bytes = packed_len(f, comm, &t, n, external)?;
        let v = S::try_from(bytes).map_err(|_| raise(comm, f, MPI_ERR_VALUE_TOO_LARGE, format!("the packed size, {bytes} bytes, does not fit in an int; use {f}_c")))?;
        // SAFETY: the caller passes the size's type.
        unsafe { put(f, "size", size, v) }
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
    // SAFETY: forwarded from the caller.
    unsafe { pack_external("MPI_Pack_external", datarep, inbuf, incount.into(), datatype, outbuf, outsize, position) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external_c(datarep: *const c_char, inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { pack_external("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize, position) }
}

/// # Safety
/// As `MPI_Pack_external`'s arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_external<P: Copy + Into<MPI_Count> + TryFrom<MPI_Count>>(f: &str, datarep: *const c_char, inbuf: *const c_void, incount: MPI_Count, datatype: MPI_Datatype, outbuf: *mut c_void, outsize: MPI_Count, position: *mut P) -> c_int {
    // SAFETY: the caller passes a C string.
    if let Err(rc) = unsafe { check_datarep(f, datarep) } {
        return rc;
    }
    // SAFETY: forwarded from the caller.
    unsafe { at_position(f, position, |pos| pack(f, MPI_COMM_WORLD, inbuf, incount, datatype, outbuf, outsize, pos, true)) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Aint, position: *mut MPI_Aint, outbuf: *mut c_void, outcount: c_int, datatype: MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { unpack_external("MPI_Unpack_external", datarep, inbuf, insize, position, outbuf, outcount.into(), datatype) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpack_external_c(datarep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut MPI_Count, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { unpack_external("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf, outcount, datatype) }
}

/// # Safety
/// As `MPI_Unpack_external`'s arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_external<P: Copy + Into<MPI_Count> + TryFrom<MPI_Count>>(f: &str, datarep: *const c_char, inbuf: *const c_void, insize: MPI_Count, position: *mut P, outbuf: *mut c_void, outcount: MPI_Count, datatype: MPI_Datatype) -> c_int {
    // SAFETY: the caller passes a C string.
    if let Err(rc) = unsafe { check_datarep(f, datarep) } {
        return rc;
    }
    // SAFETY: forwarded from the caller.
    unsafe { at_position(f, position, |pos| unpack(f, MPI_COMM_WORLD, inbuf, insize, pos, outbuf, outcount, datatype, true)) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, datatype: MPI_Datatype, size: *mut MPI_Aint) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { pack_external_size("MPI_Pack_external_size", datarep, incount.into(), datatype, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pack_external_size_c(datarep: *const c_char, incount: MPI_Count, datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { pack_external_size("MPI_Pack_external_size_c", datarep, incount, datatype, size) }
}

/// # Safety
/// `datarep` is NULL or a C string; `size` is NULL or points to an `S`.
unsafe fn pack_external_size<S: TryFrom<usize>>(f: &str, datarep: *const c_char, incount: MPI_Count, datatype: MPI_Datatype, size: *mut S) -> c_int {
    // SAFETY: the caller passes a C string.
    if let Err(rc) = unsafe { check_datarep(f, datarep) } {
        return rc;
    }
    // SAFETY: forwarded from the caller.
    unsafe { pack_size(f, MPI_COMM_WORLD, incount, datatype, size, true) }
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

/// `MPI_Type_get_value_index` (MPI 4.1 §6.9.4): the predefined (value, index) pair type that
/// `MPI_MINLOC`/`MPI_MAXLOC` take, or `MPI_DATATYPE_NULL` when no predefined type has that
/// pair (the standard's answer, not an error).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_value_index(value_type: MPI_Datatype, index_type: MPI_Datatype, pair_type: *mut MPI_Datatype) -> c_int {
    let func = "MPI_Type_get_value_index";
    require_init!(func);
    for t in [value_type, index_type] {
        if lookup(t).is_none() {
            return raise(MPI_COMM_WORLD, func, MPI_ERR_TYPE, format!("invalid datatype handle {t:#x}"));
        }
    }
    if pair_type.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "pair_type is NULL");
    }
    const PAIRS: [(MPI_Datatype, MPI_Datatype, MPI_Datatype); 9] = [
        (MPI_FLOAT, MPI_INT, MPI_FLOAT_INT),
        (MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT),
        (MPI_LONG, MPI_INT, MPI_LONG_INT),
        (MPI_INT, MPI_INT, MPI_2INT),
        (MPI_SHORT, MPI_INT, MPI_SHORT_INT),
        (MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT),
        (MPI_REAL, MPI_REAL, MPI_2REAL),
        (MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION),
        (MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER),
    ];
    let pair = PAIRS.iter().find(|p| p.0 == value_type && p.1 == index_type).map_or(MPI_DATATYPE_NULL, |p| p.2);
    // SAFETY: checked non-null.
    unsafe { *pair_type = pair };
    MPI_SUCCESS
}
