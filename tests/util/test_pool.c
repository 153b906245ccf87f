/* test_pool.c: the shared thread pool (every item exactly once, nesting, concurrent callers),
 * the error helpers and the allocation seam. */
#include <pthread.h>
#include <stdatomic.h>

#include "test.h"

struct count_ctx {
    _Atomic unsigned *hits;
    atomic_uint max_worker;
    struct pool *pool;
    size_t inner_n;
    _Atomic unsigned long inner_sum;
};

static void count_fn(void *vctx, size_t b, size_t e, unsigned worker)
{
    struct count_ctx *c = vctx;
    for (size_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
    unsigned m = atomic_load(&c->max_worker);
    while (worker > m && !atomic_compare_exchange_weak(&c->max_worker, &m, worker)) {
    }
}

static void inner_fn(void *vctx, size_t b, size_t e, unsigned worker)
{
    (void)worker;
    struct count_ctx *c = vctx;
    for (size_t i = b; i < e; i++) atomic_fetch_add(&c->inner_sum, (unsigned long)i);
}

/* Each outer item runs a nested parallel_for on the same pool: it must run inline, not hang. */
static void nested_fn(void *vctx, size_t b, size_t e, unsigned worker)
{
    struct count_ctx *c = vctx;
    count_fn(vctx, b, e, worker);
    for (size_t i = b; i < e; i++) pool_parallel_for(c->pool, c->inner_n, 1, inner_fn, c);
}

static void run_count(struct pool *p, size_t n, size_t grain)
{
    struct count_ctx c = {0};
    c.hits = calloc(n ? n : 1, sizeof *c.hits);
    pool_parallel_for(p, n, grain, count_fn, &c);
    for (size_t i = 0; i < n; i++)
        ASSERT_MSG(c.hits[i] == 1, "n=%zu grain=%zu: item %zu ran %u times", n, grain, i,
                   (unsigned)c.hits[i]);
    ASSERT(atomic_load(&c.max_worker) < pool_size(p));
    free(c.hits);
}

TEST(pool_every_item_once)
{
    struct cuzk_error err;
    struct pool *p = pool_new(4, &err);
    ASSERT(p != NULL);
    ASSERT_EQ_U64(pool_size(p), 4);
    size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 100003};
    size_t grains[] = {1, 5, 64, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) run_count(p, sizes[i], grains[g]);
    pool_free(p);
    run_count(NULL, 1000, 1);          /* no pool: inline */
    p = pool_new(1, &err);             /* caller only */
    run_count(p, 1000, 1);
    pool_free(p);
}

TEST(pool_nested_calls_run_inline)
{
    struct cuzk_error err;
    struct pool *p = pool_new(3, &err);
    struct count_ctx c = {0};
    size_t n = 200;
    c.hits = calloc(n, sizeof *c.hits);
    c.pool = p;
    c.inner_n = 50;
    pool_parallel_for(p, n, 1, nested_fn, &c);
    for (size_t i = 0; i < n; i++) ASSERT_EQ_U64(c.hits[i], 1);
    ASSERT_EQ_U64(atomic_load(&c.inner_sum), (unsigned long)n * (49 * 50 / 2));
    free(c.hits);
    pool_free(p);
}

struct caller_arg { struct pool *p; int ok; };

static void *caller_main(void *varg)
{
    struct caller_arg *a = varg;
    a->ok = 1;
    for (int r = 0; r < 20; r++) {
        size_t n = 5000 + (size_t)r * 7;
        struct count_ctx c = {0};
        c.hits = calloc(n, sizeof *c.hits);
        pool_parallel_for(a->p, n, 3, count_fn, &c);
        for (size_t i = 0; i < n; i++) a->ok &= c.hits[i] == 1;
        free(c.hits);
    }
    return NULL;
}

TEST(pool_concurrent_callers)
{
    struct cuzk_error err;
    struct pool *p = pool_new(3, &err);
    pthread_t t[4];
    struct caller_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i].p = p;
        pthread_create(&t[i], NULL, caller_main, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ASSERT_MSG(a[i].ok, "caller %d saw an item run zero or several times", i);
    }
    pool_free(p);
}

