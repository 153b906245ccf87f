/* test_c1.c: C1 outputs: gen-vanilla output parses back identically; its 2 KiB partition
 * witness satisfies the PoRep shape (g16_check) and allocates exactly the public inputs
 * recomputed from (replica_id, seed, comm_d, comm_r); single flipped bytes in paths, columns
 * and labels make it unsatisfiable or are rejected; the parallel witness equals the
 * sequential one; malformed wrapper / C1 JSON gives the specific error naming the JSON path. */
#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "filecoin/porep_witness_oracle.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

static const struct fil_seal_proof *P2K(void) { return fil_seal_proof_by_name("StackedDrg2KiBV1_1"); }

static void gen(struct fil_c1 *c, const struct fil_seal_proof *p, uint64_t seed)
{
    ASSERT_OK(fil_c1_generate(c, p, 1000, 42, seed, E), E);
}

static bool vp_equal(const struct fil_c1 *a, const struct fil_c1 *b)
{
    return a->proof == b->proof && a->partitions == b->partitions && a->challenges == b->challenges &&
           !memcmp(a->comm_r, b->comm_r, 32) && !memcmp(a->comm_d, b->comm_d, 32) &&
           !memcmp(a->replica_id, b->replica_id, 32) && !memcmp(a->seed, b->seed, 32) &&
           !memcmp(a->ticket, b->ticket, 32) &&
           !memcmp(a->vp, b->vp, (size_t)a->partitions * a->challenges * sizeof *a->vp);
}

TEST(gen_write_parse_roundtrip)
{
    static const char *names[] = {"StackedDrg2KiBV1_1", "StackedDrg2KiBV1", "StackedDrg8MiBV1_1",
                                  "StackedDrg512MiBV1_1"};
    for (size_t t = 0; t < 4; t++) {
        struct fil_c1 c, d;
        gen(&c, fil_seal_proof_by_name(names[t]), test_seed() + t);
        char *js;
        size_t n;
        ASSERT_OK(fil_c1_write_wrapper(&js, &n, &c, E), E);
        ASSERT(!strncmp(js, "{\"SectorNum\":42,\"Phase1Out\":\"", 29));
        ASSERT_OK(fil_c1_parse_wrapper(&d, js, n, E), E);
        ASSERT(vp_equal(&c, &d));
        ASSERT_EQ_U64(d.sector_num, 42);
        ASSERT_EQ_U64(d.sector_size, c.proof->sector_size);
        cuzk_free(js);
        /* the inner JSON alone, as serde writes it */
        ASSERT_OK(fil_c1_write_phase1(&js, &n, &c, E), E);
        ASSERT(!strncmp(js, "{\"registered_proof\":\"", 21));
        fil_c1_free(&d);
        ASSERT_OK(fil_c1_parse_phase1(&d, js, n, E), E);
        ASSERT(vp_equal(&c, &d));
        /* vanilla checks and public inputs of every partition pass */
        struct fil_porep_witness w;
        ASSERT_OK(fil_porep_witness_build(&w, &d, 0, E), E);
        fil_porep_witness_free(&w);
        cuzk_free(js);
        fil_c1_free(&c);
        fil_c1_free(&d);
    }
}

/* ------------------------------------------------------------ satisfiability -- */

static struct g16_shape g_shape;

static void build_shape(void)
{
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 2048, E), E);
    struct g16_builder *b = g16_builder_new(false, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    ASSERT_OK(g16_builder_finish(b, &g_shape, E), E);
    g16_builder_free(b);
}

/* Witness of partition 0 and g16_check against the shape; returns the check's code (or the
 * witness-build error); check_inputs: compare the allocated inputs with the recomputed ones. */
