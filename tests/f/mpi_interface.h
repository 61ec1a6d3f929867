! Included (#include, so cpp) right after a test program's `program` line and its other
! `use`s: the MPI interface under test, `use mpi`, or `include 'mpif.h'` when compiled with
! -DUSE_MPIF_H (tests/tests/fortran.rs builds each program both ways).
#ifdef USE_MPIF_H
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
