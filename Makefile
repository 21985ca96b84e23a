# The two commands a newcomer needs (see README.md):
#   make demo   replay the recorded real GPU run through every gate (no GPU needed)
#   make test   everything CI runs: format, vet, tests, short fuzz runs, a benchmark smoke run

GO ?= go
FUZZTIME ?= 10s

# Every fuzz target: package and name. CI runs each for FUZZTIME.
FUZZ_TARGETS = \
	./gates/ptxas:FuzzParse \
	./gates/sass:FuzzParse \
	./gates/toolkit:FuzzScanner \
	./gates/correctness:FuzzEvaluate \
	./gates/speedup:FuzzJudge \
	./gates/guard:FuzzScanFile \
	./internal/benchfile:FuzzRead \
	./internal/strictjson:FuzzCheck \
	./internal/result:FuzzRead \
	./gates/sanitizer:FuzzParseText \
	./gates/sanitizer:FuzzParseXML \
	./gates/ncu:FuzzParse \
	./gates/toolkit:FuzzCheck \
	./internal/kernelname:FuzzGlob \
	./internal/kernelname:FuzzParse \
	./action/config:FuzzParse \
	./internal/gpuinfo:FuzzParse \
	./internal/kernelsrc:FuzzScan \
	./action/report:FuzzRender \
	./action/workflowcmd:FuzzEscape \
	./action/workflowcmd:FuzzNeutralize

.PHONY: demo test vet fmt fuzz bench

demo:
	$(GO) run ./action demo

test: fmt vet
	$(GO) test ./...
	$(MAKE) fuzz
	$(GO) test -run '^$$' -bench 'ParseStream/16MiB' -benchtime 1x ./gates/ptxas/

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

# The full benchmarks, including the 1 GiB streaming parse (see docs/benchmarks.md).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./gates/...
