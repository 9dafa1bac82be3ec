# Zeus in C++ — the two commands of the README:
#   make run    installs what is missing, builds, runs the main job
#   make test   installs what is missing, builds, runs every test (plus the ASan+UBSan unit tests)
# Other targets: make build, make wheel, make bench, make asan, make fuzz, make hw (checks that
# need an NVIDIA GPU), make format, make deps, make clean.

JOBS ?= $(shell nproc)
BUILD := build/release
ASAN_BUILD := build/asan
ZEUS := $(BUILD)/bin/zeus

# Debian packages: RUN_PACKAGES build zeus and run the main job (all `make run` installs);
# TEST_PACKAGES are what the tests, the sanitizer and fuzz builds, the wheels and the benchmarks
# add (`make test`, `make deps`).
RUN_PACKAGES := build-essential cmake pkg-config libexpected-dev nlohmann-json3-dev libcli11-dev \
  libsqlite3-dev libpqxx-dev libmariadb-dev prometheus-cpp-dev libssl-dev libtomlplusplus-dev \
  libboost-dev liburiparser-dev libjwt-dev libre2-dev gnuplot-nox ccache ninja-build
TEST_PACKAGES := libgtest-dev libgmock-dev googletest libbenchmark-dev sqlite3 postgresql \
  mariadb-server pybind11-dev python3-dev openssl python3-pytest python3-numpy python3-torch \
  libtorch-dev chromium clang libclang-rt-14-dev python3-httpx python3-pydantic python3-scipy \
  prometheus prometheus-pushgateway curl python3-venv python3-pip python3-setuptools python3-wheel \
  patchelf binutils mmdebstrap help2man lld
DEB_PACKAGES := $(RUN_PACKAGES) $(TEST_PACKAGES)

FUZZ_BUILD := $(ASAN_BUILD)
NODE_TESTS := test/e2e/node
FUZZ_SECONDS ?= 60

.PHONY: all deps configure build run test wheel hw-kit deb asan-build asan fuzz bench hw format clean

all: build

LOGS := build/logs

# Installs the missing Debian packages (scripts/deps.sh; apt's output goes to $(LOGS)/apt.log).
# Node.js and npm (Debian's, unless an npm is already there) run OpenAI's own client library in a
# test; npm installs that library, pinned by $(NODE_TESTS)/package-lock.json, into
# $(NODE_TESTS)/node_modules.
deps:
	@./scripts/deps.sh $(LOGS)/apt.log $(DEB_PACKAGES) $$(command -v npm > /dev/null || echo nodejs npm)
	@cmp -s $(NODE_TESTS)/package-lock.json $(NODE_TESTS)/node_modules/.installed-lock.json || { \
	  echo "Installing OpenAI's Node client library for the tests (npm ci in $(NODE_TESTS))"; \
	  npm ci --prefix $(NODE_TESTS) --no-audit --no-fund --loglevel=error && \
	  cp $(NODE_TESTS)/package-lock.json $(NODE_TESTS)/node_modules/.installed-lock.json; }

# Configured again once the test packages are there (a tree `make run` configured has no tests).
configure: deps
	@[ -f $(BUILD)/.configured-with-tests ] || { cmake --preset release > /dev/null && touch $(BUILD)/.configured-with-tests; }

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The lean path: build packages only, the zeus program only, the main job (scripts/make_run.sh).
run:
	@./scripts/make_run.sh $(BUILD) $(RUN_PACKAGES)

# Every stage, timed, with the table of stages and times at the end (scripts/make_test.sh).
test:
	@./scripts/make_test.sh

# Wheels of zeus_cpp for every CPython 3.10-3.13 found, in dist/ (packaging/wheel/build.sh).
wheel: configure
	./packaging/wheel/build.sh $(BUILD) dist

# The GPU check kit in build/hw-kit (packaging/hw-kit): copy it to an NVIDIA machine and run
# ./run.sh there; `./run.sh --fake` runs it here on the fake NVML (a test in make test).
hw-kit: wheel
	./packaging/hw-kit/assemble.sh $(BUILD) dist build/hw-kit

# The Debian package for operators in dist/ (packaging/CMakeLists.txt, CPack's DEB generator).
deb: configure
	cmake --build $(BUILD) -j $(JOBS) --target zeus_cli zeusd zeus_man_pages
	cpack --config $(BUILD)/packaging/CPackConfig.cmake

# One sanitizer tree (preset asan: clang, ASan+UBSan, libFuzzer's coverage instrumentation): the
# unit tests and the libFuzzer targets are linked from the same objects.
asan-build: deps
	@[ -f $(ASAN_BUILD)/CMakeCache.txt ] || cmake --preset asan > /dev/null
	cmake --build $(ASAN_BUILD) --target zeus_unit_tests zeus_fuzzers -j $(JOBS)

asan: asan-build
	ctest --preset asan -j $(JOBS)

# Each libFuzzer target in fuzz/ runs FUZZ_SECONDS, JOBS at a time (the sanitizer tree's fuzz/:
# -O1 with line tables, so the findings' stacks keep their file:line).
fuzz: asan-build
	./scripts/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS)

bench: build
	@for b in $(BUILD)/bench/*_bench; do echo "== $$b"; $$b || exit 1; done

hw: build
	ctest --test-dir $(BUILD) -L hw --output-on-failure

format:
	find include src tools testing bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf build
