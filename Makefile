# gpulab: `make check` grades the labs, `make test` runs the project's tests. Each target first
# installs the Debian packages it needs and are missing (scripts/install-deps.sh, by group), and
# builds the harness into build/ (scripts/build-harness.sh; the first build takes a few minutes).
#
#   make check                      every lab in labs/, on the best device
#   make check LAB=transpose        one lab (its folder, name or number); LAB="transpose scan" or LAB=transpose,scan: several
#   make check SOURCE=solutions     the reference solutions, any folder of lab folders, or a clone's root (holding labs/)
#   make check BACKEND=opencl DEVICE=0 SEED=123 TASK=naive TIMEOUT=20
#   make check SANITIZE=1           CUDA: the correctness cases under compute-sanitizer (races, out-of-bounds, barriers)
#   make check RECALIBRATE=1        measure the calibrations afresh (they are cached for 10 minutes)
#   make check PROFILE=1            CUDA: each task's timing case under Nsight Compute, its counters explained
#   make devices                    list CUDA and OpenCL devices
#   make instructor                 build the instructor's command (grade, audit, similarity, release), which
#                                   the instructor targets below build themselves
#   make history [LAB=..]           your checks so far, per lab: a timeline (and plots, with matplotlib)
#   make test                       the project's own test suite (CTest)
#   make format                     apply the house style (.clang-format) to every C++, CUDA and OpenCL source
#   make docs [EDITION=student]     the lecture companion (docs/) as a site in build/site
#   make lab-lists                  the lists of labs in README.md, docs/index.md and mkdocs.yml, from the manifests
#   make bench-docs                 measure the solutions on this device into docs/measured/
#   make grade SUBMISSIONS=dir [OUT=results] [GRADE_JOBS=4] [FORCE=1] [CALIBRATE=1] [LAB="a b"] [BACKEND=..]
#              [DEVICE=..] [SEED=..] [TIMEOUT=s] [TIME_LIMIT=s] [MEMORY=GiB] [PROCESSES=n] [OUTPUT_LIMIT=MiB] [QUIET=1]
#              [LEADERBOARD=1] [DEADLINES=due.csv] [HIDDEN_VISIBILITY=after_due_date] [SANITIZE=1|0]
#              [SLURM=1 [PARTITION=p] [GRES=gpu:1] [SLURM_TIME=2:00:00] [ARRAY_CHUNK=10] [MAX_RUNNING=n]
#               [SBATCH_ARG=..] [STATUS=1]]
#                                   batch-grade one folder or archive per student (gpulab grade --help); on
#                                   CUDA the sanitizer gate runs racecheck and synccheck by default on the
#                                   tasks with shared memory or barriers; SANITIZE=1 every tool and task, SANITIZE=0 off
#   make similarity SUBMISSIONS=dir [OUT=results] [LAB=..] [BACKEND=..] [MIN_PERCENT=10]
#                                   pairs of students with similar lab files: OUT/similarity/index.html
#   make student-release OUT=dir    the repository students clone: no solutions/, no hidden cases
#                                   (CUDA_ARCHS="sm_80 sm_90": the GPUs its compiled harness kernels target)
#   make audit [LAB=..] [SANITIZE=1]  mutants of each lab's reference solution, graded: which ones the grader kills
#   make serve [SERVER_DIR=server] [LISTEN=127.0.0.1:8080] [WORKERS=1] [BACKEND=..] [DEVICE=..]
#              [SLURM=1 [PARTITION=p] [GRES=gpu:1] [SLURM_TIME=0:30:00]]
#                                   the course server students submit to (SQLite in SERVER_DIR; gpulab serve --help)
#   make roster ROSTER=class.csv [SERVER_DIR=server]
#                                   import the class (id,name,email) and write each new student's token to
#                                   SERVER_DIR/tokens.csv
#   make submit LAB=x [SERVER=URL TOKEN=T] [STATUS=1]
#                                   send your lab to the course server and wait for its official report
#                                   (SERVER and TOKEN may live in .gpulab-submit: `server = URL`, `token = T`)
#   make bench-grader               how fast the grader answers: a check after an edit, a re-check, grade
#                                   throughput (scripts/bench-grader.sh: BENCH_LABS, BENCH_SUBMISSIONS=4,
#                                   BENCH_CLEAN_BUILD=1); a table, and build/bench-grader.json

