# stpis: STP_IS policy search over a gRPC MuJoCo bridge.
# `make help` lists the targets.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO      ?= go
PYTHON  ?= python3
VENV    := .venv
VPY     := $(abspath $(VENV))/bin/python
GOBIN_LOCAL := $(abspath .bin)
MODULE  := github.com/stpis/stpis
PROTO   := proto/envbridge/v1/envbridge.proto
# TensorBoard's Event messages, for the event files the trainer writes (Go only).
PROTO_TB := proto/tensorboard/v1/event.proto
# The Go tests that start the real bridge find its interpreter here.
export STPIS_BRIDGE_PYTHON := $(VPY)

.PHONY: help venv proto generate proto-check lint fmt build test test-go test-py fuzz chaos probe run bridge demo \
        bench-bridge bench-convex bench-surrogate bench-trainer bench-rl bench-scale results data data-check clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: bridge_py/requirements.txt bridge_py/requirements-dev.txt
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r bridge_py/requirements-dev.txt
	@touch $@

venv: $(VENV)/.installed ## create .venv with the bridge's pinned requirements

$(GOBIN_LOCAL)/protoc-gen-go $(GOBIN_LOCAL)/protoc-gen-go-grpc: go.mod
	GOBIN=$(GOBIN_LOCAL) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc

proto: venv $(GOBIN_LOCAL)/protoc-gen-go $(GOBIN_LOCAL)/protoc-gen-go-grpc ## regenerate Go and Python code from proto/
	$(VPY) -m grpc_tools.protoc -Iproto \
	  --plugin=protoc-gen-go=$(GOBIN_LOCAL)/protoc-gen-go \
	  --plugin=protoc-gen-go-grpc=$(GOBIN_LOCAL)/protoc-gen-go-grpc \
	  --go_out=. --go_opt=module=$(MODULE) \
	  --go-grpc_out=. --go-grpc_opt=module=$(MODULE) \
	  --python_out=bridge_py --pyi_out=bridge_py --grpc_python_out=bridge_py \
	  $(PROTO)
	$(VPY) -m grpc_tools.protoc -Iproto \
	  --plugin=protoc-gen-go=$(GOBIN_LOCAL)/protoc-gen-go \
	  --go_out=. --go_opt=module=$(MODULE) \
	  $(PROTO_TB)

generate: ## regenerate the bridge's copy of the task table (bridge_py/stpis_bridge/paper_tasks.py) from tasks/tasks.go
	$(GO) generate ./tasks

proto-check: proto ## fail if the committed generated code is stale
	@git diff --exit-code -- proto bridge_py/envbridge || { echo "generated code is stale: run 'make proto' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- proto bridge_py/envbridge)" || { echo "generated files are not committed: run 'make proto' and commit" >&2; git status --porcelain -- proto bridge_py/envbridge >&2; exit 1; }

lint: venv ## go vet, gofmt -s, staticcheck, ruff, mypy
	$(GO) vet ./...
	@out=$$(gofmt -s -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); test -z "$$out" || { echo "gofmt -s would change: $$out" >&2; exit 1; }
	$(GO) tool staticcheck ./...
	cd bridge_py && $(VPY) -m ruff check . && $(VPY) -m ruff format --check .
	cd bridge_py && $(VPY) -m mypy stpis_bridge tests
	cd bench && $(VPY) -m ruff check --config ../bridge_py/pyproject.toml . && $(VPY) -m ruff format --config ../bridge_py/pyproject.toml --check .
	cd bench && $(VPY) -m mypy --config-file ../bridge_py/pyproject.toml .

fmt: venv ## format Go and Python code
	gofmt -s -w $$(git ls-files '*.go' | grep -v '\.pb\.go$$')
	cd bridge_py && $(VPY) -m ruff format . && $(VPY) -m ruff check --fix .

# The commit a build is of, for `trainer version`: Go stamps it from git itself
# (-buildvcs=auto, whatever GOFLAGS says) in a clone; the -X values stand in where
# it cannot (a git worktree, whose .git is a file), and are empty without git.
VCS_COMMIT = $(shell git rev-parse HEAD 2>/dev/null)
VCS_DIRTY = $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)

build: ## build the Go commands into bin/ (trainer version names the commit)
	$(GO) build -buildvcs=auto -ldflags "-X main.buildCommit=$(VCS_COMMIT) -X main.buildDirty=$(VCS_DIRTY)" -o bin/ ./cmd/...

test: venv proto-check lint test-go test-py ## run every Go and Python test (the CI command)

test-go: venv ## Go tests (the end-to-end ones start the real Python bridge)
	$(GO) test -count=1 -timeout 20m ./...

test-py: venv ## pytest against the real server and real MuJoCo
	@# pytest exits 5 when it collects no test: that is a failure here, said plainly.
	cd bridge_py && { rc=0; $(VPY) -m pytest -q || rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; fi; exit $$rc; }

