! mpi41: the MPI-4.1 routines from Fortran: status field accessors, the non-destructive
! MPI_Request_get_status_* tests on a receive around a ring, MPI_Type_get_value_index, and
! a communicator's buffered-send buffer (attach, MPI_Bsend, flush, detach); with `use mpi`,
! TYPE(MPI_Status) and MPI_Status_f2f08/f082f.
program mpi41
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, left, right, v, got, idx, pair, sz, outcount
  integer :: reqs(2), inds(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  integer :: buf(2000)
  logical :: flag
#ifndef USE_MPIF_H
  type(MPI_Status) :: st08
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  call MPI_Status_set_source(st, 5, ierr)
  call MPI_Status_set_tag(st, 6, ierr)
  call MPI_Status_set_error(st, MPI_ERR_TAG, ierr)
  call MPI_Status_get_source(st, v, ierr)
  if (v /= 5 .or. st(MPI_SOURCE) /= 5) call fail('MPI_Status_get/set_source')
  call MPI_Status_get_tag(st, v, ierr)
  if (v /= 6 .or. st(MPI_TAG) /= 6) call fail('MPI_Status_get/set_tag')
  call MPI_Status_get_error(st, v, ierr)
  if (v /= MPI_ERR_TAG) call fail('MPI_Status_get/set_error')
#ifndef USE_MPIF_H
  ! TYPE(MPI_Status) and its conversions are in the `mpi` module too (MPI-3.0), hidden
  ! fields (the count) included.
  call MPI_Status_set_elements(st, MPI_INTEGER, 3, ierr)
  call MPI_Status_f2f08(st, st08, ierr)
  if (ierr /= MPI_SUCCESS .or. st08%MPI_SOURCE /= 5 .or. st08%MPI_TAG /= 6 .or. st08%MPI_ERROR /= MPI_ERR_TAG) &
    call fail('MPI_Status_f2f08')
  st08%MPI_TAG = 77
  st = 0
  call MPI_Status_f082f(st08, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, v, ierr)
  if (ierr /= MPI_SUCCESS .or. st(MPI_TAG) /= 77 .or. st(MPI_SOURCE) /= 5 .or. v /= 3) call fail('MPI_Status_f082f')
#endif

  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, pair, ierr)
  if (pair /= MPI_2DOUBLE_PRECISION) call fail('MPI_Type_get_value_index 2DOUBLE_PRECISION')
  call MPI_Type_get_value_index(MPI_CHARACTER, MPI_INTEGER, pair, ierr)
  if (pair /= MPI_DATATYPE_NULL) call fail('MPI_Type_get_value_index without a pair')

  ! A 2000-integer buffer attached to MPI_COMM_WORLD carries a buffered send around
  ! the ring; the receive is watched with the get_status forms, which leave it active.
  call MPI_Comm_attach_buffer(MPI_COMM_WORLD, buf, 8000, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_attach_buffer')
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 9, MPI_COMM_WORLD, reqs(2), ierr)
  v = 100 + rank
  call MPI_Bsend(v, 1, MPI_INTEGER, right, 9, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Bsend')
  flag = .false.
  do while (.not. flag)
     call MPI_Request_get_status_any(2, reqs, idx, flag, st, ierr)
  end do
  if (idx /= 2 .or. st(MPI_SOURCE) /= left .or. st(MPI_TAG) /= 9) call fail('MPI_Request_get_status_any')
  if (reqs(2) == MPI_REQUEST_NULL) call fail('MPI_Request_get_status_any freed the request')
  call MPI_Request_get_status_all(2, reqs, flag, sts, ierr)
  if (.not. flag .or. sts(MPI_SOURCE, 2) /= left) call fail('MPI_Request_get_status_all')
  call MPI_Request_get_status_some(2, reqs, outcount, inds, sts, ierr)
  if (outcount /= 1 .or. inds(1) /= 2) call fail('MPI_Request_get_status_some')
  call MPI_Wait(reqs(2), st, ierr)
  if (got /= 100 + left) call fail('buffered message')
  call MPI_Comm_flush_buffer(MPI_COMM_WORLD, ierr)
  call MPI_Comm_detach_buffer(MPI_COMM_WORLD, buf, sz, ierr)
  if (ierr /= MPI_SUCCESS .or. sz /= 8000) call fail('MPI_Comm_detach_buffer')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'mpi41: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program mpi41
