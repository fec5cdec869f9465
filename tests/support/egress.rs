//! The egress exceptions test fixtures need: servers on 127.0.0.1 and git repositories in
//! local folders, which the operator's default policy refuses.

use std::sync::Arc;

use capstan::capabilities::egress::{EgressPolicy, Network};

/// Public addresses, 127.0.0.1 and local paths.
pub fn loopback_and_local_paths() -> Arc<EgressPolicy> {
    Arc::new(EgressPolicy::allowing(
        vec![Network::parse("127.0.0.1").expect("an address")],
        true,
    ))
}