static int witness_check(const struct fil_c1 *c, bool check_inputs)
{
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    int rc = fil_porep_witness_values(&in, &aux, &n_in, &n_aux, c, 0, E);
    if (rc) return rc;
    ASSERT_EQ_U64(n_aux, g_shape.n_aux);
    ASSERT_EQ_U64(n_in, g_shape.n_inputs);
    if (check_inputs) {
        size_t ni = fil_porep_num_inputs(c->proof);
        ASSERT_EQ_U64(ni + 1, n_in);
        fr_t *pub = malloc(ni * sizeof *pub);
        ASSERT_OK(fil_porep_public_inputs(pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed, 0, E), E);
        ASSERT(fr_eq(&in[0], &FR_ONE));
        for (size_t i = 0; i < ni; i++) ASSERT_MSG(fr_eq(&pub[i], &in[1 + i]), "public input %zu differs", i);
        free(pub);
    }
    struct g16_assignment a = {in, aux};
    rc = g16_check(&g_shape, &a, pool_default(), E);
    cuzk_free(in);
    cuzk_free(aux);
    return rc;
}

TEST(gen_2k_satisfies_shape_and_tamper)
{
    build_shape();
    struct fil_c1 c;
    gen(&c, P2K(), test_seed());
    ASSERT_OK(witness_check(&c, true), E);
    porep_witness_parallel_equals_sequential(&c, 0);

    /* One flipped byte (kept a canonical field element: low byte) per place. */
    struct fil_vproof *v = &c.vp[1];
    struct { uint8_t *byte; int expect; const char *what; } T[] = {
        {&v->comm_d.sib[3][0], CUZK_E_UNSATISFIED, "tree-D sibling"},
        {&v->comm_d.leaf[0], CUZK_E_UNSATISFIED, "data leaf"},
        {&v->comm_r_last.sib[5][0], CUZK_E_UNSATISFIED, "tree-R sibling"},
        {&v->exp[4].proof.sib[8][0], CUZK_E_UNSATISFIED, "expander column tree-C sibling"},
        {&v->c_x.proof.sib[0][0], CUZK_E_UNSATISFIED, "c_x tree-C sibling"},
        {&v->drg[2].rows[0][0], CUZK_E_FORMAT, "DRG column row (label input)"},
        {&v->exp[7].rows[0][0], CUZK_E_FORMAT, "expander column row"},
        {&v->c_x.rows[1][0], CUZK_E_FORMAT, "label"},
        {&v->labeling[0].parents[36][0], CUZK_E_FORMAT, "labeling proof parent"},
        {&v->encoding.parents[0][0], CUZK_E_FORMAT, "encoding proof parent"},
    };
    for (size_t t = 0; t < sizeof T / sizeof *T; t++) {
        *T[t].byte ^= 1;
        int rc = witness_check(&c, false);
        ASSERT_MSG(rc == T[t].expect, "%s: got %s (%s), expected %s", T[t].what, cuzk_errname(rc),
                   E->msg, cuzk_errname(T[t].expect));
        *T[t].byte ^= 1;
    }
    /* a moved path (index) and a wrong root */
    v->comm_d.index[2] ^= 1;
    ASSERT_CODE(witness_check(&c, false), CUZK_E_FORMAT, E);
    v->comm_d.index[2] ^= 1;
    c.comm_d[0] ^= 1;
    ASSERT_CODE(witness_check(&c, false), CUZK_E_UNSATISFIED, E);
    c.comm_d[0] ^= 1;
    c.seed[5] ^= 1;     /* other challenges: rejected before synthesis */
    ASSERT_CODE(witness_check(&c, false), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "(replica_id, seed) give");
    c.seed[5] ^= 1;
    ASSERT_OK(witness_check(&c, false), E);
    fil_c1_free(&c);
    g16_shape_free(&g_shape);
}

/* A byte flipped in the JSON text of a tree-D sibling is unsatisfiable after parsing. */
TEST(json_flip_unsatisfiable)
{
    build_shape();
    struct fil_c1 c, d;
    gen(&c, P2K(), test_seed());
    char *js;
    size_t n;
    ASSERT_OK(fil_c1_write_phase1(&js, &n, &c, E), E);
    char *h = strstr(js, "\"hashes\":[[");
    ASSERT(h);
    h += 11;    /* first byte of the first sibling: rewrite it as a different small number */
    char *comma = strchr(h, ',');
    int old = atoi(h);
    char num[8];
    int k = snprintf(num, sizeof num, "%d", old == 7 ? 8 : 7);
    size_t rest = strlen(comma);
    char *js2 = malloc(n + 8);
    memcpy(js2, js, (size_t)(h - js));
    memcpy(js2 + (h - js), num, (size_t)k);
    memcpy(js2 + (h - js) + k, comma, rest + 1);
    ASSERT_OK(fil_c1_parse_phase1(&d, js2, strlen(js2), E), E);
    ASSERT_CODE(witness_check(&d, false), CUZK_E_UNSATISFIED, E);
    free(js2);
    cuzk_free(js);
    fil_c1_free(&c);
    fil_c1_free(&d);
    g16_shape_free(&g_shape);
}

