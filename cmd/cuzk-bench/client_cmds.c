/* client_cmds.c: cuzk-bench subcommands that talk to a running cuzk-daemon: single, batch,
 * status, preload, evict, cancel, metrics (upstream cuzk-bench's flags and output formats).
 * Compiled only with CUZK_CLIENT=1. */
#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif
#if CUZK_CLIENT
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cuzk/progress.h"
#include "bench.h"
#include "client.h"
#include "cuzk/v1/proving.pb-c.h"

#define SECTOR_32G 34359738368ull

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------- request flags -- */

struct req_opts {
    int kind;
    uint64_t constraints;
    uint32_t partitions;
    const char *c1, *vanilla, *request_id;
    const char *proof_out;          /* single: write the proof's bytes here */
    bool aggregate;                 /* ni-porep: ask for the SnarkPack aggregate too */
    const char *aggregate_out;      /* single: write the aggregate's bytes here */
    uint64_t registered_proof, sector_num, miner_id, timeout_s;
    bool sector_num_set;             /* --sector-num given; else the C1's own SectorNum */
    uint32_t partition;
    int priority;
    uint8_t randomness[32], comm_r_old[32], comm_r_new[32], comm_d_new[32];
    bool have_r_old, have_r_new, have_d_new;
    /* loaded payload */
    uint8_t *vp; size_t vp_len;
    ProtobufCBinaryData *vps; size_t n_vps;
};

static int parse_kind(const char *s)
{
    static const struct { const char *name; int kind; } t[] = {
        {"porep", 1}, {"porep-c2", 1}, {"seal-commit", 1}, {"snap", 2}, {"snap-deals", 2},
        {"update", 2}, {"wpost", 3}, {"window-post", 3}, {"windowpost", 3}, {"winning", 4},
        {"winning-post", 4}, {"winningpost", 4}, {"synthetic", 100}, {"synth", 100},
        {"ni-porep", 101}, {"ni-porep-c2", 101},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].name)) return t[i].kind;
    return -1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cuzk-bench: cannot open %s: %s\n", path, strerror(errno)); return NULL; }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* A vanilla file: a JSON array of base64 strings (Go's json.Marshal([][]byte)); anything else
 * is one raw proof. Returns false on allocation failure only. */
static bool load_vanilla(struct req_opts *o, const uint8_t *buf, size_t n)
{
    size_t i = 0, count = 0;
    while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
    bool ok = i < n && buf[i] == '[';
    ProtobufCBinaryData *v = NULL;
    for (size_t k = i; ok && k < n; k++) if (buf[k] == '"') count++;
    if (ok && count % 2 == 0) {
        v = calloc(count / 2 + 1, sizeof *v);
        if (!v) return false;
        size_t m = 0;
        i++;
        while (ok) {
            while (i < n && strchr(" \t\r\n,", buf[i])) i++;
            if (i < n && buf[i] == ']') break;
            if (i >= n || buf[i] != '"') { ok = false; break; }
            size_t s = ++i;
            while (i < n && buf[i] != '"') i++;
            if (i >= n) { ok = false; break; }
            uint8_t *d = malloc((i - s) * 3 / 4 + 3);
            if (!d) { ok = false; break; }
            size_t dl = 0;
            uint32_t acc = 0;
            int bits = 0;
            for (size_t k = s; k < i; k++) {
                if (buf[k] == '=') break;
                int x = b64val(buf[k]);
                if (x < 0) { ok = false; break; }
                acc = acc << 6 | (uint32_t)x;
                bits += 6;
                if (bits >= 8) { bits -= 8; d[dl++] = (uint8_t)(acc >> bits); }
            }
            v[m].data = d;
            v[m].len = dl;
            m++;
            i++;
        }
        if (ok) { o->vps = v; o->n_vps = m; return true; }
        for (size_t k = 0; k < count / 2 + 1; k++) free(v[k].data);
        free(v);
    }
    o->vps = calloc(1, sizeof *o->vps);
    if (!o->vps) return false;
    o->vps[0].data = malloc(n ? n : 1);
    if (!o->vps[0].data) return false;
    memcpy(o->vps[0].data, buf, n);
    o->vps[0].len = n;
    o->n_vps = 1;
    return true;
}

