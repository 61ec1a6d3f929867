! split: MPI_Comm_split of MPI_COMM_WORLD into even and odd ranks (key = -rank: reversed
! order), checked with rank/size and an MPI_Allreduce over the new communicator; then a
! split with MPI_UNDEFINED colour gives MPI_COMM_NULL; MPI_Comm_free resets the handle.
program split
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, newcomm, nullcomm, newrank, newsize, color, expsize, s, i, e

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, newcomm, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_split')
  call MPI_Comm_rank(newcomm, newrank, ierr)
  call MPI_Comm_size(newcomm, newsize, ierr)
  expsize = (nprocs - color + 1) / 2
  if (newsize /= expsize) call fail('size of the split communicator')
  ! Key -rank reverses the order: the highest world rank of the colour is rank 0.
  if (newrank /= expsize - 1 - rank / 2) call fail('rank in the split communicator')
  call MPI_Allreduce(rank, s, 1, MPI_INTEGER, MPI_SUM, newcomm, ierr)
  e = 0
  do i = color, nprocs - 1, 2
     e = e + i
  end do
  if (s /= e) call fail('MPI_Allreduce over the split communicator')

  call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, nullcomm, ierr)
  if (nullcomm /= MPI_COMM_NULL) call fail('MPI_UNDEFINED colour must give MPI_COMM_NULL')
  call MPI_Comm_free(newcomm, ierr)
  if (newcomm /= MPI_COMM_NULL) call fail('MPI_Comm_free did not reset the handle')
  if (rank == 0) print '(a)', 'split: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program split
