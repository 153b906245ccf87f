/* test_params.c: .params / .vk / proof byte formats: round trips against a layout built here
 * independently (ec encoders + hand-written count words), every corruption class with its
 * code and message, the digest cache, and the 192-byte proof encoding. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuzk/ec.h"
#include "cuzk/groth16.h"
#include "cuzk/progress.h"
#include "test.h"

/* ---------------------------------------------------------------- helpers -- */

static void rand_fr(fr_t *s)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(s, b);
}

/* n subgroup points: P0 = k G, P_i = P_{i-1} + Q (cheap for many points; distinct). */
static void rand_g1s(g1_aff_t *out, size_t n)
{
    if (!n) return;
    fr_t k;
    g1_jac_t g, p, q;
    g1_jac_from_aff(&g, &G1_GENERATOR);
    rand_fr(&k);
    g1_jac_mul_fr(&p, &g, &k);
    rand_fr(&k);
    g1_jac_mul_fr(&q, &g, &k);
    g1_jac_t *j = malloc(n * sizeof *j);
    for (size_t i = 0; i < n; i++) {
        j[i] = p;
        g1_jac_add(&p, &p, &q);
    }
    g1_batch_to_aff(out, j, n, NULL);
    free(j);
}

static void rand_g2s(g2_aff_t *out, size_t n)
{
    if (!n) return;
    fr_t k;
    g2_jac_t g, p, q;
    g2_jac_from_aff(&g, &G2_GENERATOR);
    rand_fr(&k);
    g2_jac_mul_fr(&p, &g, &k);
    rand_fr(&k);
    g2_jac_mul_fr(&q, &g, &k);
    g2_jac_t *j = malloc(n * sizeof *j);
    for (size_t i = 0; i < n; i++) {
        j[i] = p;
        g2_jac_add(&p, &p, &q);
    }
    g2_batch_to_aff(out, j, n, NULL);
    free(j);
}

static void make_pk(struct g16_pk *pk, uint32_t n_ic, uint64_t n_h, uint64_t n_l, uint64_t n_a,
                    uint64_t n_b)
{
    memset(pk, 0, sizeof *pk);
    g1_aff_t v1[3];
    g2_aff_t v2[3];
    rand_g1s(v1, 3);
    rand_g2s(v2, 3);
    pk->vk.alpha_g1 = v1[0];
    pk->vk.beta_g1 = v1[1];
    pk->vk.delta_g1 = v1[2];
    pk->vk.beta_g2 = v2[0];
    pk->vk.gamma_g2 = v2[1];
    pk->vk.delta_g2 = v2[2];
    pk->vk.n_ic = n_ic;
    pk->vk.ic = cuzk_malloc(n_ic * sizeof(g1_aff_t));
    rand_g1s(pk->vk.ic, n_ic);
    pk->n_h = n_h;
    pk->h = cuzk_malloc(n_h * sizeof(g1_aff_t));
    rand_g1s(pk->h, n_h);
    pk->n_l = n_l;
    pk->l = cuzk_malloc(n_l * sizeof(g1_aff_t));
    rand_g1s(pk->l, n_l);
    pk->n_a = n_a;
    pk->a = cuzk_malloc(n_a * sizeof(g1_aff_t));
    rand_g1s(pk->a, n_a);
    pk->n_b = n_b;
    pk->b_g1 = cuzk_malloc(n_b * sizeof(g1_aff_t));
    rand_g1s(pk->b_g1, n_b);
    pk->b_g2 = cuzk_malloc(n_b * sizeof(g2_aff_t));
    rand_g2s(pk->b_g2, n_b);
}

/* The oracle layout: bellperson Parameters::write, assembled here from ec's encoders. */
struct fb { uint8_t *b; size_t n, cap; };
static void fb_put(struct fb *f, const void *p, size_t n)
{
    if (f->n + n > f->cap) {
        f->cap = (f->n + n) * 2;
        f->b = realloc(f->b, f->cap);
    }
    memcpy(f->b + f->n, p, n);
    f->n += n;
}
static void fb_u32(struct fb *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    fb_put(f, b, 4);
}
static void fb_g1(struct fb *f, const g1_aff_t *p)
{
    uint8_t b[96];
    g1_aff_to_uncompressed(b, p);
    fb_put(f, b, 96);
}
static void fb_g2(struct fb *f, const g2_aff_t *p)
{
    uint8_t b[192];
    g2_aff_to_uncompressed(b, p);
    fb_put(f, b, 192);
}
static void fb_vk(struct fb *f, const struct g16_vk *vk, uint32_t n_ic)
{
    fb_g1(f, &vk->alpha_g1);
    fb_g1(f, &vk->beta_g1);
    fb_g2(f, &vk->beta_g2);
    fb_g2(f, &vk->gamma_g2);
    fb_g1(f, &vk->delta_g1);
    fb_g2(f, &vk->delta_g2);
    fb_u32(f, n_ic);
    for (uint32_t i = 0; i < n_ic; i++) fb_g1(f, &vk->ic[i]);
}
/* counts[6] = ic h l a b_g1 b_g2 as written (may disagree with the arrays to forge files;
 * the points written are min(count, array length) real ones then repeats of the last). */
static void fb_params(struct fb *f, const struct g16_pk *pk, const uint64_t counts[6])
{
    fb_vk(f, &pk->vk, (uint32_t)counts[0]);
    const g1_aff_t *g1s[4] = {pk->h, pk->l, pk->a, pk->b_g1};
    const uint64_t lens[5] = {pk->n_h, pk->n_l, pk->n_a, pk->n_b, pk->n_b};
    for (int k = 0; k < 4; k++) {
        fb_u32(f, (uint32_t)counts[k + 1]);
        for (uint64_t i = 0; i < counts[k + 1]; i++) fb_g1(f, &g1s[k][i < lens[k] ? i : lens[k] - 1]);
    }
    fb_u32(f, (uint32_t)counts[5]);
    for (uint64_t i = 0; i < counts[5]; i++) fb_g2(f, &pk->b_g2[i < lens[4] ? i : lens[4] - 1]);
}
static void pk_counts(uint64_t c[6], const struct g16_pk *pk)
{
    c[0] = pk->vk.n_ic; c[1] = pk->n_h; c[2] = pk->n_l; c[3] = pk->n_a; c[4] = pk->n_b; c[5] = pk->n_b;
}

static char tmpdir[64];
/* Tests run in forked children that _exit, so each test that made files calls this. */
static void rm_tmpdir(void)
{
    if (!tmpdir[0]) return;
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *e;
    char p[400];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(tmpdir);
}
static const char *tpath(const char *name)
{
    static char buf[4][160];
    static int k;
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/cuzk-test-params-XXXXXX");
        ASSERT(mkdtemp(tmpdir));
    }
    char *b = buf[k++ & 3];
    snprintf(b, 160, "%s/%s", tmpdir, name);
    return b;
}
static void put_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f);
    ASSERT(fwrite(p, 1, n, f) == n);
    ASSERT(fclose(f) == 0);
}
static uint8_t *get_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n ? *n : 1);
    ASSERT(fread(b, 1, *n, f) == *n);
    fclose(f);
    return b;
}