BUILD ?= build
SOURCE ?= labs
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

source_dir = $(if $(filter labs solutions,$(SOURCE)),$(CURDIR)/$(SOURCE),$(abspath $(SOURCE)))
# LAB="transpose scan" or LAB=transpose,scan: one --lab per lab.
comma := ,
lab_args = $(foreach lab,$(subst $(comma), ,$(LAB)),--lab $(lab))
check_args = --source "$(source_dir)" $(lab_args) $(if $(TASK),--task $(TASK)) \
  $(if $(BACKEND),--backend $(BACKEND)) $(if $(DEVICE),--device "$(DEVICE)") $(if $(SEED),--seed $(SEED)) \
  $(if $(TIMEOUT),--timeout $(TIMEOUT)) $(if $(SANITIZE),--sanitize) $(if $(RECALIBRATE),--recalibrate) \
  $(if $(PROFILE),--profile) $(if $(FRESH),,--reuse)

.PHONY: all deps harness instructor lab-lists check check-run test devices history clean docs docs-figures bench-docs docs-measured grade student-release \
  audit bench-grader format similarity serve roster submit
all: check

# The package groups of scripts/install-deps.sh each target needs: the union over the goals given
# (`make check test` installs both), `check` when none is given.
DEPS_all := check
DEPS_check := check
DEPS_check-run := check
DEPS_harness := check
DEPS_instructor := check
DEPS_devices := check
DEPS_history := check
DEPS_deps := check
DEPS_student-release := check
DEPS_audit := check
DEPS_grade := check grade
DEPS_similarity := check grade
DEPS_bench-grader := check grade
DEPS_serve := check grade
DEPS_roster := check
DEPS_submit := check
DEPS_test := test
DEPS_format := test
DEPS_docs := docs
DEPS_docs-figures := plots
DEPS_docs-measured := plots
DEPS_bench-docs := check plots
DEPS_GROUPS := $(sort $(foreach goal,$(or $(MAKECMDGOALS),check),$(DEPS_$(goal))))

deps:
	@scripts/install-deps.sh $(DEPS_GROUPS)

# Configures once, then builds what `gpulab check` uses; quiet when nothing changed, and a failed
# configure or build stops make with cmake's exit status and its messages in full.
harness: deps
	@GPULAB_LABS="$(LAB)" scripts/build-harness.sh "$(BUILD)" $(JOBS)

# The instructor's command (gpulab-instructor: grade, audit, similarity, release) is built apart, so a
# student's first `make check` compiles none of it; these targets build it with the harness.
INSTRUCTOR_GOALS := instructor grade similarity student-release audit bench-grader serve roster
$(INSTRUCTOR_GOALS): export GPULAB_INSTRUCTOR := 1
instructor: harness

# A failed check ends with one line in gpulab's words instead of make's "Error 1" (see
# grader/check-outcome.mk): check-run records it, check stops make with it. A failed harness build
# still stops make with its own error.
include grader/check-outcome.mk
CHECK_OUTCOME ?= $(BUILD)/.check-outcome-$(make_pid)
check-run: harness
	@rm -f "$(CHECK_OUTCOME)"; status=0; $(BUILD)/gpulab check $(check_args) --outcome "$(CHECK_OUTCOME)" || status=$$?; \
	  if [ $$status -ne 0 ] && [ ! -s "$(CHECK_OUTCOME)" ]; then \
	    echo "gpulab check exited with status $$status (the messages above say why)" > "$(CHECK_OUTCOME)"; fi; \
	  $(if $(outcome_readable),true,rm -f "$(CHECK_OUTCOME)"; exit $$status)

check: check-run
	@$(call end_with_outcome,$(CHECK_OUTCOME))

