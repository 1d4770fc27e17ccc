#!/bin/sh
# Builds the tokio peer offline from Debian's packaged crates (librust-tokio-dev): labctl runs it
# at first use, in this folder, as `sh build.sh BUILD CACHE` (peer.toml). The crate is copied into
# BUILD first, so cargo's Cargo.lock, resolved against the crates installed here, is written there
# and never into this folder; the compiled crates are kept in CACHE/tokio-target, shared by every
# version of this folder (a change to main.rs recompiles the peer alone), one build at a time.
# CARGO_HOME is set by peer.toml's build_env: a machine's HOME may be read-only or unset.
set -eu
build=$1
cache=$2
registry=/usr/share/cargo/registry
mkdir -p "$cache"
exec 9>"$cache/tokio-target.lock"  # one build at a time in the shared target folder, the copy included
flock 9
mkdir -p "$build/crate"
cp Cargo.toml "$build/crate/"
cp -R src "$build/crate/"
cargo build --release --offline --quiet \
    --config "source.crates-io.replace-with=\"debian\"" \
    --config "source.debian.directory=\"$registry\"" \
    --manifest-path "$build/crate/Cargo.toml" --target-dir "$cache/tokio-target"
cp "$cache/tokio-target/release/labctl-tokio-peer" "$build/labctl-tokio-peer"
