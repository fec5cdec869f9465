//! Operations surface: logging set-up, Prometheus metrics, and the `/healthz`, `/readyz`
//! and `/metrics` HTTP endpoints.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

pub use capstan_plugins::metrics::{CallLabels, PluginMetrics};

/// Labels of one mirror fetch.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FetchLabels {
    /// `ok` or `error`.
    pub outcome: String,
}

/// Metrics of source sync.
pub struct SourceMetrics {
    /// Mirrors currently tracked (referenced, or within their grace period).
    pub live_mirrors: Gauge,
    /// Mirrors removed because nothing referenced them.
    pub mirrors_collected: Counter,
    fetches: Family<FetchLabels, Counter>,
}

impl SourceMetrics {
    /// Create the metrics and register them in `registry`.
    pub fn register(registry: &mut Registry) -> Arc<Self> {
        let metrics = SourceMetrics {
            live_mirrors: Gauge::default(),
            mirrors_collected: Counter::default(),
            fetches: Family::default(),
        };
        registry.register(
            "capstan_git_mirrors",
            "Git mirrors currently kept",
            metrics.live_mirrors.clone(),
        );
        registry.register(
            "capstan_git_mirrors_collected",
            "Git mirrors removed because no release used them",
            metrics.mirrors_collected.clone(),
        );
        registry.register(
            "capstan_git_fetches",
            "Git mirror fetches by outcome",
            metrics.fetches.clone(),
        );
        Arc::new(metrics)
    }

    /// Count one fetch.
    pub fn fetch(&self, outcome: &str) {
        self.fetches
            .get_or_create(&FetchLabels {
                outcome: outcome.into(),
            })
            .inc();
    }

    /// Fetches counted with `outcome`.
    pub fn fetches(&self, outcome: &str) -> u64 {
        self.fetches
            .get_or_create(&FetchLabels {
                outcome: outcome.into(),
            })
            .get()
    }
}

/// Log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Install the global tracing subscriber; `RUST_LOG` overrides `default_level`.
pub fn init_logging(format: LogFormat, default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init(),
    }
}

/// Shared state of the HTTP endpoints.
#[derive(Clone)]
pub struct Health {
    registry: Arc<Registry>,
    ready: Arc<AtomicBool>,
}

impl Health {
    /// Endpoints serving `registry`; not ready until [`Health::set_ready`].
    pub fn new(registry: Registry) -> Self {
        Health {
            registry: Arc::new(registry),
            ready: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Mark the operator ready (or not).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// The router with the three endpoints.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics))
            .with_state(self.clone())
    }

    /// Serve the endpoints on `address` until `shutdown` resolves.
    pub async fn serve(
        &self,
        address: SocketAddr,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(address).await?;
        tracing::info!(address = %listener.local_addr()?, "serving /healthz, /readyz and /metrics");
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown)
            .await
    }
}

async fn readyz(State(health): State<Health>) -> impl IntoResponse {
    if health.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

async fn metrics(State(health): State<Health>) -> impl IntoResponse {
    let mut body = String::new();
    match prometheus_client::encoding::text::encode(&mut body, &health.registry) {
        Ok(()) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            body,
        ),
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("cannot encode metrics: {error}"),
        ),
    }
}
