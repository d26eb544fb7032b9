# mxp — the README's commands.  CMake does the building; this file only
# gives the short names and installs what is missing first.
BUILD    ?= build
PREFIX   ?= /usr/local
INSTALL_BUILD ?= build-install
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# The Python that make check's virtual environments are made from (PyPI's
# NumPy 2 and the peers; Debian's /usr/bin/python3 with NumPy 1.24 is the
# other generation, built and tested too).
PYTHON   ?= python3
VENVS    = $(BUILD)/venv $(BUILD)/venv-numpy2.0
VENV_PYTHONS = $(subst $(eval) ,;,$(foreach v,$(VENVS),$(abspath $(v))/bin/python))

# CMake's makefiles call make within make: without this, every level says
# "Entering directory" around every target and buries the compiler's words.
MAKEFLAGS += --no-print-directory

.PHONY: all deps venv build build-venvs demo check check-exhaustive check-sanitize check-tsan check-fuzz coverage bench install clean minilm-table cnn-table cnn-weights examples

all: build

deps:
	@scripts/install-deps.sh

# build/venv: the newest NumPy with torch, JAX, ml_dtypes and safetensors;
# build/venv-numpy2.0: NumPy 2.0 (python/requirements/).  Kept until the
# requirements file changes.
venv:
	@scripts/make-venv.sh $(PYTHON) $(BUILD)/venv python/requirements/venv.txt
	@scripts/make-venv.sh $(PYTHON) $(BUILD)/venv-numpy2.0 python/requirements/venv-numpy2.0.txt

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMXP_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/mxp tour

# The example operator plugin, $(BUILD)/examples/libmxp_example_ops.so
# (examples/plugins/, docs/plugins.md); the default build makes it too.
examples: build
	@cmake --build $(BUILD) --target examples
	@echo "built $(BUILD)/examples/libmxp_example_ops.so: mxp op list --plugin $(BUILD)/examples/libmxp_example_ops.so"

# The build with the Python package for the virtual environments too.
build-venvs: deps venv
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMXP_WERROR=ON "-DMXP_PYTHON_VENVS=$(VENV_PYTHONS)" \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Everything ctest has, the Python suite once per NumPy: Debian's 1.24, and
# the virtual environments' newest 2.x and 2.0.
check: build-venvs
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE exhaustive

# all-MiniLM-L6-v2 run by mxp.models.minilm in every precision beside
# sentence-transformers, torch (float32, bf16 autocast) and onnxruntime's
# dynamic int8: build/venv-models (python/requirements/venv-models.txt,
# the model from PyPI; its Python and NumPy match build/venv's, whose
# extension build/python-venv it uses), then the table into docs/minilm.md
# and README.md, the numbers into python/benchmarks/minilm/last-run.json.
# Not in make check: minutes of timing on a quiet machine.
# MINILM_FLAGS=--quick: 200 sentences, printed only.
MINILM_FLAGS ?= --write --json python/benchmarks/minilm/last-run.json

minilm-table: build-venvs
	@scripts/make-venv.sh $(PYTHON) $(BUILD)/venv-models python/requirements/venv-models.txt
	@PYTHONPATH=$(abspath $(BUILD))/python-venv $(BUILD)/venv-models/bin/python python/benchmarks/minilm_table.py \
	  $(MINILM_FLAGS)

# The digits CNN (mxp.models.cnn, docs/cnn.md) in every precision beside
# torch (float32, bf16 autocast) and onnxruntime's static int8: the table
# into docs/cnn.md and README.md, one thread.  CNN_FLAGS=--quick: 10 rounds,
# printed only.  cnn-weights retrains it (torch, one thread, fixed seeds)
# into data/cnn/cnn-digits.safetensors and its .sha256.
CNN_FLAGS ?= --write

cnn-table: build-venvs
	@scripts/make-venv.sh $(PYTHON) $(BUILD)/venv-models python/requirements/venv-models.txt
	@PYTHONPATH=$(abspath $(BUILD))/python-venv $(BUILD)/venv-models/bin/python scripts/cnn-table.py $(CNN_FLAGS)

