//! Collective operations as schedules: rounds of point-to-point transfers on the
//! communicator's collective context, each followed by local reductions or copies. The
//! progress engine advances every active schedule, so blocking and nonblocking collectives
//! share one implementation (blocking = start + wait).

pub mod algorithms;
pub mod direct;
pub mod flag_barrier;
pub mod inter;
pub mod mailbox;
pub mod schedule;
pub mod stepping;

pub use schedule::{Action, Buf, CollComm, Colls, ReduceFn, Reducer, Schedule, Slice, UnpackTarget};
