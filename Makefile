# tarscomm — see README.md. Every target works on a machine with only Go installed, except
# `proto`, which needs protoc (Debian: protobuf-compiler); .ci/run installs it.

GO            ?= go
BIN           := $(CURDIR)/bin
PKGS          := ./...
MODULE        := github.com/tarscomm/tarscomm
PROTOC_VERSION := 3.21.12
PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC        := PATH="$(BIN):$$PATH" protoc
GEN_TARS_TESTDATA := cmd/protoc-gen-go-tars/testdata
# What `make proto` writes (git pathspecs); proto-check looks at these files only.
PROTO_PATHS   := ':(glob)examples/hello/hellopb/*.pb.go' ':(glob)cmd/protoc-gen-go-tars/internal/testpb/**/*.pb.go' \
                 ':(glob)cmd/protoc-gen-go-tars/testdata/*.protoset' ':(glob)interop/echopb/*.pb.go'
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# What `make generate` writes from .tars files with cmd/tars2tarscomm (git pathspecs).
TARS_PROTOCOL := protocol/tars/EndpointF.tars protocol/tars/QueryF.tars protocol/tars/StatF.tars \
                 protocol/tars/PropertyF.tars protocol/tars/RequestF.tars
GEN_PATHS     := ':(glob)protocol/**/*.tars.go' ':(glob)cmd/tars2tarscomm/internal/testgen/**/*.tars.go' \
                 ':(glob)interop/internal/benchtars/**/*.tars.go' ':(glob)examples/greeter/**/*.tars.go'

.PHONY: all run examples test test-short test-timing race bench bench-smoke fuzz fmt fmt-check lint lint-modules cross vet proto proto-check generate generate-check tidy-check depcheck clean tools

all: fmt-check vet test

## run: build the example server and client, run the client against the server, stop the server.
run: examples
	@bash examples/hello/run.sh "$(BIN)"

examples:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/hello-server ./examples/hello/server
	$(GO) build -o $(BIN)/hello-client ./examples/hello/client

## test: every test of the module with the race detector. It passes on a busy machine: tests
## assert what happened (which calls completed, how, where), a wall-clock bound is only a liveness
## bound of seconds, every Close is bounded (a hang fails with the goroutine stacks), and timing
## properties are figures that test-timing checks. About 3 minutes on an idle 2-core machine.
test:
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

## test-short: the unit tests only (-short skips the end-to-end tests of communicator/, which
## start servers and Communicators over loopback); about a minute on an idle 2-core machine.
test-short:
	$(GO) test -short -count=1 $(PKGS)

## test-timing: the timing properties of the end-to-end suite (recovery within 200 ms, p2c's
## share of a slow endpoint, backup requests' p99, a large reply not stalling its net thread,
## backlog expiry not quadratic, deadlines kept within a check interval, ...), without -race.
## Lists every figure with its target, met or MISSED; fails only on a gross miss. Needs an idle
## machine: on a busy one its figures mean nothing. Full log: bin/test-timing.log.
TIMING_PKGS ?= ./communicator
test-timing:
	@mkdir -p $(BIN)
	@TARSCOMM_TEST_TIMING=1 $(GO) test -count=1 -v -timeout 15m $(TIMING_PKGS) > $(BIN)/test-timing.log 2>&1; rc=$$?; \
	grep -E 'TIMING |^(--- FAIL|FAIL|ok )' $(BIN)/test-timing.log | sed -E 's/^ +//'; \
	if [ $$rc -ne 0 ]; then echo "--- the failures:"; grep -E -A8 -- '--- FAIL|^panic:' $(BIN)/test-timing.log | grep -v 'TIMING '; \
	echo "make test-timing: FAILED (see $(BIN)/test-timing.log)"; fi; exit $$rc

race: test

## soak: issue 16's soak test for SOAK (default 60s): every kind of call against servers behind
## fault proxies while endpoints change and Communicators close (internal/soak/doc.go);
## soak-race runs it under the race detector.
SOAK ?= 60s
SOAK_TIMEOUT ?= 30m
.PHONY: soak soak-race
soak:
	TARSCOMM_SOAK=$(SOAK) $(GO) test -count=1 -timeout $(SOAK_TIMEOUT) -run '^TestSoak$$' -v ./internal/soak
