! vector: a column of a 2-D array is contiguous in Fortran, a row is not: MPI_Type_vector
! describes a row (stride = leading dimension). Every rank sends a row of its matrix to
! the next rank, which receives it into a column; plus MPI_Type_contiguous, extents and
! MPI_Type_get_name/MPI_Type_set_name.
program vector
#include "mpi_interface.h"
  integer, parameter :: nr = 6, nc = 5
  integer :: ierr, rank, nprocs, left, right, rowtype, i, j, sz, status(MPI_STATUS_SIZE), n
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  double precision :: a(nr, nc), b(nr, nc)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! One row: nc blocks of 1 element, nr elements apart.
  call MPI_Type_vector(nc, 1, nr, MPI_DOUBLE_PRECISION, rowtype, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Type_vector')
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, sz, ierr)
  if (sz /= 8 * nc) call fail('MPI_Type_size of the row type')
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  if (lb /= 0 .or. extent /= 8 * ((nc - 1) * nr + 1)) call fail('MPI_Type_get_extent')

  do j = 1, nc
     do i = 1, nr
        a(i, j) = rank * 1000 + i * 10 + j
     end do
  end do
  b = -1
  ! Send row 3 as the row type; receive nc contiguous values into column 2.
  call MPI_Sendrecv(a(3, 1), 1, rowtype, right, 1, b(1, 2), nc, MPI_DOUBLE_PRECISION, left, 1, &
                    MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, n, ierr)
  if (n /= nc) call fail('count of the received row')
  do j = 1, nc
     if (b(j, 2) /= left * 1000 + 3 * 10 + j) call fail('row -> column data')
  end do
  if (b(nc + 1, 2) /= -1 .or. b(1, 1) /= -1 .or. b(1, 3) /= -1) call fail('wrote outside the column')

  ! And back: a column (contiguous) into a row of the receiver.
  b = -1
  call MPI_Sendrecv(a(1, 4), nc, MPI_DOUBLE_PRECISION, right, 2, b(2, 1), 1, rowtype, left, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, nc
     if (b(2, j) /= left * 1000 + j * 10 + 4) call fail('column -> row data')
     if (b(1, j) /= -1 .or. b(3, j) /= -1) call fail('wrote outside the row')
  end do

  call MPI_Type_free(rowtype, ierr)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('MPI_Type_free did not reset the handle')
  if (rank == 0) print '(a)', 'vector: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program vector