static void assert_pk_eq(const struct g16_pk *x, const struct g16_pk *y)
{
    ASSERT_MEM_EQ(&x->vk.alpha_g1, &y->vk.alpha_g1, sizeof(g1_aff_t));
    ASSERT_MEM_EQ(&x->vk.beta_g1, &y->vk.beta_g1, sizeof(g1_aff_t));
    ASSERT_MEM_EQ(&x->vk.beta_g2, &y->vk.beta_g2, sizeof(g2_aff_t));
    ASSERT_MEM_EQ(&x->vk.gamma_g2, &y->vk.gamma_g2, sizeof(g2_aff_t));
    ASSERT_MEM_EQ(&x->vk.delta_g1, &y->vk.delta_g1, sizeof(g1_aff_t));
    ASSERT_MEM_EQ(&x->vk.delta_g2, &y->vk.delta_g2, sizeof(g2_aff_t));
    ASSERT_EQ_U64(x->vk.n_ic, y->vk.n_ic);
    ASSERT_MEM_EQ(x->vk.ic, y->vk.ic, x->vk.n_ic * sizeof(g1_aff_t));
    ASSERT_EQ_U64(x->n_h, y->n_h);
    ASSERT_EQ_U64(x->n_l, y->n_l);
    ASSERT_EQ_U64(x->n_a, y->n_a);
    ASSERT_EQ_U64(x->n_b, y->n_b);
    ASSERT_MEM_EQ(x->h, y->h, x->n_h * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(x->l, y->l, x->n_l * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(x->a, y->a, x->n_a * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(x->b_g1, y->b_g1, x->n_b * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(x->b_g2, y->b_g2, x->n_b * sizeof(g2_aff_t));
}

/* Small key used by most tests: ic 3, h 7 (N = 8), l 6, a 5, b 4. */
#define SMALL_PK(pk) make_pk(pk, 3, 7, 6, 5, 4)

/* Section offsets computed here (independently of params.c): first point of each. */
static void offsets(uint64_t off[6], const uint64_t c[6])
{
    off[0] = 864 + 4;
    off[1] = off[0] + c[0] * 96 + 4;
    off[2] = off[1] + c[1] * 96 + 4;
    off[3] = off[2] + c[2] * 96 + 4;
    off[4] = off[3] + c[3] * 96 + 4;
    off[5] = off[4] + c[4] * 96 + 4;
}


/* Read `bytes` as a .params file with mode; expect code and a message containing `needle`. */
static void expect_read(const uint8_t *bytes, size_t n, enum g16_validate mode, int code,
                        const char *needle)
{
    const char *p = tpath("bad.params");
    put_file(p, bytes, n);
    struct g16_pk pk;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    struct g16_params_read_opts o = {.mode = mode, .use_cache = false, .progress = 0};
    ASSERT_CODE(g16_params_read_ex(&pk, p, &o, NULL, NULL, err), code, err);
    if (needle) ASSERT_STR_CONTAINS(err->msg, needle);
    if (code) ASSERT_STR_CONTAINS(err->msg, "bad.params");
    g16_pk_free(&pk);
}

/* A point on the curve outside the prime-order subgroup: y^2 = x^3 + 4 for random x. The
 * oracle for "outside" is the naive r * P != O (the library uses an endomorphism test). */
static void g1_non_subgroup(g1_aff_t *out)
{
    fp_t b4;
    fp_from_u64(&b4, 4);
    for (;;) {
        uint8_t r[48];
        cuzk_rng_bytes(test_rng(), r, 48);
        r[0] &= 0x0f;
        fp_t x, t;
        ASSERT_OK(fp_from_bytes_be(&x, r), (struct cuzk_error *)NULL);
        fp_sqr(&t, &x);
        fp_mul(&t, &t, &x);
        fp_add(&t, &t, &b4);
        if (!fp_sqrt(&out->y, &t)) continue;
        out->x = x;
        g1_jac_t j, rp;
        g1_jac_from_aff(&j, out);
        g1_jac_mul_u64s(&rp, &j, FR_MODULUS.l, 4);
        ASSERT(g1_aff_is_on_curve(out));
        if (!g1_jac_is_inf(&rp)) return;
    }
}

static void g2_non_subgroup(g2_aff_t *out)
{
    fp2_t b4;
    fp_from_u64(&b4.c0, 4);
    fp_from_u64(&b4.c1, 4);
    for (;;) {
        uint8_t r[48];
        fp2_t x, t;
        cuzk_rng_bytes(test_rng(), r, 48);
        r[0] &= 0x0f;
        fp_from_bytes_be(&x.c0, r);
        cuzk_rng_bytes(test_rng(), r, 48);
        r[0] &= 0x0f;
        fp_from_bytes_be(&x.c1, r);
        fp2_sqr(&t, &x);
        fp2_mul(&t, &t, &x);
        fp2_add(&t, &t, &b4);
        if (!fp2_sqrt(&out->y, &t)) continue;
        out->x = x;
        g2_jac_t j, rp;
        g2_jac_from_aff(&j, out);
        g2_jac_mul_u64s(&rp, &j, FR_MODULUS.l, 4);
        ASSERT(g2_aff_is_on_curve(out));
        if (!g2_jac_is_inf(&rp)) return;
    }
}

/* ------------------------------------------------------------- round trips -- */

TEST(params_roundtrip_matches_independent_layout)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *p1 = tpath("a.params"), *p2 = tpath("b.params");
    ASSERT_OK(g16_params_write(&pk, p1, err), err);

    uint64_t c[6];
    pk_counts(c, &pk);
    struct fb want = {0};
    fb_params(&want, &pk, c);
    size_t n;
    uint8_t *got = get_file(p1, &n);
    ASSERT_EQ_U64(n, want.n);
    ASSERT_MEM_EQ(got, want.b, n);

    for (int mode = G16_VALIDATE_NONE; mode <= G16_VALIDATE_FULL; mode++) {
        struct g16_params_read_opts o = {.mode = (enum g16_validate)mode, .use_cache = false, .progress = 0};
        ASSERT_OK(g16_params_read_ex(&back, p1, &o, NULL, NULL, err), err);
        assert_pk_eq(&pk, &back);
        g16_pk_free(&back);
    }
    ASSERT_OK(g16_params_read(&back, p1, G16_VALIDATE_FULL, NULL, err), err);
    ASSERT_OK(g16_params_write(&back, p2, err), err);
    size_t n2;
    uint8_t *got2 = get_file(p2, &n2);
    ASSERT_EQ_U64(n2, n);
    ASSERT_MEM_EQ(got2, got, n);
    free(got);
    free(got2);
    free(want.b);
    g16_pk_free(&back);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(vk_roundtrip_and_prefix)
{
    struct g16_pk pk;
    struct g16_vk vk;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *pv = tpath("k.vk"), *pp = tpath("k.params");
    ASSERT_OK(g16_vk_write(&pk.vk, pv, err), err);
    ASSERT_OK(g16_params_write(&pk, pp, err), err);
    size_t nv, np;
    uint8_t *bv = get_file(pv, &nv), *bp = get_file(pp, &np);
    ASSERT_EQ_U64(nv, 864 + 4 + 3 * 96);
    ASSERT_MEM_EQ(bv, bp, nv);   /* .vk = the prefix of .params */

    ASSERT_OK(g16_vk_read(&vk, pv, err), err);
    ASSERT_EQ_U64(vk.n_ic, 3);
    ASSERT_MEM_EQ(vk.ic, pk.vk.ic, 3 * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(&vk.delta_g2, &pk.vk.delta_g2, sizeof(g2_aff_t));
    ASSERT_MEM_EQ(&vk.gamma_g2, &pk.vk.gamma_g2, sizeof(g2_aff_t));

    uint8_t d1[16], d2[16];
    ASSERT_OK(g16_vk_digest(d1, &vk, err), err);
    g16_digest128(d2, bv, nv);
    ASSERT_MEM_EQ(d1, d2, 16);
    g16_vk_free(&vk);

    /* a .params is not a .vk and vice versa */
    ASSERT_CODE(g16_vk_read(&vk, pp, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "trailing garbage");
    struct g16_pk back;
    ASSERT_CODE(g16_params_read(&back, pv, G16_VALIDATE_NONE, NULL, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, "h: truncated");

    /* vk corruption: identity ic[1], truncated ic */
    uint8_t *bad = malloc(nv);
    memcpy(bad, bv, nv);
    memset(bad + 868 + 96, 0, 96);
    bad[868 + 96] = 0x40;
    put_file(pv, bad, nv);
    ASSERT_CODE(g16_vk_read(&vk, pv, err), CUZK_E_IDENTITY, err);
    ASSERT_STR_CONTAINS(err->msg, "ic[1]: point at infinity");
    put_file(pv, bv, nv - 10);
    ASSERT_CODE(g16_vk_read(&vk, pv, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, "ic[2] is cut");
    memcpy(bad, bv, nv);
    bad[192 + 100] ^= 1;    /* beta_g2 x.c0: off the curve (or, rarely, >= p) */
    put_file(pv, bad, nv);
    int rc = g16_vk_read(&vk, pv, err);
    ASSERT(rc == CUZK_E_NOT_ON_CURVE || rc == CUZK_E_BAD_ENCODING);
    ASSERT_STR_CONTAINS(err->msg, "vk.beta_g2");
    free(bad);
    free(bv);
    free(bp);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(info_reads_counts_without_loading)
{
    struct g16_pk pk;
    struct g16_params_info inf;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *pp = tpath("i.params"), *pv = tpath("i.vk");
    ASSERT_OK(g16_params_write(&pk, pp, err), err);
    ASSERT_OK(g16_vk_write(&pk.vk, pv, err), err);
    ASSERT_OK(g16_params_info(&inf, pp, err), err);
    uint64_t c[6], off[6];
    pk_counts(c, &pk);
    offsets(off, c);
    ASSERT(!inf.vk_only);
    ASSERT_EQ_U64(inf.n_ic, 3);
    ASSERT_EQ_U64(inf.n_h, 7);
    ASSERT_EQ_U64(inf.n_l, 6);
    ASSERT_EQ_U64(inf.n_a, 5);
    ASSERT_EQ_U64(inf.n_b_g1, 4);
    ASSERT_EQ_U64(inf.n_b_g2, 4);
    ASSERT_EQ_U64(inf.off_ic, off[0]);
    ASSERT_EQ_U64(inf.off_h, off[1]);
    ASSERT_EQ_U64(inf.off_l, off[2]);
    ASSERT_EQ_U64(inf.off_a, off[3]);
    ASSERT_EQ_U64(inf.off_b_g1, off[4]);
    ASSERT_EQ_U64(inf.off_b_g2, off[5]);
    ASSERT_EQ_U64(inf.file_bytes, off[5] + 4 * 192);
    ASSERT_OK(g16_params_info(&inf, pv, err), err);
    ASSERT(inf.vk_only);
    ASSERT_EQ_U64(inf.n_ic, 3);
    ASSERT_CODE(g16_params_info(&inf, tpath("missing.params"), err), CUZK_E_NOT_FOUND, err);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* -------------------------------------------------------------- corruption -- */

TEST(truncated_in_every_section)
{
    struct g16_pk pk;
    SMALL_PK(&pk);
    uint64_t c[6], off[6];
    pk_counts(c, &pk);
    offsets(off, c);
    struct fb f = {0};
    fb_params(&f, &pk, c);
    static const char *const names[6] = {"ic", "h", "l", "a", "b_g1", "b_g2"};
    char needle[64];
    for (int k = 0; k < 6; k++) {
        unsigned psz = k == 5 ? 192 : 96;
        /* cut inside point 1 of section k */
        expect_read(f.b, off[k] + psz + 10, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, NULL);
        snprintf(needle, sizeof needle, "%s: truncated", names[k]);
        expect_read(f.b, off[k] + psz + 10, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, needle);
        snprintf(needle, sizeof needle, "%s[1] is cut", names[k]);
        expect_read(f.b, off[k] + psz + 10, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, needle);
        /* cut inside the count word */
        if (k > 0) {
            snprintf(needle, sizeof needle, "%s: truncated: the count", names[k]);
            expect_read(f.b, off[k] - 2, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, needle);
        }
    }
    expect_read(f.b, 500, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, "vk: truncated");
    expect_read(f.b, 0, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, "vk: truncated");
    /* a huge count is a truncation, not an allocation */
    uint8_t *b = malloc(f.n);
    memcpy(b, f.b, f.n);
    memset(b + off[2] - 4, 0xff, 4);
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_TRUNCATED, "l: truncated: 4294967295 points");
    free(b);
    free(f.b);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(wrong_counts_and_trailing_garbage)
{
    struct g16_pk pk;
    SMALL_PK(&pk);
    uint64_t c[6];
    struct fb f = {0};

    pk_counts(c, &pk);
    c[0] = 0;
    fb_params(&f, &pk, c);
    expect_read(f.b, f.n, G16_VALIDATE_NONE, CUZK_E_FORMAT, "ic: count is 0");
    f.n = 0;

    pk_counts(c, &pk);
    c[5] = 3;   /* b_g2 shorter than b_g1, file otherwise consistent */
    fb_params(&f, &pk, c);
    expect_read(f.b, f.n, G16_VALIDATE_NONE, CUZK_E_FORMAT, "b_g2: count 3 differs from the b_g1 count 4");
    f.n = 0;

    pk_counts(c, &pk);
    c[1] = 6;   /* not 2^k - 1 */
    fb_params(&f, &pk, c);
    expect_read(f.b, f.n, G16_VALIDATE_NONE, CUZK_E_FORMAT, "h: count 6 is not 2^k - 1");
    f.n = 0;

    pk_counts(c, &pk);
    c[3] = 2;   /* fewer A points than inputs */
    fb_params(&f, &pk, c);
    expect_read(f.b, f.n, G16_VALIDATE_NONE, CUZK_E_FORMAT, "a: count 2 outside");
    f.n = 0;

    pk_counts(c, &pk);
    fb_params(&f, &pk, c);
    uint8_t junk = 0;
    fb_put(&f, &junk, 1);
    expect_read(f.b, f.n, G16_VALIDATE_NONE, CUZK_E_FORMAT, "trailing garbage: 1 bytes after the last section");
    free(f.b);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(bad_points_each_class)
{
    struct g16_pk pk;
    SMALL_PK(&pk);
    uint64_t c[6], off[6];
    pk_counts(c, &pk);
    offsets(off, c);
    struct fb f = {0};
    fb_params(&f, &pk, c);
    uint8_t *b = malloc(f.n);
    static const uint8_t big[48] = {0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    /* x >= p in h[2] (every mode, NONE included) */
    memcpy(b, f.b, f.n);
    memcpy(b + off[1] + 2 * 96, big, 48);
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_BAD_ENCODING, "h[2]: x not canonical (>= p)");
    /* y >= p in l[0]; x.c0 >= p in b_g2[3] */
    memcpy(b, f.b, f.n);
    memcpy(b + off[2] + 48, big, 48);
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_BAD_ENCODING, "l[0]: y not canonical");
    memcpy(b, f.b, f.n);
    memcpy(b + off[5] + 3 * 192 + 48, big, 48);
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_BAD_ENCODING, "b_g2[3]: x.c0 not canonical");
    /* exactly p is also >= p */
    memcpy(b, f.b, f.n);
    {
        uint8_t pb[48];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 8; j++) pb[(5 - i) * 8 + j] = (uint8_t)(FP_MODULUS.l[i] >> (56 - 8 * j));
        memcpy(b + off[3] + 96, pb, 48);
    }
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_BAD_ENCODING, "a[1]: x not canonical");
    /* flags */
    memcpy(b, f.b, f.n);
    b[off[4]] |= 0x80;
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_BAD_ENCODING, "b_g1[0]: compressed flag");
    memcpy(b, f.b, f.n);
    b[off[4] + 96] |= 0x20;
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_BAD_ENCODING, "b_g1[1]: y-sign flag");
    /* identity, in every mode */
    memcpy(b, f.b, f.n);
    memset(b + off[4] + 2 * 96, 0, 96);
    b[off[4] + 2 * 96] = 0x40;
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_IDENTITY, "b_g1[2]: point at infinity");
    memset(b + off[4] + 2 * 96, 0, 96);   /* (0, 0) without the flag */
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_NOT_ON_CURVE, "b_g1[2]: not on the curve");
    memcpy(b, f.b, f.n);
    memset(b + off[5], 0, 192);
    b[off[5]] = 0x40;
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_IDENTITY, "b_g2[0]: point at infinity");
    b[off[5] + 191] = 1;
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_BAD_ENCODING, "b_g2[0]: infinity flag with non-zero");

    /* not on the curve: y + 1; only CURVE and FULL look */
    memcpy(b, f.b, f.n);
    {
        g1_aff_t q = pk.l[3];
        fp_add(&q.y, &q.y, &FP_ONE);
        g1_aff_to_uncompressed(b + off[2] + 3 * 96, &q);
        g2_aff_t q2 = pk.b_g2[1];
        fp_add(&q2.y.c0, &q2.y.c0, &FP_ONE);
        g2_aff_to_uncompressed(b + off[5] + 192, &q2);
    }
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_OK, NULL);
    expect_read(b, f.n, G16_VALIDATE_CURVE, CUZK_E_NOT_ON_CURVE, "l[3]: not on the curve");
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_NOT_ON_CURVE, "l[3]: not on the curve");
    memcpy(b + off[2] + 3 * 96, f.b + off[2] + 3 * 96, 96);
    expect_read(b, f.n, G16_VALIDATE_CURVE, CUZK_E_NOT_ON_CURVE, "b_g2[1]: not on the curve");

    /* on the curve, outside the subgroup: only FULL rejects */
    memcpy(b, f.b, f.n);
    g1_aff_t ns;
    g1_non_subgroup(&ns);
    g1_aff_to_uncompressed(b + off[3] + 4 * 96, &ns);
    expect_read(b, f.n, G16_VALIDATE_CURVE, CUZK_OK, NULL);
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_NOT_IN_SUBGROUP, "a[4]: not in the prime-order subgroup");
    memcpy(b, f.b, f.n);
    g2_aff_t ns2;
    g2_non_subgroup(&ns2);
    g2_aff_to_uncompressed(b + off[5] + 2 * 192, &ns2);
    expect_read(b, f.n, G16_VALIDATE_CURVE, CUZK_OK, NULL);
    expect_read(b, f.n, G16_VALIDATE_FULL, CUZK_E_NOT_IN_SUBGROUP, "b_g2[2]: not in the prime-order subgroup");
    /* vk points are always fully checked, whatever the mode */
    memcpy(b, f.b, f.n);
    g1_aff_to_uncompressed(b + 96, &ns);
    expect_read(b, f.n, G16_VALIDATE_NONE, CUZK_E_NOT_IN_SUBGROUP, "vk.beta_g1: not in the prime-order subgroup");
    free(b);
    free(f.b);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(writer_refuses_identity)
{
    struct g16_pk pk;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    memset(&pk.l[2], 0, sizeof(g1_aff_t));
    ASSERT_CODE(g16_params_write(&pk, tpath("id.params"), err), CUZK_E_IDENTITY, err);
    ASSERT_STR_CONTAINS(err->msg, "l[2] is the identity");
    ASSERT(access(tpath("id.params"), F_OK) != 0);   /* nothing half-written left behind */
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* A key whose h spans 4 chunks of 8192 points, written by the oracle layout to tpath(name):
 * its bytes in *f, its section offsets in off. */
static const char *four_chunk_key(struct g16_pk *pk, struct fb *f, uint64_t off[6], const char *name)
{
    uint64_t c[6];
    make_pk(pk, 2, 32767, 3, 2, 1);
    pk_counts(c, pk);
    offsets(off, c);
    *f = (struct fb){0};
    fb_params(f, pk, c);
    const char *p = tpath(name);
    put_file(p, f->b, f->n);
    return p;
}

/* Many points in one section: several parallel chunks; the first bad index is reported
 * whatever the thread count. */
TEST(first_bad_point_across_chunks)
{
    struct g16_pk pk;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    uint64_t off[6];
    struct fb f;
    const char *p = four_chunk_key(&pk, &f, off, "big.params");
    struct pool *pool = pool_new(4, err);
    ASSERT(pool);
    struct g16_pk back;
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &o, pool, NULL, err), err);
    assert_pk_eq(&pk, &back);
    g16_pk_free(&back);
    uint64_t bad[3] = {30000, 20001, 9000};
    for (int k = 0; k < 3; k++) {
        g1_aff_t q = pk.h[bad[k]];
        fp_add(&q.y, &q.y, &FP_ONE);
        g1_aff_to_uncompressed(f.b + off[1] + bad[k] * 96, &q);
    }
    put_file(p, f.b, f.n);
    ASSERT_CODE(g16_params_read_ex(&back, p, &o, pool, NULL, err), CUZK_E_NOT_ON_CURVE, err);
    ASSERT_STR_CONTAINS(err->msg, "h[9000]: not on the curve");
    ASSERT_CODE(g16_params_read_ex(&back, p, &o, NULL, NULL, err), CUZK_E_NOT_ON_CURVE, err);
    ASSERT_STR_CONTAINS(err->msg, "h[9000]: not on the curve");
    pool_free(pool);
    free(f.b);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* ------------------------------------------------------------ digest cache -- */

