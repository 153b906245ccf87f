/* shape.c: the constraint-system builder (enforce -> CSR with deduplicated coefficients and
 * density bitmaps) and shape files (little-endian, "CUZKSHP1", CRC-32C trailer). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "shape files are written with host byte order, which must be little-endian"
#endif

#include "shape_internal.h"

#define MAX_COEFFS G16_MAX_COEFFS
#define HASH_SLOTS (1u << 17)   /* 2x the coefficient limit: short probe chains */

/* ------------------------------------------------------------------ builder -- */

int g16__bfail(struct g16_builder *b, int code, const char *what)
{
    if (b->err.code == CUZK_OK) {
        if (b->segment) cuzk_fail(&b->err, code, "g16 builder: segment %zu: %s", b->seg_index, what);
        else cuzk_fail(&b->err, code, "g16 builder: %s", what);
    }
    return b->err.code;
}

struct g16_builder *g16__builder_alloc(bool count_only)
{
    struct g16_builder *b = cuzk_calloc(1, sizeof *b);
    if (!b) return NULL;
    b->count_only = count_only;
    b->slots = cuzk_calloc(HASH_SLOTS, sizeof *b->slots);
    b->coeffs = cuzk_malloc(MAX_COEFFS * sizeof *b->coeffs);
    for (int i = 0; i < 3; i++) {
        b->m[i].row_cap = count_only ? 0 : 1024;
        b->m[i].nnz_cap = count_only ? 0 : 4096;
        if (!count_only) {
            b->m[i].row_ptr = cuzk_malloc((b->m[i].row_cap + 1) * sizeof(uint64_t));
            b->m[i].col = cuzk_malloc(b->m[i].nnz_cap * sizeof(uint32_t));
            b->m[i].cidx = cuzk_malloc(b->m[i].nnz_cap * sizeof(uint16_t));
            if (!b->m[i].row_ptr || !b->m[i].col || !b->m[i].cidx) goto oom;
            b->m[i].row_ptr[0] = 0;
        }
    }
    if (!b->slots || !b->coeffs) goto oom;
    return b;
oom:
    g16_builder_free(b);
    return NULL;
}

struct g16_builder *g16_builder_new(bool count_only, struct cuzk_error *err)
{
    struct g16_builder *b = g16__builder_alloc(count_only);
    if (b) {
        (void)g16_alloc_input(b);   /* ONE */
        if (!b->err.code) return b;
        g16_builder_free(b);
    }
    cuzk_fail(err, CUZK_E_NOMEM, "g16_builder_new: out of memory");
    return NULL;
}

void g16_builder_free(struct g16_builder *b)
{
    if (!b) return;
    for (int i = 0; i < 3; i++) {
        cuzk_free(b->m[i].row_ptr);
        cuzk_free(b->m[i].col);
        cuzk_free(b->m[i].cidx);
    }
    cuzk_free(b->coeffs);
    cuzk_free(b->slots);
    if (!b->segment) {   /* a segment builder's bitmaps are its main builder's */
        cuzk_free(b->a_aux);
        cuzk_free(b->b_inp);
        cuzk_free(b->b_aux);
    }
    cuzk_free(b->scratch);
    cuzk_free(b);
}

void g16_builder_counts(const struct g16_builder *b, uint32_t *n_inputs, uint32_t *n_aux, uint64_t *n_rows)
{
    if (n_inputs) *n_inputs = b->n_inputs;
    if (n_aux) *n_aux = b->n_aux;
    if (n_rows) *n_rows = b->n_rows;
}

bool g16__bitmap_reserve(uint64_t **bm, size_t *cap_words, uint64_t idx)
{
    size_t need = (size_t)(idx / 64) + 1;
    if (need <= *cap_words) return true;
    size_t cap = *cap_words ? *cap_words : 16;
    while (cap < need) cap *= 2;
    uint64_t *p = cuzk_realloc(*bm, cap * sizeof *p);
    if (!p) return false;
    memset(p + *cap_words, 0, (cap - *cap_words) * sizeof *p);
    *bm = p;
    *cap_words = cap;
    return true;
}

/* A segment builder hands out the handles of its own range only; its bitmaps were sized for
 * the whole run up front, so they never grow here. Allocating past the range would take the
 * next segment's handles (and write past the bitmaps), so it fails at once. */
