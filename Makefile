# gpulab: `make check` grades the labs, `make test` runs the project's tests. Both install what is
# missing (scripts/install-deps.sh) and build the harness into build/ first.
#
#   make check                      every lab in labs/, on the best device
#   make check LAB=transpose        one lab (its folder, name or number)
#   make check SOURCE=solutions     the reference solutions (or any folder in the course layout)
#   make check BACKEND=opencl DEVICE=0 SEED=123 TASK=naive TIMEOUT=20
#   make devices                    list CUDA and OpenCL devices
#   make test                       the project's own test suite (CTest)

BUILD ?= build
SOURCE ?= labs
GENERATOR := $(if $(shell command -v ninja 2>/dev/null),-G Ninja,)
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

source_dir = $(if $(filter labs solutions,$(SOURCE)),$(CURDIR)/$(SOURCE),$(abspath $(SOURCE)))
check_args = --source "$(source_dir)" $(if $(LAB),--lab $(LAB)) $(if $(TASK),--task $(TASK)) \
  $(if $(BACKEND),--backend $(BACKEND)) $(if $(DEVICE),--device "$(DEVICE)") $(if $(SEED),--seed $(SEED)) \
  $(if $(TIMEOUT),--timeout $(TIMEOUT))

.PHONY: all deps harness check test devices clean
all: check

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	@cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release >/dev/null

harness: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) --parallel $(JOBS) 2>&1 | grep -v '^\[' || true
	@test -x $(BUILD)/gpulab || { echo "gpulab: the harness did not build (see above)"; exit 2; }

check: harness
	@$(BUILD)/gpulab check $(check_args)

devices: harness
	@$(BUILD)/gpulab devices

test: harness
	@cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(JOBS)

clean:
	rm -rf $(BUILD)
