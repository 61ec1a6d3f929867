! f08_session: MPI-4.0 sessions from mpi_f08 without MPI_Init: TYPE(MPI_Session) and
! MPI_SESSION_NULL, the process sets and their mpi_size, a group from mpi://WORLD, a
! communicator from it carrying a ring exchange and an allreduce with checked values, a
! session error handler returning the error class of an unknown process set.
program f08_session
  use mpi_f08
  implicit none
  type(MPI_Session) :: s
  type(MPI_Group) :: g
  type(MPI_Comm) :: c
  type(MPI_Info) :: info
  type(MPI_Status) :: st
  integer :: ierr, n, i, plen, rank, nprocs, gsize, cls, sendv, recvv, total
  character(len=64) :: name
  character(len=MPI_MAX_INFO_VAL) :: val
  logical :: flag, got_world, got_self

  s = MPI_SESSION_NULL
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s, ierr)
  if (ierr /= MPI_SUCCESS .or. s == MPI_SESSION_NULL) call fail('MPI_Session_init')
  call MPI_Initialized(flag)
  if (flag) call fail('MPI_Initialized is true without MPI_Init')

  call MPI_Session_get_num_psets(s, MPI_INFO_NULL, n)
  if (n < 2) call fail('fewer than 2 process sets')
  got_world = .false.
  got_self = .false.
  do i = 0, n - 1
     plen = len(name)
     call MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, plen, name, ierr)
     if (ierr /= MPI_SUCCESS) call fail('MPI_Session_get_nth_pset')
     call MPI_Session_get_pset_info(s, trim(name), info, ierr)
     call MPI_Info_get(info, 'mpi_size', MPI_MAX_INFO_VAL, val, flag, ierr)
     if (.not. flag) call fail('no mpi_size')
     read (val, *) gsize
     if (trim(name) == 'mpi://WORLD') then
        got_world = .true.
        nprocs = gsize
     else if (trim(name) == 'mpi://SELF') then
        got_self = .true.
        if (gsize /= 1) call fail('mpi_size of mpi://SELF')
     end if
     call MPI_Info_free(info)
  end do
  if (.not. (got_world .and. got_self)) call fail('mpi://WORLD or mpi://SELF missing')

  call MPI_Group_from_session_pset(s, 'mpi://WORLD', g, ierr)
  call MPI_Group_size(g, gsize)
  if (gsize /= nprocs) call fail('group size')
  call MPI_Comm_create_from_group(g, 'org.oxmpi.test.f08_session', MPI_INFO_NULL, &
                                  MPI_ERRORS_RETURN, c, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_create_from_group')
  call MPI_Group_free(g)
  call MPI_Comm_rank(c, rank)
  call MPI_Comm_size(c, gsize)
  if (gsize /= nprocs) call fail('communicator size')
  sendv = 10 * rank + 1
  recvv = -1
  call MPI_Sendrecv(sendv, 1, MPI_INTEGER, mod(rank + 1, nprocs), 7, recvv, 1, MPI_INTEGER, &
                    mod(rank + nprocs - 1, nprocs), 7, c, st)
  if (recvv /= 10 * mod(rank + nprocs - 1, nprocs) + 1) call fail('ring value')
  if (st%MPI_SOURCE /= mod(rank + nprocs - 1, nprocs)) call fail('ring source')
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, c)
  if (total /= nprocs * (nprocs - 1) / 2) call fail('allreduce')

  call MPI_Group_from_session_pset(s, 'mpi://nowhere', g, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_ARG) call fail('unknown process set: not MPI_ERR_ARG')

  call MPI_Comm_free(c)
  call MPI_Session_finalize(s, ierr)
  if (ierr /= MPI_SUCCESS .or. s /= MPI_SESSION_NULL) call fail('MPI_Session_finalize')
  if (rank == 0) print '(a)', 'f08_session: OK'

contains
  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    print '(a,a)', 'FAILED: ', msg
    error stop 1
  end subroutine fail
end program f08_session
