! hello_f08: the Fortran 2008 bindings (`use mpi_f08`): typed handles, TYPE(MPI_Status),
! optional ierror.
!   mpifort -o hello_f08 examples/hello_f08.f90 && mpirun -n 4 ./hello_f08
program hello_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, left, right, got
  type(MPI_Comm) :: ring
  type(MPI_Status) :: status

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, ring)
  call MPI_Comm_rank(ring, rank)
  call MPI_Comm_size(ring, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 7, got, 1, MPI_INTEGER, left, 7, ring, status)
  print '(a,i0,a,i0,a,i0)', 'f08: rank ', rank, ' got ', got, ' from rank ', status%MPI_SOURCE
  if (got /= left .or. status%MPI_TAG /= 7) error stop 'wrong message'
  call MPI_Comm_free(ring)
  call MPI_Finalize()
end program hello_f08
