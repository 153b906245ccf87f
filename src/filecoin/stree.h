/* stree.h (internal to src/filecoin): sparse Merkle trees for the vanilla-proof generators
 * (gen-vanilla porep / window-post / winning-post): only the leaves a proof touches are given;
 * every other leaf and every untouched subtree root is a pseudo-random value (fil_prf of the
 * tree's key and tag), and the touched paths are hashed bottom-up. Poseidon trees of any
 * arities (tree R / C: base levels of arity 8, then optional sub and top levels) or Filecoin's
 * SHA-256 tree D (arity 2, top two bits cleared). A tree over 2^30 leaves with a few thousand
 * touched leaves builds in milliseconds. */
#ifndef CUZK_FIL_STREE_H
#define CUZK_FIL_STREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/filecoin.h"

/* Pseudo-random 254-bit value SHA-256(key | tag | a | b) with the top two bits cleared (a
 * canonical Fr and a trimmed Sha256Domain alike). */
void fil_prf(uint8_t out[32], const uint8_t key[32], uint32_t tag, uint64_t a, uint64_t b);

struct fil_stree_entry { uint64_t idx; uint8_t v[32]; };

struct fil_stree {
    unsigned levels, tag;
    unsigned arity[FIL_MAX_LEVELS];     /* leaf upward */
    unsigned n_base, n_sub, n_top;      /* the split MerkleProof reports (8-8-0 trees have a
                                         * sub level of the base arity) */
    bool sha;                           /* SHA-256 tree D (arity 2) instead of Poseidon */
    bool zeros;                         /* untouched nodes are zero[level] (all-zero data) */
    uint8_t zero[FIL_MAX_LEVELS + 1][32];
    const uint8_t *key;                 /* PRF key of the untouched nodes (kept by the caller) */
    struct fil_stree_entry *lv[FIL_MAX_LEVELS + 1];     /* touched nodes per level, sorted */
    size_t n[FIL_MAX_LEVELS + 1];
};

/* A Poseidon tree of nb base levels of arity `base`, then a sub level of arity `sub` and a
 * top level of arity `top` where nonzero (the tree-R / tree-C shape of a sector size). */
void fil_stree_init_poseidon(struct fil_stree *t, const uint8_t key[32], unsigned tag, unsigned base,
                             unsigned nb, unsigned sub, unsigned top);
/* A SHA-256 binary tree of `levels` levels. */
void fil_stree_init_sha(struct fil_stree *t, const uint8_t key[32], unsigned tag, unsigned levels);
/* A SHA-256 tree D over all-zero data (a CC sector): every untouched node is the root of a
 * zero subtree, so the root (comm_d) is known before any leaf is chosen and the generator
 * can derive replica_id from it as upstream does. */
void fil_stree_init_sha_zeros(struct fil_stree *t, unsigned levels);
/* Hash the tree over n touched leaves (any order; duplicates must carry equal values). Takes
 * ownership of leaves (allocated with cuzk_malloc), also on failure. A level of 4096 or more
 * parents is hashed on pool_default() (the same bytes). */
int fil_stree_build(struct fil_stree *t, struct fil_stree_entry *leaves, size_t n,
                    struct cuzk_error *err);
void fil_stree_free(struct fil_stree *t);
/* Node idx of a level (0 = leaves): its touched value, else its pseudo-random value. */
void fil_stree_get(const struct fil_stree *t, uint8_t out[32], unsigned level, uint64_t idx);
void fil_stree_root(const struct fil_stree *t, uint8_t out[32]);
/* The MerkleProof of leaf idx (the base / sub / top split the tree was made with). */
void fil_stree_proof(const struct fil_stree *t, struct fil_merkle_proof *m, uint64_t idx);

#endif
