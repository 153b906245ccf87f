/* bench_snap.c: SnapDeals from the command line: "gen-vanilla snap" (consistent synthetic
 * PartitionProofs in the cuzk-bench vanilla file format, plus the three commitments printed and
 * in FILE.commitments.json), the snap path of "prove" (bench_prove_snap: parse, native check,
 * witness, prove and verify every partition against public inputs recomputed from the
 * commitments alone), the snap path of "verify" (bench_verify_snap: an update proof, e.g. one a
 * daemon returned, checked apart from the prover) and "snap-witness" (parse / check / witness
 * times per partition, wall and CPU). Dispatched from bench_porep.c (gen-vanilla, verify --kind
 * snap) and bench_prove.c (prove --kind snap). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "cuzk/filecoin.h"
#include "cuzk/fil_circuit.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "cuzk/snap_gen.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

int bench_gen_vanilla_snap(int argc, char **argv);
int bench_prove_snap(int argc, char **argv);
int bench_verify_snap(int argc, char **argv);

static double ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static void hex32(char out[65], const uint8_t b[32])
{
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The registered update proof (Go abi number) of a sector size. */
static int update_proof_of(uint64_t size, uint64_t *id)
{
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t s;
        if (!fil_update_proof(i, &s, NULL, NULL) && s == size) {
            *id = i;
            return 0;
        }
    }
    return -1;
}

/* ---------------------------------------------------------- gen-vanilla -- */

int bench_gen_vanilla_snap(int argc, char **argv)
{
    const char *size_s = NULL, *outp = NULL;
    uint64_t seed = 1, size = 0, reg = 0;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--sector-size")) size_s = v;
        else if (!strcmp(o, "-o") || !strcmp(o, "--out")) outp = v;
        else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 0);
        else goto usage;
    }
    if (!outp || !size_s) goto usage;
    struct cuzk_error err = {0};
    if (porep_parse_sector_size(&size, size_s, &err)) {
        fprintf(stderr, "gen-vanilla snap: %s\n", err.msg);
        return 2;
    }
    if (update_proof_of(size, &reg)) {
        fprintf(stderr, "gen-vanilla snap: no registered update proof for sector size %s (2KiB, 8MiB, 512MiB, "
                        "32GiB, 64GiB)\n", size_s);
        return 2;
    }
    struct fil_snap_gen g;
    uint64_t t0 = cuzk_now_ns();
    if (fil_snap_generate(&g, size, seed, &err)) {
        fprintf(stderr, "gen-vanilla snap: %s (%s)\n", err.msg, cuzk_errname(err.code));
        return 1;
    }
    double gen_ms = ms_since(t0);
    /* the cuzk-bench vanilla file: a JSON array of base64 strings, partition order */
    FILE *f = fopen(outp, "wb");
    bool ok = f && fputc('[', f) != EOF;
    size_t total = 0;
    for (unsigned k = 0; k < g.partitions && ok; k++) {
        size_t n;
        char *b64 = fil_base64_encode(g.blob[k], g.len[k], &n);
        ok = b64 && fprintf(f, "%s\"", k ? "," : "") > 0 && fwrite(b64, 1, n, f) == n && fputc('"', f) != EOF;
        total += g.len[k];
        cuzk_free(b64);
    }
    if (ok) ok = fputs("]\n", f) != EOF;
    if (f && fclose(f)) ok = false;
    char ro[65], rn[65], dn[65], path[4096];
    hex32(ro, g.comm_r_old);
    hex32(rn, g.comm_r_new);
    hex32(dn, g.comm_d_new);
    snprintf(path, sizeof path, "%s.commitments.json", outp);
    FILE *c = ok ? fopen(path, "w") : NULL;
    if (c) {
        fprintf(c, "{\"registered_proof\": %llu, \"sector_size\": %llu, \"h\": %u, \"partitions\": %u,\n"
                   " \"comm_r_old\": \"%s\",\n \"comm_r_new\": \"%s\",\n \"comm_d_new\": \"%s\"}\n",
                (unsigned long long)reg, (unsigned long long)size, g.h, g.partitions, ro, rn, dn);
        if (fclose(c)) ok = false;
    } else {
        ok = false;
    }
    if (!ok) {
        fprintf(stderr, "gen-vanilla snap: cannot write %s or %s\n", outp, path);
        fil_snap_gen_free(&g);
        return 1;
    }
    printf("%s: registered update proof %llu, %u partitions x %zu bytes (%zu bytes), h %u, generated in %.0f ms\n",
           outp, (unsigned long long)reg, g.partitions, g.len[0], total, g.h, gen_ms);
    printf("comm_r_old %s\ncomm_r_new %s\ncomm_d_new %s\n%s\n", ro, rn, dn, path);
    printf("send: cuzk-bench single -t snap --registered-proof %llu --vanilla %s --comm-r-old %s --comm-r-new %s "
           "--comm-d-new %s\n", (unsigned long long)reg, outp, ro, rn, dn);
    fil_snap_gen_free(&g);
    return 0;
