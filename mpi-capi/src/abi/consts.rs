//! MPICH ABI constant values (facts read from MPICH's installed mpi.h / mpio.h).
//!
//! Handle constants are written `0x4c000405 as MPI_Datatype`: cbindgen then emits a cast,
//! which `build.rs` turns into `((MPI_Datatype)0x4c000405)` — typed, and usable in `switch`
//! labels and static initialisers.
#![allow(clippy::unreadable_literal)]
use super::types::*;
use std::os::raw::c_int;

/// The MPI standard version whose C API the header declares.
pub const MPI_VERSION: c_int = 4;
pub const MPI_SUBVERSION: c_int = 0;
/// OxMPI's own version.
pub const OXMPI_VERSION_MAJOR: c_int = 0;
pub const OXMPI_VERSION_MINOR: c_int = 1;
pub const OXMPI_VERSION_PATCH: c_int = 0;

// ---- Null handles ------------------------------------------------------------------------
pub const MPI_COMM_NULL: MPI_Comm = 0x04000000 as MPI_Comm;
pub const MPI_OP_NULL: MPI_Op = 0x18000000 as MPI_Op;
pub const MPI_GROUP_NULL: MPI_Group = 0x08000000 as MPI_Group;
pub const MPI_DATATYPE_NULL: MPI_Datatype = 0x0c000000 as MPI_Datatype;
pub const MPI_REQUEST_NULL: MPI_Request = 0x2c000000 as MPI_Request;
pub const MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x14000000 as MPI_Errhandler;
pub const MPI_MESSAGE_NULL: MPI_Message = 0x2c000000 as MPI_Message;
pub const MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c000000 as MPI_Message;
pub const MPI_WIN_NULL: MPI_Win = 0x20000000 as MPI_Win;
pub const MPI_INFO_NULL: MPI_Info = 0x1c000000 as MPI_Info;
pub const MPI_SESSION_NULL: MPI_Session = 0x38000000 as MPI_Session;

// ---- Predefined communicators, groups, infos, error handlers -----------------------------
pub const MPI_COMM_WORLD: MPI_Comm = 0x44000000 as MPI_Comm;
pub const MPI_COMM_SELF: MPI_Comm = 0x44000001 as MPI_Comm;
pub const MPI_GROUP_EMPTY: MPI_Group = 0x48000000 as MPI_Group;
pub const MPI_INFO_ENV: MPI_Info = 0x5c000001 as MPI_Info;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x54000000 as MPI_Errhandler;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x54000001 as MPI_Errhandler;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x54000003 as MPI_Errhandler;

// ---- Predefined datatypes: C -------------------------------------------------------------
pub const MPI_CHAR: MPI_Datatype = 0x4c000101 as MPI_Datatype;
pub const MPI_SIGNED_CHAR: MPI_Datatype = 0x4c000118 as MPI_Datatype;
pub const MPI_UNSIGNED_CHAR: MPI_Datatype = 0x4c000102 as MPI_Datatype;
pub const MPI_BYTE: MPI_Datatype = 0x4c00010d as MPI_Datatype;
pub const MPI_WCHAR: MPI_Datatype = 0x4c00040e as MPI_Datatype;
pub const MPI_SHORT: MPI_Datatype = 0x4c000203 as MPI_Datatype;
pub const MPI_UNSIGNED_SHORT: MPI_Datatype = 0x4c000204 as MPI_Datatype;
pub const MPI_INT: MPI_Datatype = 0x4c000405 as MPI_Datatype;
pub const MPI_UNSIGNED: MPI_Datatype = 0x4c000406 as MPI_Datatype;
pub const MPI_LONG: MPI_Datatype = 0x4c000807 as MPI_Datatype;
pub const MPI_UNSIGNED_LONG: MPI_Datatype = 0x4c000808 as MPI_Datatype;
pub const MPI_FLOAT: MPI_Datatype = 0x4c00040a as MPI_Datatype;
pub const MPI_DOUBLE: MPI_Datatype = 0x4c00080b as MPI_Datatype;
pub const MPI_LONG_DOUBLE: MPI_Datatype = 0x4c00100c as MPI_Datatype;
pub const MPI_LONG_LONG_INT: MPI_Datatype = 0x4c000809 as MPI_Datatype;
pub const MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x4c000819 as MPI_Datatype;
pub const MPI_LONG_LONG: MPI_Datatype = 0x4c000809 as MPI_Datatype;
pub const MPI_PACKED: MPI_Datatype = 0x4c00010f as MPI_Datatype;
pub const MPI_LB: MPI_Datatype = 0x4c000010 as MPI_Datatype;
pub const MPI_UB: MPI_Datatype = 0x4c000011 as MPI_Datatype;

