//! OxMPI engine. ABI-agnostic: the C ABI lives in `mpi-capi`.
//! See `docs/` and the project DESIGN for the layering.

pub mod affinity;
pub mod bootstrap;
pub mod config;
pub mod copy;
pub mod error;
pub mod header;
pub mod memhooks;
pub mod transport;
pub mod matching;
pub mod protocol;
pub mod bsend;
pub mod partitioned;
pub mod request;
pub mod comm;
pub mod agreement;
pub mod group;
pub mod topology;
pub mod runtime;
pub mod dpm;
pub mod spawn;
pub mod datatype;
pub mod op;
pub mod coll;
pub mod rma;
pub mod io;
