//! Run-time pieces shared by the controller and the nodes: the daemon shell (`daemon`), the
//! framing of the wire protocol (`mobiwf-proto`) on libp2p streams (`codec`), the libp2p swarm task behind a handle (`mesh`), node identities
//! (`identity`), the durable store (`store`), the durable outbox (`outbox`), Prometheus metrics
//! (`metrics`), process helpers (`process`), secrets (`secret`: tokens, private files) and
//! the HTTP APIs' bearer tokens and roles (`api_auth`), their TLS, served and spoken by the
//! CLIs (`tls`), and the web pages' sign-in, sessions, layout and assets (`web`).

pub mod api_auth;
pub mod daemon;
pub mod http_limits;
pub mod identity;
pub mod mesh;
pub mod metrics;
pub mod outbox;
pub mod peer_text;
pub mod process;
pub mod secret;
pub mod store;
pub mod tls;
pub mod web;

mod codec;
