! f08_attr_err: attributes, error handling and MPI_Sizeof through `use mpi_f08`:
! a keyval with MPI_COMM_DUP_FN and one with a user copy callback (TYPE(MPI_Comm),
! INTEGER(KIND=MPI_ADDRESS_KIND) values, LOGICAL flag) and a user delete callback, seen
! through MPI_Comm_dup and MPI_Comm_free; MPI_COMM_NULL_COPY_FN; MPI_ERRORS_RETURN with
! ierror giving MPI_ERR_RANK on a bad rank and MPI_ERR_COMM on MPI_COMM_NULL; an f08 error
! handler; MPI_Sizeof of every kind; MPI_Status_f2f08/f082f; MPI_Wtime/MPI_Wtick.
module f08_attr_callbacks
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, handler_calls = 0, handler_code = 0
contains
  ! Copies the value plus one and counts; checks it got the keyval's extra_state.
  subroutine plus_one_copy(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                           attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    if (extra_state /= 4242 .or. oldcomm == MPI_COMM_NULL) then
       ierror = MPI_ERR_OTHER
       return
    end if
    attribute_val_out = attribute_val_in + 1
    flag = .true.
    copies = copies + 1
    ierror = MPI_SUCCESS
  end subroutine plus_one_copy

  subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine count_delete

  subroutine remember_error(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    handler_calls = handler_calls + 1
    handler_code = error_code
  end subroutine remember_error
end module f08_attr_callbacks

program f08_attr_err
  use f08_attr_callbacks
  implicit none
  integer :: rank, nprocs, ierr, cls, kdup, kuser, knull, sz, buf(2), fst(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  type(MPI_Comm) :: dup
  type(MPI_Errhandler) :: eh
  type(MPI_Status) :: st
  integer(kind=1) :: i1
  integer(kind=2) :: i2(3)
  integer(kind=8) :: i8(2, 2)
  real :: r4
  double precision :: r8(5)
  complex :: c8
  complex(kind=8) :: c16(2)
  logical :: l4(2)
  character :: ch(4)
  double precision :: t0

  call MPI_Init()
  t0 = MPI_Wtime()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  ! Attributes: MPI_COMM_DUP_FN copies the value, the user callback adds one,
  ! MPI_COMM_NULL_COPY_FN drops it.
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kdup, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(plus_one_copy, count_delete, kuser, 4242_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, knull, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, 123456789012_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kuser, 100_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, knull, 7_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, kdup, val, flag)
  if (.not. flag .or. val /= 123456789012_MPI_ADDRESS_KIND) call fail('MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kuser, val, flag)
  if (.not. flag .or. val /= 101) call fail('user copy callback value')
  if (copies /= 1) call fail('user copy callback count')
  call MPI_Comm_get_attr(dup, knull, val, flag)
  if (flag) call fail('MPI_COMM_NULL_COPY_FN copied')
  call MPI_Comm_free(dup)
  if (deletes /= 1) call fail('delete callback on MPI_Comm_free')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kuser)
  if (deletes /= 2) call fail('delete callback on MPI_Comm_delete_attr')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  if (.not. flag .or. val < 32767) call fail('MPI_TAG_UB')
  call MPI_Comm_free_keyval(kdup)
  call MPI_Comm_free_keyval(kuser)
  call MPI_Comm_free_keyval(knull)

  ! Errors: MPI_ERRORS_RETURN, then ierror holds the code.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(buf, 1, MPI_INTEGER, nprocs + 3, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls)
  if (ierr == MPI_SUCCESS .or. cls /= MPI_ERR_RANK) call fail('bad rank: not MPI_ERR_RANK')
  call MPI_Recv(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_COUNT) call fail('negative count: not MPI_ERR_COUNT')
  call MPI_Barrier(MPI_COMM_NULL, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_COMM) call fail('MPI_COMM_NULL: not MPI_ERR_COMM')
  ! A user error handler written for mpi_f08.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_create_errhandler(remember_error, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(buf, 1, MPI_INTEGER, -7, 0, dup, ierr)
  call MPI_Error_class(handler_code, cls)
  if (handler_calls /= 1 .or. cls /= MPI_ERR_RANK) call fail('f08 error handler')
  call MPI_Errhandler_free(eh)
  if (eh /= MPI_ERRHANDLER_NULL) call fail('MPI_Errhandler_free')
  call MPI_Comm_free(dup)

  ! MPI_Sizeof: scalars and arrays of every kind.
  call check_size(i1, 1, 'INTEGER(1)')
  call MPI_Sizeof(i2, sz)
  if (sz /= 2) call fail('MPI_Sizeof INTEGER(2) array')
  call MPI_Sizeof(i8, sz, ierr)
  if (sz /= 8 .or. ierr /= MPI_SUCCESS) call fail('MPI_Sizeof INTEGER(8) 2-d array')
  call MPI_Sizeof(r4, sz)
  if (sz /= 4) call fail('MPI_Sizeof REAL')
  call MPI_Sizeof(r8, sz)
  if (sz /= 8) call fail('MPI_Sizeof DOUBLE PRECISION array')
  call MPI_Sizeof(c8, sz)
  if (sz /= 8) call fail('MPI_Sizeof COMPLEX')
  call MPI_Sizeof(c16, sz)
  if (sz /= 16) call fail('MPI_Sizeof COMPLEX(8) array')
  call MPI_Sizeof(l4, sz)
  if (sz /= 4) call fail('MPI_Sizeof LOGICAL array')
  call MPI_Sizeof(ch, sz)
  if (sz /= 1) call fail('MPI_Sizeof CHARACTER array')

  ! Status conversions keep the public fields.
  st%MPI_SOURCE = 3
  st%MPI_TAG = 44
  st%MPI_ERROR = MPI_ERR_TAG
  call MPI_Status_f082f(st, fst)
  if (fst(MPI_SOURCE) /= 3 .or. fst(MPI_TAG) /= 44 .or. fst(MPI_ERROR) /= MPI_ERR_TAG) &
     call fail('MPI_Status_f082f')
  fst(MPI_TAG) = 55
  call MPI_Status_f2f08(fst, st)
  if (st%MPI_TAG /= 55 .or. st%MPI_SOURCE /= 3) call fail('MPI_Status_f2f08')

  if (MPI_Wtime() < t0 .or. MPI_Wtick() <= 0) call fail('MPI_Wtime/MPI_Wtick')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_attr_err: OK'
  call MPI_Finalize()

contains

  subroutine check_size(x, want, what)
    integer(kind=1), intent(in) :: x
    integer, intent(in) :: want
    character(len=*), intent(in) :: what
    integer :: s
    call MPI_Sizeof(x, s)
    if (s /= want) call fail('MPI_Sizeof ' // what)
  end subroutine check_size

#include "f08_fail.h"
end program f08_attr_err
