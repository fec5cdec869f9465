# syntax=docker/dockerfile:1
# The Capstan image: the `capstan` binary and the product plugin components.
#   docker build -t ghcr.io/capstan-dev/capstan:0.1.0 .
# At runtime the image needs no network beyond the API server and the chart sources the
# HelmReleases name; the config (deploy/manifests/30-config.yaml) points at
# /usr/lib/capstan/plugins/*.wasm.

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS builder
RUN rustup target add wasm32-wasip2 \
    && apt-get update && apt-get install -y --no-install-recommends libssl-dev pkg-config
WORKDIR /src
COPY . .
# One RUN so the cache mounts (crate downloads, build outputs) hold while the results are
# copied out of target/.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    set -eux; \
    cargo build --locked --release -p capstan; \
    make plugins CARGO="cargo --locked"; \
    mkdir -p /out/bin /out/plugins; \
    cp target/release/capstan /out/bin/; \
    for p in source-git source-helm-repo source-oci backend-helm3 backend-helm2 compat-helm; do \
        cp "target/plugins/$p.wasm" /out/plugins/; \
    done

FROM debian:bookworm-slim
# The binary links glibc, libgcc_s, zlib and OpenSSL (libgit2's HTTPS and SSH); CA roots
# for HTTPS chart repositories and git servers.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libssl3 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=builder /out/bin/capstan /usr/bin/capstan
COPY --from=builder /out/plugins/ /usr/lib/capstan/plugins/
# Writable only through the volumes the Deployment mounts (cache, /tmp); the root
# filesystem can be read-only.
RUN mkdir -p /var/cache/capstan && chown 65532:65532 /var/cache/capstan
ENV XDG_CACHE_HOME=/var/cache \
    CAPSTAN_LOG_FORMAT=json
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/bin/capstan"]
CMD ["run", "--config=/etc/capstan/capstan.yaml", "--metrics-address=0.0.0.0:8080"]