static void req_free(struct req_opts *o)
{
    free(o->vp);
    for (size_t i = 0; i < o->n_vps; i++) free(o->vps[i].data);
    free(o->vps);
}

static void usage_req(const char *cmd, bool batch)
{
    fprintf(stderr,
            "usage: cuzk-bench [-a ADDR] %s -t TYPE [options]\n"
            "  -t, --type TYPE          porep|snap|wpost|winning|synthetic|ni-porep\n"
            "      --constraints N      synthetic circuit size (required for synthetic)\n"
            "      --partitions N       synthetic partitions per proof (default 1)\n"
            "      --c1 FILE            PoRep C1 output (wrapper JSON; ni-porep: an NI-PoRep C1)\n"
            "      --aggregate          ni-porep: also the daemon-verified SnarkPack aggregate\n"
            "      --vanilla FILE       vanilla proofs (JSON array of base64, or one raw proof)\n"
            "      --registered-proof N (0)   --sector-num N (the C1's SectorNum, else 1) --miner-id N (1000)\n"
            "%s"
            "      --randomness HEX32   --comm-r-old HEX32   --comm-r-new HEX32   --comm-d-new HEX32\n"
            "      --priority 0-4       --request-id ID      --timeout SECONDS (0 = none)\n"
            "%s",
            cmd, batch ? "" : "      --partition N (0)   --proof-out FILE (the proof's bytes)\n"
                              "      --aggregate-out FILE (ni-porep --aggregate: the aggregate's bytes)\n",
            batch ? "  -c, --count N (3)        -j, --concurrency N (1)\n" : "");
}

/* The SectorNum of a C1 wrapper, which the daemon holds the request's sector_number to: the
 * default when --sector-num is not given. Left as it is when the file has none (the daemon then
 * reports what is wrong with the file). */
static void c1_sector_num(const uint8_t *buf, size_t n, uint64_t *out)
{
    json_t *root = json_loadb((const char *)buf, n, 0, NULL);
    json_t *sn = root ? json_object_get(root, "SectorNum") : NULL;
    if (json_is_integer(sn) && json_integer_value(sn) >= 0) *out = (uint64_t)json_integer_value(sn);
    json_decref(root);
}

/* Parse request flags; batch adds -c/-j. Returns 0, or 2 on a usage error. */
static int parse_req(struct req_opts *o, int argc, char **argv, bool batch, uint64_t *count,
                     uint64_t *conc)
{
    memset(o, 0, sizeof *o);
    o->kind = -1;
    o->sector_num = 1;
    o->miner_id = 1000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
#define NEED() do { if (!v) { fprintf(stderr, "cuzk-bench: %s needs a value\n", a); return 2; } i++; } while (0)
#define U64(dst) do { NEED(); if (!bench_parse_u64(&u, v)) { fprintf(stderr, "cuzk-bench: %s %s: expected a number\n", a, v); return 2; } dst = u; } while (0)
#define HEX(dst, flag) do { NEED(); if (!bench_parse_hex32(dst, v)) { fprintf(stderr, "cuzk-bench: %s: expected 64 hex digits\n", a); return 2; } flag; } while (0)
        if (!strcmp(a, "-t") || !strcmp(a, "--type")) {
            NEED();
            if ((o->kind = parse_kind(v)) < 0) { fprintf(stderr, "cuzk-bench: unknown type '%s'\n", v); return 2; }
        } else if (!strcmp(a, "--constraints")) U64(o->constraints);
        else if (!strcmp(a, "--partitions")) U64(o->partitions);
        else if (!strcmp(a, "--c1")) { NEED(); o->c1 = v; }
        else if (!strcmp(a, "--vanilla")) { NEED(); o->vanilla = v; }
        else if (!strcmp(a, "--request-id")) { NEED(); o->request_id = v; }
        else if (!strcmp(a, "--registered-proof")) U64(o->registered_proof);
        else if (!strcmp(a, "--sector-num")) { U64(o->sector_num); o->sector_num_set = true; }
        else if (!strcmp(a, "--miner-id")) U64(o->miner_id);
        else if (!strcmp(a, "--timeout")) U64(o->timeout_s);
        else if (!strcmp(a, "--priority")) U64(o->priority);
        else if (!batch && !strcmp(a, "--partition")) U64(o->partition);
        else if (!batch && !strcmp(a, "--proof-out")) { NEED(); o->proof_out = v; }
        else if (!batch && !strcmp(a, "--aggregate-out")) { NEED(); o->aggregate_out = v; }
        else if (!strcmp(a, "--aggregate")) o->aggregate = true;
        else if (!strcmp(a, "--randomness")) HEX(o->randomness, (void)0);
        else if (!strcmp(a, "--comm-r-old")) HEX(o->comm_r_old, o->have_r_old = true);
        else if (!strcmp(a, "--comm-r-new")) HEX(o->comm_r_new, o->have_r_new = true);
        else if (!strcmp(a, "--comm-d-new")) HEX(o->comm_d_new, o->have_d_new = true);
        else if (batch && (!strcmp(a, "-c") || !strcmp(a, "--count"))) U64(*count);
        else if (batch && (!strcmp(a, "-j") || !strcmp(a, "--concurrency"))) U64(*conc);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage_req(argv[0], batch); return 2; }
        else { fprintf(stderr, "cuzk-bench %s: unknown option '%s'\n", argv[0], a); usage_req(argv[0], batch); return 2; }