// ---- Predefined datatypes: pair types for MINLOC/MAXLOC ----------------------------------
pub const MPI_FLOAT_INT: MPI_Datatype = 0x8c000000u32 as MPI_Datatype;
pub const MPI_DOUBLE_INT: MPI_Datatype = 0x8c000001u32 as MPI_Datatype;
pub const MPI_LONG_INT: MPI_Datatype = 0x8c000002u32 as MPI_Datatype;
pub const MPI_SHORT_INT: MPI_Datatype = 0x8c000003u32 as MPI_Datatype;
pub const MPI_2INT: MPI_Datatype = 0x4c000816 as MPI_Datatype;
pub const MPI_LONG_DOUBLE_INT: MPI_Datatype = 0x8c000004u32 as MPI_Datatype;

// ---- Predefined datatypes: Fortran -------------------------------------------------------
pub const MPI_COMPLEX: MPI_Datatype = 0x4c00081e as MPI_Datatype;
pub const MPI_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001022 as MPI_Datatype;
pub const MPI_LOGICAL: MPI_Datatype = 0x4c00041d as MPI_Datatype;
pub const MPI_REAL: MPI_Datatype = 0x4c00041c as MPI_Datatype;
pub const MPI_DOUBLE_PRECISION: MPI_Datatype = 0x4c00081f as MPI_Datatype;
pub const MPI_INTEGER: MPI_Datatype = 0x4c00041b as MPI_Datatype;
pub const MPI_2INTEGER: MPI_Datatype = 0x4c000820 as MPI_Datatype;
pub const MPI_2REAL: MPI_Datatype = 0x4c000821 as MPI_Datatype;
pub const MPI_2DOUBLE_PRECISION: MPI_Datatype = 0x4c001023 as MPI_Datatype;
pub const MPI_CHARACTER: MPI_Datatype = 0x4c00011a as MPI_Datatype;

// ---- Predefined datatypes: size-specific Fortran -----------------------------------------
pub const MPI_REAL4: MPI_Datatype = 0x4c000427 as MPI_Datatype;
pub const MPI_REAL8: MPI_Datatype = 0x4c000829 as MPI_Datatype;
/// IEEE binary16 (C `_Float16`), MPICH's value (an MPICH 4.1+ extension).
pub const MPIX_C_FLOAT16: MPI_Datatype = 0x4c000246 as MPI_Datatype;
pub const MPI_REAL16: MPI_Datatype = 0x4c00102b as MPI_Datatype;
pub const MPI_COMPLEX8: MPI_Datatype = 0x4c000828 as MPI_Datatype;
pub const MPI_COMPLEX16: MPI_Datatype = 0x4c00102a as MPI_Datatype;
pub const MPI_COMPLEX32: MPI_Datatype = 0x4c00202c as MPI_Datatype;
pub const MPI_INTEGER1: MPI_Datatype = 0x4c00012d as MPI_Datatype;
pub const MPI_INTEGER2: MPI_Datatype = 0x4c00022f as MPI_Datatype;
pub const MPI_INTEGER4: MPI_Datatype = 0x4c000430 as MPI_Datatype;
pub const MPI_INTEGER8: MPI_Datatype = 0x4c000831 as MPI_Datatype;
pub const MPI_INTEGER16: MPI_Datatype = 0x0c000000 as MPI_Datatype;

