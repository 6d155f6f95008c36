# Entry points for people and CI. `make demo` and `make test` work on a fresh Debian 12 machine.
PRESET ?= release
JOBS   ?= $(shell nproc)
BUILD  := build/$(PRESET)

.PHONY: all deps configure build demo test bench asan tsan clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/apps/asteria/asteria demo

test: build
	@cd $(BUILD) && OPENBLAS_NUM_THREADS=1 ctest --output-on-failure -j $(JOBS)

bench: build
	@scripts/run-bench.sh $(BUILD)

asan:
	@$(MAKE) --no-print-directory test PRESET=asan

tsan:
	@$(MAKE) --no-print-directory test PRESET=tsan

clean:
	@rm -rf build