#undef NEED
#undef U64
#undef HEX
    }
    if (o->kind < 0) { fprintf(stderr, "cuzk-bench %s: -t TYPE is required\n", argv[0]); usage_req(argv[0], batch); return 2; }
    if (o->kind == 100 && !o->constraints) {
        fprintf(stderr, "cuzk-bench %s: -t synthetic needs --constraints N\n", argv[0]);
        return 2;
    }
    if ((o->aggregate || o->aggregate_out) && o->kind != 101) {
        fprintf(stderr, "cuzk-bench %s: --aggregate and --aggregate-out are for -t ni-porep\n", argv[0]);
        return 2;
    }
    if (o->aggregate_out) o->aggregate = true;
    if (o->kind == 101 && !o->c1) {
        fprintf(stderr, "cuzk-bench %s: -t ni-porep needs --c1 FILE (an NI-PoRep C1)\n", argv[0]);
        return 2;
    }
    if (o->c1 && !(o->vp = read_file(o->c1, &o->vp_len))) return 2;
    if (o->c1 && !o->sector_num_set) c1_sector_num(o->vp, o->vp_len, &o->sector_num);
    if (o->vanilla) {
        size_t n;
        uint8_t *buf = read_file(o->vanilla, &n);
        if (!buf) return 2;
        bool ok = load_vanilla(o, buf, n);
        free(buf);
        if (!ok) { fprintf(stderr, "cuzk-bench: out of memory\n"); return 2; }
    }
    if (o->kind == 1 && !o->c1) fprintf(stderr, "cuzk-bench: warning: porep without --c1 sends an empty C1 output\n");
    return 0;
}

static void fill_submit(Cuzk__V1__SubmitProofRequest *q, const struct req_opts *o, char *rid, size_t cap)
{
    if (o->request_id) snprintf(rid, cap, "%s", o->request_id);
    else rid[0] = 0;   /* the daemon assigns a UUID */
    q->request_id = rid;
    q->proof_kind = (Cuzk__V1__ProofKind)o->kind;
    q->sector_size = SECTOR_32G;
    if (o->kind == 2 && o->registered_proof <= 4) {
        /* SnapDeals: the size of the registered update proof (0-4: StackedDrg2KiBV1 .. 64GiB),
         * as Curio sends it; the daemon refuses a mismatch */
        static const uint64_t snap_size[5] = {2ull << 10, 8ull << 20, 512ull << 20, 32ull << 30, 64ull << 30};
        q->sector_size = snap_size[o->registered_proof];
    }
    if ((o->kind == 3 || o->kind == 4) && o->registered_proof <= 14) {
        /* PoSt: the size of the registered PoSt proof (Go numbering: 0-4 Winning, 5-9 Window V1,
         * 10-14 Window V1_1, each 2KiB .. 64GiB), as Curio sends it; the daemon refuses a
         * mismatch */
        static const uint64_t post_size[5] = {2ull << 10, 8ull << 20, 512ull << 20, 32ull << 30, 64ull << 30};
        q->sector_size = post_size[o->registered_proof % 5];
    }
    q->registered_proof = o->registered_proof;
    q->priority = (Cuzk__V1__Priority)o->priority;
    q->vanilla_proof.data = o->vp;
    q->vanilla_proof.len = o->vp_len;
    q->n_vanilla_proofs = o->n_vps;
    q->vanilla_proofs = o->vps;
    q->sector_number = o->sector_num;
    q->miner_id = o->miner_id;
    if (o->kind == 3 || o->kind == 4) {
        q->randomness.data = (uint8_t *)o->randomness;
        q->randomness.len = 32;
    }
    q->partition_index = o->partition;
    if (o->have_r_old) { q->comm_r_old.data = (uint8_t *)o->comm_r_old; q->comm_r_old.len = 32; }
    if (o->have_r_new) { q->comm_r_new.data = (uint8_t *)o->comm_r_new; q->comm_r_new.len = 32; }
    if (o->have_d_new) { q->comm_d_new.data = (uint8_t *)o->comm_d_new; q->comm_d_new.len = 32; }
    q->synthetic_constraints = o->constraints;
    q->synthetic_partitions = o->partitions;
    q->aggregate = o->aggregate;
}

