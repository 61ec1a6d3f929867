! match_size: MPI_TYPE_MATCH_SIZE, its Fortran use case: the MPI type of a variable found
! from its kind's byte size (STORAGE_SIZE), for REAL(4/8), INTEGER(1/2/4/8) and
! COMPLEX(4/8); MPI_TYPE_SIZE of each result is that size, the REAL(8), INTEGER(8) and
! COMPLEX(8) types carry an MPI_ALLREDUCE sum, and a size no type has (3 bytes) or an
! unknown type class give MPI_ERR_ARG under MPI_ERRORS_RETURN.
program match_size
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, cls
  integer :: treal8, tint8, tcplx8, t
  real(kind=4) :: r4
  real(kind=8) :: r8, s8
  integer(kind=1) :: i1
  integer(kind=2) :: i2
  integer(kind=4) :: i4
  integer(kind=8) :: i8, si8
  complex(kind=4) :: c4
  complex(kind=8) :: c8, sc8

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call check(MPI_TYPECLASS_REAL, storage_size(r4) / 8, t)
  call check(MPI_TYPECLASS_REAL, storage_size(r8) / 8, treal8)
  call check(MPI_TYPECLASS_INTEGER, storage_size(i1) / 8, t)
  call check(MPI_TYPECLASS_INTEGER, storage_size(i2) / 8, t)
  call check(MPI_TYPECLASS_INTEGER, storage_size(i4) / 8, t)
  call check(MPI_TYPECLASS_INTEGER, storage_size(i8) / 8, tint8)
  call check(MPI_TYPECLASS_COMPLEX, storage_size(c4) / 8, t)
  call check(MPI_TYPECLASS_COMPLEX, storage_size(c8) / 8, tcplx8)

  r8 = 0.5d0 + rank
  i8 = 3000000000_8 + rank
  c8 = cmplx(rank, -2 * rank, kind=8)
  call MPI_Allreduce(r8, s8, 1, treal8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (s8 /= 0.5d0 * nprocs + nprocs * (nprocs - 1) / 2) stop 'REAL(8) sum through the matched type is wrong'
  call MPI_Allreduce(i8, si8, 1, tint8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (si8 /= 3000000000_8 * nprocs + nprocs * (nprocs - 1) / 2) stop 'INTEGER(8) sum through the matched type is wrong'
  call MPI_Allreduce(c8, sc8, 1, tcplx8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (sc8 /= cmplx(nprocs * (nprocs - 1) / 2, -nprocs * (nprocs - 1), kind=8)) &
    stop 'COMPLEX(8) sum through the matched type is wrong'

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'a 3-byte REAL did not give MPI_ERR_ARG'
  call MPI_Type_match_size(99, 4, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'type class 99 did not give MPI_ERR_ARG'

  if (rank == 0) print '(a)', 'match_size: OK'
  call MPI_Finalize(ierr)

contains

  ! The type of class `tc` and `bytes` bytes must exist and be `bytes` long.
  subroutine check(tc, bytes, dt)
    integer, intent(in) :: tc, bytes
    integer, intent(out) :: dt
    integer :: sz, e
    call MPI_Type_match_size(tc, bytes, dt, e)
    if (e /= MPI_SUCCESS) stop 'MPI_TYPE_MATCH_SIZE failed'
    call MPI_Type_size(dt, sz, e)
    if (sz /= bytes) then
      print *, 'class', tc, 'bytes', bytes, ': MPI_TYPE_SIZE', sz
      stop 'matched type has the wrong size'
    end if
  end subroutine check
end program match_size