cnn-weights:
	@scripts/make-venv.sh $(PYTHON) $(BUILD)/venv-models python/requirements/venv-models.txt
	@$(BUILD)/venv-models/bin/python scripts/train-cnn.py

check-exhaustive: build
	@cd $(BUILD) && ctest --output-on-failure -L exhaustive --timeout 7200 -V

check-sanitize: deps
	@cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DMXP_WERROR=ON -DMXP_SANITIZE=ON >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ctest --output-on-failure -j $(JOBS) -LE exhaustive

# The tests labelled tsan under ThreadSanitizer (gcc): test_concurrency
# (program threads running GEMM, conversions, quantization and operations at
# once, each result compared bit for bit with a one-thread run, while the
# pool is shut down and restarted), test_threads (the pool), test_fpenv,
# test_memory (GEMM workspaces and huge-page blocks at one and two threads),
# test_ew_lut (two threads building one 16-bit unary table).
TSAN_TESTS = test_concurrency test_threads test_fpenv test_memory test_ew_lut

check-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMXP_WERROR=ON -DMXP_SANITIZE_THREAD=ON >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS)
	@cd build-tsan && TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" ctest --output-on-failure -L tsan

# The test suite on a --coverage build, then gcovr's line coverage of src/;
# fails below COVERAGE_FLOOR percent.  The floor is what the suite reaches
# on an AVX2 machine without AVX-512, rounded down (77.9%: the AVX-512
# kernels, 1097 lines, cannot run there; the rest is at 92.1%;
# docs/reliability.md).  The report lands in build-coverage/coverage.txt.
COVERAGE_FLOOR ?= 77

coverage:
	@scripts/install-deps.sh coverage
	@cmake -S . -B build-coverage -DCMAKE_BUILD_TYPE=Debug -DMXP_WERROR=ON -DMXP_COVERAGE=ON >/dev/null
	@cmake --build build-coverage -j $(JOBS)
	@find build-coverage -name '*.gcda' -delete
	@cd build-coverage && ctest --output-on-failure -j $(JOBS) -LE exhaustive
	@gcovr -r . --object-directory build-coverage --filter 'src/' -j $(JOBS) -o build-coverage/coverage.txt \
	  --print-summary --fail-under-line $(COVERAGE_FLOOR)