static const char *status_name(int s)
{
    static const char *n[] = {"UNKNOWN", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"};
    return s >= 0 && s <= 4 ? n[s] : "UNKNOWN";
}

/* One Prove call. Returns the gRPC status; *res is the unpacked reply when OK. */
static int prove_once(struct cz_client *c, const struct req_opts *o, Cuzk__V1__ProveResponse **res,
                      char *details, size_t cap)
{
    char rid[256];
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    fill_submit(&q, o, rid, sizeof rid);
    int st = cz_prove(c, &q, res, o->timeout_s * 1000, details, cap);
    if (!st && !(*res)->result) {
        protobuf_c_message_free_unpacked(&(*res)->base, NULL);
        *res = NULL;
        snprintf(details, cap, "ProveResponse has no result");
        return 13;
    }
    return st;
}

/* data to the file named by option `flag` (path NULL: not asked for); -1 when it cannot be
 * written */
static int write_out(const char *path, const uint8_t *data, size_t n, const char *flag, const char *what)
{
    if (!path) return 0;
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f)) ok = false;
    if (!ok) {
        fprintf(stderr, "cuzk-bench: %s %s: cannot write %s\n", flag, path, what);
        return -1;
    }
    printf("wrote:     %s\n", path);
    return 0;
}

static struct cz_client *connect_or_die(void)
{
    struct cz_client *c = NULL;
    struct cuzk_error err;
    struct cz_opts o = {bench_tls_ca, bench_tls_cert, bench_tls_key, bench_tls_name, NULL,
                        bench_token_file};
    if (cz_connect_opts(&c, bench_addr, &o, &err)) {
        fprintf(stderr, "cuzk-bench: %s\n", err.msg);
        return NULL;
    }
    return c;
}

/* ------------------------------------------------------------------ single -- */