static bool seg_alloc_ok(struct g16_builder *b, bool aux)
{
    uint32_t used = aux ? b->n_aux - b->seg_aux0 : b->n_inputs - b->seg_in0;
    uint32_t limit = aux ? b->seg_aux : b->seg_inputs;
    if (used < limit) return true;
    if (b->err.code == CUZK_OK)
        cuzk_fail(&b->err, CUZK_E_INTERNAL, "g16 builder: segment %zu allocates more than the %u %s it declared",
                  b->seg_index, limit, aux ? "aux" : "inputs");
    return false;
}

uint32_t g16_alloc_input(struct g16_builder *b)
{
    if (b->segment) {
        if (!seg_alloc_ok(b, false)) return G16_VAR_INPUT(0);
        return G16_VAR_INPUT(b->n_inputs++);
    }
    if (b->n_inputs >= G16_VAR_AUX_BIT - 1) {
        g16__bfail(b, CUZK_E_INVALID_ARG, "too many inputs");
        return G16_VAR_INPUT(0);
    }
    size_t cap = b->inp_words;
    if (!g16__bitmap_reserve(&b->b_inp, &cap, b->n_inputs)) {
        g16__bfail(b, CUZK_E_NOMEM, "out of memory growing the input density");
        return G16_VAR_INPUT(0);
    }
    b->inp_words = cap;
    return G16_VAR_INPUT(b->n_inputs++);
}

uint32_t g16_alloc_aux(struct g16_builder *b)
{
    if (b->segment) {
        if (!seg_alloc_ok(b, true)) return G16_VAR_AUX(0);
        return G16_VAR_AUX(b->n_aux++);
    }
    if (b->n_aux >= G16_VAR_AUX_BIT - 1) {
        g16__bfail(b, CUZK_E_INVALID_ARG, "too many aux variables");
        return G16_VAR_AUX(0);
    }
    size_t cap = b->aux_words, cap2 = b->aux_words;
    if (!g16__bitmap_reserve(&b->a_aux, &cap, b->n_aux) ||
        !g16__bitmap_reserve(&b->b_aux, &cap2, b->n_aux)) {
        g16__bfail(b, CUZK_E_NOMEM, "out of memory growing the aux densities");
        return G16_VAR_AUX(0);
    }
    b->aux_words = cap;   /* both bitmaps grow in lockstep */
    return G16_VAR_AUX(b->n_aux++);
}

static uint32_t coeff_hash(const fr_t *c)
{
    uint64_t h = c->l[0] ^ (c->l[1] * 0x9e3779b97f4a7c15ULL) ^ (c->l[2] * 0xc2b2ae3d27d4eb4fULL) ^
                 (c->l[3] * 0x165667b19e3779f9ULL);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return (uint32_t)(h >> 47);   /* 17 bits */
}

long g16__coeff_index(struct g16_builder *b, const fr_t *c)
{
    uint32_t h = coeff_hash(c);
    for (;;) {
        uint32_t s = b->slots[h];
        if (s == 0) break;
        if (!memcmp(&b->coeffs[s - 1], c, sizeof *c)) return (long)(s - 1);
        h = (h + 1) & (HASH_SLOTS - 1);
    }
    if (b->n_coeffs >= MAX_COEFFS) return -1;
    b->coeffs[b->n_coeffs] = *c;
    b->slots[h] = ++b->n_coeffs;
    return (long)(b->n_coeffs - 1);
}

void g16__coeffs_clear(struct g16_builder *b)
{
    if (b->n_coeffs) memset(b->slots, 0, HASH_SLOTS * sizeof *b->slots);
    b->n_coeffs = 0;
}

static int term_cmp(const void *x, const void *y)
{
    uint32_t a = ((const struct g16_term *)x)->var, c = ((const struct g16_term *)y)->var;
    return (a > c) - (a < c);
}

/* Whether v may appear in a row of b; records the precise error otherwise. A segment sees
 * the prefix and the part of its own range it has allocated, nothing else: another
 * segment's variables are recorded by another thread and numbered independently. */
