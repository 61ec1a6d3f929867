! allreduce: MPI_Allreduce on INTEGER, REAL and DOUBLE PRECISION arrays (SUM, MAX, MIN,
! PROD), with MPI_IN_PLACE, LOGICAL with MPI_LAND/MPI_LOR, and MPI_Reduce/MPI_Bcast.
program allreduce
#include "mpi_interface.h"
  integer, parameter :: n = 10
  integer :: ierr, rank, nprocs, i, ia(n), ib(n), isum
  real :: ra(n), rb(n)
  double precision :: da(n), db(n), dexp
  logical :: la, lb

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  isum = nprocs * (nprocs - 1) / 2

  do i = 1, n
     ia(i) = rank + i
  end do
  ib = -1
  call MPI_Allreduce(ia, ib, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Allreduce INTEGER')
  do i = 1, n
     if (ib(i) /= isum + nprocs * i) call fail('INTEGER sum')
  end do
  call MPI_Allreduce(ia, ib, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  do i = 1, n
     if (ib(i) /= nprocs - 1 + i) call fail('INTEGER max')
  end do

  do i = 1, n
     ra(i) = real(rank) + 0.5 * i
  end do
  call MPI_Allreduce(ra, rb, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, n
     if (abs(rb(i) - (real(isum) + 0.5 * i * nprocs)) > 1e-4) call fail('REAL sum')
  end do
  call MPI_Allreduce(ra, rb, n, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
  do i = 1, n
     if (rb(i) /= 0.5 * i) call fail('REAL min')
  end do

  do i = 1, n
     da(i) = 1d0 / (rank + 1) + i
  end do
  call MPI_Allreduce(da, db, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  dexp = 0
  do i = 0, nprocs - 1
     dexp = dexp + 1d0 / (i + 1)
  end do
  do i = 1, n
     if (abs(db(i) - (dexp + nprocs * i)) > 1d-10) call fail('DOUBLE PRECISION sum')
  end do

  ! MPI_IN_PLACE: the receive buffer holds the input.
  do i = 1, n
     da(i) = rank + i
  end do
  call MPI_Allreduce(MPI_IN_PLACE, da, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Allreduce MPI_IN_PLACE')
  do i = 1, n
     if (da(i) /= dble(isum + nprocs * i)) call fail('MPI_IN_PLACE DOUBLE PRECISION sum')
  end do
  ia = 2
  call MPI_Allreduce(MPI_IN_PLACE, ia, n, MPI_INTEGER, MPI_PROD, MPI_COMM_WORLD, ierr)
  if (any(ia /= 2**nprocs)) call fail('MPI_IN_PLACE INTEGER prod')

  la = (rank == 0)
  call MPI_Allreduce(la, lb, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  if (.not. lb) call fail('LOGICAL lor')
  call MPI_Allreduce(la, lb, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (lb .neqv. (nprocs == 1)) call fail('LOGICAL land')

  ! MPI_Reduce to the last rank, then MPI_Bcast back.
  ia = rank
  ib = 0
  call MPI_Reduce(ia, ib, n, MPI_INTEGER, MPI_SUM, nprocs - 1, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(ib, n, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, ierr)
  if (any(ib /= isum)) call fail('MPI_Reduce + MPI_Bcast')

  if (rank == 0) print '(a)', 'allreduce: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program allreduce
