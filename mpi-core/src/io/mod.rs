//! MPI-IO (MPI 3.1 chapter 13), the engine side: files opened with POSIX calls, views
//! mapping a process's data stream onto file bytes, byte-range locks for atomic mode, and
//! the shared file pointer. The C layer (`mpi-capi/src/io*.rs`) runs the collective steps
//! over the file's communicator and calls these local parts between them. See `docs/io.md`.

pub mod collective;
pub mod file;
pub mod lock;
pub mod os_error;
pub mod shared_pointer;
pub mod view;

pub use file::{Amode, File};
pub use view::View;
