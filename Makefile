# Entry points for people and CI. `make demo` and `make test` work on a fresh Debian 12 machine.
PRESET ?= release
JOBS   ?= $(shell nproc)
BUILD  := build/$(PRESET)

.PHONY: all deps configure build demo test bench asan tsan asan-fast clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The demo needs the asteria program alone, not the test suite.
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target asteria
	@$(BUILD)/apps/asteria/asteria demo

test: build
	@cd $(BUILD) && OPENBLAS_NUM_THREADS=1 ctest --output-on-failure -j $(JOBS)

bench: build
	@scripts/run-bench.sh $(BUILD)

# The whole suite under a sanitizer; the SIGKILL-during-checkpoint test draws 20 kill points
# instead of 100 there (ASTERIA_KILLS=N to choose), as each run is several times slower.
asan:
	@ASTERIA_KILLS=$${ASTERIA_KILLS:-20} $(MAKE) --no-print-directory test PRESET=asan

tsan:
	@ASTERIA_KILLS=$${ASTERIA_KILLS:-20} $(MAKE) --no-print-directory test PRESET=tsan

# The runtime's own tests (ctest label core: no command line, no simulator) under ASan + UBSan:
# what CI adds to `make test`, within its time budget.
CORE_TESTS := test_common test_linalg test_ops test_optim test_io test_checkpoint test_service test_nvme test_store \
              test_driver test_workload test_model test_data test_plan
asan-fast: deps
	@cmake --preset asan >/dev/null
	@cmake --build build/asan -j $(JOBS) --target $(CORE_TESTS)
	@cd build/asan && OPENBLAS_NUM_THREADS=1 ctest -L '^core$$' --output-on-failure -j $(JOBS)

clean:
	@rm -rf build
