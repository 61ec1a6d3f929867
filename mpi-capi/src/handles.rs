//! Encoding of user-object handles (the one place that knows it). Predefined handles carry
//! MPICH's values; objects created at run time use MPICH's "direct" kind bits with a table
//! index in the low 26 bits, so they never collide with a predefined value.

use crate::abi::*;

const INDEX_MASK: u32 = 0x03ff_ffff;
const KIND_MASK: u32 = 0xfc00_0000;
const COMM_DIRECT: u32 = 0x8400_0000;
const REQUEST_DIRECT: u32 = 0xac00_0000;

/// Communicator handle → index in the runtime's communicator table.
#[inline]
pub fn comm_index(c: MPI_Comm) -> Option<usize> {
    match c {
        MPI_COMM_WORLD => Some(mpi_core::comm::WORLD),
        MPI_COMM_SELF => Some(mpi_core::comm::SELF),
        _ if (c as u32) & KIND_MASK == COMM_DIRECT => Some(((c as u32) & INDEX_MASK) as usize),
        _ => None,
    }
}

/// Index in the communicator table → handle.
pub fn comm_handle(idx: usize) -> MPI_Comm {
    match idx {
        mpi_core::comm::WORLD => MPI_COMM_WORLD,
        mpi_core::comm::SELF => MPI_COMM_SELF,
        _ => (COMM_DIRECT | idx as u32) as MPI_Comm,
    }
}

/// Request (or message) handle → request id; None for null or foreign handles.
#[inline]
pub fn request_id(r: MPI_Request) -> Option<u32> {
    ((r as u32) & KIND_MASK == REQUEST_DIRECT).then_some((r as u32) & INDEX_MASK)
}

#[inline]
pub fn request_handle(id: u32) -> MPI_Request {
    debug_assert!(id <= INDEX_MASK);
    (REQUEST_DIRECT | id) as MPI_Request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_nulls() {
        assert_eq!(comm_index(comm_handle(7)), Some(7));
        assert_eq!(comm_index(MPI_COMM_WORLD), Some(0));
        assert_eq!(comm_index(MPI_COMM_NULL), None);
        assert_eq!(request_id(request_handle(123)), Some(123));
        assert_eq!(request_id(MPI_REQUEST_NULL), None);
        assert_eq!(request_id(MPI_MESSAGE_NO_PROC), None);
    }
}