// ---- Predefined datatypes: C99 fixed width, bool, complex --------------------------------
pub const MPI_INT8_T: MPI_Datatype = 0x4c000137 as MPI_Datatype;
pub const MPI_INT16_T: MPI_Datatype = 0x4c000238 as MPI_Datatype;
pub const MPI_INT32_T: MPI_Datatype = 0x4c000439 as MPI_Datatype;
pub const MPI_INT64_T: MPI_Datatype = 0x4c00083a as MPI_Datatype;
pub const MPI_UINT8_T: MPI_Datatype = 0x4c00013b as MPI_Datatype;
pub const MPI_UINT16_T: MPI_Datatype = 0x4c00023c as MPI_Datatype;
pub const MPI_UINT32_T: MPI_Datatype = 0x4c00043d as MPI_Datatype;
pub const MPI_UINT64_T: MPI_Datatype = 0x4c00083e as MPI_Datatype;
pub const MPI_C_BOOL: MPI_Datatype = 0x4c00013f as MPI_Datatype;
pub const MPI_C_FLOAT_COMPLEX: MPI_Datatype = 0x4c000840 as MPI_Datatype;
pub const MPI_C_COMPLEX: MPI_Datatype = 0x4c000840 as MPI_Datatype;
pub const MPI_C_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001041 as MPI_Datatype;
pub const MPI_C_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002042 as MPI_Datatype;

// ---- Predefined datatypes: address/offset/count and C++ ----------------------------------
pub const MPI_AINT: MPI_Datatype = 0x4c000843 as MPI_Datatype;
pub const MPI_OFFSET: MPI_Datatype = 0x4c000844 as MPI_Datatype;
pub const MPI_COUNT: MPI_Datatype = 0x4c000845 as MPI_Datatype;
pub const MPI_CXX_BOOL: MPI_Datatype = 0x4c000133 as MPI_Datatype;
pub const MPI_CXX_FLOAT_COMPLEX: MPI_Datatype = 0x4c000834 as MPI_Datatype;
pub const MPI_CXX_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001035 as MPI_Datatype;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002036 as MPI_Datatype;

// ---- Type classes (MPI_Type_match_size) --------------------------------------------------
pub const MPI_TYPECLASS_REAL: c_int = 1;
pub const MPI_TYPECLASS_INTEGER: c_int = 2;
pub const MPI_TYPECLASS_COMPLEX: c_int = 3;

// ---- Reduction operations ----------------------------------------------------------------
pub const MPI_MAX: MPI_Op = 0x58000001 as MPI_Op;
pub const MPI_MIN: MPI_Op = 0x58000002 as MPI_Op;
pub const MPI_SUM: MPI_Op = 0x58000003 as MPI_Op;
pub const MPI_PROD: MPI_Op = 0x58000004 as MPI_Op;
pub const MPI_LAND: MPI_Op = 0x58000005 as MPI_Op;
pub const MPI_BAND: MPI_Op = 0x58000006 as MPI_Op;
pub const MPI_LOR: MPI_Op = 0x58000007 as MPI_Op;
pub const MPI_BOR: MPI_Op = 0x58000008 as MPI_Op;
pub const MPI_LXOR: MPI_Op = 0x58000009 as MPI_Op;
pub const MPI_BXOR: MPI_Op = 0x5800000a as MPI_Op;
pub const MPI_MINLOC: MPI_Op = 0x5800000b as MPI_Op;
pub const MPI_MAXLOC: MPI_Op = 0x5800000c as MPI_Op;
pub const MPI_REPLACE: MPI_Op = 0x5800000d as MPI_Op;
pub const MPI_NO_OP: MPI_Op = 0x5800000e as MPI_Op;

// ---- Comparison results ------------------------------------------------------------------
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_SIMILAR: c_int = 2;
pub const MPI_UNEQUAL: c_int = 3;

// ---- Predefined attribute keys (communicator, window) ------------------------------------
pub const MPI_TAG_UB: c_int = 0x64400001;
pub const MPI_HOST: c_int = 0x64400003;
pub const MPI_IO: c_int = 0x64400005;
pub const MPI_WTIME_IS_GLOBAL: c_int = 0x64400007;
pub const MPI_UNIVERSE_SIZE: c_int = 0x64400009;
pub const MPI_LASTUSEDCODE: c_int = 0x6440000b;
pub const MPI_APPNUM: c_int = 0x6440000d;
pub const MPI_WIN_BASE: c_int = 0x66000001;
pub const MPI_WIN_SIZE: c_int = 0x66000003;
pub const MPI_WIN_DISP_UNIT: c_int = 0x66000005;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 0x66000007;
pub const MPI_WIN_MODEL: c_int = 0x66000009;

