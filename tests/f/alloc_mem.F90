! alloc_mem: MPI_ALLOC_MEM returns an address in an INTEGER(KIND=MPI_ADDRESS_KIND),
! turned into an array with C_F_POINTER; the array carries a message to the next rank
! (4 MiB: OxMPI maps such blocks for huge pages), and MPI_FREE_MEM takes the array.
program alloc_mem
  use iso_c_binding
#include "mpi_interface.h"
  integer, parameter :: n = 524288
  integer :: ierr, rank, nprocs, i, left, right, status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: bytes, base_s, base_r
  double precision, pointer :: s(:), r(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  bytes = 8_MPI_ADDRESS_KIND * n
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, base_s, ierr)
  if (ierr /= MPI_SUCCESS .or. base_s == 0) stop 'MPI_Alloc_mem failed (send)'
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, base_r, ierr)
  if (ierr /= MPI_SUCCESS .or. base_r == 0) stop 'MPI_Alloc_mem failed (recv)'
  call c_f_pointer(transfer(base_s, c_null_ptr), s, [n])
  call c_f_pointer(transfer(base_r, c_null_ptr), r, [n])
  do i = 1, n
    s(i) = rank * 1.0d6 + i
  end do
  r = -1.0d0
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call MPI_Sendrecv(s, n, MPI_DOUBLE_PRECISION, right, 5, r, n, MPI_DOUBLE_PRECISION, left, 5, &
                    MPI_COMM_WORLD, status, ierr)
  do i = 1, n
    if (r(i) /= left * 1.0d6 + i) then
      print *, 'rank', rank, ': element', i, 'is', r(i)
      stop 'wrong data in an MPI_Alloc_mem buffer'
    end if
  end do
  call MPI_Free_mem(s, ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Free_mem failed (send)'
  call MPI_Free_mem(r, ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Free_mem failed (recv)'
  if (rank == 0) print '(a)', 'alloc_mem: OK'
  call MPI_Finalize(ierr)
end program alloc_mem
