! nonblocking: every rank exchanges arrays with every rank (itself included) through
! MPI_Irecv/MPI_Isend, completed by MPI_Waitall with MPI_STATUSES_IGNORE; then once more
! with a status array (checking MPI_SOURCE/MPI_TAG), then MPI_Waitany/MPI_Testall.
program nonblocking
#include "mpi_interface.h"
  integer, parameter :: n = 1000
  integer :: ierr, rank, nprocs, p, i, idx, k
  integer, allocatable :: reqs(:), stats(:,:), sendbuf(:,:), recvbuf(:,:)
  double precision :: d(4), e(4)
  integer :: r2(2)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(reqs(2 * nprocs), stats(MPI_STATUS_SIZE, 2 * nprocs))
  allocate(sendbuf(n, 0:nprocs - 1), recvbuf(n, 0:nprocs - 1))

  do k = 1, 2
     do p = 0, nprocs - 1
        do i = 1, n
           sendbuf(i, p) = rank * 100000 + p * 1000 + i + k
        end do
     end do
     recvbuf = -1
     do p = 0, nprocs - 1
        call MPI_Irecv(recvbuf(1, p), n, MPI_INTEGER, p, 10 + k, MPI_COMM_WORLD, reqs(p + 1), ierr)
     end do
     do p = 0, nprocs - 1
        call MPI_Isend(sendbuf(1, p), n, MPI_INTEGER, p, 10 + k, MPI_COMM_WORLD, &
                       reqs(nprocs + p + 1), ierr)
     end do
     if (k == 1) then
        call MPI_Waitall(2 * nprocs, reqs, MPI_STATUSES_IGNORE, ierr)
     else
        call MPI_Waitall(2 * nprocs, reqs, stats, ierr)
        do p = 0, nprocs - 1
           if (stats(MPI_SOURCE, p + 1) /= p) call fail('statuses(MPI_SOURCE)')
           if (stats(MPI_TAG, p + 1) /= 10 + k) call fail('statuses(MPI_TAG)')
        end do
     end if
     if (ierr /= MPI_SUCCESS) call fail('MPI_Waitall')
     do p = 0, 2 * nprocs - 1
        if (reqs(p + 1) /= MPI_REQUEST_NULL) call fail('request not freed')
     end do
     do p = 0, nprocs - 1
        do i = 1, n
           if (recvbuf(i, p) /= p * 100000 + rank * 1000 + i + k) call fail('wrong data')
        end do
     end do
  end do

  ! MPI_Waitany returns a 1-based index; MPI_Testall a LOGICAL flag.
  d = (/ 1d0, 2d0, 3d0, 4d0 /) * (rank + 1)
  e = 0
  call MPI_Irecv(e, 4, MPI_DOUBLE_PRECISION, rank, 5, MPI_COMM_WORLD, r2(1), ierr)
  r2(2) = MPI_REQUEST_NULL
  call MPI_Send(d, 4, MPI_DOUBLE_PRECISION, rank, 5, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, r2, idx, stats(:, 1), ierr)
  if (idx /= 1) call fail('MPI_Waitany index is not 1-based')
  if (any(e /= d)) call fail('MPI_Waitany data')
  call MPI_Testall(2, r2, flag, MPI_STATUSES_IGNORE, ierr)
  if (.not. flag) call fail('MPI_Testall on null requests')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'nonblocking: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program nonblocking
