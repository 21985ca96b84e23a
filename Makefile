# The commands a newcomer needs (see README.md):
#   make demo   replay the recorded real GPU run through every gate (no GPU needed), then
#               draw the trend page of a baseline store made of every recording
#   make test   the suite, in about 3 minutes on 2 cores: gofmt, go vet, actionlint on the
#               workflows, a benchmark smoke run, then go test ./... (the action end to end
#               under act among them); it ends with every skipped test and its reason
#   make fuzz   each fuzz target for FUZZTIME (10s; about 7 minutes in all)
# CI (.ci/run) runs make test, then make fuzz, with KG_REQUIRE_TOOLS=1: a test that skips
# for want of act, chromium, shellcheck or mermaid's script fails there (internal/needtool).
# Also: make bench (the full benchmarks), make tools (installs actionlint and act), and
# make vet, fmt, lint-workflows (make test's steps). TESTFLAGS passes flags to go test:
#   make test TESTFLAGS='-run TestClockStream -count=20'

GO ?= go
FUZZTIME ?= 10s
TESTFLAGS ?=

# Tools from the Go module proxy (make tools installs them; .ci/run does): actionlint
# lints .github/workflows, act runs action.yml end to end (internal/acttest).
ACTIONLINT_VERSION = v1.7.12
ACT_VERSION = v0.2.89

# Every fuzz target: package and name. CI runs each for FUZZTIME.
FUZZ_TARGETS = \
	./gates/ptxas:FuzzParse \
	./gates/sass:FuzzParse \
	./gates/sass:FuzzParseListELF \
	./gates/sass:FuzzHeaderFlagsArch \
	./pipeline:FuzzCubinsFile \
	./gates/toolkit:FuzzScanner \
	./gates/correctness:FuzzEvaluate \
	./gates/speedup:FuzzJudge \
	./gates/speedup/abrun:FuzzServeAnswers \
	./gates/speedup/abrun:FuzzClockStream \
	./gates/guard:FuzzScanFile \
	./internal/benchfile:FuzzRead \
	./internal/strictjson:FuzzCheck \
	./internal/result:FuzzRead \
	./internal/result:FuzzMerge \
	./internal/shard:FuzzParse \
	./gates/sanitizer:FuzzParseText \
	./gates/sanitizer:FuzzParseXML \
	./gates/ncu:FuzzParse \
	./gates/toolkit:FuzzCheck \
	./internal/kernelname:FuzzGlob \
	./internal/kernelname:FuzzParse \
	./internal/pathglob:FuzzMatch \
	./config:FuzzParse \
	./baseline:FuzzKeyFile \
	./internal/gpuinfo:FuzzParse \
	./internal/kernelsrc:FuzzScan \
	./internal/repopath:FuzzRel \
	./report:FuzzRender \
	./baseline/trend:FuzzWriteHTML \
	./internal/workflowcmd:FuzzEscape \
	./internal/workflowcmd:FuzzNeutralize \
	./gates/sass:FuzzReadData \
	./internal/basecache:FuzzRead \
	./internal/msgtext:FuzzClip \
	./internal/msgtext:FuzzClean \
	./internal/shellcmd:FuzzWords \
	./internal/linescan:FuzzStripANSI

.PHONY: demo test vet fmt lint-workflows tools fuzz bench

# make demo CASE=torch-oob replays another recording (testdata/replay/*: the C++ harness's
# cases, and the target forms' torch-*, setup-*, cmake-*, triton-*).
CASE ?= clean

demo:
	$(GO) run ./cmd/kernel-gate demo --case $(CASE)
	$(GO) run ./cmd/kernel-gate demo --trend

# go test runs under internal/tools/skiplist, which shows its output as go test does, then
# lists the skipped tests with their reasons, and exits with go test's status. It is built
# rather than go run so that its exit status is go test's own (go run says 1 for any).
# SLOW_PACKAGES, the longest (the act tests, the command line's, the A/B runner's), are
# named before ./... so that go test starts them first: in ./...'s order the act tests
# began a minute in and ran for a minute and a half alone at the end.
SLOW_PACKAGES = ./internal/acttest ./cli ./gates/speedup/abrun

test: fmt vet lint-workflows
	$(GO) test -run '^$$' -bench 'ParseStream/16MiB' -benchtime 1x ./gates/ptxas/
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/skiplist" ./internal/tools/skiplist && \
	"$$bin/skiplist" $(GO) test -json $(TESTFLAGS) $(SLOW_PACKAGES) ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# actionlint on PATH (make tools), else the pinned version through go run.
lint-workflows:
	@if command -v actionlint >/dev/null; then actionlint .github/workflows/*.yml; \
	else $(GO) run github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) .github/workflows/*.yml; fi

# Install actionlint and act into $(go env GOBIN) (else $(go env GOPATH)/bin) unless the
# ones there are these versions already.
tools:
	@set -e; gobin=$$($(GO) env GOBIN); [ -n "$$gobin" ] || gobin=$$($(GO) env GOPATH)/bin; \
	for t in actionlint:github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) act:github.com/nektos/act@$(ACT_VERSION); do \
		name=$${t%%:*}; pkg=$${t#*:}; \
		have=$$($(GO) version -m "$$gobin/$$name" 2>/dev/null | awk '$$1 == "mod" { print $$3 }'); \
		if [ "$$have" != "$${pkg##*@}" ]; then echo "installing $$pkg"; $(GO) install "$$pkg"; fi; \
	done

# Go's fuzz coordinator can end a run with "context deadline exceeded" and no failing input
# when a loaded machine keeps a worker from answering at the deadline: such a run is tried once
# more. A real failure writes its input under testdata/fuzz and fails at once.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		if ! out=$$($(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); then \
			echo "$$out"; \
			if echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
				echo "fuzz $$pkg $$name: the coordinator timed out without a failing input; once more"; \
				$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
			else exit 1; fi; \
		else echo "$$out" | tail -n 2; fi; \
	done

# The full benchmarks, including the 1 GiB streaming parse (see docs/benchmarks.md).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./gates/...
