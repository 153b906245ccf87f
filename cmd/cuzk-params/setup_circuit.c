/* setup_circuit.c: `cuzk-params setup --kind porep|window-post|winning-post|snap --sector-size
 * SIZE --out DIR [--seed S]`: local trusted setup of one Filecoin circuit (a PoRep, WindowPoSt
 * or SnapDeals partition, the WinningPoSt proof; fil_circuit.h), written under its v28 names
 * (DIR/v28-…{.params,.vk,.shape}) so that a prover pointed at DIR finds it as it would the
 * real parameter cache. NOT FOR PRODUCTION. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/progress.h"
#include "cuzk/util.h"

int params_cmd_setup_circuit(int argc, char **argv);
int params_cmd_stem(int argc, char **argv);
void params_setup_progress(void *ctx, const char *query, uint64_t done, uint64_t total);

static int setup_usage(FILE *f)
{
    fprintf(f, "usage: cuzk-params setup --kind porep|window-post|winning-post|snap --sector-size SIZE\n"
               "                         --out DIR [--seed S] [--gpu]\n"
               "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB (one partition's circuit: for PoRep the\n"
               "  same for V1, V1_1, synthetic and NI; for WindowPoSt the same for V1 and V1_2).\n"
               "  Writes DIR/<v28 name>.params, .vk and .shape.\n"
               "  --gpu: the fixed-base multiplications on GPU 0 (cuzk-params-gpu, `make daemon-gpu`);\n"
               "  the same seed gives the same files as the CPU.\n"
               "  NOT FOR PRODUCTION: the toxic waste is known to this process.\n");
    return f == stderr ? 2 : 0;
}

static double secs_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e9; }

/* The GPU's fixed-base multiplications for g16_setup_with (self: the context). */
static int gpu_fb_g1(void *self, g1_aff_t *out, const g1_aff_t *gen, const fr_t *sc, size_t n,
                     struct cuzk_error *err)
{
    return gpu_g1_fixed_base(self, out, gen, sc, n, err);
}
static int gpu_fb_g2(void *self, g2_aff_t *out, const g2_aff_t *gen, const fr_t *sc, size_t n,
                     struct cuzk_error *err)
{
    return gpu_g2_fixed_base(self, out, gen, sc, n, err);
}

/* The setup's progress (g16_fixed_base.progress; ctx: a struct cuzk_progress on stdout): a line
 * once the QAP is evaluated, then the multiplications, which are most of a large setup (the
 * files come after), as one line redrawn on a terminal or plain lines at each tenth. */
void params_setup_progress(void *ctx, const char *query, uint64_t done, uint64_t total)
{
    struct cuzk_progress *p = ctx;
    (void)query;
    if (!done) {
        printf("setup: QAP evaluated; %.1f M fixed-base multiplications (G1 points; a G2 point counts 3)\n",
               (double)total / 1e6);
        fflush(stdout);
        cuzk_progress_phase(p, "fixed-base multiplications", total);
        return;
    }
    cuzk_progress_set(p, done);
    if (done >= total) cuzk_progress_end(p);
}

