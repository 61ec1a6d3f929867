! ring: a token goes around MPI_COMM_WORLD several laps with MPI_Send/MPI_Recv; every
! receive checks the status fields (MPI_SOURCE, MPI_TAG, MPI_ERROR via MPI_Get_count).
! Also MPI_Sendrecv with MPI_STATUS_IGNORE and MPI_Probe/MPI_Get_count.
program ring
#include "mpi_interface.h"
  integer, parameter :: laps = 5, big = 100000
  integer :: ierr, rank, nprocs, left, right, lap, tag, count, n, req, i
  integer :: status(MPI_STATUS_SIZE)
  integer, allocatable :: buf(:), sbuf(:)
  integer :: x, y

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  allocate(buf(big + 2), sbuf(big + 2))

  do lap = 1, laps
     tag = 100 + lap
     count = 2
     if (mod(lap, 2) == 0) count = big + 2
     if (rank == 0) then
        sbuf(1) = lap
        sbuf(2) = 0
        do i = 3, count
           sbuf(i) = lap * 1000 + i
        end do
        call MPI_Isend(sbuf, count, MPI_INTEGER, right, tag, MPI_COMM_WORLD, req, ierr)
        buf = -1
        call MPI_Recv(buf, big + 2, MPI_INTEGER, left, tag, MPI_COMM_WORLD, status, ierr)
        call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
        if (req /= MPI_REQUEST_NULL) call fail('request not freed by MPI_Wait')
        call check_status(status, left, tag, count)
        if (buf(1) /= lap) call fail('wrong lap')
        if (buf(2) /= nprocs - 1) call fail('wrong hop count')
     else
        buf = -1
        call MPI_Recv(buf, big + 2, MPI_INTEGER, left, tag, MPI_COMM_WORLD, status, ierr)
        call check_status(status, left, tag, count)
        if (buf(1) /= lap .or. buf(2) /= rank - 1) call fail('wrong token')
        buf(2) = buf(2) + 1
        call MPI_Send(buf, count, MPI_INTEGER, right, tag, MPI_COMM_WORLD, ierr)
     end if
     do i = 3, count
        if (buf(i) /= lap * 1000 + i) call fail('wrong payload')
     end do
  end do

  ! MPI_Sendrecv around the ring with MPI_STATUS_IGNORE, then MPI_Probe + MPI_Get_count.
  x = rank
  y = -1
  call MPI_Sendrecv(x, 1, MPI_INTEGER, right, 7, y, 1, MPI_INTEGER, left, 7, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (y /= left) call fail('MPI_Sendrecv')
  call MPI_Isend(buf, 3, MPI_INTEGER, right, 8, MPI_COMM_WORLD, req, ierr)
  call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
  call check_status(status, left, 8, 3)
  call MPI_Recv(sbuf, 3, MPI_INTEGER, status(MPI_SOURCE), status(MPI_TAG), MPI_COMM_WORLD, &
                status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  if (n /= 3) call fail('MPI_Get_count after MPI_Probe')
  call MPI_Wait(req, status, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'ring: OK'
  call MPI_Finalize(ierr)

contains

  subroutine check_status(st, source, tg, cnt)
    integer, intent(in) :: st(MPI_STATUS_SIZE), source, tg, cnt
    integer :: got, e
    if (st(MPI_SOURCE) /= source) call fail('status(MPI_SOURCE)')
    if (st(MPI_TAG) /= tg) call fail('status(MPI_TAG)')
    call MPI_Get_count(st, MPI_INTEGER, got, e)
    if (e /= MPI_SUCCESS .or. got /= cnt) call fail('MPI_Get_count')
  end subroutine check_status

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program ring
