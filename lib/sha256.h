/*
 * SHA-256 (FIPS 180-4), for content hashes such as a policy's "sha256:…". No crypto library is
 * among the build's packages (the Makefile's PACKAGES), and a policy hash needs nothing more than
 * this one function, so it lives here with the standard's test vectors in tests/unit/test_sha256.c.
 */
#ifndef FB_SHA256_H
#define FB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64
/* "sha256:" + 64 hex digits + NUL. */
#define SHA256_PREFIXED_HEX_SIZE (7 + 2 * SHA256_DIGEST_SIZE + 1)

/* A running hash; a plain value the caller owns (on the stack), fields private to sha256.c. */
struct sha256_ctx {
	uint32_t state[8];
	uint64_t bytes;
	uint8_t block[SHA256_BLOCK_SIZE];
	size_t used;
};

void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
/* Writes the digest into out and wipes ctx. */
void sha256_final(struct sha256_ctx *ctx, uint8_t out[SHA256_DIGEST_SIZE]);

/* One-shot digest of len bytes. */
void sha256_digest(const void *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE]);

/* Writes "sha256:" and the lower-case hex of the digest of data into out. */
void sha256_prefixed_hex(const void *data, size_t len, char out[SHA256_PREFIXED_HEX_SIZE]);

#endif
