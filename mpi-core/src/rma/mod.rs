//! One-sided communication (RMA): windows, their targets, and the operations and
//! synchronisation modes of MPI-3.1 chapter 11. See `docs/rma.md`.
//!
//! A window reaches each target rank one of three ways (`Access`), decided at creation:
//! memory mapped in this process (its own memory, or a shared-memory window of a rank on
//! this node: loads and stores), the target's memory read and written through the kernel
//! (CMA, for `MPI_Win_create`/dynamic windows of ranks on this node: no target progress
//! needed either), or active messages over the window's private communicator (ranks on
//! other nodes, or CMA refused), applied by the target's progress engine.

pub mod access;
pub mod am;
pub mod apply;
pub mod fast;
pub mod ops;
pub mod setup;
pub mod sync;
pub mod window;
pub mod words;

pub use window::{Access, Flavor, Win, WinTable};
