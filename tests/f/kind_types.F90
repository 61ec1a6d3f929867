! kind_types: MPI types for Fortran kinds.
! MPI_TYPE_MATCH_SIZE: the MPI type of a variable found from its kind's byte size
! (STORAGE_SIZE), for REAL(4/8), INTEGER(1/2/4/8) and COMPLEX(4/8); MPI_TYPE_SIZE of each
! result is that size, the REAL(8), INTEGER(8) and COMPLEX(8) types carry an MPI_ALLREDUCE
! sum, and a size no type has (3 bytes) or an unknown type class give MPI_ERR_ARG.
! MPI_TYPE_CREATE_F90_REAL/COMPLEX/INTEGER: the type of SELECTED_REAL_KIND(p, r) and
! SELECTED_INT_KIND(r) variables has their size, the same arguments give the same handle,
! the envelope is the F90 combiner with the arguments, a type built on one gives it back in
! MPI_TYPE_GET_CONTENTS, a sum goes through it, MPI_TYPE_FREE refuses it (MPI_ERR_TYPE),
! and p = r = MPI_UNDEFINED or a precision no kind has give MPI_ERR_ARG.
program kind_types
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
  integer, parameter :: dp = selected_real_kind(15, 307), i9 = selected_int_kind(9)
  integer, parameter :: i18 = selected_int_kind(18)
  real(kind=dp) :: xd, sxd
  complex(kind=dp) :: zd
  integer(kind=i9) :: k9
  integer(kind=i18) :: k18
  integer :: tf, tf2, tc, ti, tv, ni, na, nd, comb, args(2), types(1)
  integer(kind=MPI_ADDRESS_KIND) :: addrs(1)

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

  ! Parameterized types: sizes of the kinds they stand for.
  call f90(.false., 15, 307, storage_size(xd) / 8, tf)
  call f90(.false., MPI_UNDEFINED, 307, storage_size(xd) / 8, t)
  call f90(.false., 6, MPI_UNDEFINED, storage_size(r4) / 8, t)
  call f90(.true., 15, 307, storage_size(zd) / 8, tc)
  call MPI_Type_create_f90_integer(9, ti, ierr)
  call expect_size(ti, storage_size(k9) / 8)
  call MPI_Type_create_f90_integer(18, t, ierr)
  call expect_size(t, storage_size(k18) / 8)
  call MPI_Type_create_f90_real(15, 307, tf2, ierr)
  if (tf2 /= tf) stop 'the same (p, r) gave another handle'
  call MPI_Type_get_envelope(tf, ni, na, nd, comb, ierr)
  if (comb /= MPI_COMBINER_F90_REAL .or. ni /= 2 .or. na /= 0 .or. nd /= 0) stop 'wrong envelope of an F90 REAL type'
  call MPI_Type_get_contents(tf, 2, 0, 0, args, addrs, types, ierr)
  if (args(1) /= 15 .or. args(2) /= 307) stop 'wrong contents of an F90 REAL type'
  call MPI_Type_get_envelope(ti, ni, na, nd, comb, ierr)
  if (comb /= MPI_COMBINER_F90_INTEGER .or. ni /= 1) stop 'wrong envelope of an F90 INTEGER type'
  call MPI_Type_contiguous(3, tf, tv, ierr)
  call MPI_Type_get_contents(tv, 1, 0, 1, args, addrs, types, ierr)
  if (types(1) /= tf) stop 'MPI_TYPE_GET_CONTENTS did not give back the F90 type itself'
  call MPI_Type_free(tv, ierr)
  xd = 0.25_dp + rank
  call MPI_Allreduce(xd, sxd, 1, tf, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (sxd /= 0.25_dp * nprocs + nprocs * (nprocs - 1) / 2) stop 'sum through an F90 REAL type is wrong'

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  t = tf
  call MPI_Type_free(t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_TYPE) stop 'MPI_TYPE_FREE of an F90 type did not give MPI_ERR_TYPE'
  call MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'p = r = MPI_UNDEFINED did not give MPI_ERR_ARG'
  call MPI_Type_create_f90_real(40, 10, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'a 40-digit REAL did not give MPI_ERR_ARG'

  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'a 3-byte REAL did not give MPI_ERR_ARG'
  call MPI_Type_match_size(99, 4, t, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  if (cls /= MPI_ERR_ARG) stop 'type class 99 did not give MPI_ERR_ARG'

  if (rank == 0) print '(a)', 'kind_types: OK'
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

  ! MPI_TYPE_CREATE_F90_REAL (or _COMPLEX) with (p, r) must succeed with a type of
  ! `bytes` bytes.
  subroutine f90(cplx, p, r, bytes, dt)
    logical, intent(in) :: cplx
    integer, intent(in) :: p, r, bytes
    integer, intent(out) :: dt
    integer :: e
    if (cplx) then
      call MPI_Type_create_f90_complex(p, r, dt, e)
    else
      call MPI_Type_create_f90_real(p, r, dt, e)
    end if
    if (e /= MPI_SUCCESS) stop 'MPI_TYPE_CREATE_F90_* failed'
    call expect_size(dt, bytes)
  end subroutine f90

  subroutine expect_size(dt, bytes)
    integer, intent(in) :: dt, bytes
    integer :: sz, e
    call MPI_Type_size(dt, sz, e)
    if (sz /= bytes) then
      print *, 'F90 type of', bytes, 'bytes: MPI_TYPE_SIZE', sz
      stop 'F90 type has the wrong size'
    end if
  end subroutine expect_size
end program kind_types
