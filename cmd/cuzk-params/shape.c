/* shape.c: `cuzk-params shape --kind KIND --sector-size SIZE [--count-only] [--out F]`:
 * synthesize one partition's shape of a proof kind (PoRep, WindowPoSt / WinningPoSt, SnapDeals)
 * and print its counts, nonzeros and densities. main.c dispatches "shape" here with
 * argv[0] = "shape". The kinds are fil_circuit.h's table. */
#include <stdio.h>
#include <string.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/util.h"

int params_cmd_shape(int argc, char **argv);

static int shape_usage(FILE *f)
{
    fprintf(f, "usage: cuzk-params shape --kind porep|window-post|winning-post|snap --sector-size SIZE "
               "[--count-only] [--out FILE]\n"
               "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB\n"
               "  --count-only  count rows, nonzeros and densities without storing the matrices\n"
               "  --out FILE    also save the shape (not with --count-only)\n");
    return f == stderr ? 2 : 0;
}

int params_cmd_shape(int argc, char **argv)
{
    const char *kind = NULL, *size_s = NULL, *out = NULL;
    bool count_only = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) return shape_usage(stdout);
        if (!strcmp(o, "--count-only")) { count_only = true; continue; }
        if (!v) {
            fprintf(stderr, "shape: %s needs a value\n", o);
            return shape_usage(stderr);
        }
        if (!strcmp(o, "--kind")) kind = v;
        else if (!strcmp(o, "--sector-size")) size_s = v;
        else if (!strcmp(o, "--out")) out = v;
        else {
            fprintf(stderr, "shape: unexpected argument %s\n", o);
            return shape_usage(stderr);
        }
        i++;
    }
    if (!kind || !size_s || (count_only && out)) return shape_usage(stderr);

    struct cuzk_error err = {0};
    uint64_t size;
    enum fil_circuit_kind k;
    struct fil_circuit circ;
    if (fil_circuit_parse_kind(&k, kind, &err) || porep_parse_sector_size(&size, size_s, &err) ||
        fil_circuit_init(&circ, k, size, &err)) {
        fprintf(stderr, "shape: %s\n", err.msg);
        return 2;
    }
    struct g16_builder *b = g16_builder_new(count_only, &err);
    if (!b) {
        fprintf(stderr, "shape: %s\n", err.msg);
        return 1;
    }
    uint64_t t0 = cuzk_now_ns();
    struct g16_shape s;
    memset(&s, 0, sizeof s);
    /* the repeated sub-circuits across the process pool (CUZK_THREADS sets its size) */
    struct pool *pool = pool_default();
    int rc = fil_circuit_shape_into(b, &circ, pool, &err);
    if (!rc) rc = g16_builder_finish(b, &s, &err);
    g16_builder_free(b);
    if (!rc && out) rc = g16_shape_save(&s, out, &err);
    if (rc) {
        fprintf(stderr, "shape: %s\n", err.msg);
        g16_shape_free(&s);
        return 1;
    }
    printf("constraints %llu\ninputs %u\naux %u\n", (unsigned long long)s.n_constraints,
           s.n_inputs, s.n_aux);
    printf("nnz_a %llu\nnnz_b %llu\nnnz_c %llu\n", (unsigned long long)s.a.nnz,
           (unsigned long long)s.b.nnz, (unsigned long long)s.c.nnz);
    printf("a_aux_density %llu\nb_inp_density %llu\nb_aux_density %llu\n",
           (unsigned long long)s.a_aux_count, (unsigned long long)s.b_inp_count,
           (unsigned long long)s.b_aux_count);
    fprintf(stderr, "shape: %s %s: %.2f s wall, %u threads\n", kind, size_s, (double)(cuzk_now_ns() - t0) / 1e9,
            pool_size(pool));
    g16_shape_free(&s);
    return 0;
}
