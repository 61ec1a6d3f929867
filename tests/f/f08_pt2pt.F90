! f08_pt2pt: point-to-point through `use mpi_f08`: a ring with MPI_Send/MPI_Recv checking
! TYPE(MPI_Status) fields and MPI_Get_count; MPI_Sendrecv with MPI_STATUS_IGNORE;
! MPI_Probe + MPI_Get_count; Irecv/Isend + MPI_Waitall with MPI_STATUSES_IGNORE and with
! an array of statuses; MPI_F_sync_reg; MPI_Test until done; ierror mostly left out.
program f08_pt2pt
  use mpi_f08
  implicit none
  integer, parameter :: big = 50000
  integer :: rank, nprocs, left, right, i, n, ierr
  integer, allocatable :: sbuf(:), rbuf(:)
  double precision :: d(3), e(3)
  type(MPI_Status) :: st, sts(4)
  type(MPI_Request) :: reqs(4)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (ierr /= MPI_SUCCESS) call fail('ierror of MPI_Comm_size')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  allocate(sbuf(big), rbuf(big))
  do i = 1, big
     sbuf(i) = rank * 100000 + i
  end do

  ! Blocking ring, small then large (rendezvous) messages.
  do n = 3, big, big - 3
     rbuf = -1
     if (mod(rank, 2) == 0) then
        call MPI_Send(sbuf, n, MPI_INTEGER, right, 10 + n, MPI_COMM_WORLD)
        call MPI_Recv(rbuf, big, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, st)
     else
        call MPI_Recv(rbuf, big, MPI_INTEGER, MPI_ANY_SOURCE, 10 + n, MPI_COMM_WORLD, st)
        call MPI_Send(sbuf, n, MPI_INTEGER, right, 10 + n, MPI_COMM_WORLD)
     end if
     call check_status(st, left, 10 + n, n)
     do i = 1, n
        if (rbuf(i) /= left * 100000 + i) call fail('ring payload')
     end do
  end do

  ! Sendrecv of DOUBLE PRECISION with MPI_STATUS_IGNORE.
  d = [1d0, 2d0, 3d0] * rank
  e = -1
  call MPI_Sendrecv(d, 3, MPI_DOUBLE_PRECISION, right, 7, e, 3, MPI_DOUBLE_PRECISION, left, 7, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (any(e /= [1d0, 2d0, 3d0] * left)) call fail('MPI_Sendrecv')

  ! Probe, then receive what the probe found.
  call MPI_Send(sbuf, 5, MPI_INTEGER, right, 8, MPI_COMM_WORLD)
  call MPI_Probe(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, st)
  call check_status(st, left, 8, 5)
  call MPI_Recv(rbuf, 5, MPI_INTEGER, st%MPI_SOURCE, st%MPI_TAG, MPI_COMM_WORLD, st)
  if (st%MPI_SOURCE /= left) call fail('MPI_Recv after MPI_Probe')

  ! Nonblocking both ways, Waitall with MPI_STATUSES_IGNORE, then with statuses.
  rbuf = -1
  call MPI_Irecv(rbuf, 4, MPI_INTEGER, left, 20, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(rbuf(5), 4, MPI_INTEGER, right, 21, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(sbuf, 4, MPI_INTEGER, right, 20, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(sbuf(11), 4, MPI_INTEGER, left, 21, MPI_COMM_WORLD, reqs(4))
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE)
  call MPI_F_sync_reg(rbuf)
  do i = 1, 4
     if (reqs(i) /= MPI_REQUEST_NULL) call fail('request not freed by MPI_Waitall')
     if (rbuf(i) /= left * 100000 + i) call fail('Irecv from left')
     if (rbuf(4 + i) /= right * 100000 + 10 + i) call fail('Irecv from right')
  end do
  call MPI_Irecv(rbuf, 2, MPI_INTEGER, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 2, MPI_INTEGER, right, 30, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, sts)
  call check_status(sts(1), left, 30, 2)

  ! MPI_Test until done; a freed request is MPI_REQUEST_NULL.
  call MPI_Isend(sbuf, 1, MPI_INTEGER, right, 40, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv(rbuf, 1, MPI_INTEGER, left, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  flag = .false.
  do while (.not. flag)
     call MPI_Test(reqs(1), flag, st)
  end do
  if (reqs(1) /= MPI_REQUEST_NULL) call fail('MPI_Test did not free the request')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_pt2pt: OK'
  call MPI_Finalize()

contains

  subroutine check_status(s, source, tag, cnt)
    type(MPI_Status), intent(in) :: s
    integer, intent(in) :: source, tag, cnt
    integer :: got
    if (s%MPI_SOURCE /= source) call fail('status%MPI_SOURCE')
    if (s%MPI_TAG /= tag) call fail('status%MPI_TAG')
    call MPI_Get_count(s, MPI_INTEGER, got)
    if (got /= cnt) call fail('MPI_Get_count')
  end subroutine check_status

#include "f08_fail.h"
end program f08_pt2pt