// ---- String lengths ----------------------------------------------------------------------
pub const MPI_MAX_PROCESSOR_NAME: c_int = 128;
pub const MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
pub const MPI_MAX_ERROR_STRING: c_int = 512;
pub const MPI_MAX_PORT_NAME: c_int = 256;
pub const MPI_MAX_OBJECT_NAME: c_int = 128;
pub const MPI_MAX_INFO_KEY: c_int = 255;
pub const MPI_MAX_INFO_VAL: c_int = 1024;
pub const MPI_MAX_PSET_NAME_LEN: c_int = 256;
pub const MPI_MAX_STRINGTAG_LEN: c_int = 256;
pub const MPI_MAX_DATAREP_STRING: c_int = 128;

// ---- Special values ----------------------------------------------------------------------
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_KEYVAL_INVALID: c_int = 0x24000000;
pub const MPI_BSEND_OVERHEAD: c_int = 96;
pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ANY_SOURCE: c_int = -2;
pub const MPI_ROOT: c_int = -3;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_LOCK_EXCLUSIVE: c_int = 234;
pub const MPI_LOCK_SHARED: c_int = 235;

// ---- Window flavors and memory models ----------------------------------------------------
pub const MPI_WIN_FLAVOR_CREATE: c_int = 1;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 4;
pub const MPI_WIN_SEPARATE: c_int = 1;
pub const MPI_WIN_UNIFIED: c_int = 2;

// ---- Topology kinds ----------------------------------------------------------------------
pub const MPI_GRAPH: c_int = 1;
pub const MPI_CART: c_int = 2;
pub const MPI_DIST_GRAPH: c_int = 3;

// ---- Datatype combiners ------------------------------------------------------------------
pub const MPI_COMBINER_NAMED: c_int = 1;
pub const MPI_COMBINER_DUP: c_int = 2;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 3;
pub const MPI_COMBINER_VECTOR: c_int = 4;
pub const MPI_COMBINER_HVECTOR_INTEGER: c_int = 5;
pub const MPI_COMBINER_HVECTOR: c_int = 6;
pub const MPI_COMBINER_INDEXED: c_int = 7;
pub const MPI_COMBINER_HINDEXED_INTEGER: c_int = 8;
pub const MPI_COMBINER_HINDEXED: c_int = 9;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 10;
pub const MPI_COMBINER_STRUCT_INTEGER: c_int = 11;
pub const MPI_COMBINER_STRUCT: c_int = 12;
pub const MPI_COMBINER_SUBARRAY: c_int = 13;
pub const MPI_COMBINER_DARRAY: c_int = 14;
pub const MPI_COMBINER_F90_REAL: c_int = 15;
pub const MPI_COMBINER_F90_COMPLEX: c_int = 16;
pub const MPI_COMBINER_F90_INTEGER: c_int = 17;
pub const MPI_COMBINER_RESIZED: c_int = 18;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 19;

// ---- Subarray/darray order and distribution ----------------------------------------------
pub const MPI_ORDER_C: c_int = 56;
pub const MPI_ORDER_FORTRAN: c_int = 57;
pub const MPI_DISTRIBUTE_BLOCK: c_int = 121;
pub const MPI_DISTRIBUTE_CYCLIC: c_int = 122;
pub const MPI_DISTRIBUTE_NONE: c_int = 123;
pub const MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;

// ---- One-sided assertions ----------------------------------------------------------------
pub const MPI_MODE_NOCHECK: c_int = 1024;
pub const MPI_MODE_NOSTORE: c_int = 2048;
pub const MPI_MODE_NOPUT: c_int = 4096;
pub const MPI_MODE_NOPRECEDE: c_int = 8192;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;

// ---- Communicator split types ------------------------------------------------------------
pub const MPI_COMM_TYPE_SHARED: c_int = 1;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;

// ---- Thread levels -----------------------------------------------------------------------
pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;
pub const MPI_THREAD_SERIALIZED: c_int = 2;
pub const MPI_THREAD_MULTIPLE: c_int = 3;

