/* main.c: cuzk-params: local trusted setup (tests and demos only), header-only inspection
 * and validation of .params / .vk files. See docs/formats.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/progress.h"
#include "cuzk/util.h"

/* shape.c: `shape --kind porep|window-post|winning-post|snap --sector-size SIZE [--count-only]
 * [--out FILE]`. */
int params_cmd_shape(int argc, char **argv);
/* srs.c: `srs --n N --out DIR [--seed S]` / `srs --check FILE` (SnarkPack inner-product SRS). */
int params_cmd_srs(int argc, char **argv);
/* setup_circuit.c: `setup --kind porep|window-post|winning-post|snap --sector-size SIZE
 * --out DIR [--seed S]`. */
int params_cmd_setup_circuit(int argc, char **argv);
/* setup_circuit.c: `stem --kind K --sector-size SIZE` (the v28 file name stem). */
int params_cmd_stem(int argc, char **argv);
/* setup_circuit.c: g16_fixed_base.progress for both setups (ctx: a struct cuzk_progress). */
void params_setup_progress(void *ctx, const char *query, uint64_t done, uint64_t total);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cuzk-params COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  setup --circuit synthetic --constraints N [--public K] [--seed S] --out DIR\n"
            "        local trusted setup: writes DIR/NAME.params, DIR/NAME.vk, DIR/NAME.shape\n"
            "        (NOT FOR PRODUCTION: the toxic waste is known to this process)\n"
            "  setup --kind porep|window-post|winning-post|snap --sector-size SIZE --out DIR [--seed S]\n"
            "        local setup of one Filecoin circuit (a PoRep / WindowPoSt / SnapDeals partition,\n"
            "        the WinningPoSt proof), written under the v28 file names\n"
            "  stem --kind porep|window-post|winning-post|snap --sector-size SIZE\n"
            "        print that circuit's v28 file name stem (what setup writes, the daemon reads)\n"
            "  info FILE\n"
            "        counts, domain, densities and vk digest of a .params or .vk (reads headers only)\n"
            "  validate FILE [--mode none|curve|full] [--no-cache] [--gpu]\n"
            "        load and check every point (default full; a digest cache next to FILE\n"
            "        lets a fully validated file skip the checks next time; --gpu: the subgroup\n"
            "        checks on GPU 0, cuzk-params-gpu)\n"
            "  shape --kind porep --sector-size SIZE [--count-only] [--out FILE]\n"
            "        synthesize one PoRep partition's shape; print counts and densities\n"
            "  shape --kind window-post|winning-post --sector-size SIZE [--count-only] [--out FILE]\n"
            "        the same for a WindowPoSt partition / the WinningPoSt circuit\n"
            "  shape --kind snap --sector-size SIZE [--count-only] [--out FILE]\n"
            "        the same for a SnapDeals (EmptySectorUpdate) partition\n"
            "  srs --n N --out DIR [--seed S]\n"
            "        local SnarkPack inner-product SRS for up to N proofs, written as\n"
            "        DIR/v28-fil-inner-product-v1.srs (NOT FOR PRODUCTION)\n"
            "  srs --check FILE\n"
            "        read a .srs as rust-fil-proofs does and check every point read\n"
            "\n"
            "N may be written as 2^k. CUZK_THREADS sets the thread count.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cuzk-params: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return 2;
}

/* "123" or "2^k"; false on anything else. */
static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') return false;
    if (s[0] == '2' && s[1] == '^') {
        unsigned long k = strtoul(s + 2, &end, 10);
        if (*end || end == s + 2 || k > 63) return false;
        *out = 1ull << k;
        return true;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return false;
    *out = v;
    return true;
}

static double secs(uint64_t ns) { return (double)ns / 1e9; }

static void hex(char *out, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* ------------------------------------------------------------------ setup -- */

/* One entry per circuit kind setup can build; "porep --sector-size SIZE" joins this table. */
struct setup_args {
    const char *circuit, *out;
    uint64_t constraints, pub, seed;
    bool have_constraints, have_seed;
};
struct circuit_kind {
    const char *name;
    int (*build)(struct g16_shape *s, char *name, size_t name_len, const struct setup_args *a,
                 struct cuzk_error *err);
};

static int build_synthetic(struct g16_shape *s, char *name, size_t name_len,
                           const struct setup_args *a, struct cuzk_error *err)
{
    if (!a->have_constraints)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "setup: --circuit synthetic needs --constraints N");
    struct synth_params p = {.n_constraints = a->constraints, .n_public = (uint32_t)a->pub};
    snprintf(name, name_len, "synthetic-c%" PRIu64 "-p%" PRIu64, a->constraints, a->pub);
    return synth_build_shape(s, &p, err);
}

