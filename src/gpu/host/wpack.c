/* wpack.c: packing a witness by value class (wpack.h). */
#include "cuzk/wpack.h"

#include "cuzk/util.h"

struct wpack_job {
    const fr_t *in, *aux;
    uint64_t n_in, n;
    struct wpack_blk *blk;
    fr_t *val;
    uint64_t *group;
    uint64_t nblk;
};

static inline const fr_t *value(const struct wpack_job *j, uint64_t i)
{
    return i < j->n_in ? &j->in[i] : &j->aux[i - j->n_in];
}

static inline unsigned class_of(const fr_t *v)
{
    return fr_is_zero(v) ? WPACK_ZERO : fr_is_one(v) ? WPACK_ONE : WPACK_OTHER;
}

static void classify_groups(void *vj, size_t g0, size_t g1, unsigned worker)
{
    (void)worker;
    struct wpack_job *j = vj;
    for (size_t g = g0; g < g1; g++) {
        uint64_t local = 0;
        const uint64_t b1 = (g + 1) * WPACK_GROUP < j->nblk ? (g + 1) * WPACK_GROUP : j->nblk;
        for (uint64_t b = (uint64_t)g * WPACK_GROUP; b < b1; b++) {
            uint64_t bits = 0;
            const uint64_t i0 = b * 32, i1 = i0 + 32 < j->n ? i0 + 32 : j->n;
            for (uint64_t i = i0; i < i1; i++) bits |= (uint64_t)class_of(value(j, i)) << (2 * (i - i0));
            j->blk[b] = (struct wpack_blk){bits, (uint32_t)local, 0};
            local += (uint64_t)__builtin_popcountll(bits & 0xaaaaaaaaaaaaaaaaull);
        }
        j->group[g] = local;
    }
}

static void fill_groups(void *vj, size_t g0, size_t g1, unsigned worker)
{
    (void)worker;
    struct wpack_job *j = vj;
    for (size_t g = g0; g < g1; g++) {
        const uint64_t b1 = (g + 1) * WPACK_GROUP < j->nblk ? (g + 1) * WPACK_GROUP : j->nblk;
        for (uint64_t b = (uint64_t)g * WPACK_GROUP; b < b1; b++) {
            j->blk[b].pre += (uint32_t)j->group[g];
            fr_t *o = j->val + j->blk[b].pre;
            for (uint64_t m = j->blk[b].bits & 0xaaaaaaaaaaaaaaaaull; m; m &= m - 1)
                *o++ = *value(j, b * 32 + (unsigned)__builtin_ctzll(m) / 2);
        }
    }
}

static void run(struct pool *pool, uint64_t groups, pool_fn fn, struct wpack_job *j)
{
    if (groups > 1 && pool) pool_parallel_for(pool, groups, 1, fn, j);
    else if (groups) fn(j, 0, groups, 0);
}

uint64_t wpack_classify(struct wpack_blk *blk, uint64_t *group, const fr_t *in, uint64_t n_in,
                        const fr_t *aux, uint64_t n_aux, struct pool *pool)
{
    const uint64_t n = n_in + n_aux, groups = wpack_groups(n);
    struct wpack_job j = {in, aux, n_in, n, blk, NULL, group, wpack_blocks(n)};
    run(pool, groups, classify_groups, &j);
    uint64_t total = 0;
    for (uint64_t g = 0; g < groups; g++) {
        const uint64_t c = group[g];
        group[g] = total;
        total += c;
    }
    return total;
}

void wpack_fill(fr_t *val, struct wpack_blk *blk, const uint64_t *group, const fr_t *in, uint64_t n_in,
                const fr_t *aux, uint64_t n_aux, struct pool *pool)
{
    const uint64_t n = n_in + n_aux;
    struct wpack_job j = {in, aux, n_in, n, blk, val, (uint64_t *)group, wpack_blocks(n)};
    run(pool, wpack_groups(n), fill_groups, &j);
}

void wpack_get(fr_t *out, const struct wpack_blk *blk, const fr_t *val, uint32_t i)
{
    const struct wpack_blk *b = blk + i / 32;
    const unsigned c = wpack_class(b, i);
    if (c == WPACK_ZERO) *out = FR_ZERO;
    else if (c == WPACK_ONE) *out = FR_ONE;
    else *out = val[wpack_rank(b, i)];
}
