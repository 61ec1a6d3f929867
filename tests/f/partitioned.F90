! partitioned: MPI-4.0 partitioned communication from Fortran. Ranks are paired (0-1,
! 2-3; an odd last rank talks to itself); each sends 8 partitions of 4 integers to its
! partner (MPI_Pready, MPI_Pready_range, MPI_Pready_list) and receives them as 4
! partitions of 8, polling MPI_Parrived (a LOGICAL flag), for 3 rounds.
program partitioned
#include "mpi_interface.h"
  integer, parameter :: np = 8, each = 4, n = np * each
  integer(kind=MPI_COUNT_KIND) :: scount, rcount
  integer :: ierr, rank, nprocs, peer, i, p, round, sreq, rreq
  integer :: sb(n), rb(n), list(3), st(MPI_STATUS_SIZE)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = rank
  scount = each
  rcount = 2 * each
  call MPI_Psend_init(sb, np, scount, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, sreq, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Psend_init')
  call MPI_Precv_init(rb, np / 2, rcount, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, rreq, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Precv_init')
  do round = 1, 3
     sb = (/ (rank * 1000 + round * 100 + i, i = 1, n) /)
     rb = -1
     call MPI_Start(rreq, ierr)
     call MPI_Start(sreq, ierr)
     call MPI_Pready(7, sreq, ierr)
     call MPI_Pready_range(0, 3, sreq, ierr)
     list = (/ 6, 4, 5 /)
     call MPI_Pready_list(3, list, sreq, ierr)
     if (ierr /= MPI_SUCCESS) call fail('MPI_Pready_list')
     do p = 0, np / 2 - 1
        flag = .false.
        do while (.not. flag)
           call MPI_Parrived(rreq, p, flag, ierr)
           if (ierr /= MPI_SUCCESS) call fail('MPI_Parrived')
        end do
     end do
     call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
     call MPI_Wait(rreq, st, ierr)
     if (st(MPI_SOURCE) /= peer .or. st(MPI_TAG) /= 5) call fail('status')
     do i = 1, n
        if (rb(i) /= peer * 1000 + round * 100 + i) call fail('data')
     end do
  end do
  call MPI_Request_free(sreq, ierr)
  call MPI_Request_free(rreq, ierr)
  if (sreq /= MPI_REQUEST_NULL .or. rreq /= MPI_REQUEST_NULL) call fail('MPI_Request_free')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'partitioned: OK'
  call MPI_Finalize(ierr)
contains
  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program partitioned
