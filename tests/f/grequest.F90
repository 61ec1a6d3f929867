! grequest: MPI_Grequest_start from Fortran with Fortran query/free/cancel subroutines
! (EXTRA_STATE, STATUS|COMPLETE, IERROR): the query fills the status MPI_Wait returns, the
! free callback sees (and updates) the program's EXTRA_STATE (MPICH's greqf, greqf90).
module greq_cb
#include "mpi_interface.h"
  integer :: ncancel = 0
contains
  subroutine query_fn(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    status(MPI_SOURCE) = 3
    status(MPI_TAG) = int(extra)
    call MPI_Status_set_elements(status, MPI_BYTE, 0, ierr)
    call MPI_Status_set_cancelled(status, .false., ierr)
    ierr = MPI_SUCCESS
  end subroutine query_fn
  subroutine free_fn(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    extra = extra + 100
    ierr = MPI_SUCCESS
  end subroutine free_fn
  subroutine cancel_fn(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    if (.not. complete) ncancel = ncancel + 1
    ierr = MPI_SUCCESS
  end subroutine cancel_fn
end module greq_cb

program grequest
  use greq_cb
  integer :: ierr, rank, req, status(MPI_STATUS_SIZE)
  logical :: flag
  integer(kind=MPI_ADDRESS_KIND) :: extra

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 42
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Grequest_start')
  call MPI_Test(req, flag, status, ierr)
  if (flag) call fail('incomplete request tested complete')
  call MPI_Cancel(req, ierr)
  if (ncancel /= 1) call fail('cancel_fn not called with COMPLETE false')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  if (status(MPI_TAG) /= 42 .or. status(MPI_SOURCE) /= 3) call fail('status from query_fn')
  if (extra /= 142) call fail('free_fn did not update EXTRA_STATE')
  if (req /= MPI_REQUEST_NULL) call fail('request not freed')
  if (rank == 0) print '(a)', 'grequest: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program grequest