soak-race:
	TARSCOMM_SOAK=$(SOAK) $(GO) test -race -count=1 -timeout $(SOAK_TIMEOUT) -run '^TestSoak$$' -v ./internal/soak

## bench: the Go benchmarks of the module, with allocations.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(PKGS)

## bench-smoke: run every benchmark briefly so that they keep compiling and working.
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 100x $(PKGS)

## bench-compare: side-by-side benchmark of tarscomm, TarsGo, gRPC-go, Kitex and the floor (a
## minimal stdlib TARS client and server) (benchmarks/, its own Go module): writes
## benchmarks/RESULTS.md and two charts; about 19 minutes on 2 cores.
## BENCH_ARGS passes flags to benchmarks/cmd/compare, e.g. make bench-compare BENCH_ARGS=-quick.
.PHONY: bench-compare
bench-compare:
	cd benchmarks && GO=$(GO) $(GO) run ./cmd/compare $(BENCH_ARGS)

## fuzz: run each fuzz target for FUZZTIME (default 30s): the decoders, the frame readers, the
## server's input (tcp, udp, tls, auth), the .tars generator and its decoders, endpoint strings,
## the registry's endpoints, configuration files, and a client against a hostile server over
## tcp, udp, tls and auth (FuzzHostile*). A target fails on a failing input (written to its
## testdata/fuzz); go test's bare "context deadline exceeded" at the end of a run, with no input
## written, is its coordinator's shutdown race and is reported, not failed.
FUZZTIME ?= 30s
FUZZ_TARGETS = \
	./codec:FuzzDecodeRequest ./codec:FuzzDecodeResponse ./codec:FuzzRoundTrip ./codec:FuzzDecoder \
	./codec:FuzzFrameReader ./codec:FuzzReadProto \
	./server:FuzzDecodeRequest ./server:FuzzServerInput \
	./server:FuzzServerTLSInput ./server:FuzzServerAuthInput ./server:FuzzServerUDPInput \
	./cmd/tars2tarscomm/internal/testgen/demo/all:FuzzDecodeItem \
	./cmd/tars2tarscomm/internal/testgen/demo/all:FuzzDecodeTree \
	./cmd/tars2tarscomm/internal/gen:FuzzGenerate \
	./endpoint:FuzzParse ./naming/registry:FuzzEndpointF ./conf:FuzzParse \
	./communicator:FuzzHostileServer ./communicator:FuzzHostileUDPServer \
	./communicator:FuzzHostileTLSServer ./communicator:FuzzHostileAuthServer
fuzz:
	@fail=0; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; echo "== $$fn ($$pkg)"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); rc=$$?; \
		echo "$$out" | grep -v '^fuzz: elapsed'; \
		if [ $$rc -ne 0 ]; then \
			if echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
				echo "   not a finding: go test's fuzzing coordinator missed its own deadline (its shutdown race on a busy machine); no failing input was written"; \
			else fail=1; fi; \
		fi; \
	done; exit $$fail

fmt:
	gofmt -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

lint: vet
	$(GO) run $(STATICCHECK) $(PKGS)

## cross: the library and its tests build for the other systems it supports (macOS and FreeBSD,
## for development; 32-bit Linux): go vet compiles every package with its tests for each.
## Windows is not supported (the client's direct reads and large-frame writer use raw sockets).
cross:
	@set -e; for t in darwin/amd64 darwin/arm64 freebsd/amd64 linux/386 linux/arm; do \
		echo "== $$t"; GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $(PKGS); done

## lint-modules: go vet and staticcheck in each of the repository's other Go modules (the
## integrations, interop and the benchmark harness), each with its own go.mod.
OTHER_MODULES := interop prometheus otel etcd benchmarks
lint-modules:
	@set -e; for m in $(OTHER_MODULES); do echo "== $$m"; (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...); done