static bool var_ok(struct g16_builder *b, uint32_t v)
{
    bool aux = (v & G16_VAR_AUX_BIT) != 0;
    uint32_t k = v & ~G16_VAR_AUX_BIT;
    const char *kind = aux ? "aux " : "input ";
    if (!b->segment) {
        if (k < (aux ? b->n_aux : b->n_inputs)) return true;
        if (b->err.code == CUZK_OK)
            cuzk_fail(&b->err, CUZK_E_INVALID_ARG, "g16 builder: constraint %llu: unallocated variable %s%u",
                      (unsigned long long)b->n_rows, kind, k);
        return false;
    }
    uint32_t pre = aux ? b->pre_aux : b->pre_inputs, lo = aux ? b->seg_aux0 : b->seg_in0;
    uint32_t next = aux ? b->n_aux : b->n_inputs, hi = lo + (aux ? b->seg_aux : b->seg_inputs);
    if (k < pre || (k >= lo && k < next)) return true;
    if (b->err.code == CUZK_OK) {
        if (k >= lo && k < hi)
            cuzk_fail(&b->err, CUZK_E_INVALID_ARG,
                      "g16 builder: segment %zu, constraint %llu: unallocated variable %s%u", b->seg_index,
                      (unsigned long long)b->n_rows, kind, k);
        else
            cuzk_fail(&b->err, CUZK_E_INVALID_ARG,
                      "g16 builder: segment %zu, constraint %llu: variable %s%u belongs to neither the prefix "
                      "nor this segment", b->seg_index, (unsigned long long)b->n_rows, kind, k);
    }
    return false;
}

/* Copy lc into scratch sorted by handle (inputs before aux, ascending), merging duplicate
 * variables and dropping zero coefficients. Returns the term count or -1 on error. */
static long normalize(struct g16_builder *b, struct g16_lc lc)
{
    if (lc.n > b->scratch_cap) {
        size_t cap = lc.n < 64 ? 64 : lc.n;
        struct g16_term *p = cuzk_realloc(b->scratch, cap * sizeof *p);
        if (!p) return g16__bfail(b, CUZK_E_NOMEM, "out of memory in enforce"), -1;
        b->scratch = p;
        b->scratch_cap = cap;
    }
    struct g16_term *t = b->scratch;
    for (size_t i = 0; i < lc.n; i++) {
        if (!var_ok(b, lc.t[i].var)) return -1;
        t[i] = lc.t[i];
    }
    if (lc.n <= 16) {
        for (size_t i = 1; i < lc.n; i++) {
            struct g16_term x = t[i];
            size_t j = i;
            while (j > 0 && t[j - 1].var > x.var) {
                t[j] = t[j - 1];
                j--;
            }
            t[j] = x;
        }
    } else {
        qsort(t, lc.n, sizeof *t, term_cmp);
    }
    size_t out = 0;
    for (size_t i = 0; i < lc.n;) {
        struct g16_term acc = t[i++];
        while (i < lc.n && t[i].var == acc.var) fr_add(&acc.coeff, &acc.coeff, &t[i++].coeff);
        if (!fr_is_zero(&acc.coeff)) t[out++] = acc;
    }
    return (long)out;
}

bool g16__mat_reserve(struct g16_mat_build *m, uint64_t rows, uint64_t nnz, bool exact)
{
    if (rows > m->row_cap) {
        uint64_t cap = !exact && m->row_cap * 2 > rows ? m->row_cap * 2 : rows;
        uint64_t *p = cuzk_realloc(m->row_ptr, (cap + 1) * sizeof *p);
        if (!p) return false;
        m->row_ptr = p;
        m->row_cap = cap;
    }
    if (nnz > m->nnz_cap) {
        uint64_t cap = !exact && m->nnz_cap * 2 > nnz ? m->nnz_cap * 2 : nnz;
        uint32_t *c = cuzk_realloc(m->col, cap * sizeof *c);
        if (!c) return false;
        m->col = c;
        uint16_t *k = cuzk_realloc(m->cidx, cap * sizeof *k);
        if (!k) return false;
        m->cidx = k;
        m->nnz_cap = cap;
    }
    return true;
}

static inline void dens_set(uint64_t *bm, uint32_t k)
{
    bm[k / 64] |= 1ULL << (k % 64);
}