static void set_mtime(const char *path, const struct timespec *t)
{
    struct timespec ts[2] = {*t, *t};
    ASSERT(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

TEST(digest_cache_skips_and_invalidates)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *p = tpath("c.params");
    char cp[200];
    snprintf(cp, sizeof cp, "%s.validated", p);
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    ASSERT(access(cp, F_OK) != 0);
    struct g16_params_read_opts full = {.mode = G16_VALIDATE_FULL, .use_cache = true, .progress = 0};
    struct g16_params_read_report rep;

    ASSERT_OK(g16_params_read_ex(&back, p, &full, NULL, &rep, err), err);
    ASSERT(!rep.cache_hit && rep.cache_written && rep.digest_valid);
    ASSERT(access(cp, F_OK) == 0);
    uint8_t d0[16];
    memcpy(d0, rep.digest, 16);
    g16_pk_free(&back);

    ASSERT_OK(g16_params_read_ex(&back, p, &full, NULL, &rep, err), err);
    ASSERT(rep.cache_hit && !rep.cache_written);
    ASSERT_MEM_EQ(rep.digest, d0, 16);
    assert_pk_eq(&pk, &back);
    g16_pk_free(&back);
    /* the digest does not depend on the thread count */
    struct pool *pool3 = pool_new(3, err);
    ASSERT(pool3);
    struct g16_params_read_opts nc0 = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &nc0, pool3, &rep, err), err);
    ASSERT_MEM_EQ(rep.digest, d0, 16);
    g16_pk_free(&back);
    pool_free(pool3);
    /* CURVE mode may use a FULL validation record too */
    struct g16_params_read_opts curve = {.mode = G16_VALIDATE_CURVE, .use_cache = true, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &curve, NULL, &rep, err), err);
    ASSERT(rep.cache_hit);
    g16_pk_free(&back);

    /* Same size, same mtime, different content (a non-subgroup point): the digest must
     * notice, so the full check runs and rejects the point. */
    struct stat st;
    ASSERT(stat(p, &st) == 0);
    uint64_t c[6], off[6];
    pk_counts(c, &pk);
    offsets(off, c);
    size_t n;
    uint8_t *b = get_file(p, &n);
    g1_aff_t ns;
    g1_non_subgroup(&ns);
    uint8_t *orig = malloc(n);
    memcpy(orig, b, n);
    g1_aff_to_uncompressed(b + off[2] + 96, &ns);
    put_file(p, b, n);
    set_mtime(p, &st.st_mtim);
    ASSERT_CODE(g16_params_read_ex(&back, p, &full, NULL, &rep, err), CUZK_E_NOT_IN_SUBGROUP, err);
    ASSERT_STR_CONTAINS(err->msg, "l[1]: not in the prime-order subgroup");

    /* Original content, new mtime: no hit (key mismatch), validation passes, cache rewritten. */
    put_file(p, orig, n);
    struct timespec later = st.st_mtim;
    later.tv_sec += 5;
    set_mtime(p, &later);
    ASSERT_OK(g16_params_read_ex(&back, p, &full, NULL, &rep, err), err);
    ASSERT(!rep.cache_hit && rep.cache_written);
    ASSERT_MEM_EQ(rep.digest, d0, 16);   /* the digest depends on content only */
    g16_pk_free(&back);
    ASSERT_OK(g16_params_read_ex(&back, p, &full, NULL, &rep, err), err);
    ASSERT(rep.cache_hit);
    g16_pk_free(&back);

    /* use_cache off: never consulted */
    struct g16_params_read_opts nc = {.mode = G16_VALIDATE_FULL, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &nc, NULL, &rep, err), err);
    ASSERT(!rep.cache_hit && !rep.cache_written);
    g16_pk_free(&back);

    /* Rewriting the file removes the stale record. */
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    ASSERT(access(cp, F_OK) != 0);
    free(b);
    free(orig);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* A key written with its digest cache (what `cuzk-params setup` does): the writer's digest,
 * hashed block by block as the points are written, is the reader's, computed by its own
 * pass over the file: the first FULL load is a cache hit and gives back the same key. h spans
 * two write blocks and ends one point short of a chunk; the B sections span two chunks. */
