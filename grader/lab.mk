# Included by the Makefile of each lab folder: `make check` there grades that lab alone, from
# the folder it is in (labs/ or solutions/). Extra variables (BACKEND, DEVICE, SEED, TASK) pass on.
lab_dir := $(patsubst %/,%,$(dir $(abspath $(firstword $(MAKEFILE_LIST)))))
root_dir := $(abspath $(lab_dir)/../..)

# As at the top (grader/check-outcome.mk): the top's check-run records why a check did not pass,
# and check here stops make with that line, so a failed check does not end in make's "Error 2" for
# the sub-make. BUILD, when given, is the top's build folder, relative to the top.
include $(root_dir)/grader/check-outcome.mk
lab_outcome := $(abspath $(if $(filter /%,$(BUILD)),,$(root_dir)/)$(or $(BUILD),build))/.check-outcome-$(make_pid)

.PHONY: check check-run
check-run:
	@$(MAKE) --no-print-directory -C $(root_dir) check-run LAB=$(notdir $(lab_dir)) SOURCE=$(abspath $(lab_dir)/..) \
	  CHECK_OUTCOME="$(lab_outcome)"

check: check-run
	@$(call end_with_outcome,$(lab_outcome))