/* Segments recorded at the same time share words (their boundaries, the prefix's
 * variables): an atomic OR, skipped when the bit is already there (the common case for the
 * prefix's variables, which every segment references). */
static inline void dens_set_shared(uint64_t *bm, uint32_t k)
{
    uint64_t bit = 1ULL << (k % 64);
    if (!(__atomic_load_n(&bm[k / 64], __ATOMIC_RELAXED) & bit)) __atomic_fetch_or(&bm[k / 64], bit, __ATOMIC_RELAXED);
}

/* Append one row of matrix `which` from an already normalized term list. */
static int add_row(struct g16_builder *b, int which, const struct g16_term *t, size_t n)
{
    struct g16_mat_build *m = &b->m[which];
    if (which < 2) {
        for (size_t i = 0; i < n; i++) {
            uint32_t v = t[i].var, k = v & ~G16_VAR_AUX_BIT;
            uint64_t *bm;
            if (which == 0) {
                if (!(v & G16_VAR_AUX_BIT)) continue;   /* every input has its own A row */
                bm = b->a_aux;
            } else {
                bm = (v & G16_VAR_AUX_BIT) ? b->b_aux : b->b_inp;
            }
            if (b->segment) dens_set_shared(bm, k);
            else dens_set(bm, k);
        }
    }
    if (b->count_only) {
        for (size_t i = 0; i < n; i++)
            if (g16__coeff_index(b, &t[i].coeff) < 0)
                return g16__bfail(b, CUZK_E_UNSUPPORTED, "more than 65536 distinct coefficients");
        m->nnz += n;
        return CUZK_OK;
    }
    if (!g16__mat_reserve(m, b->n_rows + 1, m->nnz + n, false))
        return g16__bfail(b, CUZK_E_NOMEM, "out of memory growing the matrices");
    for (size_t i = 0; i < n; i++) {
        long ci = g16__coeff_index(b, &t[i].coeff);
        if (ci < 0) return g16__bfail(b, CUZK_E_UNSUPPORTED, "more than 65536 distinct coefficients");
        m->col[m->nnz + i] = t[i].var;
        m->cidx[m->nnz + i] = (uint16_t)ci;
    }
    m->nnz += n;
    m->row_ptr[b->n_rows + 1] = m->nnz;
    return CUZK_OK;
}

int g16_enforce(struct g16_builder *b, struct g16_lc a, struct g16_lc bb, struct g16_lc c)
{
    if (b->err.code) return b->err.code;
    struct g16_lc lcs[3] = {a, bb, c};
    for (int i = 0; i < 3; i++) {
        long n = normalize(b, lcs[i]);
        if (n < 0) return b->err.code;
        if (add_row(b, i, b->scratch, (size_t)n)) return b->err.code;
    }
    b->n_rows++;
    return CUZK_OK;
}

static uint64_t popcount_words(const uint64_t *w, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) c += (uint64_t)__builtin_popcountll(w[i]);
    return c;
}

/* Shrink a heap array to exactly n elements (keeps the old block if realloc refuses). */
static void *shrink(void *p, size_t bytes)
{
    if (!p || bytes == 0) return p;
    void *q = cuzk_realloc(p, bytes);
    return q ? q : p;
}

