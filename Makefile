# Capstan developer commands. `make test` is what CI runs (.ci/run); `make demo` starts
# a local control plane and the operator with every plugin.

CARGO ?= cargo
# Every host build and test selects the whole workspace: Cargo resolves features over the
# packages a command selects, so `-p capstan` here and `-p capstan-integration-tests` there
# would each get their own feature set and rebuild wasmtime, cranelift and kube (measured:
# five extra minutes of a cold `make test`). One selection, one build: HOST_BUILD compiles
# the binaries and every test target once, and each `cargo test $(HOST)` reuses it.
HOST := --workspace
HOST_BUILD := $(CARGO) build $(HOST) --bins --tests
# The binaries alone (`make build`, `make demo`) in that same feature set: right after
# `make test` they rebuild no dependency (only the small examples compile, once), and a
# later `make test` reuses all they built. A selection without tests leaves out the
# dev-dependencies' features (`--workspace --bins` alone rebuilds kube-runtime, rand, rsa,
# zerocopy and what depends on them; `-p capstan` also hyper, kube-client, cranelift and
# wasmtime); `--examples` needs the dev-dependencies too, so Cargo resolves them as with
# `--tests`, and the examples are small native programs of the rendering crates where the
# tests are a dozen binaries that each link wasmtime and kube. Checked with `cargo +nightly
# build -Z unstable-options --unit-graph`: the capstan and chaos binaries' units are the
# same under both selections.
HOST_BINS := $(CARGO) build $(HOST) --bins --examples
PLUGIN_TARGET := wasm32-wasip2
PLUGIN_OUT := target/$(PLUGIN_TARGET)/plugin
# Component file name (target/plugins/<name>.wasm) = crate name without its prefix.
PRODUCT_PLUGINS := source-git source-helm-repo source-oci backend-helm3 backend-helm2 compat-helm
TEST_PLUGINS := spin-forever allocate-forever trap host-probe wrong-world future-major

.PHONY: e2e-helm-operator regex-oracle chaos-smoke image ssh-server supply-chain fuzz fuzz-smoke all build plugins python-plugins helm4-plugins helm-free-host host-structure fmt-check clippy unit-test tool-test oracles integration-test test test-fresh tools cluster-up cluster-down demo bench bench-render clean-cache

all: build plugins

build:
	$(HOST_BINS)

## Build every component (product and test plugins) into target/plugins/*.wasm.
plugins:
	$(CARGO) build --target $(PLUGIN_TARGET) --profile plugin \
		$(foreach p,$(PRODUCT_PLUGINS),-p capstan-$(p)) $(foreach p,$(TEST_PLUGINS),-p test-plugin-$(p))
	@mkdir -p target/plugins
	@for p in $(PRODUCT_PLUGINS); do cp $(PLUGIN_OUT)/capstan_$$(echo $$p | tr - _).wasm target/plugins/$$p.wasm; done
	@for p in $(TEST_PLUGINS); do cp $(PLUGIN_OUT)/test_plugin_$$(echo $$p | tr - _).wasm target/plugins/test-$$p.wasm; done
	@ls -l target/plugins

## Example plugins in other languages (componentize-py in target/python-venv).
python-plugins:
	@mkdir -p target/plugins
	plugins/examples/python-url-source/build.sh target/plugins/python-url-source.wasm

## Helm 4 Wasm plugins (extism/v1, core modules for wasm32-wasip1), assembled as Helm
## distributes them: target/plugins/helm4/<name>/{plugin.yaml,plugin.wasm}.
HELM4_PLUGINS := mirror-getter
helm4-plugins:
	$(CARGO) build $(HELM4_GETTER) --release --target wasm32-wasip1
	$(CARGO) build $(HELM4_POSTRENDERER) --release --target wasm32-wasip1
	@mkdir -p target/plugins/helm4/mirror-getter target/plugins/helm4/label-postrenderer
	cp plugins/examples/helm4-mirror-getter/plugin.yaml target/plugins/helm4/mirror-getter/plugin.yaml
	cp target/helm4-plugins/wasm32-wasip1/release/helm4_mirror_getter.wasm target/plugins/helm4/mirror-getter/plugin.wasm
	cp plugins/examples/helm4-label-postrenderer/plugin.yaml target/plugins/helm4/label-postrenderer/plugin.yaml
	cp target/helm4-plugins/wasm32-wasip1/release/helm4_label_postrenderer.wasm target/plugins/helm4/label-postrenderer/plugin.wasm

HELM4_GETTER_MANIFEST := --manifest-path plugins/examples/helm4-mirror-getter/Cargo.toml
HELM4_POSTRENDERER_MANIFEST := --manifest-path plugins/examples/helm4-label-postrenderer/Cargo.toml
HELM4_GETTER := $(HELM4_GETTER_MANIFEST) --target-dir target/helm4-plugins
HELM4_POSTRENDERER := $(HELM4_POSTRENDERER_MANIFEST) --target-dir target/helm4-plugins

