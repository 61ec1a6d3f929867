! f08_profile: the profiling interface of `use mpi_f08`: the program defines MPI_Send_f08ts
! (the specific procedure the generic MPI_Send resolves to, as MPI_SUBARRAYS_SUPPORTED is
! .TRUE.), which counts the calls and the elements and forwards to PMPI_Send; the module's
! MPI_Send calls must land in it, array sections included.
module f08_profile_counts
  implicit none
  integer :: sends = 0, elements = 0
end module f08_profile_counts

subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use mpi_f08, only : MPI_Datatype, MPI_Comm, PMPI_Send
  use f08_profile_counts
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  sends = sends + 1
  elements = elements + count
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send_f08ts

program f08_profile
  use mpi_f08
  use f08_profile_counts
  implicit none
  integer :: rank, nprocs, buf(3), ierr, wide(6)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  buf = [1, 2, 3]
  if (rank == 0) then
     call MPI_Send(buf, 3, MPI_INTEGER, nprocs - 1, 1, MPI_COMM_WORLD)
     call MPI_Send(buf, 2, MPI_INTEGER, nprocs - 1, 2, MPI_COMM_WORLD, ierr)
     if (ierr /= MPI_SUCCESS) call fail('ierror through the wrapper')
     call PMPI_Send(buf, 1, MPI_INTEGER, nprocs - 1, 3, MPI_COMM_WORLD)
     wide = [7, 0, 8, 0, 9, 0]
     call MPI_Send(wide(1:5:2), 3, MPI_INTEGER, nprocs - 1, 4, MPI_COMM_WORLD)
     if (sends /= 3 .or. elements /= 8) call fail('MPI_Send did not go through MPI_Send_f08ts')
  end if
  if (rank == nprocs - 1) then
     buf = 0
     call MPI_Recv(buf, 3, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     if (any(buf /= [1, 2, 3])) call fail('payload 1')
     call MPI_Recv(buf, 3, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     call MPI_Recv(buf, 3, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     if (buf(1) /= 1) call fail('payload 3')
     call MPI_Recv(buf, 3, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     if (any(buf /= [7, 8, 9])) call fail('payload 4 (a strided section through the wrapper)')
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_profile: OK'
  call MPI_Finalize()

contains

#include "f08_fail.h"
end program f08_profile