// ---- File access modes, seek and displacement --------------------------------------------
pub const MPI_MODE_RDONLY: c_int = 2;
pub const MPI_MODE_RDWR: c_int = 8;
pub const MPI_MODE_WRONLY: c_int = 4;
pub const MPI_MODE_CREATE: c_int = 1;
pub const MPI_MODE_EXCL: c_int = 64;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 16;
pub const MPI_MODE_UNIQUE_OPEN: c_int = 32;
pub const MPI_MODE_APPEND: c_int = 128;
pub const MPI_MODE_SEQUENTIAL: c_int = 256;
pub const MPI_SEEK_SET: c_int = 600;
pub const MPI_SEEK_CUR: c_int = 602;
pub const MPI_SEEK_END: c_int = 604;
pub const MPI_DISPLACEMENT_CURRENT: MPI_Offset = -54278278;

// ---- Fortran status layout ---------------------------------------------------------------
pub const MPI_F_STATUS_SIZE: c_int = 5;
pub const MPI_F_SOURCE: c_int = 2;
pub const MPI_F_TAG: c_int = 3;
pub const MPI_F_ERROR: c_int = 4;

// ---- Error classes -----------------------------------------------------------------------
pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_ROOT: c_int = 7;
pub const MPI_ERR_GROUP: c_int = 8;
pub const MPI_ERR_OP: c_int = 9;
pub const MPI_ERR_TOPOLOGY: c_int = 10;
pub const MPI_ERR_DIMS: c_int = 11;
pub const MPI_ERR_ARG: c_int = 12;
pub const MPI_ERR_UNKNOWN: c_int = 13;
pub const MPI_ERR_TRUNCATE: c_int = 14;
pub const MPI_ERR_OTHER: c_int = 15;
pub const MPI_ERR_INTERN: c_int = 16;
pub const MPI_ERR_IN_STATUS: c_int = 17;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_REQUEST: c_int = 19;
pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_BAD_FILE: c_int = 22;
pub const MPI_ERR_CONVERSION: c_int = 23;
pub const MPI_ERR_DUP_DATAREP: c_int = 24;
pub const MPI_ERR_FILE_EXISTS: c_int = 25;
pub const MPI_ERR_FILE_IN_USE: c_int = 26;
pub const MPI_ERR_FILE: c_int = 27;
pub const MPI_ERR_INFO: c_int = 28;
pub const MPI_ERR_INFO_KEY: c_int = 29;
pub const MPI_ERR_INFO_VALUE: c_int = 30;
pub const MPI_ERR_INFO_NOKEY: c_int = 31;
pub const MPI_ERR_IO: c_int = 32;
pub const MPI_ERR_NAME: c_int = 33;
pub const MPI_ERR_NO_MEM: c_int = 34;
pub const MPI_ERR_NOT_SAME: c_int = 35;
pub const MPI_ERR_NO_SPACE: c_int = 36;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 37;
pub const MPI_ERR_PORT: c_int = 38;
pub const MPI_ERR_QUOTA: c_int = 39;
pub const MPI_ERR_READ_ONLY: c_int = 40;
pub const MPI_ERR_SERVICE: c_int = 41;
pub const MPI_ERR_SPAWN: c_int = 42;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
pub const MPI_ERR_WIN: c_int = 45;
pub const MPI_ERR_BASE: c_int = 46;
pub const MPI_ERR_LOCKTYPE: c_int = 47;
pub const MPI_ERR_KEYVAL: c_int = 48;
pub const MPI_ERR_RMA_CONFLICT: c_int = 49;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SIZE: c_int = 51;
pub const MPI_ERR_DISP: c_int = 52;
pub const MPI_ERR_ASSERT: c_int = 53;
pub const MPI_ERR_RMA_RANGE: c_int = 55;
pub const MPI_ERR_RMA_ATTACH: c_int = 56;
pub const MPI_ERR_RMA_SHARED: c_int = 57;
pub const MPI_ERR_RMA_FLAVOR: c_int = 58;
pub const MPI_T_ERR_MEMORY: c_int = 59;
pub const MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
pub const MPI_T_ERR_CANNOT_INIT: c_int = 61;
pub const MPI_T_ERR_INVALID_INDEX: c_int = 62;
pub const MPI_T_ERR_INVALID_ITEM: c_int = 63;
pub const MPI_T_ERR_INVALID_HANDLE: c_int = 64;
pub const MPI_T_ERR_OUT_OF_HANDLES: c_int = 65;
pub const MPI_T_ERR_OUT_OF_SESSIONS: c_int = 66;
pub const MPI_T_ERR_INVALID_SESSION: c_int = 67;
pub const MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 68;
pub const MPI_T_ERR_CVAR_SET_NEVER: c_int = 69;
pub const MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 70;
pub const MPI_T_ERR_PVAR_NO_WRITE: c_int = 71;
pub const MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 72;
pub const MPI_T_ERR_INVALID_NAME: c_int = 73;
pub const MPI_T_ERR_INVALID: c_int = 74;
/// Error classes MPICH defines beyond MPI-3.1 (values reserved in the MPICH ABI).
pub const MPI_ERR_SESSION: c_int = 75;
pub const MPI_ERR_PROC_ABORTED: c_int = 76;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
pub const MPI_T_ERR_NOT_SUPPORTED: c_int = 78;
/// Largest predefined error code (MPICH's value).
pub const MPI_ERR_LASTCODE: c_int = 0x3fffffff;