TEST(writer_digest_cache_is_the_readers)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    make_pk(&pk, 3, 7, 6, 5, 4);
    const uint64_t nh = ((uint64_t)1 << 17) - 1, nb = 8192 + 1;   /* h: 2^k - 1 points */
    g1_aff_t *h = cuzk_malloc(nh * sizeof *h), *l = cuzk_malloc(nb * sizeof *l), *b1 = cuzk_malloc(nb * sizeof *b1);
    g2_aff_t *b2 = cuzk_malloc(nb * sizeof *b2);
    ASSERT(h && l && b1 && b2);
    for (uint64_t i = 0; i < nh; i++) h[i] = pk.h[i % pk.n_h];   /* tiled: the bytes are what count */
    for (uint64_t i = 0; i < nb; i++)   /* l as long as b (b's count is at most n_ic + n_l) */
        l[i] = pk.l[(i * 5) % pk.n_l], b1[i] = pk.b_g1[i % pk.n_b], b2[i] = pk.b_g2[(i * 3) % pk.n_b];
    cuzk_free(pk.h), cuzk_free(pk.l), cuzk_free(pk.b_g1), cuzk_free(pk.b_g2);
    pk.h = h, pk.n_h = nh, pk.l = l, pk.n_l = nb, pk.b_g1 = b1, pk.b_g2 = b2, pk.n_b = nb;
    const char *p = tpath("w.params");
    char cp[200];
    snprintf(cp, sizeof cp, "%s.validated", p);
    struct g16_params_read_report rep;
    ASSERT_OK(g16_params_write_ex(&pk, p, false, err), err);
    ASSERT(access(cp, F_OK) != 0);
    struct g16_params_read_opts plain = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &plain, NULL, &rep, err), err);
    ASSERT(rep.digest_valid);
    uint8_t want[16];
    memcpy(want, rep.digest, 16);
    g16_pk_free(&back);

    ASSERT_OK(g16_params_write_ex(&pk, p, true, err), err);
    ASSERT(access(cp, F_OK) == 0);
    struct g16_params_read_opts full = {.mode = G16_VALIDATE_FULL, .use_cache = true, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&back, p, &full, NULL, &rep, err), err);
    ASSERT(rep.cache_hit && !rep.cache_written);
    ASSERT_MEM_EQ(rep.digest, want, 16);
    assert_pk_eq(&pk, &back);
    g16_pk_free(&back);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* An external point checker (the daemon's: the GPU's subgroup checks) that takes 15 ms a
 * section and finds nothing: its time is reported apart (ext_check_ns, the log's
 * gpu_check_ms, and ext_wait_ns, what the read waited for it) and is part of the read;
 * without a checker both are 0. */
