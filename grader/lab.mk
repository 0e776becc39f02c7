# Included by the Makefile of each lab folder: `make check` there grades that lab alone, from
# the folder it is in (labs/ or solutions/). Extra variables (BACKEND, DEVICE, SEED, TASK) pass on.
lab_dir := $(patsubst %/,%,$(dir $(abspath $(firstword $(MAKEFILE_LIST)))))
root_dir := $(abspath $(lab_dir)/../..)

.PHONY: check
check:
	@$(MAKE) --no-print-directory -C $(root_dir) check LAB=$(notdir $(lab_dir)) SOURCE=$(abspath $(lab_dir)/..)