/* --------------------------------------------------------------- malformed -- */

static char *wrap(const char *inner, size_t n, const char *sector_num, const char *size)
{
    size_t bl;
    char *b = fil_base64_encode((const uint8_t *)inner, n, &bl);
    char *o = malloc(bl + 200);
    sprintf(o, "{\"SectorNum\":%s,\"Phase1Out\":\"%s\",\"SectorSize\":%s}", sector_num, b, size);
    cuzk_free(b);
    return o;
}

/* Replace the first occurrence of `from` after `after` (or from the start). */
static char *replace1(const char *s, const char *after, const char *from, const char *to)
{
    const char *base = after ? strstr(s, after) : s;
    ASSERT(base);
    const char *at = strstr(base, from);
    ASSERT(at);
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *o = malloc(n + 1);
    memcpy(o, s, (size_t)(at - s));
    strcpy(o + (at - s), to);
    strcat(o, at + strlen(from));
    return o;
}

static void expect_wrapper(const char *js, int code, const char *msg_part)
{
    struct fil_c1 d;
    int rc = fil_c1_parse_wrapper(&d, js, strlen(js), E);
    ASSERT_MSG(rc == code, "got %s (%s), expected %s", cuzk_errname(rc), E->msg, cuzk_errname(code));
    if (msg_part) ASSERT_STR_CONTAINS(E->msg, msg_part);
    ASSERT(d.vp == NULL);
}

static void expect_inner(const char *inner, int code, const char *msg_part)
{
    char *w = wrap(inner, strlen(inner), "42", "2048");
    expect_wrapper(w, code, msg_part);
    free(w);
}

