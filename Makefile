# OxMPI front end, in the HPC habit: `make demo`, `make check`, `make install PREFIX=...`.
PREFIX ?= $(CURDIR)/install
CARGO ?= cargo
PYTHON ?= python3
RELEASE_DIR := target/release

.PHONY: all build gen install demo check deps clean

all: install

## deps: install missing Debian packages and the Rust toolchain pieces the build needs.
deps:
	@scripts/install-deps.sh

## gen: regenerate mpi-capi/src/generated.rs (MPI_* forwarders and not-yet-supported stubs)
## and the Fortran bindings (mpi-capi/src/fortran.rs, mpif.h, the mpi module source).
gen:
	@$(PYTHON) mpi-capi/gen/gen_abi.py
	@$(PYTHON) mpi-capi/gen/gen_fortran.py

build: gen
	$(CARGO) build --release -p mpi-capi -p launcher

install: build
	@scripts/install-tree.sh "$(PREFIX)" "$(RELEASE_DIR)"

demo: deps install
	@scripts/demo.sh "$(PREFIX)"

check: deps install
	@scripts/check.sh "$(PREFIX)"

clean:
	$(CARGO) clean
	rm -rf install tests/build benches/build