BENCH_CMD(single, "single", "one proof through a running cuzk-daemon (Prove RPC)")
{
    struct req_opts o;
    int rc = parse_req(&o, argc, argv, false, NULL, NULL);
    if (rc) { req_free(&o); return rc; }
    struct cz_client *c = connect_or_die();
    if (!c) { req_free(&o); return 1; }
    char details[1024];
    Cuzk__V1__ProveResponse *res = NULL;
    double t0 = now_s();
    int st = prove_once(c, &o, &res, details, sizeof details);
    double wall_ms = (now_s() - t0) * 1000;
    printf("=== Proof Result ===\n");
    if (st) {
        printf("status:    RPC_ERROR\nerror:     %s: %s (daemon %s)\n", cz_status_name(st), details, bench_addr);
        rc = 1;
    } else {
        Cuzk__V1__AwaitProofResponse *r = res->result;
        printf("status:    %s\n", status_name(r->status));
        printf("job_id:    %s\n", r->job_id);
        printf("timings:   total=%" PRIu64 " ms (queue=%" PRIu64 " ms, srs=%" PRIu64 " ms, synth=%" PRIu64
               " ms, gpu=%" PRIu64 " ms)\n", r->total_ms, r->queue_wait_ms, r->srs_load_ms,
               r->synthesis_ms, r->gpu_compute_ms);
        printf("wall time: %.0f ms\n", wall_ms);
        if (r->status == 1) {
            size_t n = r->proof.len, show = n <= 256 ? n : 128;
            printf("proof:     %zu bytes (hex: ", n);
            for (size_t i = 0; i < show; i++) printf("%02x", r->proof.data[i]);
            printf("%s)\n", n > show ? "..." : "");
            printf("verified:  yes (the daemon verifies every proof before answering COMPLETED)\n");
            if (write_out(o.proof_out, r->proof.data, n, "--proof-out", "the proof")) rc = 1;
            if (o.kind == 101)
                printf("partitions: %zu proofs of %d bytes, each verified by the daemon\n",
                       n / 192, 192);
            if (o.aggregate && r->aggregate_proof.len) {
                size_t an = r->aggregate_proof.len;
                printf("aggregate: %zu bytes (SnarkPack v2 of %zu proofs; verified by the daemon "
                       "before it answered)\n", an, n / 192);
                if (write_out(o.aggregate_out, r->aggregate_proof.data, an, "--aggregate-out", "the aggregate"))
                    rc = 1;
            } else if (o.aggregate) {
                printf("aggregate: none in the answer (a daemon without NI_POREP aggregation?)\n");
                rc = 1;
            }
        } else {
            printf("error:     %s\n", r->error_message);
            rc = 1;
        }
        protobuf_c_message_free_unpacked(&res->base, NULL);
    }
    cz_close(c);
    req_free(&o);
    return rc;
}

/* ------------------------------------------------------------------- batch -- */

struct batch_ctx {
    struct cz_client *c;
    const struct req_opts *o;
    uint64_t count, next, finished;
    struct cuzk_progress pr;        /* proofs answered: a line with the rate and ETA */
    pthread_mutex_t mu;
    double t0;                      /* the batch's start (now_s) */
    double *wall, *prove, *done;    /* done: seconds from the start to the answer */
    int *ok;
};

static void *batch_worker(void *arg)
{
    struct batch_ctx *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        uint64_t i = b->next++;
        pthread_mutex_unlock(&b->mu);
        if (i >= b->count) return NULL;
        char details[1024];
        Cuzk__V1__ProveResponse *res = NULL;
        double t0 = now_s();
        int st = prove_once(b->c, b->o, &res, details, sizeof details);
        const double t1 = now_s(), wall = t1 - t0;
        pthread_mutex_lock(&b->mu);
        b->wall[i] = wall;
        b->done[i] = t1 - b->t0;
        if (b->pr.tty) fputs("\r\033[K", stdout);   /* the progress line gives way to the result */
        if (st) {
            printf("  [%" PRIu64 "/%" PRIu64 "] RPC_ERROR — %.1fs (%s: %s) at %.1fs\n", i + 1, b->count, wall,
                   cz_status_name(st), details, b->done[i]);
        } else {
            Cuzk__V1__AwaitProofResponse *r = res->result;
            b->ok[i] = r->status == 1;
            b->prove[i] = (double)r->gpu_compute_ms;
            printf("  [%" PRIu64 "/%" PRIu64 "] %s — %.1fs (prove=%" PRIu64 " ms, queue=%" PRIu64 " ms) at %.1fs%s%s\n",
                   i + 1, b->count, status_name(r->status), wall, r->gpu_compute_ms, r->queue_wait_ms,
                   b->done[i], r->status == 1 ? "" : ": ", r->status == 1 ? "" : r->error_message);
            protobuf_c_message_free_unpacked(&res->base, NULL);
        }
        fflush(stdout);
        cuzk_progress_set(&b->pr, ++b->finished);
        if (b->pr.tty && b->finished < b->count) cuzk_progress_print(&b->pr);   /* back below it */
        pthread_mutex_unlock(&b->mu);
    }
}