int g16_builder_finish(struct g16_builder *b, struct g16_shape *out, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    if (b->segment)   /* its rows are local: only g16_builder_segments may place them */
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_builder_finish: segment %zu's builder belongs to "
                         "g16_builder_segments", b->seg_index);
    if (b->err.code) return cuzk_fail(err, b->err.code, "%s", b->err.msg);
    /* bellperson's input rows "input_i * 0 = 0" make every IC / A-input point nonzero. */
    uint32_t n_inputs = b->n_inputs;
    for (uint32_t i = 0; i < n_inputs; i++) {
        struct g16_term t = {G16_VAR_INPUT(i), FR_ONE};
        struct g16_lc one = {&t, 1}, none = {NULL, 0};
        if (g16_enforce(b, one, none, none)) return cuzk_fail(err, b->err.code, "%s", b->err.msg);
    }
    if ((uint64_t)b->n_inputs + b->n_aux > UINT32_MAX)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "g16 builder: %u inputs + %u aux exceed 2^32 columns",
                         b->n_inputs, b->n_aux);
    out->n_inputs = b->n_inputs;
    out->n_aux = b->n_aux;
    out->n_constraints = b->n_rows;
    struct g16_matrix *dst[3] = {&out->a, &out->b, &out->c};
    for (int i = 0; i < 3; i++) {
        struct g16_mat_build *m = &b->m[i];
        dst[i]->nnz = m->nnz;
        if (b->count_only) continue;
        /* Columns become final only now that the input count is known (pitfall 13). */
        for (uint64_t k = 0; k < m->nnz; k++) {
            uint32_t v = m->col[k];
            m->col[k] = (v & G16_VAR_AUX_BIT) ? b->n_inputs + (v & ~G16_VAR_AUX_BIT) : v;
        }
        dst[i]->row_ptr = shrink(m->row_ptr, (b->n_rows + 1) * sizeof(uint64_t));
        dst[i]->col = shrink(m->col, m->nnz * sizeof(uint32_t));
        dst[i]->coeff_idx = shrink(m->cidx, m->nnz * sizeof(uint16_t));
        m->row_ptr = NULL;
        m->col = NULL;
        m->cidx = NULL;
    }
    out->n_coeffs = b->n_coeffs;
    out->coeffs = shrink(b->coeffs, (b->n_coeffs ? b->n_coeffs : 1) * sizeof(fr_t));
    b->coeffs = NULL;
    size_t aw = ((size_t)b->n_aux + 63) / 64, iw = ((size_t)b->n_inputs + 63) / 64;
    /* Keep at least one word so a shape with no aux still has non-NULL bitmaps. */
    if (!b->a_aux) b->a_aux = cuzk_calloc(1, sizeof(uint64_t));
    if (!b->b_aux) b->b_aux = cuzk_calloc(1, sizeof(uint64_t));
    if (!b->a_aux || !b->b_aux) {
        g16_shape_free(out);
        return cuzk_fail(err, CUZK_E_NOMEM, "g16 builder: out of memory");
    }
    out->a_aux_density = b->a_aux;
    out->b_aux_density = b->b_aux;
    out->b_inp_density = b->b_inp;
    b->a_aux = b->b_aux = b->b_inp = NULL;
    b->aux_words = b->inp_words = 0;
    out->a_aux_count = popcount_words(out->a_aux_density, aw);
    out->b_aux_count = popcount_words(out->b_aux_density, aw);
    out->b_inp_count = popcount_words(out->b_inp_density, iw);
    /* Leave the builder empty (but usable only for freeing). */
    b->n_inputs = b->n_aux = 0;
    b->n_rows = 0;
    cuzk_fail(&b->err, CUZK_E_INVALID_ARG, "g16 builder: already finished");
    return CUZK_OK;
}

void g16_shape_free(struct g16_shape *s)
{
    if (!s) return;
    struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3; i++) {
        cuzk_free(m[i]->row_ptr);
        cuzk_free(m[i]->col);
        cuzk_free(m[i]->coeff_idx);
    }
    cuzk_free(s->coeffs);
    cuzk_free(s->a_aux_density);
    cuzk_free(s->b_inp_density);
    cuzk_free(s->b_aux_density);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------- CRC-32C -- */

uint32_t g16__crc32c(uint32_t crc, const void *data, size_t n);

#if !defined(__SSE4_2__)
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}
#endif

/* CRC-32C (Castagnoli, reflected 0x82F63B78), chainable: start with 0. */
uint32_t g16__crc32c(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
    crc = ~crc;
#if defined(__SSE4_2__)
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c;
    while (n--) crc = _mm_crc32_u8(crc, *p++);
#else
    pthread_once(&crc_once, crc_init);
    while (n--) crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
#endif
    return ~crc;
}

/* -------------------------------------------------------------- shape files -- */

#define SHAPE_MAGIC "CUZKSHP1"
#define SHAPE_VERSION 1u
#define SHAPE_FLAG_COUNT_ONLY 1u
#define HDR_BYTES 64

struct shape_io {
    FILE *f;
    const char *path;
    uint32_t crc;
    uint64_t off;
};