usage:
    fprintf(stderr, "usage: cuzk-bench gen-vanilla snap --sector-size SIZE -o FILE [--seed S]\n"
                    "  SIZE: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB; writes FILE (JSON array of base64 PartitionProofs)\n"
                    "  and FILE.commitments.json (registered_proof, comm_r_old, comm_r_new, comm_d_new)\n");
    return 2;
}

/* ------------------------------------------------------------ load files -- */

struct snap_file {
    uint64_t size, reg;
    struct snap_config cfg;
    unsigned h, n;
    uint8_t *blob[16];
    size_t len[16];
    bool have[3];
    uint8_t comm[3][32];                /* comm_r_old, comm_r_new, comm_d_new */
    fr_t fr[3];
};

static void snap_file_free(struct snap_file *s)
{
    for (unsigned k = 0; k < 16; k++) cuzk_free(s->blob[k]);
    memset(s, 0, sizeof *s);
}

/* The vanilla file, and the commitments JSON beside it for whatever the flags left out (the
 * sector size comes from its registered_proof, else from the partitions' count and sizes). */
static int load_snap(struct snap_file *s, const char *path, uint64_t reg_flag)
{
    json_error_t je;
    json_t *arr = json_load_file(path, 0, &je);
    if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > 16) {
        fprintf(stderr, "%s: not a JSON array of 1..16 base64 strings (%s)\n", path, arr ? "size" : je.text);
        json_decref(arr);
        return -1;
    }
    s->n = (unsigned)json_array_size(arr);
    struct cuzk_error err = {0};
    for (unsigned k = 0; k < s->n; k++) {
        const char *b = json_string_value(json_array_get(arr, k));
        if (!b || fil_base64_decode(&s->blob[k], &s->len[k], b, strlen(b), &err)) {
            fprintf(stderr, "%s: element %u: %s\n", path, k, b ? err.msg : "not a string");
            json_decref(arr);
            return -1;
        }
    }
    json_decref(arr);
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s.commitments.json", path);
    json_t *cj = json_load_file(cpath, 0, &je);
    static const char *const names[3] = {"comm_r_old", "comm_r_new", "comm_d_new"};
    bool need = !s->have[0] || !s->have[1] || !s->have[2];
    if (need && !cj) {
        fprintf(stderr, "%s: %s (give --comm-r-old, --comm-r-new and --comm-d-new)\n", cpath, je.text);
        return -1;
    }
    for (int i = 0; i < 3 && cj; i++)
        if (!s->have[i] && !(s->have[i] = bench_parse_hex32(s->comm[i], json_string_value(json_object_get(cj, names[i]))))) {
            fprintf(stderr, "%s: %s: expected 64 hex digits\n", cpath, names[i]);
            json_decref(cj);
            return -1;
        }
    s->reg = reg_flag;
    if (reg_flag == ~0ull) {
        json_t *r = cj ? json_object_get(cj, "registered_proof") : NULL;
        if (json_is_integer(r)) s->reg = (uint64_t)json_integer_value(r);
    }
    json_decref(cj);
    if (s->reg == ~0ull) {   /* by the partition count and blob size */
        for (uint64_t i = 0; i < 5 && s->reg == ~0ull; i++) {
            struct snap_config c;
            uint64_t sz;
            if (!fil_update_proof(i, &sz, NULL, NULL) && !snap_config_for_size(&c, sz, NULL) && c.partitions == s->n &&
                fil_snap_partition_proof_size(&c) == s->len[0])
                s->reg = i;
        }
    }
    if (fil_update_proof(s->reg, &s->size, NULL, &err) || snap_config_for_size(&s->cfg, s->size, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return -1;
    }
    s->h = snap_h_default(&s->cfg);
    for (int i = 0; i < 3; i++)
        if (fil_snap_commitment(&s->fr[i], s->comm[i], 32, names[i], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return -1;
        }
    if (s->n != s->cfg.partitions) {
        fprintf(stderr, "%s: %u partitions, the update proof %llu has %u\n", path, s->n,
                (unsigned long long)s->reg, s->cfg.partitions);
        return -1;
    }
    return 0;
}

/* Parse + native check of partition k (printing the times). */
static int parse_check(struct fil_snap_partition_proof *p, const struct snap_file *s, unsigned k, struct cuzk_error *err)
{
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_snap_partition_proof_parse(p, &s->cfg, s->blob[k], s->len[k], k, err);
    double parse_ms = ms_since(t0);
    t0 = cuzk_now_ns();
    if (!rc) rc = fil_snap_partition_check(&s->cfg, p, k, s->h, &s->fr[0], &s->fr[2], &s->fr[1], err);
    if (!rc) printf("parse[%u]   %10.1f ms  check %.1f ms (paths, roots, encoding, challenges)\n", k, parse_ms,
                    ms_since(t0));
    return rc;
}

/* ----------------------------------------------------------------- prove -- */

int bench_prove_snap(int argc, char **argv)
{
    const char *vp = NULL, *dir = NULL, *backend = "cpu";
    bool check = false;
    struct snap_file s;
    memset(&s, 0, sizeof s);
    uint64_t reg = ~0ull;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--check")) { check = true; continue; }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--vanilla")) vp = v;
        else if (!strcmp(o, "--params-dir")) dir = v;
        else if (!strcmp(o, "--backend")) backend = v;
        else if (!strcmp(o, "--registered-proof")) reg = strtoull(v, NULL, 0);
        else if (!strcmp(o, "--kind")) { if (strcmp(v, "snap")) goto usage; }
        else if (!strcmp(o, "--comm-r-old")) { if (!(s.have[0] = bench_parse_hex32(s.comm[0], v))) goto usage; }
        else if (!strcmp(o, "--comm-r-new")) { if (!(s.have[1] = bench_parse_hex32(s.comm[1], v))) goto usage; }
        else if (!strcmp(o, "--comm-d-new")) { if (!(s.have[2] = bench_parse_hex32(s.comm[2], v))) goto usage; }
        else goto usage;
    }
    if (!vp || !dir) goto usage;
    void *bctx = NULL;
    g16_backend_fn be = g16_backend_cpu;
    struct cuzk_error err = {0};
    if (!strcmp(backend, "gpu")) {
        struct gpu_ctx *g = NULL;
        if (gpu_ctx_new(&g, 0, &err)) {
            fprintf(stderr, "cuzk-bench prove: backend gpu: %s\n", err.msg);
            return 2;
        }
        bctx = g;
        be = gpu_g16_backend;
    } else if (strcmp(backend, "cpu")) {
        fprintf(stderr, "cuzk-bench prove: unknown backend '%s' (cpu, gpu)\n", backend);
        return 2;
    }
    uint64_t t0 = cuzk_now_ns();
    if (load_snap(&s, vp, reg)) {
        snap_file_free(&s);
        return 1;
    }
    printf("vanilla     %10.1f ms  update proof %llu (%llu-byte sectors), %u partitions, h %u\n", ms_since(t0),
           (unsigned long long)s.reg, (unsigned long long)s.size, s.n, s.h);
    struct fil_circuit circ;
    char stem[256], path[4096];
    struct g16_pk pk;
    struct g16_shape sh;
    memset(&pk, 0, sizeof pk);
    memset(&sh, 0, sizeof sh);
    int rc = fil_circuit_init(&circ, FIL_CIRCUIT_SNAP, s.size, &err);
    if (!rc) rc = fil_circuit_param_stem(stem, sizeof stem, &circ, &err);
    if (!rc) {
        t0 = cuzk_now_ns();
        snprintf(path, sizeof path, "%s/%s.params", dir, stem);
        rc = g16_params_read(&pk, path, G16_VALIDATE_NONE, pool_default(), &err);
        if (!rc) printf("params      %10.1f ms  %s\n", ms_since(t0), path);
    }
    if (!rc) {
        t0 = cuzk_now_ns();
        snprintf(path, sizeof path, "%s/%s.shape", dir, stem);
        rc = g16_shape_load(&sh, path, &err);
        if (!rc) printf("shape       %10.1f ms  %llu constraints, %u inputs, %u aux\n", ms_since(t0),
                        (unsigned long long)sh.n_constraints, sh.n_inputs, sh.n_aux);
    }
    struct g16_pvk *pvk = NULL;
    if (!rc && !(pvk = g16_pvk_new(&pk.vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    uint8_t *bytes = malloc((size_t)s.n * G16_PROOF_BYTES);
    bool all_ok = !rc && bytes;
    for (unsigned k = 0; k < s.n && all_ok; k++) {
        struct fil_snap_partition_proof p;
        memset(&p, 0, sizeof p);
        fr_t *in = NULL, *aux = NULL, pub[4];
        uint32_t n_in = 0, n_aux = 0;
        rc = parse_check(&p, &s, k, &err);
        t0 = cuzk_now_ns();
        if (!rc) rc = fil_snap_witness_values(&in, &aux, &n_in, &n_aux, &s.cfg, &p, k, s.h, &s.fr[0], &s.fr[2],
                                              &s.fr[1], pool_default(), &err);
        if (!rc && (n_in != sh.n_inputs || n_aux != sh.n_aux))
            rc = cuzk_fail(&err, CUZK_E_INTERNAL, "witness has %u inputs / %u aux, shape %u / %u", n_in, n_aux,
                           sh.n_inputs, sh.n_aux);
        if (!rc) printf("witness[%u] %10.1f ms\n", k, ms_since(t0));
        struct g16_assignment w = {in, aux};
        /* verify against inputs recomputed from (k, h, the commitments), not the witness; another
         * partition's inputs must fail */
        if (!rc) rc = snap_public_inputs(pub, &s.cfg, k, s.h, &s.fr[0], &s.fr[2], &s.fr[1], &err);
        char tag[16];
        snprintf(tag, sizeof tag, "[%u]", k);
        bool ok = false;
        if (!rc) rc = bench_prove_verify(tag, &sh, &pk, pvk, &w, check, be, bctx, pub, 4, 0,
                                         bytes + (size_t)k * G16_PROOF_BYTES, &ok, &err);
        if (!ok) all_ok = false;
        if (rc) all_ok = false;
        cuzk_free(in);
        cuzk_free(aux);
        fil_snap_partition_proof_free(&p);
        fflush(stdout);
    }
    if (rc) fprintf(stderr, "cuzk-bench prove --kind snap: %s: %s\n", cuzk_errname(rc), err.msg);
    if (all_ok) {
        printf("proof       %u x %d bytes: ", s.n, G16_PROOF_BYTES);
        for (int i = 0; i < 16; i++) printf("%02x", bytes[i]);
        printf("...\n");
    }
    printf("verified: %s\n", all_ok ? "yes" : "no");
    free(bytes);
    g16_pvk_free(pvk);
    g16_pk_free(&pk);
    g16_shape_free(&sh);
    snap_file_free(&s);
    return all_ok ? 0 : 1;
usage:
    fprintf(stderr, "usage: cuzk-bench prove --backend cpu|gpu --kind snap --vanilla FILE --params-dir DIR\n"
                    "         [--comm-r-old HEX --comm-r-new HEX --comm-d-new HEX] [--registered-proof N] [--check]\n"
                    "  without the commitment flags they are read from FILE.commitments.json (gen-vanilla snap)\n"
                    "  DIR from `cuzk-params setup --kind snap --sector-size SIZE --out DIR`\n");
    return 2;
}

/* ---------------------------------------------------------------- verify -- */

/* The proof file: exactly want bytes (n partitions x 192), else a message saying what it is. */
static int read_proof(uint8_t **out, const char *path, size_t want, unsigned n, struct cuzk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return cuzk_fail(err, CUZK_E_IO, "%s: cannot open", path);
    uint8_t *b = malloc(want + 1);
    size_t got = b ? fread(b, 1, want + 1, f) : 0;
    bool rerr = ferror(f);
    fclose(f);
    int rc = CUZK_OK;
    if (!b) rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    else if (rerr) rc = cuzk_fail(err, CUZK_E_IO, "%s: read failed", path);
    else if (got != want)
        rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: %s%zu bytes, the update proof has %u partitions x %d = %zu",
                       path, got > want ? "more than " : "", got > want ? want : got, n, G16_PROOF_BYTES, want);
    if (rc) free(b);
    else *out = b;
    return rc;
}

/* verify --kind snap: every partition's 192 bytes against the .vk, with the public inputs
 * recomputed by the library function the daemon's self-check uses (snap_public_inputs, from
 * the partition index, h and the three commitments) rather than anything in the proof file,
 * so a proof for another sector or another partition order fails. A partition that does not
 * decode or verify is named and the rest are still checked. */
int bench_verify_snap(int argc, char **argv)
{
    const char *vp = NULL, *vkp = NULL, *proofp = NULL;
    struct snap_file s;
    memset(&s, 0, sizeof s);
    uint64_t reg = ~0ull;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--vanilla")) vp = v;
        else if (!strcmp(o, "--vk")) vkp = v;
        else if (!strcmp(o, "--proof")) proofp = v;
        else if (!strcmp(o, "--registered-proof")) { if (!bench_parse_u64(&reg, v) || reg == ~0ull) goto usage; }
        else if (!strcmp(o, "--kind")) { if (strcmp(v, "snap")) goto usage; }
        else if (!strcmp(o, "--comm-r-old")) { if (!(s.have[0] = bench_parse_hex32(s.comm[0], v))) goto usage; }
        else if (!strcmp(o, "--comm-r-new")) { if (!(s.have[1] = bench_parse_hex32(s.comm[1], v))) goto usage; }
        else if (!strcmp(o, "--comm-d-new")) { if (!(s.have[2] = bench_parse_hex32(s.comm[2], v))) goto usage; }
        else goto usage;
    }
    if (!vp || !vkp || !proofp) goto usage;
    /* the vanilla file gives the partition count (and, with its commitments file, the update
     * proof and the commitments); its partitions are not checked here */
    if (load_snap(&s, vp, reg)) {
        snap_file_free(&s);
        return 1;
    }
    struct cuzk_error err = {0};
    struct g16_vk vk;
    memset(&vk, 0, sizeof vk);
    struct g16_pvk *pvk = NULL;
    uint8_t *buf = NULL;
    int rc = read_proof(&buf, proofp, (size_t)s.n * G16_PROOF_BYTES, s.n, &err);
    if (!rc) rc = g16_vk_read(&vk, vkp, &err);
    if (!rc && !(pvk = g16_pvk_new(&vk, &err))) rc = err.code ? err.code : CUZK_E_INTERNAL;
    unsigned good = 0;
    for (unsigned k = 0; k < s.n && !rc; k++) {
        fr_t pub[4];
        struct g16_proof proof;
        struct cuzk_error perr = {0};
        rc = snap_public_inputs(pub, &s.cfg, k, s.h, &s.fr[0], &s.fr[2], &s.fr[1], &err);
        if (rc) break;
        bool ok = g16_proof_from_bytes(&proof, buf + (size_t)k * G16_PROOF_BYTES, &perr) == CUZK_OK &&
                  g16_verify(pvk, &proof, pub, 4, &perr) == CUZK_OK;
        printf("partition %u: %s\n", k, ok ? "ok" : perr.msg);
        good += ok;
    }
    bool ok = !rc && good == s.n;
    if (rc) fprintf(stderr, "cuzk-bench verify --kind snap: %s: %s\n", cuzk_errname(rc), err.msg);
    printf("verified: %s (%u of %u partitions, update proof %llu)\n", ok ? "yes" : "no", good, s.n,
           (unsigned long long)s.reg);
    free(buf);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    snap_file_free(&s);
    return ok ? 0 : 1;
usage:
    fprintf(stderr, "usage: cuzk-bench verify --kind snap --vanilla FILE --vk FILE --proof FILE [--registered-proof N]\n"
                    "         [--comm-r-old HEX --comm-r-new HEX --comm-d-new HEX]\n"
                    "  FILE: the vanilla file the proof was made from (gen-vanilla snap); the commitments and the\n"
                    "  update proof not given as flags are read from FILE.commitments.json; --proof: partitions x 192\n"
                    "  bytes (e.g. `single -t snap --proof-out`)\n");
    return 2;
}

