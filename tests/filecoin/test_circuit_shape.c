/* test_circuit_shape.c: the parallel shapes of the Filecoin circuits (fil_circuit_shape and
 * fil_circuit_shape_into: PoSt sectors, PoRep and SnapDeals challenges as segments of
 * g16_builder_segments) against the sequential oracle, one GCS_SHAPE context on one builder
 * through fil_circuit_synthesize_blank. Shapes are compared field by field and array by
 * array (counts, coefficient table, row_ptr / col / coeff_idx, densities) and their saved
 * .shape files byte by byte, with no pool and pools of 2 and 3 threads; count-only builders
 * the same way. */
#include <stdio.h>
#include <unistd.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "test.h"
#include "groth16/shape_eq.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

static void oracle(struct g16_shape *s, const struct fil_circuit *c, bool count_only)
{
    struct g16_builder *b = g16_builder_new(count_only, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    fil_circuit_synthesize_blank(&cs, c);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    ASSERT_OK(g16_builder_finish(b, s, E), E);
    g16_builder_free(b);
}

static void path_of(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/cuzk_test_circuit_shape_%d_%s.shape", (int)getpid(), tag);
}

/* The parallel shape equals the oracle's, in memory and on disk. full: which pools build the
 * full shape (bit k: NULL, 2, 3 threads); count_pool: the pool of the count-only comparison
 * (-1: none). */
static void check(enum fil_circuit_kind kind, uint64_t size, unsigned full, int count_pool)
{
    struct fil_circuit c;
    ASSERT_OK(fil_circuit_init(&c, kind, size, E), E);
    struct pool *p2 = pool_new(2, E), *p3 = pool_new(3, E);
    ASSERT(p2 && p3);
    struct pool *pools[3] = {NULL, p2, p3};
    char pr[256], pp[256];
    path_of(pr, sizeof pr, "ref");
    path_of(pp, sizeof pp, "par");
    struct g16_shape ref, s;
    if (full) {
        oracle(&ref, &c, false);
        ASSERT_OK(g16_shape_save(&ref, pr, E), E);
        for (int k = 0; k < 3; k++) {
            if (!(full >> k & 1)) continue;
            ASSERT_OK(fil_circuit_shape(&s, &c, pools[k], E), E);
            assert_shapes_equal(&ref, &s);
            ASSERT_OK(g16_shape_save(&s, pp, E), E);
            assert_files_equal(pr, pp);
            g16_shape_free(&s);
        }
        g16_shape_free(&ref);
    }
    if (count_pool >= 0) {
        oracle(&ref, &c, true);
        ASSERT_OK(g16_shape_save(&ref, pr, E), E);
        struct g16_builder *b = g16_builder_new(true, E);
        ASSERT(b);
        ASSERT_OK(fil_circuit_shape_into(b, &c, pools[count_pool], E), E);
        ASSERT_OK(g16_builder_finish(b, &s, E), E);
        g16_builder_free(b);
        assert_shapes_equal(&ref, &s);
        ASSERT_OK(g16_shape_save(&s, pp, E), E);
        assert_files_equal(pr, pp);
        g16_shape_free(&s);
        g16_shape_free(&ref);
    }
    remove(pr);
    remove(pp);
    pool_free(p2);
    pool_free(p3);
}

TEST(window_post_2k_8m_parallel_shape) {
    check(FIL_CIRCUIT_WINDOW_POST, 2048, 7, 2);
    check(FIL_CIRCUIT_WINDOW_POST, 8ull << 20, 7, 1);
}
TEST(winning_post_2k_parallel_shape) { check(FIL_CIRCUIT_WINNING_POST, 2048, 7, 2); }
/* 2 challenges after the header (the header's variables in every challenge) */
TEST(porep_2k_parallel_shape) { check(FIL_CIRCUIT_POREP, 2048, 4, 1); }
/* 10 challenges allocating aux only */
TEST(snap_2k_parallel_shape) { check(FIL_CIRCUIT_SNAP, 2048, 6, 0); }

/* A config the circuit refuses is refused before anything is recorded. */
TEST(parallel_shape_bad_config)
{
    struct g16_builder *b = g16_builder_new(true, E);
    ASSERT(b);
    struct post_config pc;
    ASSERT_OK(post_config_for_size(&pc, POST_WINDOW, 2048, E), E);
    pc.sectors = 0;
    ASSERT_CODE(post_shape(b, &pc, NULL, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "post: 0 sectors");
    struct snap_config sc;
    ASSERT_OK(snap_config_for_size(&sc, 2048, E), E);
    sc.challenges = SNAP_MAX_CHALLENGES + 1;
    ASSERT_CODE(snap_shape(b, &sc, NULL, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "snap: config out of range");
    uint32_t ni, na;
    uint64_t rows;
    g16_builder_counts(b, &ni, &na, &rows);
    ASSERT_EQ_U64(ni, 1);
    ASSERT_EQ_U64(na, 0);
    ASSERT_EQ_U64(rows, 0);
    g16_builder_free(b);
}