# Instructors: batch grading and the student repository.
OUT ?= results
grade_args = --submissions "$(SUBMISSIONS)" --out "$(OUT)" $(lab_args) $(if $(BACKEND),--backend $(BACKEND)) \
  $(if $(DEVICE),--device "$(DEVICE)") $(if $(SEED),--seed $(SEED)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
  $(if $(TIME_LIMIT),--time-limit $(TIME_LIMIT)) $(if $(MEMORY),--memory $(MEMORY)) \
  $(if $(PROCESSES),--processes $(PROCESSES)) $(if $(OUTPUT_LIMIT),--output-limit $(OUTPUT_LIMIT)) $(if $(QUIET),--quiet) \
  $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS)) $(if $(FORCE),--force) $(if $(CALIBRATE),--calibrate) \
  $(if $(filter 0,$(SANITIZE)),--no-sanitize,$(if $(SANITIZE),--sanitize)) \
  $(if $(LEADERBOARD),--leaderboard) $(if $(HIDDEN_VISIBILITY),--hidden-visibility $(HIDDEN_VISIBILITY)) \
  $(if $(DEADLINES),--deadlines "$(DEADLINES)") \
  $(if $(SLURM),--slurm $(if $(PARTITION),--partition "$(PARTITION)") $(if $(GRES),--gres "$(GRES)") \
    $(if $(SLURM_TIME),--time "$(SLURM_TIME)") $(if $(ARRAY_CHUNK),--array-chunk $(ARRAY_CHUNK)) \
    $(if $(MAX_RUNNING),--max-running $(MAX_RUNNING)) $(if $(SBATCH_ARG),--sbatch-arg "$(SBATCH_ARG)") $(if $(STATUS),--status))

grade: harness
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=dir [OUT=results] [LAB=\"a b\"] [GRADE_JOBS=N] [FORCE=1] [CALIBRATE=1] [LEADERBOARD=1] [DEADLINES=due.csv] [HIDDEN_VISIBILITY=..] [SANITIZE=1|0] [SLURM=1 [PARTITION=p] [GRES=gpu:1] [SLURM_TIME=2:00:00] [ARRAY_CHUNK=10] [MAX_RUNNING=n] [STATUS=1]] (the Makefile's header lists them all)"; exit 2; }
	@$(BUILD)/gpulab grade $(grade_args)

similarity_args = --submissions "$(SUBMISSIONS)" --out "$(OUT)" $(lab_args) \
  $(if $(BACKEND),--backend $(BACKEND)) $(if $(MIN_PERCENT),--min-percent $(MIN_PERCENT))

similarity: harness
	@test -n "$(SUBMISSIONS)" || { echo "usage: make similarity SUBMISSIONS=dir [OUT=results] [LAB=..] [BACKEND=..] [MIN_PERCENT=10]"; exit 2; }
	@$(BUILD)/gpulab similarity $(similarity_args)

student-release: harness
	@test -n "$(filter command line environment,$(origin OUT))" || { echo "usage: make student-release OUT=dir"; exit 2; }
	@$(BUILD)/gpulab release --out "$(OUT)" $(foreach a,$(CUDA_ARCHS),--cuda-arch $(a))

# The course server and a student's submission to it (gpulab serve, roster and submit --help).
SERVER_DIR ?= server
LISTEN ?= 127.0.0.1:8080
serve: harness
	@$(BUILD)/gpulab serve --dir "$(SERVER_DIR)" --listen "$(LISTEN)" $(if $(BACKEND),--backend $(BACKEND)) \
	  $(if $(DEVICE),--device "$(DEVICE)") $(if $(WORKERS),--workers $(WORKERS)) $(if $(SLURM),--slurm \
	  $(if $(PARTITION),--grade-arg=--partition="$(PARTITION)") $(if $(GRES),--grade-arg=--gres="$(GRES)") \
	  $(if $(SLURM_TIME),--grade-arg=--time="$(SLURM_TIME)"))

roster: harness
	@test -n "$(ROSTER)" || { echo "usage: make roster ROSTER=class.csv [SERVER_DIR=server] (a CSV with the header id,name,email)"; exit 2; }
	@$(BUILD)/gpulab roster --dir "$(SERVER_DIR)" --import "$(ROSTER)"

