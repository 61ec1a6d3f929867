! info_strings: Fortran strings through MPI_Info. Leading and trailing blanks of keys and
! values are stripped; MPI_Info_get_nthkey returns the key blank padded; a lookup of an
! absent key leaves VALUE alone; MPI_Info_get_string with BUFLEN 0 returns the length and
! writes nothing (MPICH's infotest2f, infogetstrf).
program info_strings
#include "mpi_interface.h"
  integer :: ierr, rank, info, nkeys, buflen, vlen
  logical :: flag
  character(len=MPI_MAX_INFO_KEY) :: key
  character(len=40) :: val

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'first', ' one ', ierr)
  call MPI_Info_set(info, '  second key', 'two', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  if (nkeys /= 2) call fail('nkeys')
  call MPI_Info_get_nthkey(info, 1, key, ierr)
  if (key /= 'second key') call fail('leading blanks of a key were kept')
  call MPI_Info_get(info, '  first  ', len(val), val, flag, ierr)
  if (.not. flag .or. val /= 'one') call fail('value of a key given with blanks')
  call MPI_Info_get_valuelen(info, 'first', vlen, flag, ierr)
  if (.not. flag .or. vlen /= 3) call fail('leading/trailing blanks of a value were kept')

  ! Absent keys: VALUE untouched.
  val = 'untouched'
  call MPI_Info_get(info, 'nokey', len(val), val, flag, ierr)
  if (flag .or. val /= 'untouched') call fail('MPI_Info_get of an absent key changed value')
  buflen = len(val)
  call MPI_Info_get_string(info, 'nokey', buflen, val, flag, ierr)
  if (flag .or. val /= 'untouched') call fail('MPI_Info_get_string of an absent key changed value')

  ! BUFLEN 0: the length comes back, VALUE stays.
  buflen = 0
  call MPI_Info_get_string(info, 'second key', buflen, val, flag, ierr)
  if (.not. flag .or. buflen /= 3) call fail('MPI_Info_get_string length with buflen 0')
  if (val /= 'untouched') call fail('MPI_Info_get_string wrote value with buflen 0')
  buflen = len(val)
  call MPI_Info_get_string(info, 'second key', buflen, val, flag, ierr)
  if (.not. flag .or. val /= 'two' .or. buflen /= 3) call fail('MPI_Info_get_string value')

  call MPI_Info_free(info, ierr)
  if (rank == 0) print '(a)', 'info_strings: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program info_strings