TEST(error_helpers)
{
    struct cuzk_error err;
    ASSERT_EQ_INT(cuzk_fail(&err, CUZK_E_FORMAT, "x.params: h[%d]: bad", 7), CUZK_E_FORMAT);
    ASSERT_EQ_INT(err.code, CUZK_E_FORMAT);
    ASSERT(strcmp(err.msg, "x.params: h[7]: bad") == 0);
    ASSERT_EQ_INT(cuzk_fail_prefix(&err, CUZK_E_IO, "job %s", "7f3a"), CUZK_E_FORMAT);
    ASSERT(strcmp(err.msg, "job 7f3a: x.params: h[7]: bad") == 0);
    /* A prefix longer than the buffer is cut, never overflows, and stays terminated. */
    char big[2 * CUZK_ERR_MSG_MAX];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    cuzk_fail_prefix(&err, CUZK_E_IO, "%s", big);
    ASSERT(strlen(err.msg) < CUZK_ERR_MSG_MAX);
    ASSERT(strcmp(cuzk_errname(CUZK_E_NOT_IN_SUBGROUP), "CUZK_E_NOT_IN_SUBGROUP") == 0);
    ASSERT(strcmp(cuzk_errname(-1), "CUZK_E_UNKNOWN") == 0);
    ASSERT(strcmp(cuzk_strerror(CUZK_E__COUNT), "unknown error") == 0);
    ASSERT_EQ_INT(cuzk_fail(NULL, CUZK_E_NOMEM, "no buffer"), CUZK_E_NOMEM);
    cuzk_error_clear(&err);
    ASSERT_EQ_INT(err.code, CUZK_OK);
    ASSERT(err.msg[0] == 0);
}

TEST(alloc_seam_fails_on_demand)
{
    cuzk_alloc_fail_after(2);
    void *a = cuzk_malloc(16), *b = cuzk_malloc(16), *c = cuzk_malloc(16), *d = cuzk_malloc(16);
    ASSERT(a && b && !c && d);
    cuzk_alloc_fail_after(-1);
    cuzk_free(a);
    cuzk_free(b);
    cuzk_free(d);
}

TEST(rng_reproducible_and_os_random)
{
    cuzk_rng r1, r2;
    cuzk_rng_seed(&r1, 123);
    cuzk_rng_seed(&r2, 123);
    for (int i = 0; i < 100; i++) ASSERT_EQ_U64(cuzk_rng_u64(&r1), cuzk_rng_u64(&r2));
    cuzk_rng_seed(&r2, 124);
    ASSERT(cuzk_rng_u64(&r1) != cuzk_rng_u64(&r2));
    uint8_t x[64] = {0}, y[64] = {0};
    struct cuzk_error err;
    ASSERT_OK(cuzk_os_random(x, sizeof x, &err), &err);
    ASSERT_OK(cuzk_os_random(y, sizeof y, &err), &err);
    ASSERT(memcmp(x, y, sizeof x) != 0);
}

/* cuzk_wipe clears exactly its n bytes (the guards on both sides keep their bytes), and
 * cuzk_free_secret takes NULL. */
TEST(wipe_clears_exactly_its_bytes)
{
    unsigned char buf[64];
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off + 8 <= sizeof buf; n += 7) {
            memset(buf, 0xa5, sizeof buf);
            cuzk_wipe(buf + off, n);
            for (size_t i = 0; i < sizeof buf; i++) {
                const bool inside = i >= off && i < off + n;
                ASSERT_MSG(buf[i] == (inside ? 0 : 0xa5), "off %zu n %zu: byte %zu is 0x%02x", off, n, i, buf[i]);
            }
        }
    cuzk_wipe(NULL, 16);
    cuzk_free_secret(NULL, 16);
    void *p = cuzk_malloc(100);
    ASSERT(p);
    cuzk_free_secret(p, 100);
}
