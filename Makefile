# OxMPI front end, in the HPC habit: `make demo`, `make check`, `make install PREFIX=...`.
PREFIX ?= $(CURDIR)/install
CARGO ?= cargo
PYTHON ?= python3
RELEASE_DIR := target/release

.PHONY: all build gen install demo check check-mpi4py check-mpich check-mpich-binaries check-verbs check-slurm deps clean

all: install

## deps: install missing Debian packages and the Rust toolchain pieces the build needs.
deps:
	@scripts/install-deps.sh

## gen: regenerate mpi-capi/src/generated.rs (MPI_* forwarders and not-yet-supported stubs)
## and the Fortran bindings (mpi-capi/src/fortran.rs, mpif.h, the mpi and mpi_f08 module sources).
gen:
	@$(PYTHON) mpi-capi/gen/gen_abi.py
	@$(PYTHON) mpi-capi/gen/gen_fortran.py
	@$(PYTHON) mpi-capi/gen/gen_f08.py

## build: libmpi.so, mpirun and, where libibverbs-dev is installed, the RDMA verbs
## transport plugin (liboxmpi-verbs.so; a crate of its own, outside the workspace).
build: gen
	$(CARGO) build --release -p mpi-capi -p launcher
	@if [ -f mpi-verbs/Cargo.toml ] && pkg-config --exists libibverbs 2>/dev/null; then \
		$(CARGO) build --release --manifest-path mpi-verbs/Cargo.toml --target-dir target; \
	else \
		rm -f $(RELEASE_DIR)/liboxmpi_verbs.so; \
		echo "build: libibverbs-dev not installed: no RDMA verbs plugin (make deps installs it)"; \
	fi

install: build
	@scripts/install-tree.sh "$(PREFIX)" "$(RELEASE_DIR)"

demo: deps install
	@scripts/demo.sh "$(PREFIX)"

## check: the whole suite (scripts/check.sh), mpi4py's own test suite (check-mpi4py),
## MPICH's own test suite (check-mpich), Debian's MPICH-built ScaLAPACK and OpenCoarrays
## tests on our library (check-mpich-binaries), the RDMA verbs suite on Soft-RoCE VMs (check-verbs)
## where qemu is there or installable (root), then the Slurm suite against a real Slurm
## started for it (check-slurm; root); all run even if one fails; the exit status is
## non-zero if any did.
check: deps install
	@status=0; scripts/check.sh "$(PREFIX)" || status=1; \
	tests/external/mpi4py.sh "$(PREFIX)" || status=1; \
	tests/external/mpich-testsuite.sh "$(PREFIX)" || status=1; \
	tests/external/mpich-binaries.sh "$(PREFIX)" || status=1; \
	if command -v qemu-system-x86_64 >/dev/null || [ "$$(id -u)" = 0 ]; then \
		tests/softroce/deps.sh && tests/softroce/mpi-suite.sh "$(PREFIX)" || status=1; \
	else echo "check: RDMA verbs suite skipped: qemu-system-x86 not installed and not root (make check-verbs)"; fi; \
	tests/slurm/run-tests.sh "$(PREFIX)" || status=1; \
	if [ $$status = 0 ]; then echo "make check: PASS (test suite, mpi4py, MPICH's test suite, MPICH-built binaries, verbs on Soft-RoCE, Slurm)"; else echo "make check: FAIL"; fi; \
	exit $$status

## check-verbs: the RDMA verbs transport on real Soft-RoCE (rdma_rxe) in qemu VMs: one VM
## with every peer on verbs, then two VMs started by mpirun (tests/softroce/mpi-suite.sh).
check-verbs: deps install
	@tests/softroce/deps.sh && tests/softroce/mpi-suite.sh "$(PREFIX)"

## check-slurm: srun direct launch (PMI-1 and PMI-2) and mpirun inside salloc/sbatch against
## a real Slurm (munged, slurmctld, one slurmd per fake node) that tests/slurm starts and stops.
check-slurm: deps install
	@tests/slurm/run-tests.sh "$(PREFIX)"

## check-mpi4py: mpi4py's test suite alone (pinned sdist built with our mpicc, 1/2/4 ranks,
## then the PyPI binary wheel on our libmpi.so.12); needs network access to PyPI once.
check-mpi4py: deps install
	@tests/external/mpi4py.sh "$(PREFIX)"

## check-mpich: MPICH 4.0.2's own test suite (test/mpi of Debian's mpich source, built with
## our mpicc/mpifort) on shared memory, then its pt2pt and coll directories over TCP; needs
## network access to the Debian archive once.
check-mpich: deps install
	@tests/external/mpich-testsuite.sh "$(PREFIX)"

## check-mpich-binaries: programs Debian compiled against MPICH (ScaLAPACK's and OpenCoarrays'
## test suites, NWChem and parallel HDF5: scalapack-mpi-test, libcoarrays-mpich-dev, nwchem-mpich,
## libhdf5-mpich-dev, installed when root) run
## unchanged on our libmpich.so.12, on shared memory and on two nodes of this machine.
check-mpich-binaries: deps install
	@tests/external/mpich-binaries.sh "$(PREFIX)"

clean:
	$(CARGO) clean
	rm -rf install tests/build benches/build
