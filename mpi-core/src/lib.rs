//! OxMPI engine. ABI-agnostic: the C ABI lives in `mpi-capi`.
//! See `docs/` and the project DESIGN for the layering.

pub mod bootstrap;