fmt-check:
	$(CARGO) fmt --all -- --check
	scripts/chart-readme --check
	$(CARGO) fmt --manifest-path plugins/examples/helm4-mirror-getter/Cargo.toml -- --check
	$(CARGO) fmt --manifest-path plugins/examples/helm4-label-postrenderer/Cargo.toml -- --check

## Lints in a target directory of their own: a check build shares no artifact with the test
## builds anyway, and apart it never waits on their build lock (`make test` runs it beside
## the integration suite).
CLIPPY := $(CARGO) clippy --target-dir target/clippy
clippy:
	$(CLIPPY) --workspace --all-targets -- -D warnings
	$(CLIPPY) --target $(PLUGIN_TARGET) $(foreach p,$(PRODUCT_PLUGINS),-p capstan-$(p)) \
		$(foreach p,$(TEST_PLUGINS),-p test-plugin-$(p)) -- -D warnings
	$(CLIPPY) $(HELM4_GETTER_MANIFEST) --target wasm32-wasip1 -- -D warnings
	$(CLIPPY) $(HELM4_POSTRENDERER_MANIFEST) --target wasm32-wasip1 -- -D warnings

## The host links no Helm library (the contract is wrong if it needs one).
helm-free-host:
	@if $(CARGO) tree -p capstan -e normal,build,dev | grep -E 'capstan-(helm|gotmpl|goyaml|sprig)'; then \
		echo "the host depends on a Helm library (above)" >&2; exit 1; \
	else echo "host: no Helm library in cargo tree -p capstan"; fi
	@if $(CARGO) tree -p capstan-wasm-runtime -e normal,build | grep -E '(^|[ ─])(kube[a-z-]*|git2|hyper[a-z-]*|capstan-(api|net|capabilities|plugins|postrender)) v'; then \
		echo "the generic Wasm runtime depends on the above (kube, git2, hyper or a Capstan crate)" >&2; exit 1; \
	else echo "capstan-wasm-runtime: no kube, git2, hyper or Capstan crate in its cargo tree"; fi

## The host's crates (`host`, `crates/*`): no import circle between modules, no source file
## over 800 lines, no main.rs over 200 (scripts/check-host-structure; `--report` for the graph).
host-structure:
	scripts/check-host-structure

## Unit tests and component tests: no cluster and no built tool needed. They run with the
## tools folder pointed at an empty one (target/no-tools), so a test here that starts
## `helm`, a control-plane binary or the registry fails at once on every machine, warm
## tools cache or not, instead of only on a fresh one; such a test belongs in `tool-test`.
unit-test: export CAPSTAN_TOOLS_DIR = $(CURDIR)/target/no-tools
unit-test: plugins python-plugins helm4-plugins helm-free-host ssh-server
	@rm -rf target/no-tools
	$(HOST_BUILD)
	$(CARGO) test $(HOST) --lib --bins
	$(CARGO) test $(HOST) --test snippets --test oracle --test chart_corpus --test helm_loader \
		--test helm_testdata --test hostile --test oracles --test parity --test fuzz_corpus --test regex_oracle
	$(CARGO) test $(HOST) --test plugin_runtime --test source_sync --test plugin_scaffold \
		--test helm4_getter --test plugin_compile_cli
	$(CARGO) test $(HELM4_GETTER)
	$(CARGO) test $(HELM4_POSTRENDERER)
	python3 -m pytest -q plugins/examples/python-url-source
	$(CARGO) test $(HOST) --test template_cli
	@if [ -e target/no-tools ]; then echo "a unit test created target/no-tools: it needs the tools" >&2; exit 1; fi

## Component tests that need a built tool but no cluster: the real `helm` packages and
## indexes the charts the Helm-repository source is tested against; `capstan template` and
## the recorded rendering oracles (plugins/lib/helm/tests/oracles) against real Helm v4.2.3.
tool-test: plugins tools
	$(HOST_BUILD)
	$(CARGO) test $(HOST) --test source_helm_repo
	$(CARGO) test $(HOST) --test helm_oracles

## Record real Helm's answers for the rendering oracles (after adding or changing a case).
oracles: plugins tools
	$(HOST_BUILD)
	CAPSTAN_ORACLES_WRITE=1 $(CARGO) test $(HOST) --test helm_oracles

## Re-record the go-yaml oracle (plugins/lib/goyaml/tests/fixtures/go-yaml-oracle.jsonl,
## read by plugins/lib/goyaml/tests/oracle.rs) with real Go: tests/cluster/goyaml-oracle runs
## every document of the fixture through the go-yaml, sigs.k8s.io/yaml and BurntSushi/toml
## versions Helm v3.21.4 builds with. A new case is a line {"input": "..."} added to the
## fixture before running this; `git diff` shows what changed.
GOYAML_ORACLE := plugins/lib/goyaml/tests/fixtures/go-yaml-oracle.jsonl
.PHONY: goyaml-oracle
goyaml-oracle:
	cd tests/cluster/goyaml-oracle && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
		go run . $(CURDIR)/$(GOYAML_ORACLE) > $(CURDIR)/$(GOYAML_ORACLE).new \
		|| { rm -f $(CURDIR)/$(GOYAML_ORACLE).new; exit 1; }
	mv $(GOYAML_ORACLE).new $(GOYAML_ORACLE)