static int slow_g1(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    (void)pts, (void)subgroup, (void)err;
    (*(int *)self)++;
    usleep(15000);
    *bad = n;
    return CUZK_OK;
}
static int slow_g2(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    (void)pts, (void)subgroup, (void)err;
    (*(int *)self)++;
    usleep(15000);
    *bad = n;
    return CUZK_OK;
}

TEST(external_checker_time_is_reported)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *p = tpath("x.params");
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    int calls = 0;
    struct g16_point_checker c = {slow_g1, slow_g2, &calls};
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = false, .progress = 0, .checker = &c};
    struct g16_params_read_report rep;
    ASSERT_OK(g16_params_read_ex(&back, p, &o, NULL, &rep, err), err);
    ASSERT_EQ_INT(calls, 5);   /* one call per section */
    ASSERT_MSG(rep.ext_check_ns >= 5 * 15000000ull, "ext_check_ns %llu", (unsigned long long)rep.ext_check_ns);
    ASSERT(rep.read_ns >= rep.ext_check_ns);
    ASSERT(rep.read_ns >= rep.ext_wait_ns);
    assert_pk_eq(&pk, &back);
    g16_pk_free(&back);
    o.checker = NULL;
    ASSERT_OK(g16_params_read_ex(&back, p, &o, NULL, &rep, err), err);
    ASSERT_EQ_U64(rep.ext_check_ns, 0);
    ASSERT_EQ_U64(rep.ext_wait_ns, 0);
    g16_pk_free(&back);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* A checker that plays the GPU beside the CPU pass: it walks the key's sections in file order
 * and compares every point it is handed with the key that was written (so a slice handed over
 * before the CPU decoded it, out of order, twice or never shows), and rejects one chosen point. */
