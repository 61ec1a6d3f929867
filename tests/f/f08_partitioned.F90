! f08_partitioned: MPI-4.0 partitioned communication through `use mpi_f08`. Ranks are
! paired (0-1, 2-3; an odd last rank talks to itself); each sends 6 partitions of 5
! doubles (MPI_Pready, MPI_Pready_range, MPI_Pready_list) and receives them as 3 of 10,
! polling MPI_Parrived, for 2 rounds; TYPE(MPI_Request) handles, MPI_Startall, MPI_Waitall.
program f08_partitioned
  use mpi_f08
  implicit none
  integer, parameter :: np = 6, each = 5, n = np * each
  integer(kind=MPI_COUNT_KIND) :: scount, rcount
  integer :: rank, nprocs, peer, i, p, round, list(2), ierr
  double precision :: sb(n), rb(n)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: sts(2)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = rank
  scount = each
  rcount = 2 * each
  call MPI_Psend_init(sb, np, scount, MPI_DOUBLE_PRECISION, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1))
  call MPI_Precv_init(rb, np / 2, rcount, MPI_DOUBLE_PRECISION, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &
                      reqs(2), ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Precv_init')
  do round = 1, 2
     sb = (/ (rank * 1000.0d0 + round * 100 + i, i = 1, n) /)
     rb = -1
     call MPI_Startall(2, reqs)
     call MPI_Pready(5, reqs(1))
     call MPI_Pready_range(0, 2, reqs(1))
     list = (/ 4, 3 /)
     call MPI_Pready_list(2, list, reqs(1), ierr)
     if (ierr /= MPI_SUCCESS) call fail('MPI_Pready_list')
     do p = 0, np / 2 - 1
        flag = .false.
        do while (.not. flag)
           call MPI_Parrived(reqs(2), p, flag)
        end do
     end do
     call MPI_Waitall(2, reqs, sts)
     if (sts(2)%MPI_SOURCE /= peer .or. sts(2)%MPI_TAG /= 8) call fail('status')
     do i = 1, n
        if (rb(i) /= peer * 1000.0d0 + round * 100 + i) call fail('data')
     end do
  end do
  call MPI_Request_free(reqs(1))
  call MPI_Request_free(reqs(2))
  if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) call fail('MPI_Request_free')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_partitioned: OK'
  call MPI_Finalize()
contains
#include "f08_fail.h"
end program f08_partitioned
