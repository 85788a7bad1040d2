# engram: `make demo` shows it working, `make test` runs the whole suite.
BUILD    ?= build
JOBS     ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo bench asan tsan fuzz clean python

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The Python package (python/, docs/python.md) in $(BUILD)/python: PYTHONPATH=$(BUILD)/python.
python: deps
	$(MAKE) build
	@test -f $(BUILD)/python/engram/__init__.py || { echo "the Python package was not built: pybind11 not found (make deps installs pybind11-dev)"; exit 1; }
	@echo "PYTHONPATH=$(BUILD)/python /usr/bin/python3 -c 'import engram'"

demo: deps
	$(MAKE) build
	$(BUILD)/engram demo

bench: deps
	@scripts/install-bench-deps.sh
	$(MAKE) build
	bench/run.sh

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (separate build directory).
# -O1 -g1 (line tables only), as for make tsan: reports keep file:line, -O1 is what ASan's
# documentation suggests, and the two files measured compiled in about half the time of
# RelWithDebInfo's -O2 -g (bench/RESULTS.md, 2026-12-02), which keeps .ci/run inside CI's time.
ASAN_BUILD    ?= build-asan
ASAN_CXXFLAGS ?= -O1 -g1 -DNDEBUG
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DENGRAM_SANITIZE=address,undefined -DENGRAM_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(ASAN_CXXFLAGS)" $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# The threaded parts under ThreadSanitizer (separate build directory, docs/limits.md): the server
# (HTTP thread pool, batcher workers, metrics, SIGTERM with requests in flight), the thread teams
# (kernels/parallel.h: parallel_for and the threaded ops, the split products, decoding's row
# split, the trainer's steps), on two threads.
# Only the programs those tests need are built. CMakeLists.txt disables, with its reasons, the
# fault test and the MPI test under TSan. tests/tsan.supp holds suppressions for reports inside
# uninstrumented third-party code only.
# -O1 -g1 (line tables only): TSan's reports keep file:line, and a clean build takes about 40% less
# CPU than RelWithDebInfo's -O2 -g (bench/RESULTS.md), which is what lets .ci/run afford it.
TSAN_BUILD   ?= build-tsan
TSAN_CXXFLAGS ?= -O1 -g1 -DNDEBUG
TSAN_TARGETS := test_serve test_train test_core test_decode engram
TSAN_TESTS   := ^(ArenaTest|Blas\.(Bf16|ReorderedBf16)|GemmInt8|Serve|Batcher|Trainer\.|Parallel|OnTeam|Search|BeamSearch|BlockNgramRepeat|CoveragePenalty|MinLength)
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DENGRAM_SANITIZE=thread -DENGRAM_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(TSAN_CXXFLAGS)" $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)
	cd $(TSAN_BUILD) && OMP_NUM_THREADS=2 \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest -R '$(TSAN_TESTS)' --output-on-failure -j $(JOBS)

# libFuzzer harnesses of every reader (fuzz/README.md): a clang build with
# -fsanitize=fuzzer,address,undefined in build-fuzz/, then each harness for FUZZ_SECONDS
# (FUZZ_TARGETS="tree wav" picks some; the summary prints the runs per harness).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= $(JOBS)
FUZZ_TARGETS ?=
fuzz:
	@scripts/install-fuzz-deps.sh
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=clang++ -DENGRAM_FUZZ=ON -DENGRAM_BUILD_BENCH=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	nice cmake --build $(FUZZ_BUILD) --target fuzz_all -j $(FUZZ_JOBS)
	fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf build build-asan build-tsan