static void stats(const double *v, const int *ok, uint64_t n, double *avg, double *mn, double *mx)
{
    double s = 0;
    uint64_t k = 0;
    *mn = 0; *mx = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!ok[i]) continue;
        if (!k || v[i] < *mn) *mn = v[i];
        if (!k || v[i] > *mx) *mx = v[i];
        s += v[i];
        k++;
    }
    *avg = k ? s / (double)k : 0;
}

BENCH_CMD(batch, "batch", "COUNT proofs with CONCURRENCY parallel Prove calls; throughput summary")
{
    struct req_opts o;
    uint64_t count = 3, conc = 1;
    int rc = parse_req(&o, argc, argv, true, &count, &conc);
    if (rc) { req_free(&o); return rc; }
    if (!count || conc > 1024) { fprintf(stderr, "cuzk-bench batch: need -c >= 1 and -j <= 1024\n"); req_free(&o); return 2; }
    if (!conc) conc = 1;
    struct cz_client *c = connect_or_die();
    if (!c) { req_free(&o); return 1; }
    struct batch_ctx b = {.c = c, .o = &o, .count = count, .mu = PTHREAD_MUTEX_INITIALIZER,
                          .wall = calloc(count, sizeof(double)), .prove = calloc(count, sizeof(double)),
                          .done = calloc(count, sizeof(double)), .ok = calloc(count, sizeof(int))};
    cuzk_progress_init(&b.pr, stdout, "batch", "proofs", 1);
    cuzk_progress_phase(&b.pr, NULL, count);
    if (!b.wall || !b.prove || !b.done || !b.ok) { fprintf(stderr, "cuzk-bench: out of memory\n"); return 1; }
    const char *type = o.kind == 100 ? "synthetic" : o.kind == 101 ? "ni-porep" : o.kind == 1 ? "porep" : o.kind == 2 ? "snap"
                     : o.kind == 3 ? "wpost" : "winning";
    printf("=== Batch Benchmark ===\n");
    printf("type:          %s", type);
    if (o.kind == 100) printf(" (%" PRIu64 " constraints x %u partition(s))", o.constraints, o.partitions ? o.partitions : 1);
    printf("\ncount:         %" PRIu64 "\nconcurrency:   %" PRIu64 "\ndaemon:        %s\n\n", count, conc, bench_addr);
    fflush(stdout);
    double t0 = now_s();
    b.t0 = t0;
    uint64_t nt = conc < count ? conc : count;
    pthread_t *th = calloc(nt, sizeof *th);
    uint64_t started = 0;
    for (uint64_t i = 0; th && i < nt; i++)
        if (pthread_create(&th[i], NULL, batch_worker, &b) == 0) started++;
    if (!started) batch_worker(&b);
    for (uint64_t i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
    double elapsed = now_s() - t0;
    cuzk_progress_end(&b.pr);
    uint64_t completed = 0;
    for (uint64_t i = 0; i < count; i++) completed += (uint64_t)b.ok[i];
    double wa, wmn, wmx, pa, pmn, pmx;
    stats(b.wall, b.ok, count, &wa, &wmn, &wmx);
    stats(b.prove, b.ok, count, &pa, &pmn, &pmx);
    printf("\n=== Batch Summary ===\n");
    printf("total time:    %.1fs\n", elapsed);
    printf("completed:     %" PRIu64 "\n", completed);
    printf("failed:        %" PRIu64 "\n", count - completed);
    printf("wall avg:      %.1fs (min %.1fs, max %.1fs)\n", wa, wmn, wmx);
    printf("prove avg:     %.0f ms (min %.0f ms, max %.0f ms)\n", pa, pmn, pmx);
    if (completed)
        printf("throughput:    %.2f proofs/min (%.2f s/proof)\n", (double)completed * 60.0 / elapsed,
               elapsed / (double)completed);
    else
        printf("throughput:    0.00 proofs/min (no proof completed)\n");
    /* The steady rate leaves out the pipeline's fill (the first answer waits for a whole proof's
     * latency), so batches of different lengths compare. */
    double first = 0, last = 0;
    for (uint64_t i = 0, k = 0; i < count; i++) {
        if (!b.ok[i]) continue;
        if (!k++ || b.done[i] < first) first = b.done[i];
        if (b.done[i] > last) last = b.done[i];
    }
    if (completed >= 3)
        printf("steady:        %.2f s/proof (%" PRIu64 " answers after the first, over %.1fs)\n",
               (last - first) / (double)(completed - 1), completed - 1, last - first);
    free(b.wall); free(b.prove); free(b.done); free(b.ok);
    cz_close(c);
    req_free(&o);
    return completed == count ? 0 : 1;
}

/* ------------------------------------------------------- status & friends -- */

BENCH_CMD(status, "status", "daemon status: uptime, counters, GPUs, loaded SRS, queues")
{
    (void)argc; (void)argv;
    struct cz_client *c = connect_or_die();
    if (!c) return 1;
    char details[1024];
    Cuzk__V1__GetStatusRequest q = CUZK__V1__GET_STATUS_REQUEST__INIT;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("GetStatus"), &q.base, &cuzk__v1__get_status_response__descriptor,
                     &m, 30000, details, sizeof details);
    if (st) {
        fprintf(stderr, "cuzk-bench status: %s: %s (daemon %s)\n", cz_status_name(st), details, bench_addr);
        cz_close(c);
        return 1;
    }
    Cuzk__V1__GetStatusResponse *r = (Cuzk__V1__GetStatusResponse *)m;
    printf("=== cuzk daemon status ===\n");
    printf("uptime:        %" PRIu64 "s\n", r->uptime_seconds);
    printf("completed:     %" PRIu64 "\n", r->total_proofs_completed);
    printf("failed:        %" PRIu64 "\n", r->total_proofs_failed);
    printf("cancelled:     %" PRIu64 "\n", r->total_proofs_cancelled);
    printf("pinned memory: %.1f MiB / %.1f MiB\n", (double)r->pinned_memory_bytes / 1048576.0,
           (double)r->pinned_memory_limit_bytes / 1048576.0);
    printf("memory budget: %.1f MiB used / %.1f MiB\n", (double)r->memory_used_bytes / 1048576.0,
           (double)r->memory_budget_bytes / 1048576.0);
    printf("\nGPUs:\n");
    if (!r->n_gpus) printf("  (none: proving on the CPU)\n");
    for (size_t i = 0; i < r->n_gpus; i++) {
        Cuzk__V1__GPUStatus *g = r->gpus[i];
        printf("  [%u] %s — %" PRIu64 " MiB free / %" PRIu64 " MiB VRAM — ", g->ordinal, g->name,
               g->vram_free_bytes >> 20, g->vram_total_bytes >> 20);
        if (g->current_job_id[0]) printf("proving %s (%.8s)", g->current_proof_kind, g->current_job_id);
        else printf("idle");
        printf(" — %u/%u workers busy\n", g->busy_workers, g->workers);
    }
    printf("\nLoaded SRS:\n");
    if (!r->n_loaded_srs) printf("  (none)\n");
    static const char *tiers[] = {"HOT", "WARM", "COLD"};
    for (size_t i = 0; i < r->n_loaded_srs; i++) {
        Cuzk__V1__SRSStatus *s = r->loaded_srs[i];
        printf("  %s — %s, %.1f MiB, %u in use\n", s->circuit_id,
               s->tier >= 0 && s->tier <= 2 ? tiers[s->tier] : "?", (double)s->size_bytes / 1048576.0,
               s->ref_count);
    }
    printf("\nQueues:\n");
    for (size_t i = 0; i < r->n_queues; i++)
        printf("  %-13s pending=%u in_progress=%u pending_partitions=%u\n", r->queues[i]->proof_kind,
               r->queues[i]->pending, r->queues[i]->in_progress, r->queues[i]->pending_partitions);
    protobuf_c_message_free_unpacked(m, NULL);
    cz_close(c);
    return 0;
}

