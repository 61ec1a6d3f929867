//! The MPICH ABI: C types, handle values and constants, as Rust definitions that cbindgen
//! turns into `mpi.h`, plus the data symbols and predefined callbacks the ABI exports.
//! Handle encoding for user objects lives in `handles.rs` only.

pub mod consts;
pub mod statics;
pub mod types;

pub use consts::*;
pub use types::*;