TEST(malformed_inputs)
{
    struct fil_c1 c;
    gen(&c, P2K(), test_seed());
    char *inner, *w, *x;
    size_t n;
    ASSERT_OK(fil_c1_write_phase1(&inner, &n, &c, E), E);
    w = wrap(inner, n, "42", "2048");
    struct fil_c1 d;
    ASSERT_OK(fil_c1_parse_wrapper(&d, w, strlen(w), E), E);
    fil_c1_free(&d);

    /* wrapper level */
    w[strlen(w) / 2] = 0;
    expect_wrapper(w, CUZK_E_TRUNCATED, "wrapper: invalid JSON");
    free(w);
    w = wrap(inner, n, "\"42\"", "2048");
    expect_wrapper(w, CUZK_E_FORMAT, "SectorNum: expected integer, got string");
    free(w);
    w = wrap(inner, n, "42", "4096");
    expect_wrapper(w, CUZK_E_FORMAT, "SectorSize: 4096 does not match StackedDrg2KiBV1_1");
    free(w);
    w = wrap(inner, n, "-1", "2048");
    expect_wrapper(w, CUZK_E_FORMAT, "SectorNum: expected integer in");
    free(w);
    expect_wrapper("[1,2]", CUZK_E_FORMAT, "expected object, got array");
    expect_wrapper("{\"SectorNum\":1,\"SectorSize\":2048}", CUZK_E_FORMAT, "Phase1Out: missing field");
    expect_wrapper("{\"SectorNum\":1,\"Phase1Out\":\"ab*d\",\"SectorSize\":2048}", CUZK_E_BAD_ENCODING,
                   "Phase1Out: base64: offset 2: invalid character");
    expect_wrapper("{\"SectorNum\":1,\"Phase1Out\":\"abc\",\"SectorSize\":2048}", CUZK_E_BAD_ENCODING,
                   "not a multiple of 4");
    /* truncated inner JSON */
    w = wrap(inner, n - 100, "42", "2048");
    expect_wrapper(w, CUZK_E_TRUNCATED, "Phase1Out: invalid JSON");
    free(w);

    /* wrong lengths and types inside, each with its JSON path */
    x = replace1(inner, "\"hashes\":[[", "[[", "[[999,");     /* 33 elements */
    expect_inner(x, CUZK_E_FORMAT,
                 "Phase1Out.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs.data.Single.path.path[0]"
                 ".hashes[0]: expected 32-byte array, got 33 elements");
    free(x);
    {
        /* drop the first byte of the third tree-D sibling: 31 elements */
        const char *h = inner;
        for (int i = 0; i < 3; i++) h = strstr(h, "\"hashes\":[[") + 1;
        const char *a = h + 10, *comma = strchr(a, ',');
        x = malloc(n + 1);
        memcpy(x, inner, (size_t)(a - inner));
        strcpy(x + (a - inner), comma + 1);
        expect_inner(x, CUZK_E_FORMAT,
                     "Phase1Out.vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs.data.Single.path.path[2]"
                     ".hashes[0]: expected 32-byte array, got 31");
        free(x);
    }
    x = replace1(inner, "\"rows\":[[", "[[", "[[256,");
    expect_inner(x, CUZK_E_FORMAT, "c_x.column.rows[0]: expected 32-byte array, got 33");
    free(x);
    x = replace1(inner, "\"comm_r\":[", "[", "[300,");
    expect_inner(x, CUZK_E_FORMAT, "Phase1Out.comm_r: expected 32-byte array, got 33 elements");
    free(x);
    x = replace1(inner, "\"layer_index\":", "\"layer_index\":1", "\"layer_index\":\"1\"");
    expect_inner(x, CUZK_E_FORMAT, "labeling_proofs[0].layer_index: expected integer, got string");
    free(x);
    x = replace1(inner, NULL, "\"registered_proof\":\"StackedDrg2KiBV1_1\"", "\"registered_proof\":\"StackedDrg4KiBV1\"");
    expect_inner(x, CUZK_E_UNSUPPORTED, "Phase1Out.registered_proof: unknown registered proof");
    free(x);
    x = replace1(inner, NULL, "\"vanilla_proofs\":{\"StackedDrg2KiBV1\"", "\"vanilla_proofs\":{\"StackedDrg8MiBV1\"");
    expect_inner(x, CUZK_E_FORMAT, "Phase1Out.vanilla_proofs: expected the single variant StackedDrg2KiBV1");
    free(x);
    x = replace1(inner, "\"comm_r_last_proof\":", "\"Single\"", "\"Sub\"");
    expect_inner(x, CUZK_E_FORMAT, "comm_r_last_proof.data: expected proof variant Single");
    free(x);
    x = replace1(inner, "\"comm_d_proofs\":", "\"index\":", "\"index\":2,\"x\":");
    expect_inner(x, CUZK_E_FORMAT, "comm_d_proofs.data.Single.path.path[0].index: expected integer in 0..1, got 2");
    free(x);
    x = replace1(inner, NULL, "\"replica_id\":[", "\"replica_id\":[255,255,255,255,255,255,255,255,255,255,"
                 "255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255],\"x\":[");
    expect_inner(x, CUZK_E_BAD_ENCODING, "Phase1Out.replica_id: not a canonical field element");
    free(x);
    x = replace1(inner, NULL, "\"seed\":", "\"sead\":");
    expect_inner(x, CUZK_E_FORMAT, "Phase1Out.seed: missing field");
    free(x);

    /* wrong numbers of challenges and partitions (written from a reshaped struct) */
    char *y;
    size_t yn;
    c.challenges = 1;
    ASSERT_OK(fil_c1_write_phase1(&y, &yn, &c, E), E);
    expect_inner(y, CUZK_E_FORMAT, "Phase1Out.vanilla_proofs.StackedDrg2KiBV1[0]: expected 2 challenge proofs, got 1");
    cuzk_free(y);
    c.partitions = 2;
    ASSERT_OK(fil_c1_write_phase1(&y, &yn, &c, E), E);
    expect_inner(y, CUZK_E_FORMAT, "Phase1Out.vanilla_proofs.StackedDrg2KiBV1: expected 1 partitions, got 2");
    cuzk_free(y);
    c.partitions = 1;
    c.challenges = 2;
    cuzk_free(inner);
    fil_c1_free(&c);
}