struct walk_checker {
    const struct g16_pk *pk;
    int sec;                /* 0 h, 1 l, 2 a, 3 b_g1, 4 b_g2 */
    uint64_t at;            /* next expected point of sec */
    int calls[5];
    int mismatches;
    int reject_sec;         /* -1: none */
    uint64_t reject_at;
};
static uint64_t walk_n(const struct g16_pk *pk, int k)
{
    const uint64_t n[5] = {pk->n_h, pk->n_l, pk->n_a, pk->n_b, pk->n_b};
    return n[k];
}
static const void *walk_pts(const struct g16_pk *pk, int k)
{
    const void *p[5] = {pk->h, pk->l, pk->a, pk->b_g1, pk->b_g2};
    return p[k];
}
static void walk_skip_empty(struct walk_checker *w)
{
    while (w->sec < 5 && w->at >= walk_n(w->pk, w->sec)) w->sec++, w->at = 0;
}
static int walk(struct walk_checker *w, const void *pts, size_t n, size_t psz, bool g2, size_t *bad)
{
    walk_skip_empty(w);
    *bad = n;
    if (w->sec >= 5 || (w->sec == 4) != g2 || w->at + n > walk_n(w->pk, w->sec)) {
        w->mismatches++;
        return CUZK_OK;
    }
    w->calls[w->sec]++;
    const uint8_t *want = (const uint8_t *)walk_pts(w->pk, w->sec) + w->at * psz;
    if (memcmp(pts, want, n * psz)) w->mismatches++;
    if (w->sec == w->reject_sec && w->reject_at >= w->at && w->reject_at < w->at + n)
        *bad = (size_t)(w->reject_at - w->at);
    w->at += n;
    return CUZK_OK;
}
static int walk_g1(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    (void)subgroup, (void)err;
    return walk(self, pts, n, sizeof *pts, false, bad);
}
static int walk_g2(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    (void)subgroup, (void)err;
    return walk(self, pts, n, sizeof *pts, true, bad);
}

/* The checker runs beside the CPU pass: each section reaches it one slice per call (an eighth of
 * the section's chunks) once the CPU has decoded it, in order, every point once; the point it
 * rejects is named with its index in the section (slice offsets added back), and its error comes
 * before a CPU error found later in the file, whatever the threads' timing. */
TEST(external_checker_gets_decoded_slices_in_order)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    uint64_t off[6];
    struct fb f;
    const char *p = four_chunk_key(&pk, &f, off, "ext.params");   /* h: one slice per chunk */
    struct pool *pool = pool_new(4, err);
    ASSERT(pool);
    struct walk_checker w = {.pk = &pk, .reject_sec = -1};
    struct g16_point_checker c1 = {walk_g1, walk_g2, &w};
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = false, .progress = 0, .checker = &c1};
    ASSERT_OK(g16_params_read_ex(&back, p, &o, pool, NULL, err), err);
    assert_pk_eq(&pk, &back);
    g16_pk_free(&back);
    walk_skip_empty(&w);
    ASSERT_EQ_INT(w.mismatches, 0);
    ASSERT_EQ_INT(w.sec, 5);   /* every section, to its last point */
    ASSERT_EQ_INT(w.calls[0], 4);
    ASSERT_EQ_INT(w.calls[1] + w.calls[2] + w.calls[3] + w.calls[4], 4);

    /* rejected in h's third slice: named by its index in h */
    w = (struct walk_checker){.pk = &pk, .reject_sec = 0, .reject_at = 20001};
    ASSERT_CODE(g16_params_read_ex(&back, p, &o, pool, NULL, err), CUZK_E_INTERNAL, err);
    ASSERT_STR_CONTAINS(err->msg, "ext.params: h[20001]: rejected by the point checker");
    ASSERT_EQ_INT(w.mismatches, 0);

    /* a point off the curve later in the file (a[1]): the CPU pass stops there, the checker
     * still finishes what came before, and its h[9000] is the error */
    g1_aff_t q = pk.a[1];
    fp_add(&q.y, &q.y, &FP_ONE);
    g1_aff_to_uncompressed(f.b + off[3] + 96, &q);
    put_file(p, f.b, f.n);
    w = (struct walk_checker){.pk = &pk, .reject_sec = 0, .reject_at = 9000};
    ASSERT_CODE(g16_params_read_ex(&back, p, &o, pool, NULL, err), CUZK_E_INTERNAL, err);
    ASSERT_STR_CONTAINS(err->msg, "h[9000]: rejected by the point checker");
    w = (struct walk_checker){.pk = &pk, .reject_sec = -1};
    ASSERT_CODE(g16_params_read_ex(&back, p, &o, pool, NULL, err), CUZK_E_NOT_ON_CURVE, err);
    ASSERT_STR_CONTAINS(err->msg, "a[1]: not on the curve");
    ASSERT_EQ_INT(w.calls[2] + w.calls[3] + w.calls[4], 0);   /* nothing after the bad section */
    ASSERT_EQ_INT(w.mismatches, 0);
    pool_free(pool);
    free(f.b);
    g16_pk_free(&pk);
    rm_tmpdir();
}

