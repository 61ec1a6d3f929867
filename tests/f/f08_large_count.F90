! f08_large_count: the MPI-4.0 large-count routines through `use mpi_f08`, where MPI_X with
! INTEGER(KIND=MPI_COUNT_KIND) counts resolves to the specific of MPI_X_c: point-to-point,
! nonblocking, Get_count and Get_elements, collectives with count and displacement arrays,
! datatypes larger than 2**31 bytes (their size and extent only exist as MPI_Count),
! PMPI_ names, the explicitly named MPI_Type_get_extent_c, a user reduction made by
! MPI_Op_create_c (its length argument an MPI_Count), and MPI_ERR_COUNT for a negative
! count. Default-INTEGER calls sit beside them in one program (the generic picks).
! A module procedure, not an internal one: passing an internal procedure needs a trampoline on
! an executable stack.
module f08_large_count_ops
  use mpi_f08
  implicit none
contains
  subroutine maxabs_c(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer(kind=MPI_COUNT_KIND) :: k
    if (datatype /= MPI_INTEGER) error stop 'MPI_Op_create_c callback: wrong datatype'
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do k = 1, len
       if (abs(a(k)) > abs(b(k))) b(k) = a(k)
    end do
  end subroutine maxabs_c
end module f08_large_count_ops

program f08_large_count
  use mpi_f08
  use f08_large_count_ops
  implicit none
  integer, parameter :: ck = MPI_COUNT_KIND, ak = MPI_ADDRESS_KIND
  integer :: rank, nprocs, left, right, i, ierr, isize
  integer(kind=ck) :: n, cnt, sz, lb, ext, big
  integer(kind=ck), allocatable :: counts(:)
  integer(kind=ak), allocatable :: displs(:)
  integer(kind=ak) :: alb, aext
  integer, allocatable :: sbuf(:), rbuf(:), all(:)
  double precision :: dsum(2)
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: huge_t
  type(MPI_Op) :: maxabs_op
  integer :: ivals(3), ires(3)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  allocate(sbuf(1000), rbuf(1000))
  do i = 1, 1000
     sbuf(i) = rank * 10000 + i
  end do

  ! Blocking ring with MPI_Count counts, then MPI_Get_count into an MPI_Count.
  n = 777_ck
  rbuf = -1
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 3, rbuf, 1000_ck, MPI_INTEGER, left, 3, &
                    MPI_COMM_WORLD, st, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Sendrecv (large count)')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (cnt /= n) call fail('MPI_Get_count into INTEGER(MPI_COUNT_KIND)')
  call MPI_Get_elements(st, MPI_INTEGER, cnt)
  if (cnt /= n) call fail('MPI_Get_elements into INTEGER(MPI_COUNT_KIND)')
  do i = 1, 777
     if (rbuf(i) /= left * 10000 + i) call fail('MPI_Sendrecv payload')
  end do
  if (rbuf(778) /= -1) call fail('MPI_Sendrecv wrote past the message')
  ! The default-INTEGER forms in the same program.
  call MPI_Get_count(st, MPI_INTEGER, isize)
  if (isize /= 777) call fail('MPI_Get_count into INTEGER')

  ! Nonblocking, PMPI_ names, blocking send/receive.
  rbuf = -1
  call MPI_Irecv(rbuf, 1000_ck, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1))
  call PMPI_Isend(sbuf, 500_ck, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  if (rbuf(500) /= left * 10000 + 500 .or. rbuf(501) /= -1) call fail('MPI_Irecv/PMPI_Isend')
  if (nprocs == 1) then  ! a blocking send to oneself before the receive is unsafe
     call MPI_Sendrecv(sbuf, 9_ck, MPI_INTEGER, 0, 5, rbuf, 9_ck, MPI_INTEGER, 0, 5, &
                       MPI_COMM_WORLD, st)
  else if (mod(rank, 2) == 0) then
     call PMPI_Send(sbuf, 9_ck, MPI_INTEGER, right, 5, MPI_COMM_WORLD)
     call MPI_Recv(rbuf, 9_ck, MPI_INTEGER, left, 5, MPI_COMM_WORLD, st)
  else
     call MPI_Recv(rbuf, 9_ck, MPI_INTEGER, left, 5, MPI_COMM_WORLD, st)
     call PMPI_Send(sbuf, 9_ck, MPI_INTEGER, right, 5, MPI_COMM_WORLD)
  end if
  if (st%MPI_SOURCE /= left .or. rbuf(9) /= left * 10000 + 9) call fail('MPI_Send/MPI_Recv')

  ! Collectives: Bcast, Allreduce, Allgatherv with MPI_Count counts and MPI_Aint displs.
  rbuf = rank
  call MPI_Bcast(rbuf, 10_ck, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD)
  if (any(rbuf(1:10) /= nprocs - 1) .or. rbuf(11) /= rank) call fail('MPI_Bcast')
  call MPI_Allreduce([dble(rank), 1d0], dsum, 2_ck, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (dsum(1) /= dble(nprocs * (nprocs - 1) / 2) .or. dsum(2) /= dble(nprocs)) &
       call fail('MPI_Allreduce')
  allocate(counts(nprocs), displs(nprocs), all(nprocs * (nprocs + 1) / 2 + 2 * nprocs))
  do i = 1, nprocs
     counts(i) = i
     displs(i) = (i - 1) * i / 2 + 2 * (i - 1)  ! two elements of gap between blocks
  end do
  all = -7
  call MPI_Allgatherv(sbuf, int(rank + 1, ck), MPI_INTEGER, all, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Allgatherv (large count) ierror')
  do i = 1, nprocs
     if (all(displs(i) + 1) /= (i - 1) * 10000 + 1) call fail('MPI_Allgatherv first element')
     if (all(displs(i) + i) /= (i - 1) * 10000 + i) call fail('MPI_Allgatherv last element')
     if (i < nprocs) then
        if (all(displs(i) + i + 1) /= -7) call fail('MPI_Allgatherv wrote into a gap')
     end if
  end do

  ! A user reduction through MPI_Op_create_c: the largest absolute value, sign kept.
  call MPI_Op_create_c(maxabs_c, .true., maxabs_op, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Op_create_c')
  ivals = [rank, -rank, 7 * (rank + 1)]
  if (mod(rank, 2) == 1) ivals(1) = -rank
  ires = 0
  call MPI_Allreduce(ivals, ires, 3_ck, MPI_INTEGER, maxabs_op, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Allreduce with an MPI_Op_create_c op')
  i = nprocs - 1
  if (mod(i, 2) == 1) i = -i
  if (ires(1) /= i .or. ires(2) /= -(nprocs - 1) .or. ires(3) /= 7 * nprocs) &
       call fail('MPI_Op_create_c reduction result')
  call PMPI_Op_free(maxabs_op)
  if (maxabs_op /= MPI_OP_NULL) call fail('MPI_Op_free of an MPI_Op_create_c op')

  ! A datatype of 2**31 + 3 bytes: its size and extent only fit an MPI_Count.
  big = 2_ck**31 + 3
  call MPI_Type_contiguous(big, MPI_BYTE, huge_t)
  call MPI_Type_commit(huge_t)
  call MPI_Type_size(huge_t, sz)
  if (sz /= big) call fail('MPI_Type_size into INTEGER(MPI_COUNT_KIND)')
  call MPI_Type_size(huge_t, isize)
  if (isize /= MPI_UNDEFINED) call fail('MPI_Type_size into INTEGER: MPI_UNDEFINED expected')
  call MPI_Type_get_extent_c(huge_t, lb, ext)
  if (lb /= 0 .or. ext /= big) call fail('MPI_Type_get_extent_c')
  call MPI_Type_get_extent(huge_t, alb, aext)
  if (alb /= 0 .or. aext /= big) call fail('MPI_Type_get_extent')
  ! Sending one of them to MPI_PROC_NULL touches no memory.
  call MPI_Send(sbuf, 1_ck, huge_t, MPI_PROC_NULL, 6, MPI_COMM_WORLD)
  call MPI_Type_free(huge_t)

  ! A negative count is MPI_ERR_COUNT (errors returned through ierror).
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(sbuf, -1_ck, MPI_INTEGER, right, 7, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, i)
  if (i /= MPI_ERR_COUNT) call fail('negative large count: MPI_ERR_COUNT expected')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_large_count: OK'
  call MPI_Finalize()
contains
#include "f08_fail.h"
end program f08_large_count
