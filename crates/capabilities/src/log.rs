//! The `log` host interface: plugin log records go into the host's tracing, inside the span
//! of the plugin call that emitted them.

use super::bindings::log::{Host, Level};

/// What the `log` import sees of a call: the plugin's name.
pub struct LogView<'a> {
    /// The plugin's name.
    pub(crate) plugin: &'a str,
}

/// Longest message kept from one plugin log record; the rest is cut to protect the logs.
const MAX_MESSAGE_BYTES: usize = 16 * 1024;

impl Host for LogView<'_> {
    async fn log(&mut self, level: Level, message: String) {
        let mut end = message.len().min(MAX_MESSAGE_BYTES);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let message = &message[..end];
        let plugin = self.plugin;
        match level {
            Level::Trace => tracing::trace!(target: "capstan::plugin", plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "capstan::plugin", plugin, "{message}"),
            Level::Info => tracing::info!(target: "capstan::plugin", plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "capstan::plugin", plugin, "{message}"),
            Level::Error => tracing::error!(target: "capstan::plugin", plugin, "{message}"),
        }
    }
}