TEST(digest128_sensitivity)
{
    /* Every single-bit flip and every length change changes the digest. */
    uint8_t buf[200], d0[16], d1[16];
    cuzk_rng_bytes(test_rng(), buf, sizeof buf);
    g16_digest128(d0, buf, sizeof buf);
    for (size_t i = 0; i < sizeof buf * 8; i++) {
        buf[i / 8] ^= (uint8_t)(1u << (i % 8));
        g16_digest128(d1, buf, sizeof buf);
        ASSERT_MSG(memcmp(d0, d1, 16), "bit %zu flip not detected", i);
        buf[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    for (size_t n = 0; n < sizeof buf; n++) {
        g16_digest128(d1, buf, n);
        ASSERT_MSG(memcmp(d0, d1, 16), "length %zu collides", n);
    }
    uint8_t z[64] = {0};
    g16_digest128(d0, z, 32);
    g16_digest128(d1, z, 33);
    ASSERT(memcmp(d0, d1, 16));
}

/* ------------------------------------------------------------------ proofs -- */

static void rand_proof(struct g16_proof *p)
{
    g1_aff_t g1[2];
    rand_g1s(g1, 2);
    rand_g2s(&p->b, 1);
    p->a = g1[0];
    p->c = g1[1];
}

TEST(proof_bytes_roundtrip_and_errors)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    struct g16_proof p[3], q[3];
    for (int i = 0; i < 3; i++) rand_proof(&p[i]);
    uint8_t b[3 * 192];
    g16_proofs_to_bytes(b, p, 3);
    /* layout: A (48) || B (96) || C (48), compressed */
    uint8_t e1[48], e2[96];
    g1_aff_to_compressed(e1, &p[1].a);
    ASSERT_MEM_EQ(b + 192, e1, 48);
    g2_aff_to_compressed(e2, &p[1].b);
    ASSERT_MEM_EQ(b + 192 + 48, e2, 96);
    g1_aff_to_compressed(e1, &p[1].c);
    ASSERT_MEM_EQ(b + 192 + 144, e1, 48);
    ASSERT((b[0] & 0x80) && (b[48] & 0x80) && (b[144] & 0x80));

    ASSERT_OK(g16_proofs_from_bytes(q, 3, b, sizeof b, err), err);
    ASSERT_MEM_EQ(q, p, sizeof p);
    ASSERT_OK(g16_proof_from_bytes(&q[0], b + 384, err), err);
    ASSERT_MEM_EQ(&q[0], &p[2], sizeof p[2]);
    uint8_t b2[192];
    g16_proof_to_bytes(b2, &q[0]);
    ASSERT_MEM_EQ(b2, b + 384, 192);

    ASSERT_CODE(g16_proofs_from_bytes(q, 3, b, sizeof b - 1, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "expected 576 bytes");

    /* identity A / B / C */
    static const int offs[3] = {0, 48, 144}, lens[3] = {48, 96, 48};
    static const char *const who[3] = {"proof: A is the identity", "proof: B is the identity",
                                       "proof: C is the identity"};
    for (int k = 0; k < 3; k++) {
        memcpy(b2, b, 192);
        memset(b2 + offs[k], 0, (size_t)lens[k]);
        b2[offs[k]] = 0xc0;
        ASSERT_CODE(g16_proof_from_bytes(&q[0], b2, err), CUZK_E_IDENTITY, err);
        ASSERT_STR_CONTAINS(err->msg, who[k]);
    }
    /* a non-subgroup C in the second proof */
    g1_aff_t ns;
    g1_non_subgroup(&ns);
    uint8_t *bb = malloc(sizeof b);
    memcpy(bb, b, sizeof b);
    g1_aff_to_compressed(bb + 192 + 144, &ns);
    ASSERT_CODE(g16_proofs_from_bytes(q, 3, bb, sizeof b, err), CUZK_E_NOT_IN_SUBGROUP, err);
    ASSERT_STR_CONTAINS(err->msg, "proof[1]: C");
    /* uncompressed flag in B */
    memcpy(bb, b, sizeof b);
    bb[48] &= 0x7f;
    ASSERT(g16_proof_from_bytes(&q[0], bb, err) != CUZK_OK);
    ASSERT_STR_CONTAINS(err->msg, "proof: B");
    free(bb);
}

/* ---------------------------------------------------------------- progress -- */

TEST(progress_lines_when_forced)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    make_pk(&pk, 2, 16383, 3, 2, 1);
    const char *p = tpath("prog.params"), *log = tpath("stderr.txt");
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT(fd >= 0 && dup2(fd, 2) == 2);
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 1};
    int rc = g16_params_read_ex(&back, p, &o, NULL, NULL, err);
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    close(saved);
    ASSERT_OK(rc, err);
    size_t n;
    char *txt = (char *)get_file(log, &n);
    txt = realloc(txt, n + 1);
    txt[n] = 0;
    ASSERT_STR_CONTAINS(txt, "prog.params: reading and checking ");
    ASSERT_STR_CONTAINS(txt, "reading and checking 100%");
    free(txt);
    g16_pk_free(&back);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* The caller's tracker (what the daemon's /status reads during a load) counts every point byte
 * of the file once per pass, and names the pass: with the checks inline one pass, "reading and
 * checking"; the oracle is the file's layout (g16_params_info). */
TEST(progress_tracker_counts_point_bytes)
{
    struct g16_pk pk, back;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    make_pk(&pk, 2, 32767, 5, 4, 3);
    const char *p = tpath("track.params");
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    struct g16_params_info inf;
    ASSERT_OK(g16_params_info(&inf, p, err), err);
    const uint64_t body = (inf.n_h + inf.n_l + inf.n_a + inf.n_b_g1) * 96 + inf.n_b_g2 * 192;
    struct cuzk_progress tr;
    memset(&tr, 0, sizeof tr);
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_CURVE, .use_cache = false, .progress = 0,
                                     .tracker = &tr};
    ASSERT_OK(g16_params_read_ex(&back, p, &o, NULL, NULL, err), err);
    ASSERT_EQ_U64(atomic_load(&tr.total), body);
    ASSERT_EQ_U64(atomic_load(&tr.done), body);
    ASSERT_STR_EQ(atomic_load(&tr.phase), "reading and checking");
    ASSERT(tr.out == NULL);   /* progress 0: counters only, nothing printed */
    g16_pk_free(&back);
    g16_pk_free(&pk);
    rm_tmpdir();
}