static const char *circuit_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--circuit-id")) && i + 1 < argc) return argv[i + 1];
        if (argv[i][0] != '-') return argv[i];
    }
    return NULL;
}

BENCH_CMD(preload, "preload", "load an SRS into the daemon: -c CIRCUIT_ID (porep-32g, synthetic-4096, ...)")
{
    const char *id = circuit_arg(argc, argv);
    if (!id) { fprintf(stderr, "usage: cuzk-bench [-a ADDR] preload -c CIRCUIT_ID\n"); return 2; }
    struct cz_client *c = connect_or_die();
    if (!c) return 1;
    char details[1024];
    Cuzk__V1__PreloadSrsRequest q = CUZK__V1__PRELOAD_SRS_REQUEST__INIT;
    q.circuit_id = (char *)id;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("PreloadSRS"), &q.base, &cuzk__v1__preload_srs_response__descriptor,
                     &m, 0, details, sizeof details);
    int rc = 0;
    if (st) {
        fprintf(stderr, "cuzk-bench preload: %s: %s\n", cz_status_name(st), details);
        rc = 1;
    } else {
        Cuzk__V1__PreloadSrsResponse *r = (Cuzk__V1__PreloadSrsResponse *)m;
        if (r->already_loaded) printf("%s already loaded\n", id);
        else printf("%s loaded in %" PRIu64 " ms\n", id, r->load_time_ms);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    cz_close(c);
    return rc;
}

