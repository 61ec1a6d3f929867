//! User-defined data representations (`MPI_Register_datarep`, MPI-4.1 §14.5.3): the
//! process's registry of names and callbacks, and the conversions of the accesses made
//! through a view that names one.
//!
//! OxMPI supports representations in which every predefined type takes as many bytes in
//! the file as in memory (the extent function says so): a view then lays data out in the
//! file as "native" does, and only the bytes change, through the program's conversion
//! functions. A representation whose extents differ is refused at `MPI_File_set_view`
//! (and at an access whose buffer type has such a part) with `MPI_ERR_UNSUPPORTED_DATAREP`.

use crate::abi::*;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

type Failure = (c_int, String);
type ConvertInt = unsafe extern "C" fn(*mut c_void, MPI_Datatype, c_int, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
type ConvertLarge = unsafe extern "C" fn(*mut c_void, MPI_Datatype, MPI_Count, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
type Extent = unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;

/// A conversion function as registered: none (`MPI_CONVERSION_FN_NULL`: the data are
/// accessed in the native representation), or one taking an int or an `MPI_Count` count.
#[derive(Clone, Copy)]
enum Convert {
    Null,
    Int(ConvertInt),
    Large(ConvertLarge),
}

/// One registered representation.
pub struct UserRep {
    pub name: String,
    read: Convert,
    write: Convert,
    extent: Extent,
    extra: *mut c_void,
}

// SAFETY: the callbacks and their extra_state are the program's, which registered them
// for use by every I/O call of the process, whatever thread makes it (as with MPICH).
unsafe impl Send for UserRep {}
// SAFETY: as above; OxMPI never touches extra_state itself.
unsafe impl Sync for UserRep {}

/// Representations live until the process ends (the standard has no way to remove one).
static REGISTRY: Mutex<Vec<Arc<UserRep>>> = Mutex::new(Vec::new());

/// The representation registered under `name`, if any.
pub fn lookup(name: &str) -> Option<Arc<UserRep>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|r| r.name == name).cloned()
}

