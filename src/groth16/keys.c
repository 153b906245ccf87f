/* keys.c: freeing proving and verifying keys. Every key array (ic, h, l, a, b_g1, b_g2) is
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
