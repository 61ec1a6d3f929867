! rma: one-sided communication from Fortran. A window over an INTEGER array
! (MPI_Win_create, disp_unit 4, displacements of kind MPI_ADDRESS_KIND):
!  - fence epoch: MPI_Put of 4 integers into the right neighbour's wbuf(1:4), MPI_Get of
!    the left neighbour's read-only wbuf(9:12), MPI_Accumulate(MPI_SUM) of rank + 1 into
!    every rank's wbuf(13); every value checked after the closing fence;
!  - passive target: MPI_Win_lock(MPI_LOCK_SHARED) on rank 0, MPI_Fetch_and_op(MPI_SUM) on
!    its wbuf(15), MPI_Win_unlock; the fetched values, gathered at rank 0, are exactly
!    0 .. size-1 and the counter ends at size; MPI_Win_lock(MPI_LOCK_EXCLUSIVE) + MPI_Get
!    + MPI_Put read-modify-write of rank 0's wbuf(16), exact count.
!  - MPI_Win_allocate: the memory MPI returns (TYPE(C_PTR), C_F_POINTER), a put into the
!    right neighbour's, checked after the fence;
!  - MPI_Win_allocate_shared on the node's communicator + MPI_Win_shared_query: node rank
!    0's memory read through the queried pointer.
! The window array is VOLATILE: RMA changes it behind the compiler's back.
program rma
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
#include "mpi_interface.h"
  integer, parameter :: nw = 16
  integer, volatile :: wbuf(nw)
  integer :: ierr, rank, nprocs, left, right, win, k, i, one, fetched
  integer :: v(1)
  integer :: src(4), got(4)
  integer, allocatable :: all(:)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp, qsize
  type(c_ptr) :: cptr, qptr
  integer, pointer :: abuf(:), s0(:)
  integer :: win2, win3, node, node_rank, qdisp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  wbuf = -1
  do k = 1, 4
     wbuf(8 + k) = 1000 * rank + k
  end do
  wbuf(13) = 0
  wbuf(15) = 0
  wbuf(16) = 0
  wsize = 4 * nw
  call MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_create')

  ! ---- fence epoch ----
  do k = 1, 4
     src(k) = 100 * rank + k
  end do
  got = -7
  one = rank + 1
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Put(src, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Put')
  disp = 8
  call MPI_Get(got, 4, MPI_INTEGER, left, disp, 4, MPI_INTEGER, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Get')
  disp = 12
  do i = 0, nprocs - 1
     call MPI_Accumulate(one, 1, MPI_INTEGER, i, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
     if (ierr /= MPI_SUCCESS) call fail('MPI_Accumulate')
  end do
  call MPI_Win_fence(0, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_fence')
  do k = 1, 4
     if (wbuf(k) /= 100 * left + k) call fail('MPI_Put: wrong value in wbuf(1:4)')
     if (got(k) /= 1000 * left + k) call fail('MPI_Get: wrong value')
     if (wbuf(8 + k) /= 1000 * rank + k) call fail('read-only part of the window changed')
  end do
  do k = 5, 8
     if (wbuf(k) /= -1) call fail('MPI_Put wrote outside wbuf(1:4)')
  end do
  if (wbuf(13) /= nprocs * (nprocs + 1) / 2) call fail('MPI_Accumulate: wrong sum')
  if (wbuf(14) /= -1) call fail('MPI_Accumulate wrote outside wbuf(13)')
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)

  ! ---- passive target: fetch-and-op on rank 0 ----
  one = 1
  fetched = -1
  disp = 14
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_lock')
  call MPI_Fetch_and_op(one, fetched, MPI_INTEGER, 0, disp, MPI_SUM, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Fetch_and_op')
  call MPI_Win_unlock(0, win, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_unlock')
  if (fetched < 0 .or. fetched >= nprocs) call fail('MPI_Fetch_and_op: fetched value out of range')

  ! ---- passive target: exclusive read-modify-write on rank 0 ----
  disp = 15
  do i = 1, 3
     call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
     v(1) = -1
     call MPI_Get(v, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
     call MPI_Win_flush(0, win, ierr)
     if (v(1) < 0 .or. v(1) >= 3 * nprocs) call fail('exclusive lock: counter out of range')
     v(1) = v(1) + 1
     call MPI_Put(v, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
     call MPI_Win_unlock(0, win, ierr)
  end do

  allocate(all(nprocs))
  call MPI_Gather(fetched, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     do k = 0, nprocs - 1
        if (count(all == k) /= 1) call fail('fetched values are not a permutation of 0..size-1')
     end do
     call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
     if (wbuf(15) /= nprocs) call fail('fetch-and-op counter is not size')
     if (wbuf(16) /= 3 * nprocs) call fail('exclusive-lock counter is not 3 * size')
     call MPI_Win_unlock(0, win, ierr)
  end if

  call MPI_Win_free(win, ierr)
  if (ierr /= MPI_SUCCESS .or. win /= MPI_WIN_NULL) call fail('MPI_Win_free')

  ! ---- MPI_Win_allocate: memory from MPI ----
  wsize = 4 * 4
  call MPI_Win_allocate(wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cptr, win2, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_allocate')
  call c_f_pointer(cptr, abuf, [4])
  abuf = 0
  v(1) = 10 + rank
  call MPI_Win_fence(0, win2, ierr)
  disp = 1
  call MPI_Put(v, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win2, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Put (allocated window)')
  call MPI_Win_fence(0, win2, ierr)
  if (abuf(2) /= 10 + left .or. abuf(1) /= 0 .or. abuf(3) /= 0) call fail('MPI_Win_allocate: wrong values after the put')
  call MPI_Win_free(win2, ierr)

  ! ---- MPI_Win_allocate_shared + MPI_Win_shared_query ----
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, node_rank, ierr)
  call MPI_Win_allocate_shared(wsize, 4, MPI_INFO_NULL, node, cptr, win3, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Win_allocate_shared')
  call c_f_pointer(cptr, abuf, [4])
  abuf = 100 + node_rank
  call MPI_Win_fence(0, win3, ierr)
  call MPI_Win_shared_query(win3, 0, qsize, qdisp, qptr, ierr)
  if (ierr /= MPI_SUCCESS .or. qsize /= 16 .or. qdisp /= 4) call fail('MPI_Win_shared_query')
  call c_f_pointer(qptr, s0, [4])
  if (any(s0 /= 100)) call fail('MPI_Win_shared_query: node rank 0 memory not seen')
  call MPI_Win_fence(0, win3, ierr)
  call MPI_Win_free(win3, ierr)
  call MPI_Comm_free(node, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'rma: OK'
  call MPI_Finalize(ierr)

contains

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program rma
