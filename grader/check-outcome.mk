# How `make check` ends (included by the top Makefile and by grader/lab.mk). A failed check ends in
# gpulab's words, not with make's "make: *** [Makefile:N: check] Error 1", which reads like a
# failed build: check-run records why the check did not pass in CHECK_OUTCOME (gpulab writes its
# line; after a crash or a usage error the recipe writes the exit status) and succeeds; check,
# whose recipe is expanded only after check-run has run, then stops make with that line through
# $(error). GNU make cannot exit non-zero without a line of its own, so make still puts the
# Makefile's name and line and "***" in front.
#
# - Each make reads its own file, named after its process: two checks at once never read each
#   other's, and the file goes once read.
# - $(file <) needs GNU make 4.2 (Debian 12 has 4.3); older makes (macOS's 3.81) keep make's own
#   error line: the Makefile's check-run then exits with gpulab's status.
# - A dry run (make -n) prints the commands and stops on nothing; $(error) ends make even under -k.

outcome_readable := $(filter-out 3.% 4.0 4.1,$(MAKE_VERSION))
dry_run := $(findstring n,$(firstword -$(MAKEFLAGS)))
make_pid := $(shell echo $$PPID)

# Stops make with the line in file $1, removing the file as it reads it (the arguments of $(error)
# are expanded in order: the file is read before rm runs); nothing when it is absent or empty, in a
# dry run, or on a make too old to read it.
end_with_outcome = $(if $(dry_run)$(if $(outcome_readable),,old),,$(if $(file < $1),$(error $(file < $1)$(shell \
  rm -f "$1"))))
