! f08_coll: collectives and communicators through `use mpi_f08`: Bcast, Allreduce and
! Gather with MPI_IN_PLACE, Allgather, MPI_Comm_split/MPI_Comm_dup/MPI_Comm_compare with
! handles compared by == and /=, a vector datatype, and MPI_Op_create with an f08
! MPI_User_function (TYPE(C_PTR), VALUE vectors) in MPI_Allreduce and MPI_Reduce_local.
module f08_coll_ops
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  use mpi_f08
  implicit none
contains
  ! Concatenation of decimal digit strings, each held as (value, 10**digits) in two
  ! integers: associative but not commutative, so the result shows the rank order.
  subroutine concat(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    if (datatype /= MPI_INTEGER) stop 'concat: wrong datatype'
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len - 1, 2
       b(i) = a(i) * b(i + 1) + b(i)
       b(i + 1) = a(i + 1) * b(i + 1)
    end do
  end subroutine concat
end module f08_coll_ops

program f08_coll
  use f08_coll_ops
  implicit none
  integer :: rank, nprocs, i, j, key, res, srank, ssize, expect
  integer :: v(4), w(4), g(2, 0:3), a(12)
  integer, allocatable :: all(:)
  double precision :: x(2)
  type(MPI_Comm) :: half, dup, comm
  type(MPI_Datatype) :: vec
  type(MPI_Op) :: op

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  comm = MPI_COMM_WORLD
  if (comm /= MPI_COMM_WORLD .or. .not. (comm == MPI_COMM_WORLD)) call fail('handle ==')

  ! Bcast from the last rank.
  v = 0
  if (rank == nprocs - 1) v = [5, 6, 7, 8]
  call MPI_Bcast(v, 4, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD)
  if (any(v /= [5, 6, 7, 8])) call fail('MPI_Bcast')

  ! Allreduce in place (integers and doubles).
  v = [rank, 1, -rank, 2 * rank]
  call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  expect = nprocs * (nprocs - 1) / 2
  if (any(v /= [expect, nprocs, -expect, 2 * expect])) call fail('MPI_Allreduce in place')
  x = [dble(rank), -dble(rank)]
  call MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  if (x(1) /= nprocs - 1 .or. x(2) /= 0) call fail('MPI_Allreduce MPI_MAX')

  ! Gather with MPI_IN_PLACE at the root, Allgather.
  g = -1
  g(:, rank) = [rank, rank * rank]
  if (rank == 0) then
     call MPI_Gather(MPI_IN_PLACE, 2, MPI_INTEGER, g, 2, MPI_INTEGER, 0, MPI_COMM_WORLD)
     do i = 0, nprocs - 1
        if (g(1, i) /= i .or. g(2, i) /= i * i) call fail('MPI_Gather in place')
     end do
  else
     call MPI_Gather(g(:, rank), 2, MPI_INTEGER, g, 2, MPI_INTEGER, 0, MPI_COMM_WORLD)
  end if
  allocate(all(nprocs))
  call MPI_Allgather(rank + 1, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD)
  if (any(all /= [(i, i = 1, nprocs)])) call fail('MPI_Allgather')

  ! Split into even and odd ranks (key reverses the order), dup, compare.
  key = nprocs - rank
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), key, half)
  if (half == MPI_COMM_NULL) call fail('MPI_Comm_split gave MPI_COMM_NULL')
  call MPI_Comm_rank(half, srank)
  call MPI_Comm_size(half, ssize)
  if (ssize /= (nprocs + 1 - mod(rank, 2)) / 2) call fail('split size')
  if (srank /= ssize - 1 - rank / 2) call fail('split rank (key order)')
  call MPI_Comm_dup(half, dup)
  if (dup == half) call fail('MPI_Comm_dup gave the same handle')
  call MPI_Comm_compare(half, dup, res)
  if (res /= MPI_CONGRUENT) call fail('MPI_Comm_compare of a dup')
  call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, res)
  if (res /= MPI_IDENT) call fail('MPI_Comm_compare ident')
  call MPI_Allreduce(rank, res, 1, MPI_INTEGER, MPI_SUM, dup)
  expect = 0
  do i = mod(rank, 2), nprocs - 1, 2
     expect = expect + i
  end do
  if (res /= expect) call fail('Allreduce on the split dup')
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
  if (half /= MPI_COMM_NULL .or. dup /= MPI_COMM_NULL) call fail('MPI_Comm_free')

  ! A vector type: every third integer of 12, sent from rank 0 to the last.
  call MPI_Type_vector(4, 1, 3, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  call MPI_Type_size(vec, res)
  if (res /= 16) call fail('MPI_Type_size of the vector')
  a = [(i, i = 1, 12)]
  w = -1
  if (nprocs > 1) then
     if (rank == 0) call MPI_Send(a, 1, vec, nprocs - 1, 3, MPI_COMM_WORLD)
     if (rank == nprocs - 1) then
        call MPI_Recv(w, 4, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        if (any(w /= [1, 4, 7, 10])) call fail('vector type payload')
     end if
  end if
  call MPI_Type_free(vec)
  if (vec /= MPI_DATATYPE_NULL) call fail('MPI_Type_free')

  ! A non-commutative user operation: the digits of ranks 1..n in rank order (12, 123, ...).
  call MPI_Op_create(concat, .false., op)
  v(1:2) = [rank + 1, 10]
  call MPI_Allreduce(v, w, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
  expect = 0
  do j = 0, nprocs - 1
     expect = expect * 10 + j + 1
  end do
  if (w(1) /= expect .or. w(2) /= 10**nprocs) call fail('MPI_Allreduce with a user op')
  v = [1, 10, 34, 100]
  w = [2, 10, 5, 10]
  call MPI_Reduce_local(v, w, 4, MPI_INTEGER, op)
  if (any(w /= [12, 100, 345, 1000])) call fail('MPI_Reduce_local with a user op')
  call MPI_Op_free(op)
  if (op /= MPI_OP_NULL) call fail('MPI_Op_free')

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_coll: OK'
  call MPI_Finalize()

contains

#include "f08_fail.h"
end program f08_coll