# make fuzz: how long each Go fuzz target runs; how long Go may minimize each new input
# (its default, 60s, can spend a short run minimizing: 19 execs in 30s against 5000 at
# 2s); extra `go test` flags (FUZZFLAGS=-parallel=1 on a busy machine); each fuzz
# process's virtual memory cap in KiB (an input that allocates without bound is then
# reported as a crash, not swapped on; FUZZMEM=unlimited lifts it); and the examples of
# each bridge hypothesis test (make test runs 200).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 2s
FUZZFLAGS ?=
FUZZMEM ?= 8388608
HYPOTHESIS_EXAMPLES ?= 5000

fuzz: venv ## fuzz every Go fuzz target for FUZZTIME (30s) each, then the bridge's hypothesis tests
	@# Go fuzzes one target per invocation; their seed corpora run in every `go test`. A
	@# failure that wrote no input under testdata/fuzz/ and says only "context deadline
	@# exceeded" is Go's own race at the -fuzztime boundary (go.dev/issue/75804, unfixed in
	@# go1.26): it is reported, and fails nothing.
	@ulimit -v $(FUZZMEM); failed=""; flaked=""; log=$$(mktemp); \
	for file in $$(git ls-files --cached --others --exclude-standard '*_test.go' | xargs -r grep -l '^func Fuzz'); do \
	  dir=$$(dirname $$file); \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "== $$dir $$target ($(FUZZTIME))"; \
	    before=$$(set -- $$dir/testdata/fuzz/$$target/*; [ -e "$$1" ] && echo $$# || echo 0); \
	    if $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $(FUZZFLAGS) ./$$dir/ 2>&1 | tee $$log; then continue; fi; \
	    after=$$(set -- $$dir/testdata/fuzz/$$target/*; [ -e "$$1" ] && echo $$# || echo 0); \
	    if [ "$$after" = "$$before" ] && grep -q 'context deadline exceeded' $$log; then flaked="$$flaked $$dir.$$target"; \
	    else failed="$$failed $$dir.$$target"; fi; \
	  done; \
	done; \
	rm -f $$log; rc=0; \
	(cd bridge_py && STPIS_HYPOTHESIS_EXAMPLES=$(HYPOTHESIS_EXAMPLES) $(VPY) -m pytest -q -p no:cacheprovider tests/test_*_hypothesis.py) || rc=$$?; \
	if [ -n "$$flaked" ]; then echo "go's fuzztime race, no input found (go.dev/issue/75804):$$flaked" >&2; fi; \
	if [ -n "$$failed" ]; then echo "fuzz targets that failed (their inputs are under testdata/fuzz/):$$failed" >&2; rc=1; fi; \
	exit $$rc

run: venv build ## train Hopper-v1 with the default method through a local bridge, then plot the curve
	bin/trainer --env Hopper-v1 --out runs --resume
	bin/trainer plot runs/Hopper-v1 -o runs/Hopper-v1/curve.png

bridge: venv ## run a bridge on 127.0.0.1:50051 for `trainer --bridge 127.0.0.1:50051` (Ctrl-C stops it)
	cd bridge_py && $(VPY) -m stpis_bridge --listen 127.0.0.1:50051

bench-bridge: venv ## Hopper/HalfCheetah: physics limit, gymnasium and fast backends, in-process (JSON last line)
	bash bench/bridge.sh

bench-convex: venv ## ridge n=1000 m=100: STP vs STP_IS (+ CMA-ES, Nevergrad) (JSON last line)
	bash bench/convex.sh

bench-surrogate: ## Lipschitz refresh + 10 Adam steps at Humanoid size
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./surrogate/

bench-trainer: venv build ## Hopper-v1, the default method, to threshold or 4000 episodes (JSON last line)
	bash bench/trainer.sh

chaos: venv build ## faults injected into short runs (bridge, worker, trainer: SIGSTOP, SIGKILL, restart; SIGTERM with the bridge down; a second trainer): JSON last line
	$(VPY) bench/chaos.py

probe: venv build ## bad inputs by area (flags, config files, policy files, render, report, bridge flags): handled cleanly? JSON last line
	$(VPY) bench/probe_inputs.py

bench-rl: venv build ## run an experiment matrix, bench/matrices/rl.yaml unless MATRIX=FILE (resumable)
	bash bench/rl.sh

results: build ## draw a matrix's figures and tables from its runs, running none (bench/matrices/rl.yaml unless MATRIX=FILE): summary, table, aggregate, plots
	DRAW_ONLY=1 bash bench/rl.sh

bench-scale: venv build ## 2 bridge replicas vs 1 (JSON last line)
	bash bench/scale.sh

data: ## download the larger LIBSVM sets (a9a, ijcnn1, w8a) into convex/data/extra/ and check their SHA-256 sums
	bash convex/data/fetch.sh

data-check: ## check the shipped LIBSVM files (and convex/data/extra/) against their SHA-256 sums
	bash convex/data/fetch.sh --check

clean: ## remove build outputs (keeps .venv)
	rm -rf bin .bin