/* ---------------------------------------------------------- snap-witness -- */

BENCH_CMD(snap_witness, "snap-witness",
          "snap-witness (--vanilla FILE | --sector-size SIZE) [--partitions N] [--threads T] [--reuse]: SnapDeals parse, "
          "native check and witness time per partition (wall and CPU)")
{
    const char *vp = NULL, *size_s = NULL;
    unsigned max_parts = ~0u, threads = 0;
    bool reuse = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--reuse")) { reuse = true; continue; }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--vanilla")) vp = v;
        else if (!strcmp(o, "--sector-size")) size_s = v;
        else if (!strcmp(o, "--partitions")) max_parts = (unsigned)strtoul(v, NULL, 0);
        else if (!strcmp(o, "--threads")) threads = (unsigned)strtoul(v, NULL, 0);
        else goto usage;
    }
    if (!vp == !size_s) goto usage;
    struct cuzk_error err = {0};
    /* --threads T: a private pool (1: the calling thread alone); default: the library pool */
    struct pool *own = NULL, *pool = pool_default();
    if (threads == 1) pool = NULL;
    else if (threads > 1 && !(pool = own = pool_new(threads, &err))) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    struct snap_file s;
    memset(&s, 0, sizeof s);
    if (vp) {
        if (load_snap(&s, vp, ~0ull)) {
            snap_file_free(&s);
            pool_free(own);
            return 1;
        }
    } else {
        struct fil_snap_gen g;
        uint64_t t0 = cuzk_now_ns();
        if (porep_parse_sector_size(&s.size, size_s, &err) || fil_snap_generate(&g, s.size, 1, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            pool_free(own);
            return 1;
        }
        printf("generate    %10.1f ms  %u partitions\n", ms_since(t0), g.partitions);
        s.cfg = g.cfg;
        s.h = g.h;
        s.n = g.partitions;
        for (unsigned k = 0; k < s.n; k++) {
            s.blob[k] = g.blob[k];
            s.len[k] = g.len[k];
            g.blob[k] = NULL;
        }
        static const char *const names[3] = {"comm_r_old", "comm_r_new", "comm_d_new"};
        const uint8_t *cm[3] = {g.comm_r_old, g.comm_r_new, g.comm_d_new};
        for (int i = 0; i < 3; i++) (void)fil_snap_commitment(&s.fr[i], cm[i], 32, names[i], NULL);
        fil_snap_gen_free(&g);
    }
    struct snap_layout l;
    uint64_t t0 = cuzk_now_ns();
    int rc = snap_layout_get(&l, &s.cfg, &err);
    if (!rc) printf("layout      %10.1f ms  header %u aux, per challenge %u aux, %u challenges, %u aux in all\n",
                    ms_since(t0), l.head_aux, l.ch_aux, s.cfg.challenges, l.n_aux);
    unsigned nthr = pool ? pool_size(pool) : 1;
    /* --reuse: one pair of vectors for every partition (as a prover with a buffer pool would):
     * from the second partition on, no fresh pages (the kernel's zeroing of ~2.6 GB at 32 GiB
     * otherwise costs more CPU than the witness itself) */
    fr_t *in = NULL, *aux = NULL;
    if (!rc && reuse && (!(in = cuzk_malloc((size_t)l.n_inputs * sizeof *in)) ||
                         !(aux = cuzk_malloc((size_t)l.n_aux * sizeof *aux))))
        rc = cuzk_fail(&err, CUZK_E_NOMEM, "witness vectors");
    for (unsigned k = 0; k < s.n && k < max_parts && !rc; k++) {
        struct fil_snap_partition_proof p;
        memset(&p, 0, sizeof p);
        rc = parse_check(&p, &s, k, &err);
        uint32_t ni = l.n_inputs, na = l.n_aux;
        t0 = cuzk_now_ns();
        double c0 = cpu_s();
        if (!rc && !reuse) {
            rc = fil_snap_witness_values(&in, &aux, &ni, &na, &s.cfg, &p, k, s.h, &s.fr[0], &s.fr[2], &s.fr[1], pool,
                                         &err);
        } else if (!rc) {
            struct snap_witness w;
            rc = fil_snap_witness_fill(&w, &s.cfg, &p, k, s.h, &s.fr[0], &s.fr[2], &s.fr[1], &err);
            if (!rc) rc = snap_witness_values(in, aux, &s.cfg, &w, pool, &err);
        }
        double wall = ms_since(t0), cpu = (cpu_s() - c0) * 1e3;
        if (!rc) printf("witness[%u] %10.1f ms  cpu %.1f ms, inputs %u, aux %u (%u thread%s, %s)\n", k, wall, cpu, ni,
                        na, nthr, nthr > 1 ? "s" : "", reuse ? "buffers reused" : "fresh buffers");
        if (!reuse) {
            cuzk_free(in);
            cuzk_free(aux);
            in = aux = NULL;
        }
        fil_snap_partition_proof_free(&p);
        fflush(stdout);
    }
    cuzk_free(in);
    cuzk_free(aux);
    if (rc) fprintf(stderr, "snap-witness: %s: %s\n", cuzk_errname(rc), err.msg);
    snap_file_free(&s);
    pool_free(own);
    return rc ? 1 : 0;
usage:
    fprintf(stderr, "usage: cuzk-bench snap-witness (--vanilla FILE | --sector-size SIZE) [--partitions N] "
                    "[--threads T] [--reuse]\n  T: 1 = calling thread only; default: the library pool (CUZK_THREADS)\n"
                    "  --reuse: keep the witness vectors across partitions\n");
    return 2;
}