submit: harness
	@$(BUILD)/gpulab submit $(if $(SERVER),--server "$(SERVER)") $(if $(TOKEN),--token "$(TOKEN)") \
	  $(if $(STATUS),--status,--lab "$(LAB)") $(if $(filter-out labs,$(SOURCE)),--source "$(source_dir)")

devices: harness
	@$(BUILD)/gpulab devices

# Your checks so far, per lab (build/history.jsonl): tables, and plots into build/history/ when
# matplotlib is installed.
history: harness
	@$(BUILD)/gpulab history $(if $(LAB),--lab $(LAB))
	@$(DOCS_PYTHON) scripts/history_plot.py "$(BUILD)/history.jsonl" "$(BUILD)/history" $(LAB)

# Instructors: mutants of each lab's reference solution, graded; the report says which ones the
# grader kills (gpulab audit --help).
audit: harness
	@$(BUILD)/gpulab audit $(lab_args) $(if $(BACKEND),--backend $(BACKEND)) $(if $(DEVICE),--device "$(DEVICE)") $(if $(SANITIZE),--sanitize)

# How fast the grader answers on this machine's best device (scripts/bench-grader.sh).
bench-grader: harness
	@BUILD="$(BUILD)" $(if $(BACKEND),BENCH_BACKEND=$(BACKEND)) $(if $(DEVICE),BENCH_DEVICE="$(DEVICE)") scripts/bench-grader.sh

format: deps
	@scripts/format.sh

test: deps
	@scripts/docs/venv.sh "$(DOCS_VENV)" || echo "gpulab: without the docs site generator the docs tests skip themselves; the rest runs"
	@scripts/build-harness.sh "$(BUILD)" $(JOBS) --all
	@cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(JOBS)

# The lecture companion. mkdocs builds docs/ (strictly: a broken link or a missing code section is
# an error). docs-figures redraws docs/figures/; bench-docs runs the solutions on this machine's
# device (every backend), keeps the reports in docs/measured/reports/ and renders the tables and
# plots of docs/measured/; docs-measured only renders (BENCH=dir: reports saved elsewhere, e.g.
# fetched from a GPU machine). Plots need python3-matplotlib.
DOCS_PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
BENCH ?= $(BUILD)/bench
MEASURED ?= docs/measured

# EDITION: instructor (solutions and answers; the default where solutions/ exists) or student (the
# default in the student repository). The site generator lives in $(BUILD)/docs-venv (scripts/docs/venv.sh).
DOCS_VENV = $(abspath $(BUILD))/docs-venv
EDITION ?= $(if $(wildcard solutions),instructor,student)
docs: deps
	@scripts/docs/venv.sh "$(DOCS_VENV)"
	@GPULAB_DOCS_EDITION=$(EDITION) NO_MKDOCS_2_WARNING=1 "$(DOCS_VENV)/bin/mkdocs" build --strict --quiet --site-dir "$(abspath $(BUILD))/site"
	@echo "docs: the $(EDITION) edition is built; open file://$(abspath $(BUILD))/site/index.html"

docs-figures: deps
	@$(DOCS_PYTHON) scripts/docs/figures.py docs/figures

# The lists of labs in README.md, docs/index.md and mkdocs.yml, made from labs/*/lab.toml.
lab-lists:
	@$(DOCS_PYTHON) scripts/lab_lists.py

bench-docs: harness
	@rm -rf "$(BENCH)" && scripts/bench-docs.sh "$(BENCH)"
	@$(MAKE) --no-print-directory docs-measured BENCH="$(BENCH)"

docs-measured: deps
	@if [ -n "$(filter command line environment,$(origin BENCH))" ]; then \
	  mkdir -p "$(MEASURED)/reports" && rm -f "$(MEASURED)"/reports/* && cp "$(BENCH)"/*.json "$(BENCH)"/*.log "$(MEASURED)/reports/"; fi
	@$(DOCS_PYTHON) scripts/docs/render_measured.py "$(MEASURED)/reports" "$(MEASURED)"

clean:
	rm -rf $(BUILD)