int params_cmd_setup_circuit(int argc, char **argv)
{
    const char *kind_s = NULL, *size_s = NULL, *out = NULL;
    uint64_t seed = 0;
    bool have_seed = false, use_gpu = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) return setup_usage(stdout);
        if (!strcmp(o, "--gpu")) {
            use_gpu = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "setup: %s needs a value\n", o);
            return setup_usage(stderr);
        }
        i++;
        if (!strcmp(o, "--kind") || !strcmp(o, "--circuit")) {
            kind_s = v;
        } else if (!strcmp(o, "--sector-size")) {
            size_s = v;
        } else if (!strcmp(o, "--out")) {
            out = v;
        } else if (!strcmp(o, "--seed")) {
            char *end;
            seed = strtoull(v, &end, 0);
            if (*end || end == v) {
                fprintf(stderr, "setup: --seed: expected an integer, got \"%s\"\n", v);
                return 2;
            }
            have_seed = true;
        } else {
            fprintf(stderr, "setup: unknown option %s\n", o);
            return setup_usage(stderr);
        }
    }
    if (!kind_s || !size_s || !out) return setup_usage(stderr);
    struct cuzk_error err = {0};
    uint64_t size;
    enum fil_circuit_kind kind;
    struct fil_circuit circ;
    char stem[256], path[4096];
    if (fil_circuit_parse_kind(&kind, kind_s, &err) || porep_parse_sector_size(&size, size_s, &err) ||
        fil_circuit_init(&circ, kind, size, &err) || fil_circuit_param_stem(stem, sizeof stem, &circ, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 2;
    }
    fprintf(stderr, "cuzk-params: WARNING: not for production: the toxic waste is known to this process\n");
    if (mkdir(out, 0777) && errno != EEXIST) {
        fprintf(stderr, "cuzk-params: setup: %s: %s\n", out, strerror(errno));
        return 1;
    }
    uint64_t t0 = cuzk_now_ns();
    struct g16_shape s;
    struct g16_pk pk;
    memset(&s, 0, sizeof s);
    memset(&pk, 0, sizeof pk);
    int rc = fil_circuit_shape(&s, &circ, pool_default(), &err);
    if (!rc) printf("shape: %llu constraints, %u inputs, %u aux (%.1f s)\n",
                    (unsigned long long)s.n_constraints, s.n_inputs, s.n_aux, secs_since(t0));
    fflush(stdout);
    cuzk_rng rng;
    if (have_seed) cuzk_rng_seed(&rng, seed);
    uint64_t t1 = cuzk_now_ns();
    struct gpu_ctx *gctx = NULL;
    if (!rc && use_gpu) {
        rc = gpu_ctx_new(&gctx, 0, &err);
        if (rc == CUZK_E_NO_GPU)
            cuzk_fail(&err, rc, "--gpu: this cuzk-params is built without CUDA; use cuzk-params-gpu "
                      "(`make daemon-gpu`)");
    }
    struct cuzk_progress pr;
    cuzk_progress_init(&pr, stdout, "setup", "M mults", 1e-6);
    struct g16_fixed_base fb = {gctx ? gpu_fb_g1 : NULL, gctx ? gpu_fb_g2 : NULL, gctx,
                                params_setup_progress, &pr};
    if (!rc) rc = g16_setup_with(&pk, &s, have_seed ? &rng : NULL, pool_default(), &fb, &err);
    if (gctx) gpu_ctx_free(gctx);
    if (!rc) printf("setup: %.1f s\n", secs_since(t1));
    static const char *ext[3] = {"params", "vk", "shape"};
    for (int k = 0; k < 3 && !rc; k++) {
        snprintf(path, sizeof path, "%s/%s.%s", out, stem, ext[k]);
        rc = k == 0 ? g16_params_write_ex(&pk, path, true, &err)
           : k == 1 ? g16_vk_write(&pk.vk, path, &err)
                    : g16_shape_save(&s, path, &err);
        if (!rc) printf("wrote %s\n", path);
    }
    if (rc) fprintf(stderr, "cuzk-params: setup: %s (%s)\n", err.msg, cuzk_errname(rc));
    else printf("not for production: the toxic waste is known to this process\n");
    g16_pk_free(&pk);
    g16_shape_free(&s);
    return rc ? 1 : 0;
}

/* `stem --kind K --sector-size SIZE`: the v28 file name stem setup writes for that circuit
 * (DIR/STEM.params, .vk, .shape) and the daemon looks for, so a script can find a key it made
 * earlier without globbing a directory that may hold several sizes. */
int params_cmd_stem(int argc, char **argv)
{
    const char *kind_s = NULL, *size_s = NULL;
    bool bad = argc % 2 == 0;   /* every option takes a value */
    for (int i = 1; i + 1 < argc && !bad; i += 2) {
        if (!strcmp(argv[i], "--kind")) kind_s = argv[i + 1];
        else if (!strcmp(argv[i], "--sector-size")) size_s = argv[i + 1];
        else bad = true;
    }
    if (bad || !kind_s || !size_s) {
        fprintf(stderr, "usage: cuzk-params stem --kind porep|window-post|winning-post|snap --sector-size SIZE\n"
                        "  prints the v28 file name stem of that circuit's key (STEM.params, .vk, .shape)\n");
        return 2;
    }
    struct cuzk_error err = {0};
    uint64_t size;
    enum fil_circuit_kind kind;
    struct fil_circuit circ;
    char stem[256];
    if (fil_circuit_parse_kind(&kind, kind_s, &err) || porep_parse_sector_size(&size, size_s, &err) ||
        fil_circuit_init(&circ, kind, size, &err) || fil_circuit_param_stem(stem, sizeof stem, &circ, &err)) {
        fprintf(stderr, "cuzk-params: stem: %s\n", err.msg);
        return 2;
    }
    printf("%s\n", stem);
    return 0;
}