static const struct circuit_kind CIRCUITS[] = {
    {"synthetic", build_synthetic},
};

static int cmd_setup(int argc, char **argv)
{
    struct setup_args a = {.pub = 1};
    for (int i = 1; i + 1 < argc; i++)     /* the Filecoin circuits take a sector size */
        if ((!strcmp(argv[i], "--kind") || !strcmp(argv[i], "--circuit")) && strcmp(argv[i + 1], "synthetic"))
            return params_cmd_setup_circuit(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) return usage_error("setup: %s needs a value", o);
        i++;
        if (!strcmp(o, "--circuit") || !strcmp(o, "--kind")) {
            a.circuit = v;
        } else if (!strcmp(o, "--out")) {
            a.out = v;
        } else if (!strcmp(o, "--constraints")) {
            if (!parse_u64(v, &a.constraints) || !a.constraints)
                return usage_error("setup: --constraints: expected a positive count like 65536 or 2^16, got \"%s\"", v);
            a.have_constraints = true;
        } else if (!strcmp(o, "--public")) {
            if (!parse_u64(v, &a.pub) || !a.pub || a.pub > UINT32_MAX - 1)
                return usage_error("setup: --public: expected a count >= 1, got \"%s\"", v);
        } else if (!strcmp(o, "--seed")) {
            if (!parse_u64(v, &a.seed)) return usage_error("setup: --seed: expected an integer, got \"%s\"", v);
            a.have_seed = true;
        } else {
            return usage_error("setup: unknown option %s", o);
        }
    }
    if (!a.circuit) return usage_error("setup: --circuit is required%s", "");
    if (!a.out) return usage_error("setup: --out DIR is required%s", "");
    const struct circuit_kind *ck = NULL;
    for (size_t k = 0; k < sizeof CIRCUITS / sizeof *CIRCUITS; k++)
        if (!strcmp(CIRCUITS[k].name, a.circuit)) ck = &CIRCUITS[k];
    if (!ck) return usage_error("setup: unknown circuit \"%s\" (known: synthetic)", a.circuit);

    fprintf(stderr, "cuzk-params: WARNING: not for production: the toxic waste is known to this process\n");
    if (mkdir(a.out, 0777) && errno != EEXIST) {
        fprintf(stderr, "cuzk-params: setup: %s: %s\n", a.out, strerror(errno));
        return 1;
    }
    struct cuzk_error err = {0};
    struct g16_shape s;
    struct g16_pk pk;
    char name[128], path[4096];
    memset(&s, 0, sizeof s);
    memset(&pk, 0, sizeof pk);
    cuzk_rng rng;
    if (a.have_seed) cuzk_rng_seed(&rng, a.seed);
    uint64_t t0 = cuzk_now_ns();
    int rc = ck->build(&s, name, sizeof name, &a, &err);
    uint64_t t1 = cuzk_now_ns();
    struct cuzk_progress pr;
    cuzk_progress_init(&pr, stdout, "setup", "M mults", 1e-6);
    struct g16_fixed_base fb = {NULL, NULL, NULL, params_setup_progress, &pr};
    if (!rc) rc = g16_setup_with(&pk, &s, a.have_seed ? &rng : NULL, pool_default(), &fb, &err);
    uint64_t t2 = cuzk_now_ns();
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s.params", a.out, name);
        rc = g16_params_write(&pk, path, &err);
        if (!rc) printf("wrote %s\n", path);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s.vk", a.out, name);
        rc = g16_vk_write(&pk.vk, path, &err);
        if (!rc) printf("wrote %s\n", path);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s.shape", a.out, name);
        rc = g16_shape_save(&s, path, &err);
        if (!rc) printf("wrote %s\n", path);
    }
    uint64_t t3 = cuzk_now_ns();
    if (!rc) {
        printf("circuit %s: %" PRIu64 " constraints (with input rows), %" PRIu32 " inputs, %" PRIu32 " aux\n",
               name, s.n_constraints, s.n_inputs, s.n_aux);
        printf("time: shape %.2f s, setup %.2f s, write %.2f s\n", secs(t1 - t0), secs(t2 - t1), secs(t3 - t2));
        printf("not for production: the toxic waste is known to this process\n");
    } else {
        fprintf(stderr, "cuzk-params: setup: %s (%s)\n", err.msg, cuzk_errname(rc));
    }
    g16_pk_free(&pk);
    g16_shape_free(&s);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------------- info -- */

