! hello: MPI_Init/Initialized/Finalized (LOGICAL results), rank and size, the processor name
! into a CHARACTER buffer (length, blank padding), MPI_Get_library_version and MPI_Wtime.
! Built twice: with -DUSE_MPIF_H (include 'mpif.h') and without (use mpi).
program hello
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, namelen, verlen, provided
  character(len=MPI_MAX_PROCESSOR_NAME) :: name
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  logical :: flag
  double precision :: t0, t1

  call MPI_Initialized(flag, ierr)
  if (flag .or. ierr /= MPI_SUCCESS) stop 'MPI_Initialized: true before MPI_Init'
  call MPI_Init(ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Init failed'
  call MPI_Initialized(flag, ierr)
  if (.not. flag) stop 'MPI_Initialized: false after MPI_Init'
  call MPI_Query_thread(provided, ierr)
  if (provided < MPI_THREAD_SINGLE .or. provided > MPI_THREAD_MULTIPLE) stop 'MPI_Query_thread'
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (rank < 0 .or. rank >= nprocs) stop 'bad rank'

  name = repeat('#', len(name))
  call MPI_Get_processor_name(name, namelen, ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Get_processor_name failed'
  if (namelen <= 0 .or. namelen > MPI_MAX_PROCESSOR_NAME) stop 'bad processor name length'
  if (len_trim(name) /= namelen) stop 'processor name not blank padded'
  if (index(name, '#') /= 0 .or. index(name, char(0)) /= 0) stop 'processor name has junk'

  version = repeat('#', len(version))
  call MPI_Get_library_version(version, verlen, ierr)
  if (verlen <= 0 .or. len_trim(version) /= verlen) stop 'bad library version string'

  t0 = MPI_Wtime()
  t1 = MPI_Wtime()
  if (t1 < t0 .or. MPI_Wtick() <= 0d0) stop 'MPI_Wtime/MPI_Wtick'

  print '(a,i0,a,i0,a,a)', 'Hello from rank ', rank, ' of ', nprocs, ' on ', name(1:namelen)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'hello: OK'
  call MPI_Finalize(ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_Finalize failed'
  call MPI_Finalized(flag, ierr)
  if (.not. flag) stop 'MPI_Finalized: false after MPI_Finalize'
end program hello
