! Included (#include, so cpp) after `contains` in the tests/f/f08_*.F90 programs: report a
! failed check with the rank and stop the job.
  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: me
    call MPI_Comm_rank(MPI_COMM_WORLD, me)
    print '(a,i0,a,a)', 'rank ', me, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail
