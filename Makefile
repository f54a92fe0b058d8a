SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := /usr/local/go/bin:$(PATH)

# The tests connect here as a superuser and create one database per test.
TEST_DATABASE_ADMIN_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export TEST_DATABASE_ADMIN_URL

GO ?= go
# Go files of the repository (tracked or new, not ignored), for the gofmt check.
GO_FILES = $(wildcard $(shell git ls-files --cached --others --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.data/*'))

.DEFAULT_GOAL := help
.PHONY: help build run test test-deps check fmt-check vet lint-go sqlc-diff generate samples bench lint clean clean-data

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

build: ## build bin/valuecase
	$(GO) build -o bin/valuecase ./cmd/valuecase

run: ## run PostgreSQL, Temporal, migrations, worker and API in the foreground (Ctrl-C stops all)
	scripts/run.sh

test: ## dependencies, the static checks (make check), then go test -race on everything
	scripts/test-deps.sh
	@$(MAKE) --no-print-directory check
	$(GO) test -race -count=1 -timeout 15m ./...

test-deps: ## start PostgreSQL and build bin/temporal as the tests need them
	scripts/test-deps.sh

check: fmt-check vet lint-go sqlc-diff lint-openapi openapi-client-diff ## the static checks of make test

# goimports is gofmt plus import grouping: standard library, others, then this module's packages.
# Generated code (sqlc, oapi-codegen) is left as its generator writes it.
HAND_GO_FILES = $(filter-out db/dbsqlc/% api/client/%,$(GO_FILES))
fmt-check: ## fail listing the files goimports would change (gofmt + import groups)
	@files="$(if $(HAND_GO_FILES),$$($(GO) tool goimports -local github.com/valuecase/valuecase -l $(HAND_GO_FILES)))"; \
	if [[ -n "$$files" ]]; then echo "goimports would change these files (run make fmt):"; echo "$$files"; exit 1; fi

fmt: ## rewrite the Go files with goimports
	$(GO) tool goimports -local github.com/valuecase/valuecase -w $(HAND_GO_FILES)

vet: ## go vet
	$(GO) vet ./...

# golangci-lint is installed with `go install` into bin/ (not a tool of go.mod, whose dependency
# graph it would enlarge), and reinstalled when bin/ holds another version.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/golangci-lint
lint-go: ## golangci-lint (version pinned above, rules in .golangci.yml)
	@if ! $(GOLANGCI_LINT) version 2>/dev/null | grep -qF ' $(GOLANGCI_LINT_VERSION:v%=%) '; then \
		echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into bin/ (a few minutes the first time)"; \
		GOBIN="$(CURDIR)/bin" $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi
	$(GOLANGCI_LINT) run ./...

sqlc-diff: ## generated sqlc code matches db/queries and db/migrations
	$(GO) tool sqlc diff

generate: ## regenerate the sqlc code and the Go client (api/client)
	$(GO) tool sqlc generate
	$(GO) generate ./api/client

# --- OpenAPI: Redocly CLI (pinned in tools/openapi) and the generated Go client (api/client) ---
.PHONY: lint-openapi openapi-client-diff
OPENAPI_TOOLS := tools/openapi
# npm ci writes this file on every install, so it stands for node_modules matching the lock file.
OPENAPI_TOOLS_INSTALLED := $(OPENAPI_TOOLS)/node_modules/.package-lock.json

$(OPENAPI_TOOLS_INSTALLED): $(OPENAPI_TOOLS)/package.json $(OPENAPI_TOOLS)/package-lock.json
	cd $(OPENAPI_TOOLS) && npm ci --no-audit --no-fund --loglevel=error

lint-openapi: $(OPENAPI_TOOLS_INSTALLED) ## lint api/openapi.yaml with Redocly CLI (tools/openapi: version, rules)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true \
		$(OPENAPI_TOOLS)/node_modules/.bin/redocly lint --config $(OPENAPI_TOOLS)/redocly.yaml api/openapi.yaml

# `vet` compiles the client; this checks it is the one api/openapi.yaml generates today.
openapi-client-diff: ## the generated Go client (api/client) matches api/openapi.yaml
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) tool oapi-codegen -config api/client/oapi-codegen.yaml -o "$$tmp/client.gen.go" api/openapi.yaml; \
	if ! cmp -s "$$tmp/client.gen.go" api/client/client.gen.go; then \
		echo "api/client/client.gen.go does not match api/openapi.yaml: run make generate"; \
		diff -u api/client/client.gen.go "$$tmp/client.gen.go" | head -n 40 || true; exit 1; \
	fi

samples: ## sample exports of the demo seed's approved case (every template × format) into samples/, byte for byte reproducible
	$(GO) run ./cmd/render-samples -demo -out samples

bench: ## benchmarks against a same-run baseline
	bash scripts/bench.sh

lint: check ## check plus shellcheck of the scripts
	@if command -v shellcheck >/dev/null; then shellcheck -x scripts/*.sh .ci/run; \
	else echo "shellcheck not installed (apt-get install shellcheck); skipped"; fi

clean: ## remove build output and coverage files (keeps .data/ and bin/temporal)
	rm -f bin/valuecase coverage.out coverage.html *.coverprofile

clean-data: ## stop the private PostgreSQL (if any) and delete all local state in .data/
	@bash -c 'source scripts/lib.sh && stop_private_postgres'
	rm -rf .data