static int wr(struct shape_io *io, const void *p, size_t n, struct cuzk_error *err)
{
    const uint8_t *b = p;
    while (n) {
        size_t k = n > (64u << 20) ? (64u << 20) : n;
        if (fwrite(b, 1, k, io->f) != k)
            return cuzk_fail(err, CUZK_E_IO, "%s: write failed at offset %llu: %s", io->path,
                             (unsigned long long)io->off, strerror(errno));
        io->crc = g16__crc32c(io->crc, b, k);
        io->off += k;
        b += k;
        n -= k;
    }
    return CUZK_OK;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

int g16_shape_save(const struct g16_shape *s, const char *path, struct cuzk_error *err)
{
    bool count_only = s->a.row_ptr == NULL;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: path too long", path);
    struct shape_io io = {fopen(tmp, "wb"), path, 0, 0};
    if (!io.f) return cuzk_fail(err, CUZK_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
    uint8_t h[HDR_BYTES] = {0};
    memcpy(h, SHAPE_MAGIC, 8);
    put32(h + 8, SHAPE_VERSION);
    put32(h + 12, count_only ? SHAPE_FLAG_COUNT_ONLY : 0);
    put32(h + 16, s->n_inputs);
    put32(h + 20, s->n_aux);
    put64(h + 24, s->n_constraints);
    put32(h + 32, s->n_coeffs);
    put64(h + 40, s->a.nnz);
    put64(h + 48, s->b.nnz);
    put64(h + 56, s->c.nnz);
    int rc = wr(&io, h, sizeof h, err);
    if (!rc) rc = wr(&io, s->coeffs, (size_t)s->n_coeffs * sizeof(fr_t), err);
    const struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3 && !rc && !count_only; i++) {
        rc = wr(&io, m[i]->row_ptr, (s->n_constraints + 1) * sizeof(uint64_t), err);
        if (!rc) rc = wr(&io, m[i]->col, m[i]->nnz * sizeof(uint32_t), err);
        if (!rc) rc = wr(&io, m[i]->coeff_idx, m[i]->nnz * sizeof(uint16_t), err);
    }
    size_t aw = ((size_t)s->n_aux + 63) / 64, iw = ((size_t)s->n_inputs + 63) / 64;
    if (!rc) rc = wr(&io, s->a_aux_density, aw * 8, err);
    if (!rc) rc = wr(&io, s->b_inp_density, iw * 8, err);
    if (!rc) rc = wr(&io, s->b_aux_density, aw * 8, err);
    if (!rc) {
        uint8_t t[4];
        put32(t, io.crc);
        if (fwrite(t, 1, 4, io.f) != 4)
            rc = cuzk_fail(err, CUZK_E_IO, "%s: write failed: %s", path, strerror(errno));
    }
    if (fclose(io.f) != 0 && !rc)
        rc = cuzk_fail(err, CUZK_E_IO, "%s: close failed: %s", path, strerror(errno));
    if (!rc && rename(tmp, path) != 0)
        rc = cuzk_fail(err, CUZK_E_IO, "%s: rename from %s failed: %s", path, tmp, strerror(errno));
    if (rc) remove(tmp);
    return rc;
}

/* Read exactly n bytes of section `what`, chaining the CRC. */
static int rd(struct shape_io *io, void *p, size_t n, const char *what, uint64_t file_size,
              struct cuzk_error *err)
{
    uint8_t *b = p;
    uint64_t start = io->off;
    while (n) {
        size_t k = n > (64u << 20) ? (64u << 20) : n;
        size_t got = fread(b, 1, k, io->f);
        io->crc = g16__crc32c(io->crc, b, got);
        io->off += got;
        if (got != k) {
            if (ferror(io->f))
                return cuzk_fail(err, CUZK_E_IO, "%s: %s: read error: %s", io->path, what,
                                 strerror(errno));
            return cuzk_fail(err, CUZK_E_TRUNCATED,
                             "%s: truncated in %s (section starts at offset %llu, needs %llu "
                             "bytes, file has %llu)", io->path, what, (unsigned long long)start,
                             (unsigned long long)(io->off - start + n - got),
                             (unsigned long long)file_size);
        }
        b += k;
        n -= k;
    }
    return CUZK_OK;
}

/* Structural checks after the CRC matched (a file written by another version of the code
 * could still be inconsistent). */
static int validate_loaded(const struct g16_shape *s, const char *path, struct cuzk_error *err)
{
    static const char *names[3] = {"A", "B", "C"};
    const struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    uint64_t ncols = (uint64_t)s->n_inputs + s->n_aux;
    for (uint32_t i = 0; i < s->n_coeffs; i++) {
        const uint64_t *l = s->coeffs[i].l, *r = FR_MODULUS.l;
        bool lt = false;
        for (int k = 3; k >= 0; k--)
            if (l[k] != r[k]) { lt = l[k] < r[k]; break; }
        if (!lt)
            return cuzk_fail(err, CUZK_E_FORMAT, "%s: coeffs[%u]: not a canonical Fr element", path, i);
    }
    for (int i = 0; i < 3 && m[i]->row_ptr; i++) {
        if (m[i]->row_ptr[0] != 0 || m[i]->row_ptr[s->n_constraints] != m[i]->nnz)
            return cuzk_fail(err, CUZK_E_FORMAT, "%s: %s.row_ptr: bad endpoints (expected 0 and %llu)",
                             path, names[i], (unsigned long long)m[i]->nnz);
        for (uint64_t r = 0; r < s->n_constraints; r++)
            if (m[i]->row_ptr[r] > m[i]->row_ptr[r + 1])
                return cuzk_fail(err, CUZK_E_FORMAT, "%s: %s.row_ptr[%llu]: decreasing", path,
                                 names[i], (unsigned long long)r);
        for (uint64_t k = 0; k < m[i]->nnz; k++) {
            if (m[i]->col[k] >= ncols)
                return cuzk_fail(err, CUZK_E_FORMAT, "%s: %s.col[%llu]: column %u out of range "
                                 "(expected < %llu)", path, names[i], (unsigned long long)k,
                                 m[i]->col[k], (unsigned long long)ncols);
            if (m[i]->coeff_idx[k] >= s->n_coeffs)
                return cuzk_fail(err, CUZK_E_FORMAT, "%s: %s.coeff_idx[%llu]: %u out of range "
                                 "(expected < %u)", path, names[i], (unsigned long long)k,
                                 m[i]->coeff_idx[k], s->n_coeffs);
        }
    }
    return CUZK_OK;
}

int g16_shape_load(struct g16_shape *s, const char *path, struct cuzk_error *err)
{
    memset(s, 0, sizeof *s);
    struct shape_io io = {fopen(path, "rb"), path, 0, 0};
    if (!io.f) return cuzk_fail(err, CUZK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    uint64_t fsize = 0;
    if (fseeko(io.f, 0, SEEK_END) == 0) {
        fsize = (uint64_t)ftello(io.f);
        fseeko(io.f, 0, SEEK_SET);
    }
    uint8_t h[HDR_BYTES];
    int rc = rd(&io, h, sizeof h, "header", fsize, err);
    if (rc) goto out;
    if (memcmp(h, SHAPE_MAGIC, 8)) {
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: header: bad magic (expected \"%s\"): not a cuzk "
                       "shape file", path, SHAPE_MAGIC);
        goto out;
    }
    if (get32(h + 8) != SHAPE_VERSION) {
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: header: unsupported version (expected %u, got %u)",
                       path, SHAPE_VERSION, get32(h + 8));
        goto out;
    }
    uint32_t flags = get32(h + 12);
    s->n_inputs = get32(h + 16);
    s->n_aux = get32(h + 20);
    s->n_constraints = get64(h + 24);
    s->n_coeffs = get32(h + 32);
    s->a.nnz = get64(h + 40);
    s->b.nnz = get64(h + 48);
    s->c.nnz = get64(h + 56);
    bool count_only = flags & SHAPE_FLAG_COUNT_ONLY;
    /* Bound every count by the file size before allocating (a corrupt header must not
     * ask for terabytes). */
    uint64_t need = HDR_BYTES + (uint64_t)s->n_coeffs * 32 + 4;
    if (!count_only) {
        if (s->n_constraints >= (1ULL << 40) || s->a.nnz >= (1ULL << 40) || s->b.nnz >= (1ULL << 40) ||
            s->c.nnz >= (1ULL << 40)) {
            need = UINT64_MAX;
        } else {
            need += 3 * (s->n_constraints + 1) * 8 + (s->a.nnz + s->b.nnz + s->c.nnz) * 6;
        }
    }
    if (need != UINT64_MAX) need += (2 * (((uint64_t)s->n_aux + 63) / 64) + ((uint64_t)s->n_inputs + 63) / 64) * 8;
    if ((flags & ~SHAPE_FLAG_COUNT_ONLY) || s->n_coeffs > MAX_COEFFS || s->n_inputs == 0 ||
        need == UINT64_MAX) {
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: header: implausible counts or flags", path);
        goto out;
    }
    if (fsize < need) {
        rc = cuzk_fail(err, CUZK_E_TRUNCATED, "%s: truncated (header promises %llu bytes, file has %llu)",
                       path, (unsigned long long)need, (unsigned long long)fsize);
        goto out;
    }
    if (fsize > need) {
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: %llu trailing bytes after the checksum", path,
                       (unsigned long long)(fsize - need));
        goto out;
    }
    size_t aw = ((size_t)s->n_aux + 63) / 64, iw = ((size_t)s->n_inputs + 63) / 64;
    s->coeffs = cuzk_malloc(((size_t)s->n_coeffs + 1) * sizeof(fr_t));
    s->a_aux_density = cuzk_calloc(aw + 1, 8);
    s->b_aux_density = cuzk_calloc(aw + 1, 8);
    s->b_inp_density = cuzk_calloc(iw + 1, 8);
    if (!s->coeffs || !s->a_aux_density || !s->b_aux_density || !s->b_inp_density) goto oom;
    rc = rd(&io, s->coeffs, (size_t)s->n_coeffs * sizeof(fr_t), "coeffs", fsize, err);
    struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    static const char *sec[3][3] = {{"A.row_ptr", "A.col", "A.coeff_idx"},
                                    {"B.row_ptr", "B.col", "B.coeff_idx"},
                                    {"C.row_ptr", "C.col", "C.coeff_idx"}};
    for (int i = 0; i < 3 && !rc && !count_only; i++) {
        m[i]->row_ptr = cuzk_malloc((s->n_constraints + 1) * sizeof(uint64_t));
        m[i]->col = cuzk_malloc((m[i]->nnz + 1) * sizeof(uint32_t));
        m[i]->coeff_idx = cuzk_malloc((m[i]->nnz + 1) * sizeof(uint16_t));
        if (!m[i]->row_ptr || !m[i]->col || !m[i]->coeff_idx) goto oom;
        rc = rd(&io, m[i]->row_ptr, (s->n_constraints + 1) * 8, sec[i][0], fsize, err);
        if (!rc) rc = rd(&io, m[i]->col, m[i]->nnz * 4, sec[i][1], fsize, err);
        if (!rc) rc = rd(&io, m[i]->coeff_idx, m[i]->nnz * 2, sec[i][2], fsize, err);
    }
    if (!rc) rc = rd(&io, s->a_aux_density, aw * 8, "a_aux_density", fsize, err);
    if (!rc) rc = rd(&io, s->b_inp_density, iw * 8, "b_inp_density", fsize, err);
    if (!rc) rc = rd(&io, s->b_aux_density, aw * 8, "b_aux_density", fsize, err);
    if (rc) goto out;
    uint32_t computed = io.crc;
    uint8_t t[4];
    rc = rd(&io, t, 4, "checksum", fsize, err);
    if (rc) goto out;
    if (get32(t) != computed) {
        rc = cuzk_fail(err, CUZK_E_CHECKSUM, "%s: CRC-32C mismatch (stored 0x%08x, computed 0x%08x)",
                       path, get32(t), computed);
        goto out;
    }
    rc = validate_loaded(s, path, err);
    if (rc) goto out;
    s->a_aux_count = popcount_words(s->a_aux_density, aw);
    s->b_aux_count = popcount_words(s->b_aux_density, aw);
    s->b_inp_count = popcount_words(s->b_inp_density, iw);
    goto out;
oom:
    rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: out of memory loading the shape", path);
out:
    fclose(io.f);
    if (rc) g16_shape_free(s);
    return rc;
}
