! spawn: MPI_Comm_spawn from Fortran. The parent job spawns two copies of this program
! with the arguments 'child' and 'x y' (MPI_ARGV_NULL-free argv list ending with a blank),
! checks the errcodes, sends each child its rank over the intercommunicator and gets it
! back doubled; the children check MPI_Comm_get_parent, their arguments
! (GET_COMMAND_ARGUMENT; leading blanks are stripped) and the remote size. A second spawn passes MPI_ARGV_NULL and
! MPI_ERRCODES_IGNORE; a third is MPI_Comm_spawn_multiple of two programs with an
! ARRAY_OF_ARGV(2, 3) (rows ending with a blank), a fourth passes MPI_ARGVS_NULL.
program spawn
#include "mpi_interface.h"
  integer :: ierr, rank, nprocs, parent, ic, i, v, nremote, round
  integer :: codes(2), maxprocs(2), infos(2)
  character(len=256) :: self, arg1, arg2
  character(len=16) :: args(3), margs(2, 3)
  character(len=256) :: cmds(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_get_parent(parent, ierr)
  call get_command_argument(0, self)
  if (parent /= MPI_COMM_NULL) then
     call MPI_Comm_remote_size(parent, nremote, ierr)
     call get_command_argument(1, arg1)
     call get_command_argument(2, arg2)
     if (command_argument_count() > 0) then
        if (trim(arg1) /= 'child' .or. trim(arg2) /= 'x y') call fail('the arguments of a spawned child')
     end if
     if (rank == 0) then
        call MPI_Recv(v, 1, MPI_INTEGER, 0, 5, parent, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(2 * v, 1, MPI_INTEGER, 0, 6, parent, ierr)
     end if
     call MPI_Comm_disconnect(parent, ierr)
     call MPI_Finalize(ierr)
     stop
  end if
  do round = 1, 4
     if (round == 3 .or. round == 4) then
        cmds(1) = self
        cmds(2) = self
        margs(1, 1) = 'child'
        margs(1, 2) = ' x y'
        margs(1, 3) = ' '
        margs(2, :) = margs(1, :)
        maxprocs = 1
        infos = MPI_INFO_NULL
        codes = -1
        if (round == 3) then
           call MPI_Comm_spawn_multiple(2, cmds, margs, maxprocs, infos, 0, MPI_COMM_WORLD, ic, &
                codes, ierr)
           if (any(codes /= MPI_SUCCESS)) call fail('errcodes of MPI_Comm_spawn_multiple')
        else
           call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &
                ic, MPI_ERRCODES_IGNORE, ierr)
        end if
     else if (round == 1) then
        args(1) = 'child'
        args(2) = '  x y'
        args(3) = ' '
        codes = -1
        call MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, codes, ierr)
        if (rank == 0 .and. any(codes /= MPI_SUCCESS)) call fail('errcodes of MPI_Comm_spawn')
     else
        call MPI_Comm_spawn(self, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, ic, &
             MPI_ERRCODES_IGNORE, ierr)
     end if
     if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_spawn')
     call MPI_Comm_remote_size(ic, nremote, ierr)
     if (nremote /= 2) call fail('remote size of the spawned job')
     if (rank == 0) then
        call MPI_Send(21 + round, 1, MPI_INTEGER, 0, 5, ic, ierr)
        call MPI_Recv(v, 1, MPI_INTEGER, 0, 6, ic, MPI_STATUS_IGNORE, ierr)
        if (v /= 2 * (21 + round)) call fail('the answer of the spawned child')
     end if
     call MPI_Comm_disconnect(ic, ierr)
  end do
  if (rank == 0) print '(a)', 'spawn: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e2
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail
end program spawn
