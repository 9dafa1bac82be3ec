# Zeus in C++ — the two commands of the README:
#   make run    installs what is missing, builds, runs the main job
#   make test   installs what is missing, builds, runs every test (plus the ASan+UBSan unit tests)
# Other targets: make build, make bench, make asan, make hw (checks that need an NVIDIA GPU),
# make format, make deps, make clean.

JOBS ?= $(shell nproc)
BUILD := build/release
ASAN_BUILD := build/asan
ZEUS := $(BUILD)/bin/zeus

# Debian packages the build, the tests and the main job need.
DEB_PACKAGES := build-essential cmake pkg-config libexpected-dev nlohmann-json3-dev libcli11-dev \
  libsqlite3-dev sqlite3 libgtest-dev libgmock-dev googletest libbenchmark-dev gnuplot-nox \
  libpqxx-dev postgresql prometheus-cpp-dev pybind11-dev python3-dev libssl-dev openssl \
  python3-pytest python3-numpy python3-torch libtorch-dev chromium clang libclang-rt-14-dev ccache \
  libtomlplusplus-dev libboost-dev liburiparser-dev python3-httpx python3-pydantic python3-scipy \
  libjwt-dev prometheus prometheus-pushgateway curl

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

FUZZ_BUILD := build/fuzz
NODE_TESTS := test/e2e/node
FUZZ_SECONDS ?= 60

.PHONY: all deps configure build run test unit-test asan fuzz bench hw format clean

all: build

# Installs the Debian packages that are missing (apt-get update only when something is). Boost is
# Debian's default libboost-dev, so python3-scipy can sit beside the project; a libboost1.81-dev
# left by an older checkout conflicts with it and is removed in the same apt-get call. Node.js and
# npm (Debian's, unless an npm is already there) run OpenAI's own client library in a test; npm
# installs that library, pinned by $(NODE_TESTS)/package-lock.json, into $(NODE_TESTS)/node_modules.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ] && dpkg-query -W -f='$${Status}' libboost1.81-dev 2>/dev/null | grep -q "install ok installed"; then \
	  echo "Removing libboost1.81-dev (older checkouts used it; it conflicts with libboost-dev)"; \
	  missing="$$missing libboost1.81-dev-"; \
	fi; \
	command -v npm > /dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@cmp -s $(NODE_TESTS)/package-lock.json $(NODE_TESTS)/node_modules/.installed-lock.json || { \
	  echo "Installing OpenAI's Node client library for the tests (npm ci in $(NODE_TESTS))"; \
	  npm ci --prefix $(NODE_TESTS) --no-audit --no-fund --loglevel=error && \
	  cp $(NODE_TESTS)/package-lock.json $(NODE_TESTS)/node_modules/.installed-lock.json; }

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake --preset release > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./scripts/main_job.sh $(BUILD)

test: build
	ctest --preset release -j $(JOBS)
	$(MAKE) asan
	$(MAKE) fuzz

asan: deps
	@[ -f $(ASAN_BUILD)/CMakeCache.txt ] || cmake --preset asan > /dev/null
	cmake --build $(ASAN_BUILD) --target zeus_unit_tests -j $(JOBS)
	ctest --preset asan -j $(JOBS)

# Each libFuzzer target in fuzz/ runs FUZZ_SECONDS, JOBS at a time (built with clang,
# ASan+UBSan+fuzzer; -O1 with line tables: the findings' stacks keep their file:line).
fuzz: deps
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
	  -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" \
	  -DZEUS_FUZZ=ON -DZEUS_WERROR=OFF -DZEUS_BUILD_BENCH=OFF > /dev/null
	cmake --build $(FUZZ_BUILD) --target zeus_fuzzers -j $(JOBS)
	./scripts/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS)

bench: build
	@for b in $(BUILD)/bench/*_bench; do echo "== $$b"; $$b || exit 1; done

hw: build
	ctest --test-dir $(BUILD) -L hw --output-on-failure

format:
	find include src tools testing bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf build

# pip install of zeus_cpp into a virtual environment (python/setup.py, test e2e.pip_install_venv).
DEB_PACKAGES += python3-venv python3-pip python3-setuptools python3-wheel