## Record Go's answers for the regular-expression oracle again (Sprig's regex functions on
## Go's regexp, tests/cluster/regex-oracle) on the seeded generator's cases; `make test`
## replays a sample of them without Go (plugins/lib/sprig/tests/regex_oracle.rs).
regex-oracle:
	CAPSTAN_REGEX_ORACLE_BIN=$$(tests/cluster/build-regex-oracle)/regex-oracle CAPSTAN_REGEX_ORACLE_WRITE=1 \
		CAPSTAN_REGEX_ORACLE_ALL=1 $(CARGO) test --release -p capstan-sprig --test regex_oracle

## Control-plane binaries and the OCI test registry (Go, cached by version outside the
## checkout).
tools:
	tests/cluster/build-tools
	tests/cluster/build-registry
	tests/cluster/build-helm4
	tests/cluster/build-helm4 v4.2.3
	tests/cluster/build-helm4-postrender-fix
	tests/cluster/build-helm2

cluster-up: tools
	tests/cluster/up

cluster-down:
	tests/cluster/down

## Integration tests against a real control plane; the harness starts one if none is up
## and always stops what it started.
integration-test: plugins python-plugins helm4-plugins tools
	$(HOST_BUILD)
	$(CARGO) test $(HOST) --test cluster -- --test-threads=1

## The SSH git server of the tests (tests/support/git_ssh_server.py): asyncssh in a venv.
ssh-server: target/ssh-venv/bin/python
target/ssh-venv/bin/python:
	python3 -m venv target/ssh-venv
	target/ssh-venv/bin/pip install --quiet asyncssh==2.24.1

## cargo-deny (deny.toml): RustSec advisories, licenses, bans, sources.
supply-chain:
	scripts/supply-chain

## The fuzz campaign: every target of fuzz/ for 10 minutes (scripts/fuzz; nightly).
fuzz:
	CAPSTAN_FUZZ_MINIMIZE=1 scripts/fuzz 600
	CAPSTAN_REGEX_ORACLE_BIN=$$(tests/cluster/build-regex-oracle)/regex-oracle CAPSTAN_REGEX_ORACLE_GROW=$$(date +%s) \
		$(CARGO) test --release -p capstan-sprig --test regex_oracle a_new_seed_agrees_with_go

## A short libFuzzer run of every fuzz target (nightly, sanitizers). `make test` instead
## replays the committed corpora on stable (plugins/lib/helm/tests/fuzz_corpus.rs and the
## Helm-repository index's unit tests): the sanitizer build alone cost 8 minutes of CI.
fuzz-smoke:
	CAPSTAN_FUZZ_SCRATCH=1 scripts/fuzz 15

## What CI runs (.ci/run). The builds and tests that need the CPU run one after another;
## then the integration suite and the chaos campaign, which mostly wait on their control
## planes, run with the lints beside them at the lowest CPU priority (scripts/beside),
## which takes that compile off the critical path of a 2-core machine. The image (`make
## image`: a musl release build of wasmtime, ~25 CPU-minutes) is not part of it: with it, a
## CI machine shared with other jobs ran past its 90 minutes.
test: fmt-check host-structure supply-chain unit-test tool-test
	scripts/beside "$(MAKE) clippy" -- $(MAKE) integration-test chaos-smoke

## A short chaos campaign (scripts/chaos: kills, control-plane restarts, source outages),
## at most 5 minutes of faults on a control plane of its own.
chaos-smoke: plugins tools
	scripts/chaos --releases 12 --kills 20 --minutes 5

## The container image, built without a daemon (scripts/image): pushed to a local registry
## started for the run, read back and checked, saved in target/image/oci.
image: plugins
	scripts/image

## The whole of `make test` as a fresh machine runs it: a fresh clone of HEAD, with the tools
## cache pointed at an empty folder (so every tool is built) and a cold target/. Run it
## whenever the test layout changes; it prints the wall time and the time spent on tools.
test-fresh:
	scripts/test-fresh

bench: plugins tools
	$(CARGO) bench -p capstan --bench plugin_call --bench source_sync --bench source_helm_repo

## Rendering speed on the 20 largest parity-corpus charts, in one run: real `helm template`
## (from `make tools`), native capstan-helm (release), and `capstan template` (component).
bench-render:
	scripts/bench-render

demo: plugins tools
	deploy/demo.sh

## The Flux Helm Operator's own e2e suite (../shared/helm-operator-e2e, unmodified) against
## Capstan, for Helm v3 and v2, in a world of its own: control plane, Tiller, git and chart
## servers, kwok stages (tests/e2e/helm-operator/README.md).
e2e-helm-operator: plugins tools ssh-server build
	tests/e2e/helm-operator/run
