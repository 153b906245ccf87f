/* bincode.h (internal to src/filecoin): a bounds-checked reader for bincode 1.x default
 * encodings (little-endian fixed-width integers, u64 Vec counts, u32 enum tags, raw [u8; 32])
 * that keeps a serde-style field path for its messages, and the rust-fil-proofs MerkleProof
 * reader shared by the PoSt and SnapDeals vanilla-proof parsers. Every failure is a message
 * "<what>: <path> at byte <offset>: <problem>"; nothing aborts. See docs/formats.md. */
#ifndef CUZK_FIL_BINCODE_H
#define CUZK_FIL_BINCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"

struct bc {
    const uint8_t *p;
    size_t len, off;
    struct cuzk_error *err;
    int rc;                     /* first error (then every read fails) */
    char what[96];              /* "FallbackPoStSectorProof (sector 3)" */
    char path[320];             /* "vanilla_proof.sectors[0].inclusion_proofs[4]" */
    size_t plen;
};

void bc_init(struct bc *r, const void *data, size_t len, struct cuzk_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Append to the path (".field" or "[i]"); bc_pop restores the length bc_push returned. */
size_t bc_push(struct bc *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bc_pop(struct bc *r, size_t old);
/* Record the first failure at byte `at` (field, when non-NULL, is appended to the path). */
int bc_fail(struct bc *r, int code, size_t at, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Primitive reads; field names the value in the message. false after any failure. */
bool bc_u32(struct bc *r, const char *field, uint32_t *out);
bool bc_u64(struct bc *r, const char *field, uint64_t *out);
bool bc_raw32(struct bc *r, const char *field, uint8_t out[32]);
/* A 32-byte domain (PoseidonDomain / Sha256Domain) as a canonical Fr (Montgomery); >= r is
 * CUZK_E_BAD_ENCODING. */
bool bc_fr(struct bc *r, const char *field, fr_t *out);
/* A Vec's u64 count that must equal want (`unit` names the elements in the message). */
bool bc_count(struct bc *r, const char *field, uint64_t want, const char *unit);
/* An enum's u32 variant index that must equal want (names: the variants, n_names of them). */
bool bc_variant(struct bc *r, const char *field, uint32_t want, const char *const *names,
                unsigned n_names);
/* The input must end here. */
bool bc_end(struct bc *r);

/* Merkle tree shape: base levels of base_arity, then 0/1 sub level and 0/1 top level. */
struct bc_tree {
    unsigned base_arity, base_levels, sub_arity, top_arity;     /* 0 = absent */
    char name[48];              /* "tree R 8-8-0" */
};
void bc_tree_init(struct bc_tree *t, const char *tree, unsigned base_arity, unsigned base_levels,
                  unsigned sub_arity, unsigned top_arity);
unsigned bc_tree_levels(const struct bc_tree *t);
unsigned bc_tree_siblings(const struct bc_tree *t);
unsigned bc_tree_arity(const struct bc_tree *t, unsigned level);

/* MerkleProof<H, Base, Sub, Top> = {data: ProofData}: variant Single (0: root, leaf, path),
 * Sub (1: base_proof, sub_proof, root, leaf) or Top (2: base, sub, top, root, leaf), which
 * must be the one of the shape; paths leaf upward. idx receives bc_tree_levels(t) indices,
 * sib bc_tree_siblings(t) siblings level by level; *pos (may be NULL) the leaf position
 * folded from the indices with each level's own arity. */
bool bc_merkle_proof(struct bc *r, const struct bc_tree *t, fr_t *root, fr_t *leaf, uint32_t *idx,
                     fr_t *sib, uint64_t *pos);

/* Carve n bytes (32-aligned) from an arena cursor. */
static inline void *bc_carve(uint8_t **cur, size_t n)
{
    void *p = *cur;
    *cur += (n + 31) & ~(size_t)31;
    return p;
}
static inline size_t bc_round(size_t n) { return (n + 31) & ~(size_t)31; }

#endif
