! hello_f: the Fortran "hello world" of OxMPI (`use mpi`).
!   mpifort -o hello_f examples/hello_f.f90 && mpirun -n 4 ./hello_f
program hello_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, namelen, total
  character(len=MPI_MAX_PROCESSOR_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Get_processor_name(name, namelen, ierr)
  print '(a,i0,a,i0,a,a)', 'Hello from Fortran, rank ', rank, ' of ', nprocs, ' on ', name(1:namelen)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'sum of ranks: ', total
  call MPI_Finalize(ierr)
end program hello_f
