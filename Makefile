# mxp — the README's commands.  CMake does the building; this file only
# gives the short names and installs what is missing first.
BUILD    ?= build
PREFIX   ?= /usr/local
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build demo check check-exhaustive check-sanitize bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMXP_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/mxp tour

check: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE exhaustive

check-exhaustive: build
	@cd $(BUILD) && ctest --output-on-failure -L exhaustive --timeout 7200 -V

check-sanitize: deps
	@cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DMXP_WERROR=ON -DMXP_SANITIZE=ON >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ctest --output-on-failure -j $(JOBS) -LE exhaustive

bench: build
	@$(BUILD)/mxp bench convert

install: build
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-sanitize