## proto: regenerate the protobuf-generated code with pinned tools: protoc $(PROTOC_VERSION) (Debian's
## protobuf-compiler), protoc-gen-go from PROTOC_GEN_GO, protoc-gen-go-tars built from this tree.
## Outputs: the example's stubs, the generator's test data (code, which is also its golden files,
## and descriptor sets), and the interop module's stubs.
proto:
	@v=$$(protoc --version 2>/dev/null); [ "$$v" = "libprotoc $(PROTOC_VERSION)" ] || \
		{ echo "make proto: needs protoc $(PROTOC_VERSION) (Debian: apt-get install protobuf-compiler), found: $${v:-none}"; exit 1; }
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install $(PROTOC_GEN_GO)
	$(GO) build -o $(BIN)/protoc-gen-go-tars ./cmd/protoc-gen-go-tars
	$(PROTOC) --proto_path=examples/hello/hellopb \
		--go_out=. --go_opt=module=$(MODULE) --go-tars_out=. --go-tars_opt=module=$(MODULE) \
		examples/hello/hellopb/hello.proto
	$(PROTOC) --proto_path=$(GEN_TARS_TESTDATA) \
		--go_out=. --go_opt=module=$(MODULE) --go-tars_out=. --go-tars_opt=module=$(MODULE) \
		$(GEN_TARS_TESTDATA)/common/common.proto $(GEN_TARS_TESTDATA)/greet/greet.proto
	for f in greet/greet bad/streaming bad/collide; do \
		protoc --proto_path=$(GEN_TARS_TESTDATA) --include_imports --include_source_info \
			--descriptor_set_out=$(GEN_TARS_TESTDATA)/$$(basename $$f).protoset $$f.proto || exit 1; \
	done
	$(PROTOC) --proto_path=interop/echopb \
		--go_out=interop --go_opt=module=$(MODULE)/interop \
		--go-tars_out=interop --go-tars_opt=module=$(MODULE)/interop \
		interop/echopb/echo.proto

## proto-check: fail if `make proto` changes or adds anything under the generated paths.
## tools: install the code generators into ./bin (protoc-gen-go at the pinned version,
## protoc-gen-go-tars and tars2tarscomm from this tree) and the development registry
## tarsregistry; protoc itself comes from the system.
tools:
	GOBIN=$(BIN) $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(BIN) $(GO) install ./cmd/protoc-gen-go-tars ./cmd/tars2tarscomm ./cmd/tarsregistry
	@echo "installed into $(BIN): protoc-gen-go protoc-gen-go-tars tars2tarscomm tarsregistry"
	@command -v protoc >/dev/null 2>&1 && echo "protoc: $$(protoc --version)" || \
		echo "protoc not found: install it (Debian/Ubuntu: apt-get install protobuf-compiler; others: https://github.com/protocolbuffers/protobuf/releases)"

proto-check: proto
	@out=$$(git status --porcelain -- $(PROTO_PATHS)); if [ -n "$$out" ]; then \
		echo "$$out"; git --no-pager diff --stat -- $(PROTO_PATHS); \
		echo "generated code is stale: run make proto and commit the result"; exit 1; fi

## generate: regenerate the Go of the repository's .tars files with cmd/tars2tarscomm built from
## this tree: the registry and stat protocol (protocol/), the generator's test package (which is
## also its golden files), the interop module's benchmark struct, the greeter example. Needs only Go. The import paths
## come from the go.mod above each -out directory (interop/ is a module of its own).
generate:
	$(GO) run ./cmd/tars2tarscomm -out protocol $(TARS_PROTOCOL)
	$(GO) run ./cmd/tars2tarscomm -out cmd/tars2tarscomm/internal/testgen cmd/tars2tarscomm/testdata/all.tars
	$(GO) run ./cmd/tars2tarscomm -out interop/internal/benchtars interop/testdata/bench.tars
	$(GO) run ./cmd/tars2tarscomm -out examples/greeter examples/greeter/Hello.tars

## generate-check: fail if `make generate` changes or adds anything under the generated paths.
generate-check: generate
	@out=$$(git status --porcelain -- $(GEN_PATHS)); if [ -n "$$out" ]; then \
		echo "$$out"; git --no-pager diff --stat -- $(GEN_PATHS); \
		echo "generated code is stale: run make generate and commit the result"; exit 1; fi

tidy-check:
	$(GO) mod tidy -diff

## depcheck: the import graph follows the import rules of docs/ARCHITECTURE.md (a test in internal/archtest).
depcheck:
	$(GO) test -count=1 ./internal/archtest

clean:
	rm -rf $(BIN)