// ---- MPI_T: verbosity, binding, scope, pvar classes --------------------------------------
pub const MPI_T_CB_REQUIRE_NONE: MPI_T_cb_safety = 0;
pub const MPI_T_CB_REQUIRE_MPI_RESTRICTED: MPI_T_cb_safety = 1;
pub const MPI_T_CB_REQUIRE_THREAD_SAFE: MPI_T_cb_safety = 2;
pub const MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: MPI_T_cb_safety = 3;
pub const MPI_T_SOURCE_ORDERED: MPI_T_source_order = 0;
pub const MPI_T_SOURCE_UNORDERED: MPI_T_source_order = 1;
pub const MPI_T_VERBOSITY_USER_BASIC: c_int = 221;
pub const MPI_T_VERBOSITY_USER_DETAIL: c_int = 222;
pub const MPI_T_VERBOSITY_USER_ALL: c_int = 223;
pub const MPI_T_VERBOSITY_TUNER_BASIC: c_int = 224;
pub const MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 225;
pub const MPI_T_VERBOSITY_TUNER_ALL: c_int = 226;
pub const MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 227;
pub const MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 228;
pub const MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 229;
pub const MPI_T_BIND_NO_OBJECT: c_int = 9700;
pub const MPI_T_BIND_MPI_COMM: c_int = 9701;
pub const MPI_T_BIND_MPI_DATATYPE: c_int = 9702;
pub const MPI_T_BIND_MPI_ERRHANDLER: c_int = 9703;
pub const MPI_T_BIND_MPI_FILE: c_int = 9704;
pub const MPI_T_BIND_MPI_GROUP: c_int = 9705;
pub const MPI_T_BIND_MPI_OP: c_int = 9706;
pub const MPI_T_BIND_MPI_REQUEST: c_int = 9707;
pub const MPI_T_BIND_MPI_WIN: c_int = 9708;
pub const MPI_T_BIND_MPI_MESSAGE: c_int = 9709;
pub const MPI_T_BIND_MPI_INFO: c_int = 9710;
pub const MPI_T_SCOPE_CONSTANT: c_int = 60438;
pub const MPI_T_SCOPE_READONLY: c_int = 60439;
pub const MPI_T_SCOPE_LOCAL: c_int = 60440;
pub const MPI_T_SCOPE_GROUP: c_int = 60441;
pub const MPI_T_SCOPE_GROUP_EQ: c_int = 60442;
pub const MPI_T_SCOPE_ALL: c_int = 60443;
pub const MPI_T_SCOPE_ALL_EQ: c_int = 60444;
pub const MPI_T_PVAR_CLASS_STATE: c_int = 240;
pub const MPI_T_PVAR_CLASS_LEVEL: c_int = 241;
pub const MPI_T_PVAR_CLASS_SIZE: c_int = 242;
pub const MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 243;
pub const MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 244;
pub const MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 245;
pub const MPI_T_PVAR_CLASS_COUNTER: c_int = 246;
pub const MPI_T_PVAR_CLASS_AGGREGATE: c_int = 247;
pub const MPI_T_PVAR_CLASS_TIMER: c_int = 248;
pub const MPI_T_PVAR_CLASS_GENERIC: c_int = 249;
