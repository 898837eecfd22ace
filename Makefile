# The two commands a new user runs: `make run` and `make test`. Both install what is missing.
GO      ?= go
OUT     ?= out
# make run's history: as much as the local storages catch up with on a 2-core machine while
# the whole run stays under 6 minutes (docs/history.md).
HISTORY ?= 15m
TSBENCH := bin/tsbench

.PHONY: run reproduce newest conformance sender-compliance test check e2e race bench fuzz lint golden deps deps-browser build clean helm-check image fidelity soak

build: $(TSBENCH)

$(TSBENCH): FORCE
	$(GO) build -o $(TSBENCH) ./cmd/tsbench

FORCE:

# A go that builds tsbench, or one line saying what to install (scripts/install-go.sh). An older
# go (1.21 or newer) fetches the toolchain go.mod names through the module proxy: GOTOOLCHAIN=auto
# overrides a distribution's GOTOOLCHAIN=local, and a go that is new enough is used as it is.
# deps and deps-browser depend on it too, so that a machine without one stops before the
# packages are installed.
export GOTOOLCHAIN ?= auto
.PHONY: go
go:
	@bash scripts/install-go.sh
deps deps-browser build $(TSBENCH) run reproduce newest conformance sender-compliance test check lint e2e race bench fuzz golden helm-check image fidelity soak: go

deps:
	bash scripts/install-deps.sh

deps-browser:
	bash scripts/install-deps.sh --browser

# The default benchmark: local VictoriaMetrics and Prometheus, $(HISTORY) of history caught up,
# then 3 minutes live; results in $(OUT)/.
run: deps build
	$(TSBENCH) run -history $(HISTORY) -out $(OUT)

# A published comparison reproduced (docs/reproductions.md): NAME is node-exporter-24h,
# precision-and-semantics, cluster-24h or 100m-samples; SCALE multiplies its targets. Each
# default scale takes under 40 minutes on a 2-core machine; results in $(OUT)/. NEWEST=1
# runs it on the newest VictoriaMetrics and Prometheus built from their modules (make newest)
# instead of Debian's.
NAME   ?= node-exporter-24h
SCALE  ?= 1
NEWEST ?=
reproduce: deps build $(if $(NEWEST),newest)
	$(if $(NEWEST),PATH="$(CURDIR)/bin/newest:$$PATH") $(TSBENCH) reproduce $(NAME) -scale $(SCALE) -out $(OUT)

# VictoriaMetrics 1.150 and Prometheus 3.10 built from their Go modules into bin/newest/ (about
# 15 minutes on 2 cores the first time; kept after): scripts/build-newest.sh.
newest:
	bash scripts/build-newest.sh

# Prometheus' own PromQL test files (1,867 evals) against a fresh local VictoriaMetrics and
# Prometheus: results in $(OUT)/ (docs/conformance.md).
conformance: deps build
	$(TSBENCH) conformance -out $(OUT)

# The community's remote-write sender suite (github.com/prometheus/compliance, remotewrite/sender,
# at a pinned commit) with tsbench as the sender, in remote write 2.0 and 1.0: a line per case,
# applies / passes (docs/protocols.md#the-communitys-sender-suite). The suite comes from
# COMPLIANCE_DIR, else from a git clone; 13 minutes on 2 cores, so not part of `make test`.
sender-compliance:
	bash scripts/sender-compliance.sh

# Every test, the end-to-end ones against real storages included (in parallel: each starts its
# own storages), and every fuzz target's seed corpus; after the checks CI makes; and the Helm
# chart's checks.
#
# -count=1: every test runs every time (go test would reuse an earlier pass it thinks still
# valid). scripts/test.sh runs every package under -race, and beside them without it the
# tests whose CPU goes to real storages or to Prometheus' TSDB in the test process: e2e, and
# cli's whole runs in process (the matrix, of which one row also runs under -race), and four
# of conformance's. e2e runs 8 tests side by side, in the machine's 8 slots shared by every
# e2e run (e2e/slots_test.go), builds tsbench once, without -race,
# and keeps a failed test's results.json, summary and storage logs under out/e2e-failed/. The
# whole run's events go to $(OUT)/test.json; scripts/testsummary prints go test's usual
# lines, the ten slowest tests and "N passed, N failed, N skipped". On 2 cores it takes about
# 6 minutes, the installs and checks included; each package stays far inside its -timeout
# (e2e, the slowest, about 4 of its 20 minutes; cli under -race 3½ of its 10).
test: deps-browser check helm-check
	# Allocation checks skip under -race (its instrumentation allocates): run them without it,
	# in the packages that have them, first.
	$(GO) test -count=1 -run 'DoesNotAllocate' $(ALLOC_PKGS)
	GO=$(GO) OUT=$(OUT) TEST_TIMEOUT=$(TEST_TIMEOUT) bash scripts/test.sh