BENCH_CMD(evict, "evict", "evict an idle SRS from the daemon: -c CIRCUIT_ID")
{
    const char *id = circuit_arg(argc, argv);
    if (!id) { fprintf(stderr, "usage: cuzk-bench [-a ADDR] evict -c CIRCUIT_ID\n"); return 2; }
    struct cz_client *c = connect_or_die();
    if (!c) return 1;
    char details[1024];
    Cuzk__V1__EvictSrsRequest q = CUZK__V1__EVICT_SRS_REQUEST__INIT;
    q.circuit_id = (char *)id;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("EvictSRS"), &q.base, &cuzk__v1__evict_srs_response__descriptor,
                     &m, 30000, details, sizeof details);
    int rc = 0;
    if (st) {
        fprintf(stderr, "cuzk-bench evict: %s: %s\n", cz_status_name(st), details);
        rc = 1;
    } else {
        Cuzk__V1__EvictSrsResponse *r = (Cuzk__V1__EvictSrsResponse *)m;
        if (r->was_loaded) printf("%s evicted, %.1f MiB freed\n", id, (double)r->freed_bytes / 1048576.0);
        else printf("%s was not loaded\n", id);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    cz_close(c);
    return rc;
}

BENCH_CMD(cancel, "cancel", "cancel a job: cancel JOB_ID")
{
    if (argc < 2) { fprintf(stderr, "usage: cuzk-bench [-a ADDR] cancel JOB_ID\n"); return 2; }
    struct cz_client *c = connect_or_die();
    if (!c) return 1;
    char details[1024];
    Cuzk__V1__CancelProofRequest q = CUZK__V1__CANCEL_PROOF_REQUEST__INIT;
    q.job_id = argv[1];
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("CancelProof"), &q.base, &cuzk__v1__cancel_proof_response__descriptor,
                     &m, 30000, details, sizeof details);
    int rc = 0;
    if (st) {
        fprintf(stderr, "cuzk-bench cancel: %s: %s\n", cz_status_name(st), details);
        rc = 1;
    } else {
        printf("%s cancelled (was_running=%s)\n", argv[1],
               ((Cuzk__V1__CancelProofResponse *)m)->was_running ? "true" : "false");
        protobuf_c_message_free_unpacked(m, NULL);
    }
    cz_close(c);
    return rc;
}

BENCH_CMD(metrics, "metrics", "print the daemon's Prometheus metrics (GetMetrics RPC)")
{
    (void)argc; (void)argv;
    struct cz_client *c = connect_or_die();
    if (!c) return 1;
    char details[1024];
    Cuzk__V1__GetMetricsRequest q = CUZK__V1__GET_METRICS_REQUEST__INIT;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("GetMetrics"), &q.base, &cuzk__v1__get_metrics_response__descriptor,
                     &m, 30000, details, sizeof details);
    int rc = 0;
    if (st) {
        fprintf(stderr, "cuzk-bench metrics: %s: %s (daemon %s)\n", cz_status_name(st), details, bench_addr);
        rc = 1;
    } else {
        fputs(((Cuzk__V1__GetMetricsResponse *)m)->prometheus_text, stdout);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    cz_close(c);
    return rc;
}
#else
typedef int cuzk_client_cmds_disabled;   /* CUZK_CLIENT=0: built without gRPC */
#endif
