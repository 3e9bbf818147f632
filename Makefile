# Sky Durable — the four things you do here.
#   make run    the main job: the checkout saga on the embedded SQLite default
#   make test   every test (SQLite and PostgreSQL; PostgreSQL must be reachable or installed)
#   make bench  the Go benchmarks, then the load run (bin/skybench load); prints figures (docs/benchmarks.md)
#   make check  go vet + gofmt + staticcheck (also run by make test)
#   make chaos  the chaos run: sky workers SIGKILLed at random, a database restart (CHAOS=3m; make test runs 15s),
#               then the short fault matrix; make chaos-matrix runs the full matrix (about 15 minutes)
#   make bench-peers  DBOS Transact Go and this engine side by side (bench/peers, a module of its own)

GO ?= go
BIN := bin
# Flags of the load run, e.g. make bench LOADFLAGS='-rounds 1 -runs 200'
# (bin/skybench load -h lists them).
LOADFLAGS ?=
# Flags of the peer run, e.g. make bench-peers PEERSFLAGS='-rounds 5 -statements 5'
# (bin/peers -h lists them).
PEERSFLAGS ?=
# How long make chaos starts runs and kills workers (a Go duration), and how
# many sky workers it keeps running.
CHAOS ?= 3m
CHAOS_WORKERS ?= 3

.PHONY: run test bench bench-peers check chaos chaos-matrix sky skybench

sky:
	@test -x $(BIN)/sky || echo "building $(BIN)/sky (the first build compiles every dependency and takes a minute or two)..."
	$(GO) build -o $(BIN)/sky ./cmd/sky

skybench:
	$(GO) build -o $(BIN)/skybench ./cmd/skybench

run: sky
	cd examples/checkout && rm -rf .skydata && ../../$(BIN)/sky run

STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck
STATICCHECK_VERSION := v0.8.2
# CHECK is make check as one shell command (make test runs it alongside the
# tests): go vet, gofmt, staticcheck (installed on first use).
CHECK = echo "$(GO) vet ./..." && $(GO) vet ./... && \
	out=$$(gofmt -l $$(git ls-files '*.go')) && if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi && \
	{ test -x $(STATICCHECK) || GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); } && \
	echo "$(STATICCHECK) ./..." && $(STATICCHECK) ./...

# internal/testrun starts a private PostgreSQL cluster (durability off), runs
# go test against it and prints the tests' count per store at the end. The
# slowest packages are named first, longest first, so go test starts them
# first (it runs two at a time on two cores) instead of last, alphabetically.
# make check runs alongside the tests (they mostly wait on databases and
# processes); its output is printed after them only when it fails, and then
# make test fails.
# TESTFLAGS are more go test flags for make test, e.g. TESTFLAGS='-p 3' (how
# many packages at once; go test's default is the number of cores).
TESTFLAGS ?=
SLOW_TESTS := ./runtime/durable ./examples/worker ./runtime/durable/durabletest ./runtime/durable/ui \
	./runtime/durable/store/postgres ./cmd/sky ./examples
test:
	$(GO) build -o $(BIN)/testrun ./internal/testrun
	@echo "make check (go vet, gofmt, staticcheck) runs alongside the tests; its output follows them if it fails"
	@( $(CHECK) ) > $(BIN)/check.log 2>&1 & checking=$$!; \
	$(BIN)/testrun -count=1 -timeout 40m $(TESTFLAGS) $(SLOW_TESTS) ./...; status=$$?; \
	if ! wait $$checking; then cat $(BIN)/check.log; echo "make check failed (above)"; exit 1; fi; \
	exit $$status

bench: skybench
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...
	$(BIN)/skybench load $(LOADFLAGS)

# bench/peers is a Go module of its own (it depends on DBOS; the engine's
# module does not), so go test/vet ./... here never reach it.
bench-peers:
	cd bench/peers && $(GO) build -o ../../$(BIN)/peers .
	$(BIN)/peers $(PEERSFLAGS)

# make test runs the short chaos run and the short matrix at once (each has a
# server of its own); make chaos runs them one after the other (-parallel 1)
# so neither's figures carry the other's load.
chaos:
	$(GO) test -count=1 -timeout 30m -parallel 1 -run '^TestChaos(Matrix)?$$' -v ./examples/worker -args -chaos $(CHAOS) -chaos-workers $(CHAOS_WORKERS)

chaos-matrix:
	$(GO) test -count=1 -timeout 60m -run '^TestChaosMatrix$$' -v ./examples/worker -args -chaos-matrix

check:
	@$(CHECK)
