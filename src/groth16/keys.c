/* keys.c: freeing proving and verifying keys, and the list of a proving key's vectors. Every key array (ic, h, l, a, b_g1, b_g2) is
 * allocated with cuzk_malloc, whoever fills it (setup, the .params reader). See docs/formats.md. */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

void g16_vk_free(struct g16_vk *vk)
{
    if (!vk) return;
    cuzk_free(vk->ic);
    vk->ic = NULL;
    vk->n_ic = 0;
}

uint64_t g16_pk_vectors(const struct g16_pk *pk, void *v[G16_PK_VECTORS], size_t bytes[G16_PK_VECTORS])
{
    v[0] = pk->h, bytes[0] = pk->n_h * sizeof(g1_aff_t);
    v[1] = pk->l, bytes[1] = pk->n_l * sizeof(g1_aff_t);
    v[2] = pk->a, bytes[2] = pk->n_a * sizeof(g1_aff_t);
    v[3] = pk->b_g1, bytes[3] = pk->n_b * sizeof(g1_aff_t);
    v[4] = pk->b_g2, bytes[4] = pk->n_b * sizeof(g2_aff_t);
    uint64_t total = 0;
    for (int k = 0; k < G16_PK_VECTORS; k++) total += bytes[k];
    return total;
}

void g16_pk_free(struct g16_pk *pk)
{
    if (!pk) return;
    g16_vk_free(&pk->vk);
    cuzk_free(pk->h);
    cuzk_free(pk->l);
    cuzk_free(pk->a);
    cuzk_free(pk->b_g1);
    cuzk_free(pk->b_g2);
    memset(pk, 0, sizeof *pk);
}
