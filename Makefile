# quire: make build | run | test | test-image | bench | fuzz | clean
export PATH := $(PATH):/usr/local/go/bin
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GOFLAGS_BUILD := -trimpath -ldflags "-s -w -X main.version=$(VERSION)"

.PHONY: build run test test-image bench fuzz clean

build:
	go build $(GOFLAGS_BUILD) -o bin/quire ./cmd/quire

# The service on its embedded defaults: SQLite and the dev mail outbox in ./data.
run: build
	bin/quire serve

# Every test, under the race detector, on SQLite and PostgreSQL (see storetest for the server used).
test:
	go vet ./...
	go test -race -count=1 -timeout 45m ./...

# The container image: built from ./Dockerfile (on a base image made with
# debootstrap) and exercised from its mounted filesystem; needs root, podman
# and debootstrap (scripts/setup --test). Minutes: not part of make test.
test-image:
	scripts/test-image

# Benchmarks; each measure's table in bench/RESULTS.md is replaced by this run's (go run ./bench NAME -write: one measure).
bench: build
	go run ./bench -write

# Fuzz targets, each for FUZZTIME (default 1m).
FUZZTIME ?= 1m
fuzz:
	go test ./docid -run '^$$' -fuzz '^FuzzIdentify$$' -fuzztime $(FUZZTIME)
	go test ./docid -run '^$$' -fuzz '^FuzzStamp$$' -fuzztime $(FUZZTIME)
	go test ./internal/pdf -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME)
	go test ./internal/pdfsign -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME)
	go test ./internal/certpage -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME)
	go test ./internal/httpapi -run '^$$' -fuzz '^FuzzDecodeDocumentAhead$$' -fuzztime $(FUZZTIME)
	go test ./internal/safeinput -run '^$$' -fuzz '^FuzzWithoutComments$$' -fuzztime $(FUZZTIME)
	go test ./internal/annotate -run '^$$' -fuzz '^FuzzFill$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
