! errors: with MPI_ERRORS_RETURN on MPI_COMM_WORLD, a send to an invalid rank returns an
! error code whose class (MPI_Error_class) is MPI_ERR_RANK; MPI_Error_string writes its
! message into a CHARACTER buffer (blank padded, resultlen = its length); an invalid tag
! gives MPI_ERR_TAG; MPI_Comm_get_errhandler returns the handler set; MPI_WAITSOME and
! MPI_TESTSOME with a truncated receive return IERROR = MPI_ERR_IN_STATUS itself and
! 1-based indices.
program errors
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, code, eclass, msglen, eh, x, k, outcount
  integer :: reqs(2), idx(2), sts(MPI_STATUS_SIZE, 2), sbuf(3), rbuf(4)
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=10) :: short

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_set_errhandler')
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  if (eh /= MPI_ERRORS_RETURN) call fail('MPI_Comm_get_errhandler')

  x = 1
  call MPI_Send(x, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, code)
  if (code == MPI_SUCCESS) call fail('send to an invalid rank succeeded')
  call MPI_Error_class(code, eclass, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Error_class')
  if (eclass /= MPI_ERR_RANK) call fail('error class is not MPI_ERR_RANK')

  msg = repeat('#', len(msg))
  call MPI_Error_string(code, msg, msglen, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Error_string')
  if (msglen <= 0 .or. msglen > MPI_MAX_ERROR_STRING) call fail('MPI_Error_string length')
  if (len_trim(msg) /= msglen) call fail('MPI_Error_string: not blank padded')
  if (index(msg, '#') /= 0 .or. index(msg, char(0)) /= 0) call fail('MPI_Error_string: junk')
  if (rank == 0) print '(a,a)', 'MPI_ERR_RANK message: ', msg(1:msglen)

  ! A buffer shorter than the message gets the first characters.
  call MPI_Error_string(MPI_ERR_TAG, short, msglen, ierr)
  call MPI_Error_string(MPI_ERR_TAG, msg, msglen, ierr)
  if (short /= msg(1:len(short))) call fail('MPI_Error_string into a short buffer')

  call MPI_Send(x, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, eclass, ierr)
  if (eclass /= MPI_ERR_TAG) call fail('error class is not MPI_ERR_TAG')

  ! Two receives from this rank: the first truncated (room for 1 of 3), the second fine.
  sbuf = [1, 2, 3]
  do k = 1, 2
     call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, rank, 70, MPI_COMM_WORLD, reqs(1), ierr)
     call MPI_Irecv(rbuf(2), 3, MPI_INTEGER, rank, 71, MPI_COMM_WORLD, reqs(2), ierr)
     call MPI_Send(sbuf(1), 3, MPI_INTEGER, rank, 70, MPI_COMM_WORLD, ierr)
     call MPI_Send(sbuf(1), 3, MPI_INTEGER, rank, 71, MPI_COMM_WORLD, ierr)
     idx = -1
     outcount = 0
     if (k == 1) then
        call MPI_Waitsome(2, reqs, outcount, idx, sts, code)
     else
        do while (outcount == 0)
           call MPI_Testsome(2, reqs, outcount, idx, sts, code)
           if (code /= MPI_SUCCESS) exit
        end do
     end if
     if (code /= MPI_ERR_IN_STATUS) call fail('Waitsome/Testsome: IERROR is not MPI_ERR_IN_STATUS')
     if (outcount /= 2) call fail('Waitsome/Testsome: OUTCOUNT is not 2')
     if (minval(idx) /= 1 .or. maxval(idx) /= 2) call fail('Waitsome/Testsome: indices not 1 and 2')
     call MPI_Error_class(sts(MPI_ERROR, minloc(idx, 1)), eclass, ierr)
     if (eclass /= MPI_ERR_TRUNCATE) call fail('Waitsome/Testsome: status of the truncated receive')
     if (sts(MPI_ERROR, maxloc(idx, 1)) /= MPI_SUCCESS) call fail('Waitsome/Testsome: status of the other')
  end do

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'errors: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg2)
    character(len=*), intent(in) :: msg2
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg2
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program errors