static unsigned ceil_log2(uint64_t n)
{
    unsigned k = 0;
    while (k < 64 && (1ull << k) < n) k++;
    return k;
}

static int cmd_info(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
            usage(stdout);
            return 0;
        }
        return usage_error("info: expected exactly one FILE%s", "");
    }
    const char *path = argv[1];
    struct cuzk_error err = {0};
    struct g16_params_info inf;
    int rc = g16_params_info(&inf, path, &err);
    if (rc) {
        fprintf(stderr, "cuzk-params: info: %s (%s)\n", err.msg, cuzk_errname(rc));
        return 1;
    }
    /* vk digest over the file's vk bytes (same as g16_vk_digest of the loaded key) */
    size_t vkn = (size_t)(inf.off_ic + (uint64_t)inf.n_ic * 96);
    uint8_t *vkb = malloc(vkn);
    int fd = open(path, O_RDONLY);
    bool ok = vkb && fd >= 0 && pread(fd, vkb, vkn, 0) == (ssize_t)vkn;
    if (fd >= 0) close(fd);
    char dh[33] = "unavailable";
    if (ok) {
        uint8_t d[16];
        g16_digest128(d, vkb, vkn);
        hex(dh, d, 16);
    }
    free(vkb);

    printf("file %s\n", path);
    printf("kind %s\n", inf.vk_only ? "vk" : "params");
    printf("bytes %" PRIu64 "\n", inf.file_bytes);
    printf("ic %" PRIu32 "\n", inf.n_ic);
    printf("h %" PRIu64 "\n", inf.n_h);
    printf("l %" PRIu64 "\n", inf.n_l);
    printf("a %" PRIu64 "\n", inf.n_a);
    printf("b_g1 %" PRIu64 "\n", inf.n_b_g1);
    printf("b_g2 %" PRIu64 "\n", inf.n_b_g2);
    if (!inf.vk_only) {
        /* N = n_h + 1 (the layout walk checked it is a power of two) */
        printf("domain 2^%u (%" PRIu64 ")\n", ceil_log2(inf.n_h + 1), inf.n_h + 1);
        printf("inputs %" PRIu32 " (ONE included), aux %" PRIu64 "\n", inf.n_ic, inf.n_l);
        uint64_t nv = inf.n_ic + inf.n_l;
        printf("a_aux_dense %" PRIu64 " of %" PRIu64 " aux (%.1f%%)\n", inf.n_a - inf.n_ic, inf.n_l,
               inf.n_l ? 100.0 * (double)(inf.n_a - inf.n_ic) / (double)inf.n_l : 0.0);
        printf("b_dense %" PRIu64 " of %" PRIu64 " variables (%.1f%%)\n", inf.n_b_g1, nv,
               nv ? 100.0 * (double)inf.n_b_g1 / (double)nv : 0.0);
    }
    printf("vk_digest %s\n", dh);
    return 0;
}

/* --------------------------------------------------------------- validate -- */

/* validate --gpu: the subgroup checks on GPU 0 (cuzk-params-gpu) */
static int gpu_check_g1(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                        struct cuzk_error *err)
{
    return gpu_g1_check_points(self, pts, n, subgroup, bad, err);
}
static int gpu_check_g2(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                        struct cuzk_error *err)
{
    return gpu_g2_check_points(self, pts, n, subgroup, bad, err);
}

