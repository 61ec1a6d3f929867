! io: MPI-IO from Fortran with file handles as INTEGERs: each rank writes its block of
! integers with MPI_File_write_at_all through a view with an INTEGER etype, reads the next
! rank's block with MPI_File_read_at, checks the size and a short read at the end of file
! (MPI_Get_count), a write_shared record count, MPI_File_get_amode, and the error class
! of opening a missing file. The files go in the directory given as the first argument.
program io
#include "mpi_interface.h"
  integer, parameter :: n = 100
  integer :: ierr, rank, nprocs, fh, i, other, cnt, amode, cls
  integer :: buf(n), inb(n)
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off, fsize, pos
  character(len=512) :: dir

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call get_command_argument(1, dir)
  if (len_trim(dir) == 0) call fail('usage: io DIR')
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/missing.dat', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls, i)
  if (cls /= MPI_ERR_NO_SUCH_FILE) call fail('opening a missing file')

  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/test.dat', MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
       MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_open')
  if (fh == MPI_FILE_NULL) call fail('MPI_File_open gave MPI_FILE_NULL')
  call MPI_File_get_amode(fh, amode, ierr)
  if (amode /= MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE) call fail('MPI_File_get_amode')
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_set_view')
  do i = 1, n
     buf(i) = rank * 1000 + i
  end do
  off = int(rank, MPI_OFFSET_KIND) * n
  call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_write_at_all')
  other = mod(rank + 1, nprocs)
  off = int(other, MPI_OFFSET_KIND) * n
  call MPI_File_read_at(fh, off, inb, n, MPI_INTEGER, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= n) call fail('read count')
  do i = 1, n
     if (inb(i) /= other * 1000 + i) call fail('data read back')
  end do
  call MPI_File_get_size(fh, fsize, ierr)
  if (fsize /= int(nprocs, MPI_OFFSET_KIND) * n * 4) call fail('MPI_File_get_size')
  off = int(nprocs, MPI_OFFSET_KIND) * n - 3
  call MPI_File_read_at(fh, off, inb, n, MPI_INTEGER, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  if (cnt /= 3) call fail('short read at the end of file')
  call MPI_File_seek_shared(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_File_write_shared(fh, buf, 2, MPI_INTEGER, status, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_get_position_shared(fh, pos, ierr)
  if (pos /= 2 * nprocs) call fail('shared file pointer after write_shared')
  call MPI_File_close(fh, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_File_close')
  if (fh /= MPI_FILE_NULL) call fail('MPI_File_close did not reset the handle')
  if (rank == 0) print '(a)', 'io: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program io