/* The wrapper parse under an allocation meter (util.h), as the daemon runs a large request's:
 * a real C1 fits in the share the daemon gives it (RPC_PARSE_FACTOR = 16 times the request,
 * one of which is the request's own decoded copy), it runs again within what it peaked at (+6%:
 * glibc may hand out a larger block than asked), half of that fails with CUZK_E_NOMEM (not a
 * format error), and everything it allocated and freed is credited back. */
TEST(wrapper_parse_within_meter)
{
    static const char *names[] = {"StackedDrg2KiBV1_1", "StackedDrg512MiBV1_1"};
    for (size_t t = 0; t < 2; t++) {
        struct fil_c1 c, d;
        gen(&c, fil_seal_proof_by_name(names[t]), test_seed() + t);
        char *js;
        size_t n;
        ASSERT_OK(fil_c1_write_wrapper(&js, &n, &c, E), E);
        struct cuzk_meter m;
        cuzk_meter_begin(&m, (uint64_t)n * 15, 0);
        int rc = fil_c1_parse_wrapper(&d, js, n, E);
        uint64_t peak = m.peak, left = m.used;
        bool over = m.over;
        fil_c1_free(&d);
        uint64_t after_free = m.used;
        cuzk_meter_end();
        ASSERT_OK(rc, E);
        ASSERT(!over);
        printf("%s: wrapper %zu bytes, parse peaked at %.2f x\n", names[t], n, (double)peak / (double)n);
        /* the inner tree alone is several times the decoded text (3/4 of the wrapper) */
        ASSERT_MSG(peak > (uint64_t)n * 3, "peak %llu for %zu bytes: the tree was not metered",
                   (unsigned long long)peak, n);
        ASSERT_MSG(left > 0 && after_free == 0, "used %llu after the parse, %llu after fil_c1_free",
                   (unsigned long long)left, (unsigned long long)after_free);
        cuzk_meter_begin(&m, peak / 2, 0);
        rc = fil_c1_parse_wrapper(&d, js, n, E);
        over = m.over;
        cuzk_meter_end();
        ASSERT_EQ_INT(rc, CUZK_E_NOMEM);
        ASSERT(over);
        cuzk_meter_begin(&m, peak + peak / 16, 0);
        rc = fil_c1_parse_wrapper(&d, js, n, E);
        cuzk_meter_end();
        ASSERT_OK(rc, E);
        fil_c1_free(&d);
        cuzk_free(js);
        fil_c1_free(&c);
    }
}

/* base64 (Phase1Out): random bytes of every length mod 3 round-trip through the encoder, and
 * a character outside the alphabet (or '=' before the end) at any offset, in the body or the
 * last quad, is refused naming that offset and character. */
TEST(base64_roundtrip_and_bad_character_offsets)
{
    for (size_t n = 3000; n < 3003; n++) {
        uint8_t *raw = malloc(n);
        cuzk_rng_bytes(test_rng(), raw, n);
        size_t bl;
        char *b = fil_base64_encode(raw, n, &bl);
        ASSERT(b);
        uint8_t *out;
        size_t on;
        ASSERT_OK(fil_base64_decode(&out, &on, b, bl, E), E);
        ASSERT_EQ_INT(on, n);
        ASSERT(!memcmp(out, raw, n));
        cuzk_free(out);
        size_t at[] = {0, 1, 5, 2047, bl / 2, bl - 5, bl - 3};
        for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
            for (int k = 0; k < 2; k++) {
                char was = b[at[i]], bad = k ? '=' : '*';
                b[at[i]] = bad;
                char want[80];
                snprintf(want, sizeof want, "base64: offset %zu: invalid character 0x%02x", at[i], (unsigned)bad);
                ASSERT_EQ_INT(fil_base64_decode(&out, &on, b, bl, E), CUZK_E_BAD_ENCODING);
                ASSERT_STR_CONTAINS(E->msg, want);
                b[at[i]] = was;
            }
        }
        cuzk_free(b);
        free(raw);
    }
}