fn type_name(dt: MPI_Datatype) -> String {
    let mut buf = [0 as c_char; MPI_MAX_OBJECT_NAME as usize];
    let mut len = 0;
    // SAFETY: buf holds MPI_MAX_OBJECT_NAME bytes, as MPI_Type_get_name needs.
    let rc = unsafe { crate::types::PMPI_Type_get_name(dt, buf.as_mut_ptr(), &mut len) };
    if rc != MPI_SUCCESS || len == 0 {
        return format!("datatype {dt:#x}");
    }
    // SAFETY: MPI_Type_get_name wrote a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

impl UserRep {
    /// The file extent the program's function gives for predefined type `dt`.
    fn file_extent_of(&self, dt: MPI_Datatype) -> Result<isize, Failure> {
        let mut e: MPI_Aint = 0;
        // SAFETY: the program registered this function for exactly this call.
        let rc = unsafe { (self.extent)(dt, &mut e, self.extra) };
        if rc != MPI_SUCCESS {
            return Err((MPI_ERR_CONVERSION, format!("the extent function of data representation \"{}\" returned error {rc} for {}", self.name, type_name(dt))));
        }
        Ok(e as isize)
    }

    /// Checks that every predefined part of `dt` takes as many bytes in the file as in
    /// memory (see the module comment).
    pub fn check(&self, dt: MPI_Datatype, what: &str) -> Result<(), Failure> {
        for p in crate::types::predefined_parts(dt) {
            let size = crate::types::lookup(p).map_or(0, |t| t.size()) as isize;
            let e = self.file_extent_of(p)?;
            if e != size {
                return Err((
                    MPI_ERR_UNSUPPORTED_DATAREP,
                    format!(
                        "the {what} holds {}, whose extent in data representation \"{}\" is {e} bytes against {size} in memory: OxMPI supports user data representations only where the two are equal",
                        type_name(p),
                        self.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `MPI_File_get_type_extent` under this representation: the function's answer for a
    /// predefined type, the memory extent for a type whose parts all check.
    pub fn file_extent(&self, dt: MPI_Datatype, t: &mpi_core::datatype::Datatype) -> Result<isize, Failure> {
        if t.is_named() && t.size() > 0 {
            return self.file_extent_of(dt);
        }
        self.check(dt, "datatype")?;
        Ok(t.extent())
    }

    /// Whether writes (`write`) or reads convert, rather than move native bytes.
    pub fn converts(&self, write: bool) -> bool {
        !matches!(if write { self.write } else { self.read }, Convert::Null)
    }

    /// Converts `elements` data items of the buffer (`buf`, `dt`) into `file` (writes).
    ///
    /// # Safety
    /// `buf` must hold the items `dt` tiled over it describes; `file` their file bytes.
    pub unsafe fn to_file(&self, buf: *const c_void, dt: MPI_Datatype, elements: usize, file: &mut [u8]) -> Result<(), Failure> {
        // SAFETY: per the contract.
        unsafe { self.call(self.write, "write", buf as *mut c_void, dt, elements, file.as_mut_ptr()) }
    }

    /// Converts the `elements` data items in `file` into the buffer (`buf`, `dt`) (reads).
    ///
    /// # Safety
    /// `buf` must be writable for the items `dt` tiled over it describes.
    pub unsafe fn from_file(&self, buf: *mut c_void, dt: MPI_Datatype, elements: usize, file: &mut [u8]) -> Result<(), Failure> {
        // SAFETY: per the contract.
        unsafe { self.call(self.read, "read", buf, dt, elements, file.as_mut_ptr()) }
    }

    /// One call of a conversion function over all `elements` items from position 0.
    ///
    /// # Safety
    /// As `to_file`/`from_file`.
    unsafe fn call(&self, f: Convert, which: &str, buf: *mut c_void, dt: MPI_Datatype, elements: usize, file: *mut u8) -> Result<(), Failure> {
        // SAFETY (both arms): the program's function, called as the standard defines.
        let rc = match f {
            Convert::Null => return Ok(()),
            Convert::Int(f) => {
                let Ok(n) = c_int::try_from(elements) else {
                    return Err((MPI_ERR_COUNT, format!("{elements} data items are too many for the {which} conversion function of data representation \"{}\", which takes an int count (register it with MPI_Register_datarep_c)", self.name)));
                };
                unsafe { f(buf, dt, n, file as *mut c_void, 0, self.extra) }
            }
            Convert::Large(f) => unsafe { f(buf, dt, elements as MPI_Count, file as *mut c_void, 0, self.extra) },
        };
        if rc != MPI_SUCCESS {
            return Err((MPI_ERR_CONVERSION, format!("the {which} conversion function of data representation \"{}\" returned error {rc}", self.name)));
        }
        Ok(())
    }
}

/// The representations every view may name without registering.
pub const PREDEFINED: [&str; 3] = ["native", "internal", "external32"];

fn register(func: &str, datarep: *const c_char, read: Convert, write: Convert, extent: MPI_Datarep_extent_function, extra: *mut c_void) -> c_int {
    if !mpi_core::runtime::is_active() {
        return crate::errors::not_initialized(func);
    }
    // No file: the handler of MPI_FILE_NULL runs.
    let fail = |class, msg: String| crate::io::raise_file(std::ptr::null_mut(), func, class, msg);
    // SAFETY: NULL or a C string, per the standard.
    let Some(name) = (unsafe { crate::io::c_str(datarep) }) else {
        return fail(MPI_ERR_ARG, "datarep is NULL".into());
    };
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING as usize {
        return fail(MPI_ERR_ARG, format!("the data representation's name must have 1 to {} characters, not {}", MPI_MAX_DATAREP_STRING - 1, name.len()));
    }
    let Some(extent) = extent else {
        return fail(MPI_ERR_ARG, "dtype_file_extent_fn is NULL (only the conversion functions may be MPI_CONVERSION_FN_NULL)".into());
    };
    let mut list = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    if PREDEFINED.contains(&name.as_str()) || list.iter().any(|r| r.name == name) {
        drop(list);
        return fail(MPI_ERR_DUP_DATAREP, format!("data representation \"{name}\" is already defined"));
    }
    list.push(Arc::new(UserRep { name, read, write, extent, extra }));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep(datarep: *const c_char, read_conversion_fn: MPI_Datarep_conversion_function, write_conversion_fn: MPI_Datarep_conversion_function, dtype_file_extent_fn: MPI_Datarep_extent_function, extra_state: *mut c_void) -> c_int {
    let conv = |f: MPI_Datarep_conversion_function| f.map_or(Convert::Null, Convert::Int);
    register("MPI_Register_datarep", datarep, conv(read_conversion_fn), conv(write_conversion_fn), dtype_file_extent_fn, extra_state)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Register_datarep_c(datarep: *const c_char, read_conversion_fn: MPI_Datarep_conversion_function_c, write_conversion_fn: MPI_Datarep_conversion_function_c, dtype_file_extent_fn: MPI_Datarep_extent_function, extra_state: *mut c_void) -> c_int {
    let conv = |f: MPI_Datarep_conversion_function_c| f.map_or(Convert::Null, Convert::Large);
    register("MPI_Register_datarep_c", datarep, conv(read_conversion_fn), conv(write_conversion_fn), dtype_file_extent_fn, extra_state)
}
