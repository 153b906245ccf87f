/* main.c: cuzk-bench entry point: global flags, then dispatch to a registered subcommand. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuzk/util.h"

#define MAX_CMDS 64
static struct { const char *name, *help; bench_cmd_fn fn; } cmds[MAX_CMDS];
static int ncmds;
const char *bench_addr = "127.0.0.1:9820";
const char *bench_tls_ca, *bench_tls_cert, *bench_tls_key, *bench_tls_name, *bench_token_file;

void bench_register(const char *name, const char *help, bench_cmd_fn fn)
{
    if (ncmds < MAX_CMDS) {
        cmds[ncmds].name = name;
        cmds[ncmds].help = help;
        cmds[ncmds].fn = fn;
        ncmds++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool bench_parse_hex32(uint8_t out[32], const char *s)
{
    if (!s) return false;
    if (!strncmp(s, "0x", 2)) s += 2;
    if (strlen(s) != 64) return false;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
        out[i] = (uint8_t)v;
    }
    return true;
}

bool bench_parse_u64(uint64_t *out, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || !*s || *end || *s == '-') return false;
    *out = v;
    return true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cuzk-bench [-a ADDR] [--tls-ca PEM [--tls-cert PEM --tls-key PEM]\n"
               "                  [--tls-server-name NAME]] [--token-file FILE] COMMAND [ARGS]\n"
               "  --tls-ca: TLS to the daemon, its certificate checked against this CA;\n"
               "  --tls-cert/--tls-key: client certificate (mutual TLS); --token-file: the\n"
               "  daemon's [daemon] auth_token_file, sent as authorization: Bearer\n\ncommands:\n");
    for (int i = 0; i < ncmds; i++) fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
}

int main(int argc, char **argv)
{
    struct cuzk_error terr;
    if (pool_default_set_threads(getenv("CUZK_THREADS"), &terr)) {
        fprintf(stderr, "cuzk-bench: CUZK_THREADS: %s\n", terr.msg);
        return 2;
    }
    int i = 1;
    for (; i < argc; i++) {
        if ((!strcmp(argv[i], "-a") || !strcmp(argv[i], "--addr")) && i + 1 < argc) {
            bench_addr = argv[++i];
        } else if (!strcmp(argv[i], "--tls-ca") && i + 1 < argc) {
            bench_tls_ca = argv[++i];
        } else if (!strcmp(argv[i], "--tls-cert") && i + 1 < argc) {
            bench_tls_cert = argv[++i];
        } else if (!strcmp(argv[i], "--tls-key") && i + 1 < argc) {
            bench_tls_key = argv[++i];
        } else if (!strcmp(argv[i], "--tls-server-name") && i + 1 < argc) {
            bench_tls_name = argv[++i];
        } else if (!strcmp(argv[i], "--token-file") && i + 1 < argc) {
            bench_token_file = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (int c = 0; c < ncmds; c++)
        if (!strcmp(cmds[c].name, argv[i])) return cmds[c].fn(argc - i, argv + i);
    fprintf(stderr, "cuzk-bench: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return 2;
}