# The .npy reader under libFuzzer + ASan + UBSan for FUZZ_TIME seconds.  The
# library sources are compiled directly, without the SIMD kernels (the
# reference converter serves every pair).  Findings land in build-fuzz/
# (crash-*, leak-*): fix them, then add the file to tests/fuzz/regressions/.
# Then the other files the CLI reads, FUZZ_TIME seconds each, with the
# whole library (portable kernels) and the command's own readers
# (tools/mxp): `mxp train --data` (fuzz_train_data) and `mxp quant-gemm
# --a --b` (fuzz_quant_gemm_inputs); their findings go to build-fuzz/<target>/
# and then to tests/fuzz/regressions_<train_data|quant_gemm>/ (replayed by
# test_fuzz_replay in make check).
FUZZ_CC   ?= clang-14
FUZZ_TIME ?= 60
FUZZ_SOURCES = $(wildcard src/core/*.c src/convert/*.c src/array/*.c src/io/*.c)
FUZZ_FLAGS = -std=c11 -g -O1 -Wall -Wextra -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Iinclude -Isrc -Itools/mxp
FUZZ_LIB_SOURCES = $(wildcard src/*/*.c src/kernels/*/scalar.c)
FUZZ_TOOL_SOURCES = $(addprefix tools/mxp/,train.c train_data.c train_mlp.c train_run.c train_loop.c train_ptq.c \
  train_cnn.c train_cnn_run.c quant_gemm.c quant_gemm_pipeline.c cli.c cli_json.c cli_progress.c)
FUZZ_OBJECTS = $(patsubst %.c,build-fuzz/obj/%.o,$(FUZZ_LIB_SOURCES) $(FUZZ_TOOL_SOURCES))
FUZZ_TARGETS = train_data quant_gemm_inputs safetensors
.SECONDARY: $(FUZZ_OBJECTS)

check-fuzz:
	@scripts/install-deps.sh fuzz
	@mkdir -p build-fuzz/corpus
	$(FUZZ_CC) -std=c11 -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -Iinclude -Isrc $(FUZZ_SOURCES) tests/fuzz/fuzz_npy.c -o build-fuzz/fuzz_npy -lm -pthread
	build-fuzz/fuzz_npy tests/fuzz/regressions/*.npy
	build-fuzz/fuzz_npy -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/npy.dict -artifact_prefix=build-fuzz/ \
	  build-fuzz/corpus tests/fuzz/corpus
	@$(MAKE) -j $(JOBS) $(addprefix build-fuzz/fuzz_,$(FUZZ_TARGETS))
	build-fuzz/fuzz_train_data tests/fuzz/regressions_train_data/*
	build-fuzz/fuzz_quant_gemm_inputs tests/fuzz/regressions_quant_gemm/*
	build-fuzz/fuzz_safetensors tests/fuzz/regressions_safetensors/*.safetensors
	@for t in $(FUZZ_TARGETS); do mkdir -p build-fuzz/$$t/corpus; done
	build-fuzz/fuzz_train_data -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/npy.dict \
	  -artifact_prefix=build-fuzz/train_data/ build-fuzz/train_data/corpus tests/fuzz/corpus_train_data
	build-fuzz/fuzz_quant_gemm_inputs -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/npy.dict \
	  -artifact_prefix=build-fuzz/quant_gemm_inputs/ build-fuzz/quant_gemm_inputs/corpus tests/fuzz/corpus_quant_gemm
	build-fuzz/fuzz_safetensors -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/safetensors.dict \
	  -artifact_prefix=build-fuzz/safetensors/ build-fuzz/safetensors/corpus tests/fuzz/corpus_safetensors

build-fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	@$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJECTS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Itests/fuzz -fsanitize=fuzzer $^ -o $@ -lm -pthread

-include $(wildcard build-fuzz/obj/*/*.d build-fuzz/obj/*/*/*.d build-fuzz/obj/*/*/*/*.d)

bench: build-venvs
	@scripts/install-deps.sh bench
	@$(BUILD)/mxp bench convert
	@$(BUILD)/mxp bench ops
	@$(BUILD)/mxp bench gemm --set standard
	@$(BUILD)/mxp bench gemm --set standard --threads 2
	@$(BUILD)/mxp bench gemm --set small
	@$(BUILD)/mxp bench gemm --m 256 --n 256 --k 256 --alternate
	@$(BUILD)/mxp bench gemm --m 512 --n 512 --k 512 --alternate
	@$(BUILD)/mxp bench convert --pairs f32:bf16,f32:f16 --modes nearest_even --threads 1,2
	@$(BUILD)/mxp bench quant
	@$(BUILD)/mxp bench profile
	@$(BUILD)/mxp bench fft
	@$(BUILD)/mxp bench nn
	@$(BUILD)/tests/bench_kernels
	@PYTHONPATH=$(BUILD)/python MXP_LIB=$(BUILD)/libmxp.so /usr/bin/python3 python/benchmarks/bench_python.py
	@PYTHONPATH=$(BUILD)/python-venv $(BUILD)/venv/bin/python python/benchmarks/bench_peers.py
	@/usr/bin/python3 python/benchmarks/goals.py --mxp $(BUILD)/mxp

# make install [PREFIX=/usr/local]: the library (shared and static), headers,
# the mxp command, pkg-config and CMake files, and the Python package when
# Python's headers and NumPy are there -- built in $(INSTALL_BUILD) without
# the tests, so it needs only the build packages (install-deps.sh build).
# Into /usr or /usr/local as root it refreshes the loader's cache.
install:
	@scripts/install-deps.sh build
	@cmake -S . -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=Release -DMXP_BUILD_TESTS=OFF \
	  -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX)) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(INSTALL_BUILD) -j $(JOBS)
	@cmake --install $(INSTALL_BUILD)
	@case "$(abspath $(PREFIX))" in /usr|/usr/local) [ "$$(id -u)" -ne 0 ] || ldconfig;; esac

clean:
	rm -rf $(BUILD) $(INSTALL_BUILD) build-sanitize build-tsan build-coverage build-fuzz