# The packages with allocation checks, found by name so a new one is never skipped.
ALLOC_PKGS = $(shell grep -rl --include='*_test.go' 'func Test[A-Za-z]*DoesNotAllocate' internal | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
TEST_TIMEOUT ?= 10m

e2e: deps-browser
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./e2e/...

# Every test under -race, those make test runs without it included (e2e, cli's in-process
# runs): by hand, before a change to what runs concurrently.
race: deps-browser
	$(GO) test -race -count=1 -timeout 30m ./...

bench:
	# Generator alone (samples/s, allocations), then the whole write path into a discarding
	# receiver in this process (samples per CPU-second, heap per active series at 100k and 1M)
	# and both compressions (bytes and CPU per sample), each protocol side by side (CPU per
	# million samples, bytes on the wire per sample), then the real tsbench binary against a
	# discarding receiver in another process: CPU per sample beside a bare prompb + snappy
	# loop (their ratio), one process's ceiling, RSS at 100M active series (~7 minutes in
	# all), then the read path's own latency overhead against a fixed-delay server, then a
	# 10-minute run of the default workload (issue 19): tsbench's live heap and RSS slopes
	# after its first 2 minutes, results.json and report.html at 1 h and 24 h, then the
	# canary's cost (issue 29): the default workload against fresh local storages with the
	# freshness canary on, off, off, on (3 minutes each), the query quantiles side by side. Ends with
	# one table of every figure; the raw lines stay in $(OUT)/bench.txt for benchstat.
	@mkdir -p $(OUT)
	bash -o pipefail -c '{ \
	  $(GO) test -run "^$$" -bench . -benchmem ./internal/workload/ && \
	  $(GO) test -run "^$$" -bench . -skip Process -benchtime 2x -timeout 20m ./internal/remotewrite/ && \
	  $(GO) test -run "^$$" -bench Process -benchtime 1x -timeout 30m ./internal/remotewrite/ && \
	  $(GO) test -run "^$$" -bench . -benchtime 5x ./internal/query/ && \
	  $(GO) test -run "^$$" -bench "LongRunMemory|CanaryCost" -benchtime 1x -timeout 40m ./internal/bench/; \
	} | bash scripts/bench-table.sh $(OUT)/bench.txt'

# The Helm chart: helm lint and helm template with the default values and each example values
# file, every rendered object decoded strictly into its Kubernetes API type, the rendered
# config checked by tsbench validate (deploy/helm/check, its own module: k8s.io stays out of
# go.mod). Helm is pinned in tools/helm/go.mod.
HELM := $(GO) tool -modfile=tools/helm/go.mod helm
helm-check:
	$(HELM) lint --strict deploy/helm/tsbench
	for f in examples/helm-*.yaml; do $(HELM) lint --strict deploy/helm/tsbench -f $$f || exit 1; done
	cd deploy/helm/check && $(GO) test -count=1 ./...

# The container image as an OCI archive, built offline with buildah (installed by
# install-deps.sh --image): FROM scratch, the static binary, a non-root user. Load it with
# `podman load -i`, `ctr images import` or `kind load image-archive`.
IMAGE ?= tsbench:latest
BUILDAH := buildah --storage-driver vfs
image:
	bash scripts/install-deps.sh --image
	rm -rf $(OUT)/image && mkdir -p $(OUT)/image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(OUT)/image/tsbench ./cmd/tsbench
	cp /etc/ssl/certs/ca-certificates.crt $(OUT)/image/
	$(BUILDAH) bud --isolation chroot --layers=false -f Dockerfile -t $(IMAGE) $(OUT)/image
	rm -f $(OUT)/tsbench-image.tar
	$(BUILDAH) push $(IMAGE) oci-archive:$(OUT)/tsbench-image.tar:$(IMAGE)
	@ls -l $(OUT)/tsbench-image.tar

# Does the generated data compress like a real exporter's? Real node_exporter (behind a 1 s
# cache, scraped by vmagent), tsbench with a profile captured from it, and tsbench with the
# default profile, side by side into their own fresh VictoriaMetrics and Prometheus for
# FIDELITY_MINUTES (default 5); prints bytes per sample and the ratios. Run it alone.
fidelity: deps
	bash scripts/fidelity.sh

# A long run (issue 19): SOAK of live load (default 1h) after SOAK_HISTORY of history caught
# up, against the local storages; prints tsbench's heap and RSS slopes, its files' sizes, the
# schedule drift, every storage's account and the continuous read-back's checks. Run it alone.
SOAK ?= 1h
SOAK_HISTORY ?= 1h
soak: deps build
	SOAK=$(SOAK) SOAK_HISTORY=$(SOAK_HISTORY) OUT=$(OUT) bash scripts/soak.sh

golden:
	UPDATE=1 $(GO) test ./...

lint:
	$(GO) vet ./...
	$(GO) tool -modfile=tools/golangci-lint/go.mod golangci-lint run ./...

# What CI checks besides the tests: gofmt, vet and the linter, and a go.mod/go.sum that
# `go mod tidy` would leave as they are.
check: lint
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }
	@$(GO) mod tidy -diff || { echo 'go.mod/go.sum: run go mod tidy'; exit 1; }

# Each fuzz target for FUZZTIME, one at a time (-fuzz takes one target), found by name so a
# new one is never skipped. Not in CI: `make test` runs the seed corpora. A failing input is
# saved under the package's testdata/fuzz/: commit it with the fix, and it becomes a seed.
# Minimizing each new input for the default 60s would take the whole FUZZTIME on the YAML
# targets (14 executions in 10s on the rule file, 7,680 with 1s).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 1s
fuzz:
	@list="$$($(GO) test -list '^Fuzz' ./...)" || { echo "$$list"; exit 1; }; \
	echo "$$list" | awk '/^Fuzz/ { n[++i] = $$1 } /^ok / { for (j = 1; j <= i; j++) print $$2, n[j]; i = 0 }' | \
	while read -r pkg name; do \
	  echo "== $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "$$pkg" </dev/null || exit 1; \
	done

clean:
	rm -rf bin $(OUT)
