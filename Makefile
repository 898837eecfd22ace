# The two commands a new user runs: `make run` and `make test`. Both install what is missing.
GO      ?= go
OUT     ?= out
TSBENCH := bin/tsbench

.PHONY: run test e2e bench lint golden deps deps-browser build clean

build: $(TSBENCH)

$(TSBENCH): FORCE
	$(GO) build -o $(TSBENCH) ./cmd/tsbench

FORCE:

deps:
	bash scripts/install-deps.sh

deps-browser:
	bash scripts/install-deps.sh --browser

# The default benchmark: local VictoriaMetrics and Prometheus, 3 minutes, results in $(OUT)/.
run: deps build
	$(TSBENCH) run -out $(OUT)

# Every test, the end-to-end ones against real storages included.
test: deps-browser
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	# Allocation checks skip under -race (its instrumentation allocates); run them without it,
	# first, so the last lines printed are those of the whole suite.
	$(GO) test -count=1 -run 'DoesNotAllocate' ./...
	$(GO) test -race -timeout 12m ./...

e2e: deps-browser
	$(GO) test -race -timeout 12m ./e2e/...

bench:
	# Generator alone (samples/s, allocations), then the whole write path into a discarding
	# receiver (samples per CPU-second, heap per active series at 100k and 1M), then the read
	# path's own latency overhead against a fixed-delay server. Ends with one table of every
	# figure; the raw lines stay in $(OUT)/bench.txt for benchstat.
	@mkdir -p $(OUT)
	bash -o pipefail -c '{ \
	  $(GO) test -run "^$$" -bench . -benchmem ./internal/workload/ && \
	  $(GO) test -run "^$$" -bench . -benchtime 2x -timeout 20m ./internal/remotewrite/ && \
	  $(GO) test -run "^$$" -bench . -benchtime 5x ./internal/query/; \
	} | bash scripts/bench-table.sh $(OUT)/bench.txt'

golden:
	UPDATE=1 $(GO) test ./...

lint:
	$(GO) vet ./...
	$(GO) tool -modfile=tools/golangci-lint/go.mod golangci-lint run ./...

clean:
	rm -rf bin $(OUT)
