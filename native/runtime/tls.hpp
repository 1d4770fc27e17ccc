// Thread-local variables on hot paths (the pool's cache, the queue being consumed).
#pragma once

// The extension is a shared object: with the default (global-dynamic) TLS model every access
// calls __tls_get_addr. initial-exec makes it one %fs-relative load; our few pointers fit in the
// static TLS surplus glibc reserves for modules loaded later.
// Sanitizer builds use global-dynamic: when ld relaxes an initial-exec access to local-exec it
// turns the `add %fs:0` that UBSan's null check branches on into a `lea`, which sets no flags,
// and the check then fires on stale flags (seen with GCC 12 and binutils 2.40).
#ifdef LABCTL_SANITIZED
#define LABCTL_FAST_TLS __attribute__((tls_model("global-dynamic")))
#else
#define LABCTL_FAST_TLS __attribute__((tls_model("initial-exec")))
#endif