/* --------------------------------------------------------------------- CLI -- */

/* Runs build/bin/cuzk-params (or $CUZK_BIN_DIR/cuzk-params); output to out. Exit status. */
static int run_cli(const char *args, const char *out)
{
    const char *dir = getenv("CUZK_BIN_DIR");
    char bin[300], cmd[1200];
    snprintf(bin, sizeof bin, "%s/cuzk-params", dir ? dir : "build/bin");
    if (access(bin, X_OK)) test_skip("%s not built (make all)", bin);
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>&1", bin, args, out);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    size_t n;
    char *t = (char *)get_file(path, &n);
    t = realloc(t, n + 1);
    t[n] = 0;
    return t;
}

/* `setup --kind` (a WindowPoSt 2 KiB key: ~1 s) prints plain progress lines (stdout is a
 * file) with a rate and an ETA, and the last with how long it took, and writes the digest
 * cache, so `validate` finds the key already vouched for. */
TEST(cli_setup_kind_progress_and_digest_cache)
{
    char args[600];
    const char *out = tpath("kind.txt");
    snprintf(args, sizeof args, "setup --kind window-post --sector-size 2KiB --seed 3 --out %s", tmpdir);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    char *t = slurp(out);
    ASSERT_STR_CONTAINS(t, "setup: QAP evaluated; ");
    ASSERT_STR_CONTAINS(t, "setup: fixed-base multiplications ");
    ASSERT_STR_CONTAINS(t, " M mults/s, ETA ");
    ASSERT_STR_CONTAINS(t, "setup: fixed-base multiplications 100% (");
    ASSERT_STR_CONTAINS(t, ", done in ");
    ASSERT_MSG(!strchr(t, '\r'), "the terminal form in a file");
    free(t);
    snprintf(args, sizeof args, "validate %s/v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
             "0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.params", tmpdir);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    t = slurp(out);
    ASSERT_STR_CONTAINS(t, "cache hit: the curve and subgroup checks were skipped");
    free(t);
    rm_tmpdir();
}

TEST(cli_setup_info_validate)
{
    char args[600], pp[300];
    const char *out = tpath("out.txt");
    snprintf(args, sizeof args, "setup --circuit synthetic --constraints 300 --public 2 --seed 7 --out %s", tmpdir);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    char *t = slurp(out);
    ASSERT_STR_CONTAINS(t, "not for production: the toxic waste is known to this process");
    free(t);
    snprintf(pp, sizeof pp, "%s/synthetic-c300-p2.params", tmpdir);
    ASSERT(access(pp, R_OK) == 0);

    snprintf(args, sizeof args, "info %s", pp);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    t = slurp(out);
    struct g16_params_info inf;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    ASSERT_OK(g16_params_info(&inf, pp, err), err);
    char line[100];
    snprintf(line, sizeof line, "\nic %u\n", inf.n_ic);
    ASSERT_STR_CONTAINS(t, line);
    ASSERT_EQ_U64(inf.n_ic, 3);
    const char *names[5] = {"h", "l", "a", "b_g1", "b_g2"};
    uint64_t cnt[5] = {inf.n_h, inf.n_l, inf.n_a, inf.n_b_g1, inf.n_b_g2};
    for (int k = 0; k < 5; k++) {
        snprintf(line, sizeof line, "\n%s %" PRIu64 "\n", names[k], cnt[k]);
        ASSERT_STR_CONTAINS(t, line);
    }
    ASSERT_STR_CONTAINS(t, "vk_digest ");
    free(t);

    snprintf(args, sizeof args, "validate %s", pp);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    ASSERT_EQ_INT(run_cli(args, out), 0);
    t = slurp(out);
    ASSERT_STR_CONTAINS(t, "cache hit");
    free(t);

    /* corrupt l[1]'s flag byte: non-zero exit, message names the section and index */
    size_t n;
    uint8_t *b = get_file(pp, &n);
    b[inf.off_l + 96] |= 0x80;
    put_file(pp, b, n);
    free(b);
    ASSERT(run_cli(args, out) != 0);
    t = slurp(out);
    ASSERT_STR_CONTAINS(t, "l[1]");
    free(t);

    ASSERT_EQ_INT(run_cli("setup --constraints 10", out), 2);
    ASSERT_EQ_INT(run_cli("validate --mode fast x", out), 2);
    ASSERT_EQ_INT(run_cli("bogus", out), 2);
    t = slurp(out);
    ASSERT_STR_CONTAINS(t, "usage: cuzk-params");
    free(t);
    rm_tmpdir();
}

/* Every allocation of a read may fail: the result is CUZK_E_NOMEM (never a crash or a
 * half-filled key), and once enough allocations succeed the read works. */
TEST(allocation_failures)
{
    struct g16_pk pk, back;
    struct g16_vk vk;
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    SMALL_PK(&pk);
    const char *p = tpath("m.params"), *pv = tpath("m.vk");
    ASSERT_OK(g16_params_write(&pk, p, err), err);
    ASSERT_OK(g16_vk_write(&pk.vk, pv, err), err);
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = false, .progress = 0};
    int ok = 0;
    for (long k = 0; k < 64 && !ok; k++) {
        cuzk_alloc_fail_after(k);
        int rc = g16_params_read_ex(&back, p, &o, NULL, NULL, err);
        cuzk_alloc_fail_after(-1);
        if (rc == CUZK_OK) {
            assert_pk_eq(&pk, &back);
            g16_pk_free(&back);
            ok = 1;
        } else {
            ASSERT_CODE(rc, CUZK_E_NOMEM, err);
            ASSERT(back.h == NULL && back.vk.ic == NULL);
        }
    }
    ASSERT(ok);
    ok = 0;
    for (long k = 0; k < 16 && !ok; k++) {
        cuzk_alloc_fail_after(k);
        int rc = g16_vk_read(&vk, pv, err);
        cuzk_alloc_fail_after(-1);
        if (rc == CUZK_OK) {
            g16_vk_free(&vk);
            ok = 1;
        } else {
            ASSERT_CODE(rc, CUZK_E_NOMEM, err);
        }
    }
    ASSERT(ok);
    cuzk_alloc_fail_after(0);
    ASSERT_CODE(g16_params_write(&pk, tpath("m2.params"), err), CUZK_E_NOMEM, err);
    cuzk_alloc_fail_after(0);
    ASSERT(g16_pvk_new(&pk.vk, err) == NULL);
    cuzk_alloc_fail_after(-1);
    ASSERT_EQ_INT(err->code, CUZK_E_NOMEM);
    ASSERT_CODE(g16_params_read(&back, tpath("nope.params"), G16_VALIDATE_NONE, NULL, err), CUZK_E_NOT_FOUND, err);
    g16_pk_free(&pk);
    rm_tmpdir();
}
