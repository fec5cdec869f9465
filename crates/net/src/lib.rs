//! Capstan's network access on the host's side, for the operator and for its plugins:
//! the egress guard that decides which addresses a tenant's URL may make the operator reach
//! ([`egress`]), the checked HTTP client built on it ([`client`]) and the requests it sends
//! under a per-call grant ([`grant`], [`send`]), and git over it ([`git_http`],
//! [`git_route`]). It knows no plugin interface: the capabilities serve plugins with it.

pub mod auth;
pub mod client;
pub mod egress;
pub mod git_http;
pub mod git_route;
pub mod grant;
pub mod origin;
pub mod send;
pub mod tls;
