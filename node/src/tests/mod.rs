//! Tests of the node's shell that need no network and no disk: the store is in memory.

mod restored;
