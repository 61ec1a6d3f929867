! f08_sections: array sections as choice buffers of `use mpi_f08` (MPI_SUBARRAYS_SUPPORTED
! is .TRUE.: the buffers are TYPE(*), DIMENSION(..) and a non-contiguous section is used in
! place, not through a temporary copy). Ring neighbours exchange
!  - Isend/Irecv of 2-D column slices a(:,2:6:2) and row slices a(3,:), the elements
!    outside the section left alone (with a copy-in/copy-out temporary, the receive would
!    land in memory freed at the call's return);
!  - a reversed receive section r(10:1:-2), a count shorter than the section (a prefix of
!    a 3-D section), COMPLEX elements carried as MPI_REAL (two items per element, also an
!    odd count: half an element), a section of a derived type's components;
!  - persistent Send_init/Recv_init started twice with new data, Isendrecv, Ibcast;
!  - blocking calls on sections (Sendrecv, Allreduce, Gatherv with displacements), whose
!    results must land in the section only;
!  - one-sided Put and Get with sections as origin buffers, Accumulate;
!  - nonblocking and persistent collectives on sections (Iallreduce, Iallgatherv seen
!    complete by MPI_Request_get_status, Allreduce_init started twice, an Iallreduce
!    whose request rank 0 frees with MPI_Request_free);
!  - nonblocking file I/O from a section, read back into a section; MPI_Get_address;
!  - errors: a partitioned send of a non-contiguous section is MPI_ERR_BUFFER, a count
!    beyond the section is MPI_ERR_BUFFER, an uncommitted datatype over a section
!    MPI_ERR_TYPE, all through MPI_ERRORS_RETURN.
! (MPICH 4.0.2 fails it: it sends one element for the 3-D prefix and for the odd COMPLEX
! count, and its Ibcast into a section fails an assertion.)
program f08_sections
  use mpi_f08
  implicit none
  integer :: rank, nprocs, left, right, i, j, k, ierr, cls
  integer :: a(9,9), b(9,9), expect(9,9)
  integer :: r(10), s(20), c3(4,3,2), p(24)
  complex :: z(8), zr(8)
  real :: zs(16)
  type pair
     integer :: key
     double precision :: val
  end type pair
  type(pair) :: recs(6)
  double precision :: vals(6), got(3)
  integer, allocatable :: all(:), counts(:), displs(:)
  type(MPI_Request) :: req(4)
  type(MPI_Status) :: st
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  type(MPI_Datatype) :: pairt
  integer(kind=MPI_ADDRESS_KIND) :: wsize, addr1, addr2
  integer(kind=MPI_OFFSET_KIND) :: off
  integer :: wbuf(12), n
  character(len=64) :: fname
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  if (.not. MPI_SUBARRAYS_SUPPORTED) call fail('MPI_SUBARRAYS_SUPPORTED is .FALSE.')

  ! Column slices: a(:,2:6:2) of the left neighbour lands in b(:,2:6:2) only.
  do i = 1, 9
     do j = 1, 9
        a(j, i) = rank * 1000 + j * 10 + i
     end do
  end do
  b = -1
  call MPI_Irecv(b(:, 2:6:2), 27, MPI_INTEGER, left, 1, MPI_COMM_WORLD, req(1))
  call MPI_Isend(a(:, 2:6:2), 27, MPI_INTEGER, right, 1, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  expect = -1
  do i = 2, 6, 2
     do j = 1, 9
        expect(j, i) = left * 1000 + j * 10 + i
     end do
  end do
  if (any(b /= expect)) call fail('column slices a(:,2:6:2)')

  ! Row slice a(3,:) (stride 9 elements) into a row slice of b.
  do i = 1, 9
     a(3, i) = rank * 1000 + i
  end do
  b = -1
  call MPI_Irecv(b(5, :), 9, MPI_INTEGER, left, 2, MPI_COMM_WORLD, req(1))
  call MPI_Isend(a(3, :), 9, MPI_INTEGER, right, 2, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  do i = 1, 9
     if (b(5, i) /= left * 1000 + i) call fail('row slice payload')
  end do
  if (count(b /= -1) /= 9) call fail('row slice wrote outside the section')

  ! A reversed receive section; a prefix of a strided 3-D section.
  s = [(rank * 100 + i, i = 1, 20)]
  r = -1
  call MPI_Irecv(r(10:1:-2), 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, req(1))
  call MPI_Isend(s(1:20:4), 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  do i = 1, 5
     if (r(12 - 2 * i) /= left * 100 + 1 + 4 * (i - 1)) call fail('reversed section')
     if (r(11 - 2 * i) /= -1) call fail('reversed section wrote a gap')
  end do
  c3 = reshape([(rank * 100 + i, i = 1, 24)], [4, 3, 2])
  p = -1
  ! c3(1:4:2, :, :) has 2 x 3 x 2 = 12 elements; send the first 7 of them.
  call MPI_Isend(c3(1:4:2, :, :), 7, MPI_INTEGER, right, 4, MPI_COMM_WORLD, req(1))
  call MPI_Recv(p, 24, MPI_INTEGER, left, 4, MPI_COMM_WORLD, st)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_Get_count(st, MPI_INTEGER, n)
  if (n /= 7) call fail('prefix of a 3-D section: count')
  k = 0
  do i = 1, 2
     do j = 1, 3
        if (k < 7) then
           k = k + 1
           if (p(k) /= left * 100 + (i - 1) * 12 + (j - 1) * 4 + 1) call fail('3-D prefix payload (1)')
        end if
        if (k < 7) then
           k = k + 1
           if (p(k) /= left * 100 + (i - 1) * 12 + (j - 1) * 4 + 3) call fail('3-D prefix payload (3)')
        end if
     end do
  end do
  if (p(8) /= -1) call fail('3-D prefix sent too much')

  ! COMPLEX elements as pairs of MPI_REAL, 7 items = three and a half elements.
  z = [(cmplx(rank * 10 + i, -i), i = 1, 8)]
  zr = (0.0, 0.0)
  call MPI_Irecv(zr(2:8:2), 7, MPI_REAL, left, 5, MPI_COMM_WORLD, req(1))
  call MPI_Isend(z(1:8:2), 7, MPI_REAL, right, 5, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  do i = 1, 3
     if (zr(2 * i) /= cmplx(left * 10 + 2 * i - 1, -(2 * i - 1))) call fail('complex as real pairs')
  end do
  if (real(zr(8)) /= left * 10 + 7 .or. aimag(zr(8)) /= 0.0) call fail('half a complex element')
  if (any(zr(1:7:2) /= (0.0, 0.0))) call fail('complex section wrote a gap')

  ! Components of an array of derived type: recs(:)%val is a strided section.
  do i = 1, 6
     recs(i) = pair(i, rank + i / 10.0d0)
  end do
  vals = 0
  call MPI_Irecv(vals(1:6:2), 3, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, req(1))
  call MPI_Isend(recs(2:6:2)%val, 3, MPI_DOUBLE_PRECISION, right, 6, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  do i = 1, 3
     if (vals(2 * i - 1) /= left + (2 * i) / 10.0d0) call fail('derived-type component section')
     if (vals(2 * i) /= 0) call fail('component section wrote a gap')
  end do

  ! Persistent requests on sections, started twice with new data in between.
  call MPI_Send_init(a(2, 1:9:4), 3, MPI_INTEGER, right, 7, MPI_COMM_WORLD, req(1))
  call MPI_Recv_init(b(1:9:4, 4), 3, MPI_INTEGER, left, 7, MPI_COMM_WORLD, req(2))
  do k = 1, 2
     a(2, :) = [(rank * 1000 + k * 100 + i, i = 1, 9)]
     b = -1
     call MPI_Startall(2, req)
     call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
     do i = 1, 3
        if (b(4 * i - 3, 4) /= left * 1000 + k * 100 + 4 * i - 3) call fail('persistent section payload')
     end do
     if (count(b /= -1) /= 3) call fail('persistent receive wrote outside the section')
  end do
  call MPI_Request_free(req(1))
  call MPI_Request_free(req(2))

  ! Isendrecv with two sections; Ibcast into a section.
  s = [(rank * 100 + i, i = 1, 20)]
  r = -1
  call MPI_Isendrecv(s(20:2:-3), 6, MPI_INTEGER, right, 8, r(1:6), 6, MPI_INTEGER, left, 8, &
       MPI_COMM_WORLD, req(1))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  do i = 1, 6
     if (r(i) /= left * 100 + 20 - 3 * (i - 1)) call fail('Isendrecv sections')
  end do
  b = -1
  if (rank == 0) b(7, 1:9:2) = [11, 12, 13, 14, 15]
  call MPI_Ibcast(b(7, 1:9:2), 5, MPI_INTEGER, 0, MPI_COMM_WORLD, req(1))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  if (any(b(7, 1:9:2) /= [11, 12, 13, 14, 15])) call fail('Ibcast into a section')
  if (count(b /= -1) /= 5) call fail('Ibcast wrote outside the section')

  ! Blocking calls: the section is used as if contiguous and the rest stays.
  r = -1
  call MPI_Sendrecv(s(2:20:2), 10, MPI_INTEGER, right, 9, r(10:1:-1), 10, MPI_INTEGER, left, 9, &
       MPI_COMM_WORLD, st)
  do i = 1, 10
     if (r(11 - i) /= left * 100 + 2 * i) call fail('Sendrecv sections')
  end do
  b = 0
  a = 1
  call MPI_Allreduce(a(1:9:3, 2), b(4, 1:3), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (any(b(4, 1:3) /= nprocs) .or. count(b /= 0) /= 3) call fail('Allreduce on sections')
  allocate(all(3 * nprocs), counts(nprocs), displs(nprocs))
  all = -1
  counts = 2
  displs = [(3 * i, i = 0, nprocs - 1)]
  call MPI_Allgatherv(s(1:3:2), 2, MPI_INTEGER, all(3 * nprocs:1:-1), counts, displs, MPI_INTEGER, &
       MPI_COMM_WORLD)
  do i = 0, nprocs - 1
     ! Block i lands at reversed positions 3i+1, 3i+2 of the section: all(3n-3i), all(3n-3i-1).
     if (all(3 * nprocs - 3 * i) /= i * 100 + 1 .or. all(3 * nprocs - 3 * i - 1) /= i * 100 + 3) &
          call fail('Allgatherv into a reversed section')
     if (all(3 * nprocs - 3 * i - 2) /= -1) call fail('Allgatherv wrote a gap')
  end do

  ! One-sided: Put from a section, Get into a section, Accumulate from a section.
  wsize = 12 * 4
  wbuf = 0
  call MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  s = [(rank * 100 + i, i = 1, 20)]
  call MPI_Win_fence(0, win)
  call MPI_Put(s(1:10:3), 4, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
  call MPI_Accumulate(s(2:20:6), 4, MPI_INTEGER, right, 4_MPI_ADDRESS_KIND, 4, MPI_INTEGER, MPI_SUM, win)
  call MPI_Win_fence(0, win)
  do i = 1, 4
     if (wbuf(i) /= left * 100 + 1 + 3 * (i - 1)) call fail('Put from a section')
     if (wbuf(4 + i) /= left * 100 + 2 + 6 * (i - 1)) call fail('Accumulate from a section')
  end do
  r = -1
  call MPI_Get(r(8:2:-2), 4, MPI_INTEGER, left, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  ! left's window holds what left's left neighbour put there.
  j = mod(left + nprocs - 1, nprocs)
  do i = 1, 4
     if (r(10 - 2 * i) /= j * 100 + 1 + 3 * (i - 1)) call fail('Get into a section')
     if (r(11 - 2 * i) /= -1) call fail('Get wrote a gap')
  end do
  call MPI_Win_free(win)

  ! Nonblocking write from a section; blocking read into a section.
  write (fname, '(a,i0,a)') '/tmp/oxmpi-f08-sections-', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
       MPI_INFO_NULL, fh)
  off = 0
  call MPI_File_iwrite_at(fh, off, s(20:1:-5), 4, MPI_INTEGER, req(1))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  r = -1
  call MPI_File_read_at(fh, off, r(1:7:2), 4, MPI_INTEGER, st)
  do i = 1, 4
     if (r(2 * i - 1) /= rank * 100 + 20 - 5 * (i - 1)) call fail('file I/O with sections')
     if (r(2 * i) /= -1) call fail('file read wrote a gap')
  end do
  call MPI_File_close(fh)

  ! Nonblocking and persistent collectives on sections (through copies kept with the
  ! request): the result is in the section once a wait, a test or
  ! MPI_Request_get_status has seen the request complete, and only there.
  a = 0
  a(1:9:2, 1) = [(rank + i, i = 1, 5)]
  b = -1
  call MPI_Iallreduce(a(1:9:2, 1), b(2, 1:9:2), 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(1))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  do i = 1, 5
     if (b(2, 2 * i - 1) /= nprocs * i + nprocs * (nprocs - 1) / 2) call fail('Iallreduce on sections')
  end do
  if (count(b /= -1) /= 5) call fail('Iallreduce wrote outside the section')
  all = -1
  call MPI_Iallgatherv(s(1:3:2), 2, MPI_INTEGER, all(3 * nprocs:1:-1), counts, displs, MPI_INTEGER, &
       MPI_COMM_WORLD, req(1))
  do
     call MPI_Request_get_status(req(1), flag, st)
     if (flag) exit
  end do
  do i = 0, nprocs - 1
     if (all(3 * nprocs - 3 * i) /= i * 100 + 1 .or. all(3 * nprocs - 3 * i - 1) /= i * 100 + 3) &
          call fail('Iallgatherv into a reversed section, seen by MPI_Request_get_status')
     if (all(3 * nprocs - 3 * i - 2) /= -1) call fail('Iallgatherv wrote a gap')
  end do
  all(1) = -5 ! the user's store after completion stays through the wait
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  if (all(1) /= -5) call fail('MPI_Wait copied back over the user''s store after MPI_Request_get_status')
  call MPI_Allreduce_init(a(2, 1:9:4), b(1:9:4, 8), 3, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, &
       MPI_INFO_NULL, req(1))
  do k = 1, 2
     a(2, 1:9:4) = [(rank * k + i, i = 1, 3)]
     b = -1
     call MPI_Start(req(1))
     call MPI_Wait(req(1), MPI_STATUS_IGNORE)
     do i = 1, 3
        if (b(4 * i - 3, 8) /= (nprocs - 1) * k + i) call fail('persistent Allreduce on sections')
     end do
     if (count(b /= -1) /= 3) call fail('persistent Allreduce wrote outside the section')
  end do
  call MPI_Request_free(req(1))
  ! Rank 0 frees its Iallreduce request at once (active, or complete on 1 rank); the others
  ! wait for theirs and then tell rank 0, which then finds the result in its section.
  a(1:9:2, 1) = [(rank * 10 + i, i = 1, 5)]
  b = -1
  call MPI_Iallreduce(a(1:9:2, 1), b(3, 1:9:2), 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(1))
  if (rank == 0) then
     call MPI_Request_free(req(1))
     do i = 1, nprocs - 1
        call MPI_Recv(k, 1, MPI_INTEGER, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
     end do
  else
     call MPI_Wait(req(1), MPI_STATUS_IGNORE)
     call MPI_Send(rank, 1, MPI_INTEGER, 0, 77, MPI_COMM_WORLD)
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  do i = 1, 5
     if (b(3, 2 * i - 1) /= nprocs * i + 10 * nprocs * (nprocs - 1) / 2) &
          call fail('Iallreduce into a section whose request was freed')
  end do
  if (count(b /= -1) /= 5) call fail('Iallreduce with a freed request wrote outside the section')

  ! MPI_Get_address of a section: its first element's, not a temporary's.
  call MPI_Get_address(a(3, 2:6:2), addr1)
  call MPI_Get_address(a(3, 2), addr2)
  if (addr1 /= addr2) call fail('MPI_Get_address of a non-contiguous section')

  ! Errors through MPI_ERRORS_RETURN.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Psend_init(a(1:9:2, 1), 1, 5_MPI_COUNT_KIND, MPI_INTEGER, right, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &
       req(1), ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('Psend_init on a non-contiguous section: not MPI_ERR_BUFFER')
  call MPI_Isend(a(1:9:2, 1), 6, MPI_INTEGER, right, 10, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_BUFFER) call fail('count beyond the section: not MPI_ERR_BUFFER')
  call MPI_Type_contiguous(2, MPI_INTEGER, pairt)
  call MPI_Isend(a(1:9:2, 1), 1, pairt, right, 12, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_TYPE) call fail('uncommitted datatype over a section: not MPI_ERR_TYPE')
  call MPI_Type_free(pairt)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08_sections: OK'
  call MPI_Finalize()

contains

#include "f08_fail.h"
end program f08_sections
