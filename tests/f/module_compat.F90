! module_compat: programs MPICH's `mpi` module accepts must compile against ours. MPICH's
! module has no explicit interface for routines with choice buffers (so a profiling
! wrapper `subroutine MPI_Send` may `use mpi`, and an alltoallv may pass an array of
! types where one is expected), nor for those taking a scalar where an array is declared
! (a single request to MPI_Waitall, MPI_UNWEIGHTED as weights), and MPI_AINT_ADD is
! declared by the program (MPICH's alltoallvf90, vw_inplacef90, dgraph_unwgtf90,
! profile1f90, aintf).
program module_compat
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, req, comm2, i, indeg, outdeg
  integer :: sbuf(8), rbuf(8), counts(8), displs(8), types(8)
  integer :: srcs(1), dsts(1)
  logical :: weighted
  integer(kind=MPI_ADDRESS_KIND) :: a, b
#ifdef USE_MPIF_H
  ! mpif.h leaves these to the program (as MPICH's does); the module declares them.
  integer(kind=MPI_ADDRESS_KIND), external :: MPI_Aint_add, MPI_Aint_diff
#endif
  integer :: sends
  common /counter/ sends

  sends = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! Our MPI_Send below, which counts and calls PMPI_Send.
  call MPI_Isend(rank, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, req, ierr)
  call MPI_Waitall(1, req, MPI_STATUSES_IGNORE, ierr)
  sbuf(1) = rank
  call MPI_Send(sbuf, 1, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, ierr)
  if (sends /= 1) call fail('the MPI_Send profiling wrapper did not run')
  call MPI_Recv(i, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Recv(i, 1, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (i /= rank) call fail('data through the wrapper')

  ! Types passed as arrays where one handle is declared (the first element is used).
  counts = 1
  displs = (/ (i - 1, i = 1, 8) /)
  types = MPI_INTEGER
  sbuf = (/ (rank * 10 + i, i = 1, 8) /)
  rbuf = -1
  call MPI_Alltoallv(sbuf, counts, displs, types, rbuf, counts, displs, types, &
                     MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
     if (rbuf(i) /= (i - 1) * 10 + rank + 1) call fail('alltoallv data')
  end do

  ! A ring with MPI_UNWEIGHTED for the weights.
  srcs(1) = mod(rank + nprocs - 1, nprocs)
  dsts(1) = mod(rank + 1, nprocs)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., comm2, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors_count(comm2, indeg, outdeg, weighted, ierr)
  if (indeg /= 1 .or. outdeg /= 1 .or. weighted) call fail('neighbors count / weighted')
  call MPI_Comm_free(comm2, ierr)

  a = 1000
  b = MPI_Aint_add(a, 24_MPI_ADDRESS_KIND)
  if (b /= 1024 .or. MPI_Aint_diff(b, a) /= 24) call fail('MPI_Aint_add/MPI_Aint_diff')

  if (rank == 0) print '(a)', 'module_compat: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program module_compat

! A profiling wrapper of the kind MPI tools install.
subroutine MPI_Send(buf, count, datatype, dest, tag, comm, ierror)
#include "mpi_interface.h"
  integer :: buf(*), count, datatype, dest, tag, comm, ierror
  integer :: sends
  common /counter/ sends
  sends = sends + 1
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send
