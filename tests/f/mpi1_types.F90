! mpi1_types: the deprecated MPI-1 datatype routines take plain INTEGER addresses in
! Fortran (MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT displacements, the MPI_TYPE_HVECTOR
! stride, the MPI_TYPE_EXTENT/LB/UB results), not INTEGER(KIND=MPI_ADDRESS_KIND): the
! library must read and write 4-byte integers there (MPICH's hindex1f, get_elem_u).
program mpi1_types
#include "mpi_interface.h"
  integer :: ierr, rank, t1, t2, t3, i, status(MPI_STATUS_SIZE)
  integer :: blens(3), disps(3), types(3), extent, lb, ub
  ! Guards around the INTEGER results: a write of 8 bytes would clobber one of them.
  integer :: guard(4)
  integer :: sbuf(10), rbuf(10)
  common /g/ extent, guard

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! Blocks of 1 and 2 integers at byte displacements 0 and 16: extent 24.
  blens = (/ 1, 2, 0 /)
  disps = (/ 0, 16, 0 /)
  call MPI_Type_hindexed(2, blens, disps, MPI_INTEGER, t1, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Type_hindexed')
  call MPI_Type_commit(t1, ierr)
  guard = 77
  extent = -1
  call MPI_Type_extent(t1, extent, ierr)
  if (extent /= 24) call fail('MPI_Type_extent of the hindexed type')
  if (any(guard /= 77)) call fail('MPI_Type_extent wrote past its INTEGER')
  call MPI_Type_lb(t1, lb, ierr)
  call MPI_Type_ub(t1, ub, ierr)
  if (lb /= 0 .or. ub /= 24) call fail('MPI_Type_lb/MPI_Type_ub')

  ! Send it to ourselves: elements 1, 5 and 6.
  sbuf = (/ (i, i = 1, 10) /)
  rbuf = -1
  call MPI_Sendrecv(sbuf, 1, t1, rank, 3, rbuf, 3, MPI_INTEGER, rank, 3, MPI_COMM_WORLD, &
                    status, ierr)
  if (rbuf(1) /= 1 .or. rbuf(2) /= 5 .or. rbuf(3) /= 6 .or. rbuf(4) /= -1) &
      call fail('data of the hindexed type')

  ! Two integers 12 bytes apart: extent 16.
  call MPI_Type_hvector(2, 1, 12, MPI_INTEGER, t2, ierr)
  call MPI_Type_extent(t2, extent, ierr)
  if (extent /= 16) call fail('MPI_Type_extent of the hvector type')

  ! A struct of the hvector type at 4 and one integer at 32: extent 36, lb 4.
  blens = (/ 1, 1, 0 /)
  disps = (/ 4, 32, 0 /)
  types = (/ t2, MPI_INTEGER, MPI_INTEGER /)
  call MPI_Type_struct(2, blens, disps, types, t3, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Type_struct')
  call MPI_Type_extent(t3, extent, ierr)
  call MPI_Type_lb(t3, lb, ierr)
  if (extent /= 32 .or. lb /= 4) call fail('extent/lb of the struct type')

  call MPI_Type_free(t1, ierr)
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t3, ierr)
  if (rank == 0) print '(a)', 'mpi1_types: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program mpi1_types
