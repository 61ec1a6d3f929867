//! The MPICH ABI: C types, handle values and constants, as Rust definitions that cbindgen
//! turns into `mpi.h`. Handle encoding for user objects lives in `handles.rs` only.

pub mod types;
pub mod consts;

pub use consts::*;
pub use types::*;
