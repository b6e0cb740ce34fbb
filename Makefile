# tabpilot: `make help` lists the targets.
GO       ?= go
BIN      := bin/tabpilot
PAGES    ?= $(abspath ../shared/pages/readability)
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: help build test lint check demo chromium bench bench-extract fmt soak bench-observe chaos pools

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

chromium: ## install Debian's Chromium with apt-get when it is missing
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "installing chromium with apt-get"; \
	    if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

build: ## build bin/tabpilot (the thin CLI) and bin/tabpilot-engine (the rest, which it starts)
	$(GO) build -o $(dir $(BIN))tabpilot-engine ./cmd/tabpilot
	$(GO) build -tags thin -o $(BIN) ./cmd/tabpilot

test: chromium ## run every test with the race detector (real headless Chromium)
	$(GO) test -race -timeout 20m ./...

fmt: ## gofmt the tree
	gofmt -w $$(git ls-files '*.go')

lint: ## gofmt, go mod tidy, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags thin ./cmd/tabpilot
	@test -x $(STATICCHECK) || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags thin ./cmd/tabpilot

check: lint test ## lint, then test

demo: chromium build ## observe, act on, extract and screenshot a page from the CLI: the saved Wikipedia page of PAGES (../shared), else scripts/demo/
	PAGES=$(PAGES) BIN=$(BIN) ./scripts/demo.sh

bench-extract: ## score tab.extract against Readability's 104 test pages, static and live (report in docs/extract-suite.md)
	$(GO) test ./tabs/ -run TestExtractSuite -v -count=1 -suite.report $(abspath docs/extract-suite.md)

pools: chromium ## the long form of the pool tests: 8 agents at once on a real Selenium Grid 4, browserless, remote endpoints, in package browser and through tabs (.ci/run installs what they need)
	TABPILOT_POOLS_LONG=1 $(GO) test -race ./browser -run 'Grid|Browserless|Remote' -count=1 -v
	TABPILOT_POOLS_LONG=1 $(GO) test -race ./tabs -run 'Grid|Browserless|Remote|Context' -count=1 -v

chaos: chromium ## the long chaos test: every saved page three times over, own pages between; prints crashes, timeouts, kills, lost names
	$(GO) test ./tabs -run '^TestChaos$$' -count=1 -timeout 60m -v -chaos.long

soak: build ## 500 open/run/close cycles on one daemon: RSS, goroutines, Chromium processes
	$(GO) run ./bench/soak -bin $(BIN) -n 500

bench: chromium build ## tabpilot vs agent-browser, Playwright MCP, chrome-devtools-mcp and raw CDP (writes docs/benchmarks.md; BENCHFLAGS="-n 1")
	$(GO) run ./bench/suite -bin $(BIN) -pages-dir $(PAGES) -out $(abspath docs/benchmarks.md) $(BENCHFLAGS)

bench-observe: ## observation latency and size vs the raw AX tree (and agent-browser with TABPILOT_AGENT_BROWSER)
	$(GO) test ./tabs -run '^$$' -bench BenchmarkObserve -benchtime 5x
