/* post_tree2k.h: a 2 KiB tree R for PoSt tests (64 random leaves, arity 8, 2 levels, native
 * Poseidon under the MerkleTree tag), its comm_r = Poseidon(comm_c, root), and the inclusion
 * path of a leaf in the circuit's layout. Shared by tests/circuits/test_post.c and
 * tests/filecoin/test_post_inputs.c; include after test.h. */
#ifndef CUZK_TESTS_POST_TREE2K_H
#define CUZK_TESTS_POST_TREE2K_H

#include "cuzk/ff.h"
#include "cuzk/gadgets.h"
#include "cuzk/util.h"

static inline void rand_fr(fr_t *x)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(x, b);
}

struct tree2k {
    fr_t leaf[64], mid[8], root, comm_c, comm_r;
};
static inline void tree2k_build(struct tree2k *t)
{
    struct cuzk_error e;
    const struct poseidon_consts *p8 = poseidon_consts_get(8, &e), *p2 = poseidon_consts_get(2, &e);
    ASSERT_MSG(p8 && p2, "%s", e.msg);
    for (int i = 0; i < 64; i++) rand_fr(&t->leaf[i]);
    for (int j = 0; j < 8; j++) poseidon_hash(&t->mid[j], p8, &t->leaf[8 * j]);
    poseidon_hash(&t->root, p8, t->mid);
    rand_fr(&t->comm_c);
    fr_t pre[2] = {t->comm_c, t->root};
    poseidon_hash(&t->comm_r, p2, pre);
}

/* Path of leaf n: level 0 index n % 8 and the 7 other leaves of its group in order, level 1
 * index n / 8 and the 7 other middle nodes. */
struct path2k {
    uint32_t idx[2];
    fr_t sib[14];
};
static inline void tree2k_path(struct path2k *p, const struct tree2k *t, unsigned n)
{
    p->idx[0] = n % 8;
    p->idx[1] = n / 8;
    unsigned k = 0;
    for (unsigned i = 0; i < 8; i++)
        if (i != n % 8) p->sib[k++] = t->leaf[8 * (n / 8) + i];
    for (unsigned i = 0; i < 8; i++)
        if (i != n / 8) p->sib[k++] = t->mid[i];
}

#endif
