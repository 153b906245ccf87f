/* alloc.c: the allocation seam (one place to fail allocations in tests, and the per-thread
 * allocation meter that bounds one request's parse: util.h). */
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cuzk/util.h"

static _Atomic long fail_after = -1;
static _Thread_local struct cuzk_meter *meter;

static int should_fail(void)
{
    long v = atomic_load(&fail_after);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_after, &v, v - 1)) return v == 0;
    }
    return 0;
}

/* What a block costs in memory: its usable size and glibc's chunk header. */
static uint64_t block_bytes(void *p) { return p ? (uint64_t)malloc_usable_size(p) + sizeof(size_t) : 0; }

/* May the metered thread allocate n more bytes (after giving back old)? */
static bool meter_allows(uint64_t n, uint64_t old)
{
    if (!meter) return true;
    uint64_t after = meter->used - (old < meter->used ? old : meter->used) + n;
    if (after <= meter->limit) return true;
    meter->over = true;
    return false;
}

static void meter_add(uint64_t add, uint64_t sub)
{
    if (!meter) return;
    meter->used = (sub < meter->used ? meter->used - sub : 0) + add;
    if (meter->used > meter->peak) meter->peak = meter->used;
}

void cuzk_alloc_fail_after(long n) { atomic_store(&fail_after, n); }

void *cuzk_malloc(size_t n)
{
    if (!meter_allows(n, 0) || should_fail()) return NULL;
    void *p = malloc(n ? n : 1);
    meter_add(block_bytes(p), 0);
    return p;
}

void *cuzk_calloc(size_t n, size_t size)
{
    if ((size && n > SIZE_MAX / size) || !meter_allows((uint64_t)n * size, 0) || should_fail())
        return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    meter_add(block_bytes(p), 0);
    return p;
}

void *cuzk_realloc(void *p, size_t n)
{
    uint64_t old = meter ? block_bytes(p) : 0;
    if (!meter_allows(n, old) || should_fail()) return NULL;
    void *q = realloc(p, n ? n : 1);
    if (q) meter_add(block_bytes(q), old);
    return q;
}

void cuzk_advise_huge(void *p, size_t n)
{
    if (!p || n < (2u << 20)) return;
    const uintptr_t b = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
    if (e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
}

void cuzk_free(void *p)
{
    if (meter) meter_add(0, block_bytes(p));
    free(p);
}

void cuzk_wipe(void *p, size_t n)
{
    if (p) explicit_bzero(p, n);
}

void cuzk_free_secret(void *p, size_t n)
{
    cuzk_wipe(p, n);
    cuzk_free(p);
}

void cuzk_meter_begin(struct cuzk_meter *m, uint64_t limit, uint64_t used)
{
    m->limit = limit;
    m->used = m->peak = used;
    m->over = false;
    meter = m;
}

void cuzk_meter_end(void) { meter = NULL; }

bool cuzk_meter_charge(int64_t delta)
{
    if (!meter) return true;
    if (delta < 0) {
        meter_add(0, (uint64_t)-delta);
        return true;
    }
    bool ok = meter_allows((uint64_t)delta, 0);
    meter_add((uint64_t)delta, 0);
    return ok;
}

bool cuzk_meter_over(void) { return meter && meter->over; }
