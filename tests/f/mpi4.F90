! mpi4: the MPI-4.0 routines from Fortran: MPI_Isendrecv(_replace) around a ring,
! persistent collectives (MPI_Bcast_init, MPI_Allreduce_init, MPI_Barrier_init) started
! several times with new data and by MPI_Startall, MPI_Comm_idup_with_info and
! MPI_Info_create_env.
program mpi4
#include "mpi_interface.h"
  integer, parameter :: n = 100
  integer :: ierr, rank, nprocs, left, right, i, k, req, info, env, newcomm, csize
  integer :: reqs(3), st(MPI_STATUS_SIZE)
  integer :: sb(n), rb(n), bv(n)
  double precision :: x(n), y(n)
  character(len=MPI_MAX_INFO_VAL) :: val
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  sb = (/ (rank * 1000 + i, i = 1, n) /)
  rb = -1
  call MPI_Isendrecv(sb, n, MPI_INTEGER, right, 3, rb, n, MPI_INTEGER, left, 3, &
                     MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  if (ierr /= MPI_SUCCESS .or. req /= MPI_REQUEST_NULL) call fail('MPI_Isendrecv')
  if (st(MPI_SOURCE) /= left .or. st(MPI_TAG) /= 3) call fail('MPI_Isendrecv status')
  do i = 1, n
     if (rb(i) /= left * 1000 + i) call fail('MPI_Isendrecv data')
  end do
  call MPI_Isendrecv_replace(sb, n, MPI_INTEGER, right, 4, left, 4, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, n
     if (sb(i) /= left * 1000 + i) call fail('MPI_Isendrecv_replace data')
  end do

  call MPI_Bcast_init(bv, n, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1), ierr)
  call MPI_Allreduce_init(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, reqs(2), ierr)
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, reqs(3), ierr)
  if (ierr /= MPI_SUCCESS) call fail('_init')
  do k = 1, 3
     bv = -1
     if (rank == 0) bv = (/ (k * 100 + i, i = 1, n) /)
     x = (/ (dble(rank + k + i), i = 1, n) /)
     if (k == 2) then
        call MPI_Start(reqs(1), ierr)
        call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
        call MPI_Start(reqs(2), ierr)
        call MPI_Start(reqs(3), ierr)
        call MPI_Waitall(2, reqs(2), MPI_STATUSES_IGNORE, ierr)
     else
        call MPI_Startall(3, reqs, ierr)
        call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
     end if
     if (ierr /= MPI_SUCCESS) call fail('start/wait')
     if (any(reqs == MPI_REQUEST_NULL)) call fail('persistent request freed by a wait')
     do i = 1, n
        if (bv(i) /= k * 100 + i) call fail('MPI_Bcast_init data')
        if (y(i) /= dble(nprocs * (nprocs - 1) / 2 + nprocs * (k + i))) call fail('MPI_Allreduce_init data')
     end do
  end do
  do k = 1, 3
     call MPI_Request_free(reqs(k), ierr)
  end do

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'mpi_assert_no_any_tag', 'true', ierr)
  call MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, newcomm, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Comm_size(newcomm, csize, ierr)
  if (csize /= nprocs) call fail('MPI_Comm_idup_with_info size')
  call MPI_Barrier(newcomm, ierr)
  call MPI_Comm_free(newcomm, ierr)
  call MPI_Info_free(info, ierr)

  call MPI_Info_create_env(env, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Info_create_env')
  call MPI_Info_get(env, 'thread_level', MPI_MAX_INFO_VAL, val, flag, ierr)
  if (.not. flag .or. val(1:11) /= 'MPI_THREAD_') call fail('MPI_Info_create_env thread_level')
  call MPI_Info_free(env, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'mpi4: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program mpi4