static int cmd_validate(int argc, char **argv)
{
    const char *path = NULL;
    bool use_gpu = false;
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = true, .progress = -1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--mode")) {
            if (i + 1 >= argc) return usage_error("validate: --mode needs a value%s", "");
            const char *m = argv[++i];
            if (!strcmp(m, "none")) o.mode = G16_VALIDATE_NONE;
            else if (!strcmp(m, "curve")) o.mode = G16_VALIDATE_CURVE;
            else if (!strcmp(m, "full")) o.mode = G16_VALIDATE_FULL;
            else return usage_error("validate: --mode: expected none, curve or full, got \"%s\"", m);
        } else if (!strcmp(argv[i], "--no-cache")) {
            o.use_cache = false;
        } else if (!strcmp(argv[i], "--gpu")) {
            use_gpu = true;
        } else if (!strcmp(argv[i], "--progress")) {
            o.progress = 1;
        } else if (argv[i][0] == '-' || path) {
            return usage_error("validate: unexpected argument %s", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path) return usage_error("validate: expected a FILE%s", "");
    static const char *const mode_name[3] = {"none", "curve", "full"};
    struct cuzk_error err = {0};
    struct g16_params_info inf;
    int rc = g16_params_info(&inf, path, &err);
    uint64_t t0 = cuzk_now_ns();
    if (!rc && inf.vk_only) {
        struct g16_vk vk;
        rc = g16_vk_read(&vk, path, &err);   /* a vk is always checked in full: it is tiny */
        if (!rc) {
            uint8_t d[16];
            char dh[33];
            rc = g16_vk_digest(d, &vk, &err);
            hex(dh, d, 16);
            if (!rc)
                printf("ok: %s: vk, ic %" PRIu32 ", every point checked (full), vk_digest %s, %.3f s\n", path,
                       vk.n_ic, dh, secs(cuzk_now_ns() - t0));
            g16_vk_free(&vk);
        }
    } else if (!rc) {
        struct g16_pk pk;
        struct g16_params_read_report rep;
        struct gpu_ctx *gctx = NULL;
        if (use_gpu && (rc = gpu_ctx_new(&gctx, 0, &err)) == CUZK_E_NO_GPU)
            cuzk_fail(&err, rc, "--gpu: this cuzk-params is built without CUDA; use cuzk-params-gpu "
                      "(`make daemon-gpu`)");
        struct g16_point_checker chk = {gpu_check_g1, gpu_check_g2, gctx};
        o.checker = gctx ? &chk : NULL;
        if (!rc) rc = g16_params_read_ex(&pk, path, &o, pool_default(), &rep, &err);
        if (gctx) gpu_ctx_free(gctx);
        if (!rc) {
            char dh[33] = "-";
            if (rep.digest_valid) hex(dh, rep.digest, 16);
            printf("ok: %s: params, mode %s, ic %" PRIu32 " h %" PRIu64 " l %" PRIu64 " a %" PRIu64
                   " b_g1 %" PRIu64 " b_g2 %" PRIu64 "\n",
                   path, mode_name[o.mode], pk.vk.n_ic, pk.n_h, pk.n_l, pk.n_a, pk.n_b, pk.n_b);
            const char *what = rep.cache_hit ? "cache hit: the curve and subgroup checks were skipped"
                             : o.mode == G16_VALIDATE_NONE ? "coordinates < p only"
                             : o.mode == G16_VALIDATE_CURVE ? "every point on the curve"
                                                            : "every point on the curve and in the subgroup";
            printf("time %.2f s (%s), digest %s%s\n", secs(rep.read_ns + rep.check_ns), what, dh,
                   rep.cache_written ? ", cache written" : "");
            if (o.checker && !rep.cache_hit && o.mode == G16_VALIDATE_FULL)
                printf("subgroup checks on the GPU: %.2f s beside the read, %.2f s waited for after it\n",
                       secs(rep.ext_check_ns), secs(rep.ext_wait_ns));
            g16_pk_free(&pk);
        }
    }
    if (rc) {
        fprintf(stderr, "cuzk-params: validate: %s (%s)\n", err.msg, cuzk_errname(rc));
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------- main -- */

int main(int argc, char **argv)
{
    struct cuzk_error terr;
    if (pool_default_set_threads(getenv("CUZK_THREADS"), &terr)) {
        fprintf(stderr, "cuzk-params: CUZK_THREADS: %s\n", terr.msg);
        return 2;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "-h") || !strcmp(c, "--help") || !strcmp(c, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "setup")) return cmd_setup(argc - 1, argv + 1);
    if (!strcmp(c, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(c, "validate")) return cmd_validate(argc - 1, argv + 1);
    if (!strcmp(c, "shape")) return params_cmd_shape(argc - 1, argv + 1);
    if (!strcmp(c, "srs")) return params_cmd_srs(argc - 1, argv + 1);
    if (!strcmp(c, "stem")) return params_cmd_stem(argc - 1, argv + 1);
    return usage_error("unknown command \"%s\"", c);
}
