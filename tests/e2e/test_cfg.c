/* test_cfg.c: the daemon configuration reader against hand-written expectations: built-in
 * defaults, every value form, size/duration units, line-numbered errors naming key and value,
 * warnings for unknown / deprecated / ineffective keys, and TOML syntax errors. */
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "test.h"

struct warns { int n; char last[600]; char all[4000]; };
static void collect(void *ctx, const char *msg)
{
    struct warns *w = ctx;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
    size_t l = strlen(w->all);
    snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
}

static int parse(struct cuzk_config *c, const char *text, struct warns *w, struct cuzk_error *err)
{
    cfg_defaults(c);
    memset(w, 0, sizeof *w);
    return cfg_parse(c, text, strlen(text), "cuzk.toml", collect, w, err);
}

TEST(embedded_default_config_equals_built_in_defaults)
{
    struct cuzk_config a, b;
    struct warns w;
    struct cuzk_error e, *err = &e;
    ASSERT_OK(parse(&a, cfg_default_toml, &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
    cfg_defaults(&b);
    ASSERT_MEM_EQ(&a, &b, sizeof a);
    ASSERT(!strcmp(b.listen, "unix:///run/curio/cuzk.sock"));
    ASSERT(b.budget_auto);
    ASSERT_EQ_U64(b.safety_margin, 5ull << 30);
    ASSERT_EQ_U64(b.eviction_min_idle_ms, 300000);
    ASSERT_EQ_INT(b.gpu_workers_per_device, 2);
    /* an empty file is valid too */
    ASSERT_OK(parse(&a, "", &w, err), err);
    ASSERT_MEM_EQ(&a, &b, sizeof a);
}

TEST(values_of_every_form)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    const char *t =
        "# comment line\n"
        "[daemon]   # trailing comment\n"
        "listen = '0.0.0.0:9820'\n"
        "status_listen = \"127.0.0.1:9821\" # http\n"
        "shutdown_grace = \"1500ms\"\n"
        "[memory]\n"
        "total_budget = \"1.5GiB\"\n"
        "safety_margin = 1_048_576\n"
        "eviction_min_idle = 90\n"
        "[gpus]\n"
        "devices = [0, 2,\n  3]\n"
        "gpu_workers_per_device = 1\n"
        "[srs]\n"
        "param_cache = \"/var/tmp/filecoin-proof-parameters\"\n"
        "preload = [\"porep-32g\", \"synthetic-4096\"]\n"
        "[logging]\n"
        "level = \"debug\"\n"
        "format = \"json\"\n"
        "[pipeline]\n"
        "enabled = true\n"
        "max_parallel_synthesis = 6\n";
    ASSERT_OK(parse(&c, t, &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
    ASSERT(!strcmp(c.listen, "0.0.0.0:9820"));
    ASSERT(!strcmp(c.status_listen, "127.0.0.1:9821"));
    ASSERT_EQ_U64(c.shutdown_grace_ms, 1500);
    ASSERT(!c.budget_auto);
    ASSERT_EQ_U64(c.total_budget, 3ull << 29);
    ASSERT_EQ_U64(c.safety_margin, 1048576);
    ASSERT_EQ_U64(c.eviction_min_idle_ms, 90000);
    ASSERT_EQ_INT(c.n_devices, 3);
    ASSERT_EQ_INT(c.devices[0], 0);
    ASSERT_EQ_INT(c.devices[2], 3);
    ASSERT_EQ_INT(c.gpu_workers_per_device, 1);
    ASSERT(!strcmp(c.param_cache, "/var/tmp/filecoin-proof-parameters"));
    ASSERT_EQ_INT(c.n_preload, 2);
    ASSERT(!strcmp(c.preload[1], "synthetic-4096"));
    ASSERT(!strcmp(c.log_level, "debug"));
    ASSERT(c.log_json);
    ASSERT_EQ_INT(c.max_parallel_synthesis, 6);
}

TEST(sizes_and_durations)
{
    uint64_t v;
    ASSERT(cfg_parse_size(&v, "64GiB") && v == 64ull << 30);
    ASSERT(cfg_parse_size(&v, "512MiB") && v == 512ull << 20);
    ASSERT(cfg_parse_size(&v, "100GB") && v == 100000000000ull);
    ASSERT(cfg_parse_size(&v, "4096") && v == 4096);
    ASSERT(cfg_parse_size(&v, "2KiB") && v == 2048);
    ASSERT(!cfg_parse_size(&v, "64XB"));
    ASSERT(!cfg_parse_size(&v, "GiB"));
    ASSERT(!cfg_parse_size(&v, "-1GiB"));
    ASSERT(!cfg_parse_size(&v, "1.5"));
    ASSERT(cfg_parse_duration_ms(&v, "5m") && v == 300000);
    ASSERT(cfg_parse_duration_ms(&v, "30s") && v == 30000);
    ASSERT(cfg_parse_duration_ms(&v, "250ms") && v == 250);
    ASSERT(cfg_parse_duration_ms(&v, "1h") && v == 3600000);
    ASSERT(cfg_parse_duration_ms(&v, "300") && v == 300000);
    ASSERT(!cfg_parse_duration_ms(&v, "5 minutes"));
    ASSERT(!cfg_parse_duration_ms(&v, "m"));
}

TEST(invalid_values_name_file_line_key_and_value)
{
    static const struct { const char *text, *msg; } cases[] = {
        {"[memory]\n\ntotal_budget = \"64XB\"\n",
         "cuzk.toml:3: [memory] total_budget = \"64XB\": expected a size like \"64GiB\" or \"auto\""},
        {"[daemon]\nlisten = \"localhost\"\n", "cuzk.toml:2: [daemon] listen = \"localhost\": expected"},
        {"[memory]\neviction_min_idle = \"soon\"\n", "cuzk.toml:2: [memory] eviction_min_idle = \"soon\": expected a duration"},
        {"[gpus]\ngpu_workers_per_device = 0\n", "cuzk.toml:2: [gpus] gpu_workers_per_device = 0: expected an integer from 1 to 16"},
        {"[gpus]\ndevices = [0, \"one\"]\n", "cuzk.toml:2: [gpus] devices = [0, \"one\"]: expected an array"},
        {"[logging]\nlevel = \"loud\"\n", "cuzk.toml:2: [logging] level = \"loud\": expected one of"},
        {"[pipeline]\nenabled = 1\n", "cuzk.toml:2: [pipeline] enabled = 1: expected true or false"},
        {"[daemon]\nlisten = unix\n", "cuzk.toml:2: invalid value 'unix' (strings need quotes)"},
        {"[daemon\n", "cuzk.toml:1: malformed section header"},
        {"listen \"x\"\n", "cuzk.toml:1: expected 'key = value'"},
        {"[daemon]\nlisten = \"unix:///a\n", "cuzk.toml:2: unterminated string"},
        {"[daemon]\nlisten = \"unix:///a\" extra\n", "cuzk.toml:2: unexpected text after the value"},
        {"[daemon]\nlisten = \"unix:///a\"\nlisten = \"unix:///b\"\n", "cuzk.toml:3: [daemon] listen is set twice"},
        {"[gpus]\ndevices = [0,\n1\n", "unterminated array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cuzk_config c;
        struct warns w;
        struct cuzk_error e, *err = &e;
        cuzk_error_clear(err);
        int rc = parse(&c, cases[i].text, &w, err);
        ASSERT_MSG(rc == CUZK_E_FORMAT, "case %zu accepted", i);
        ASSERT_STR_CONTAINS(err->msg, cases[i].msg);
    }
}

TEST(unknown_deprecated_and_ineffective_keys_warn)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    ASSERT_OK(parse(&c, "[daemon]\nlisen = 1\n[gpus.affinity]\nx = 1\n[synthesis]\npartition_workers = 4\n"
                        "[scheduler]\nmax_batch_size = 4\n[pipeline]\nslot_size = 3\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 5);
    ASSERT_STR_CONTAINS(w.all, "cuzk.toml:2: unknown key 'daemon.lisen'");
    ASSERT_STR_CONTAINS(w.all, "cuzk.toml:3: unknown section [gpus.affinity]");
    ASSERT_STR_CONTAINS(w.all, "cuzk.toml:6: [synthesis] partition_workers: is deprecated");
    ASSERT_STR_CONTAINS(w.all, "[scheduler] max_batch_size: cross-sector batching is not implemented");
    ASSERT_STR_CONTAINS(w.all, "[pipeline] slot_size: has no effect");
    /* values equal to the defaults of ineffective keys stay quiet */
    ASSERT_OK(parse(&c, "[scheduler]\nmax_batch_size = 1\n[pipeline]\nslot_size = 0\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
}

TEST(world_writable_socket_mode_warns)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    ASSERT_OK(parse(&c, "[daemon]\nsocket_mode = \"0777\"\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 1);
    ASSERT_STR_CONTAINS(w.last, "cuzk.toml:2: [daemon] socket_mode: mode 0777 lets any local user connect");
    ASSERT_EQ_INT(c.socket_mode, 0777);
    ASSERT_OK(parse(&c, "[daemon]\nsocket_mode = 0662\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 1);
    /* owner and group only: quiet */
    ASSERT_OK(parse(&c, "[daemon]\nsocket_mode = \"0660\"\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
    ASSERT_OK(parse(&c, "[daemon]\nsocket_mode = \"0664\"\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
}

static void warn_collect(void *ctx, const char *msg) { collect(ctx, msg); }

TEST(remote_token_without_tls_warns)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    char dir[] = "/tmp/cuzk-cfg-XXXXXX", tok[64], text[400];
    ASSERT(mkdtemp(dir));
    snprintf(tok, sizeof tok, "%s/token", dir);
    FILE *f = fopen(tok, "w");
    ASSERT(f);
    fputs("0123456789abcdef0123456789abcdef\n", f);
    fclose(f);
    chmod(tok, 0600);
    snprintf(text, sizeof text, "[daemon]\nlisten = \"0.0.0.0:50071\"\nauth_token_file = \"%s\"\n", tok);
    ASSERT_OK(parse(&c, text, &w, err), err);
    memset(&w, 0, sizeof w);
    int rc = cfg_check(&c, warn_collect, &w, err);
    unlink(tok);
    rmdir(dir);
    ASSERT_OK(rc, err);
    ASSERT_EQ_INT(w.n, 1);
    ASSERT_STR_CONTAINS(w.last, "the token crosses the network in plaintext");
    /* on loopback the token stays on the host: quiet */
    snprintf(text, sizeof text, "[daemon]\nlisten = \"127.0.0.1:50071\"\n");
    ASSERT_OK(parse(&c, text, &w, err), err);
    memset(&w, 0, sizeof w);
    ASSERT_OK(cfg_check(&c, warn_collect, &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
}

TEST(srs_validation_key)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    cfg_defaults(&c);
    ASSERT(!strcmp(c.srs_validation, "full"));   /* the safe default */
    ASSERT_STR_CONTAINS(cfg_default_toml, "validation = \"full\"\n");
    static const char *modes[] = {"full", "curve", "none"};
    for (int i = 0; i < 3; i++) {
        char t[128];
        snprintf(t, sizeof t, "[srs]\nvalidation = \"%s\"\n", modes[i]);
        ASSERT_OK(parse(&c, t, &w, err), err);
        ASSERT(!strcmp(c.srs_validation, modes[i]));
        ASSERT_EQ_INT(w.n, 0);
    }
    ASSERT_CODE(parse(&c, "[srs]\n\nvalidation = \"fast\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "cuzk.toml:3: [srs] validation = \"fast\": expected \"full\", \"curve\" or \"none\"");
    ASSERT_CODE(parse(&c, "[srs]\nvalidation = true\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[srs] validation = true");
    ASSERT_CODE(parse(&c, "[srs]\nvalidation = \"FULL\"\n", &w, err), CUZK_E_FORMAT, err);
}

TEST(gpu_option_keys)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    /* defaults: nothing reserved, key resident when it fits, no trace */
    cfg_defaults(&c);
    ASSERT_EQ_U64(c.gpu_vram_reserve_mib, 0);
    ASSERT(!c.gpu_stream_key && !c.gpu_trace);
    ASSERT_STR_CONTAINS(cfg_default_toml, "vram_reserve_mib = 0 ");
    ASSERT_STR_CONTAINS(cfg_default_toml, "stream_key = false ");
    ASSERT_STR_CONTAINS(cfg_default_toml, "trace = false ");
    ASSERT_OK(parse(&c, "[gpus]\nvram_reserve_mib = 2048\nstream_key = true\ntrace = true\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
    ASSERT_EQ_U64(c.gpu_vram_reserve_mib, 2048);
    ASSERT(c.gpu_stream_key && c.gpu_trace);
    ASSERT_CODE(parse(&c, "[gpus]\nvram_reserve_mib = \"2GiB\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "cuzk.toml:2: [gpus] vram_reserve_mib = \"2GiB\": expected an integer number of MiB");
    ASSERT_CODE(parse(&c, "[gpus]\nvram_reserve_mib = -1\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_CODE(parse(&c, "[gpus]\nstream_key = 1\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[gpus] stream_key = 1: expected true or false");
    ASSERT_CODE(parse(&c, "[gpus]\ntrace = \"yes\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[gpus] trace = \"yes\": expected true or false");
    /* memory_limit: a size of at least 1 GiB, "" for the whole card (the default) */
    ASSERT_STR_CONTAINS(cfg_default_toml, "memory_limit = \"\" ");
    ASSERT_OK(parse(&c, "[gpus]\nmemory_limit = \"24GiB\"\n", &w, err), err);
    ASSERT_EQ_U64(c.gpu_memory_limit, 24ull << 30);
    ASSERT_OK(parse(&c, "[gpus]\nmemory_limit = \"\"\n", &w, err), err);
    ASSERT_EQ_U64(c.gpu_memory_limit, 0);
    ASSERT_CODE(parse(&c, "[gpus]\nmemory_limit = \"512MiB\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[gpus] memory_limit = \"512MiB\": expected at least 1GiB");
    ASSERT_CODE(parse(&c, "[gpus]\nmemory_limit = \"lots\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "expected a size like \"24GiB\"");
    /* nvml_library: the driver's soname by default, a path, or "off"; never empty */
    cfg_defaults(&c);
    ASSERT(!strcmp(c.nvml_library, "libnvidia-ml.so.1"));
    ASSERT_STR_CONTAINS(cfg_default_toml, "nvml_library = \"libnvidia-ml.so.1\"\n");
    ASSERT_OK(parse(&c, "[gpus]\nnvml_library = \"/opt/nvidia/libnvidia-ml.so.1\"\n", &w, err), err);
    ASSERT(!strcmp(c.nvml_library, "/opt/nvidia/libnvidia-ml.so.1"));
    ASSERT_OK(parse(&c, "[gpus]\nnvml_library = \"off\"\n", &w, err), err);
    ASSERT(!strcmp(c.nvml_library, "off"));
    ASSERT_CODE(parse(&c, "[gpus]\nnvml_library = \"\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[gpus] nvml_library = \"\": expected a library path or soname");
    ASSERT_CODE(parse(&c, "[gpus]\nnvml_library = 1\n", &w, err), CUZK_E_FORMAT, err);
}

/* issue 28: the security and admission keys, and durations that would wrap as nanoseconds */
TEST(security_and_admission_keys)
{
    struct cuzk_config c;
    struct warns w;
    struct cuzk_error e, *err = &e;
    cfg_defaults(&c);
    ASSERT_EQ_INT(c.socket_mode, 0660);
    ASSERT_EQ_INT(c.max_queued_jobs, 1000);
    ASSERT_EQ_INT(c.max_waiters, 512);
    ASSERT_EQ_INT(c.max_large_requests, 1);
    ASSERT(!c.allow_insecure_remote && !c.tls_cert[0] && !c.auth_token_file[0]);
    ASSERT_OK(parse(&c, "[daemon]\nsocket_mode = \"0600\"\ntls_cert = \"/etc/cuzk/s.pem\"\n"
                        "tls_key = \"/etc/cuzk/s.key\"\ntls_client_ca = \"/etc/cuzk/ca.pem\"\n"
                        "auth_token_file = \"/etc/cuzk/token\"\nallow_insecure_remote = true\n"
                        "max_queued_jobs = 7\nmax_waiters = 3\nmax_large_requests = 2\n", &w, err), err);
    ASSERT_EQ_INT(w.n, 0);
    ASSERT_EQ_INT(c.socket_mode, 0600);
    ASSERT(!strcmp(c.tls_client_ca, "/etc/cuzk/ca.pem") && c.allow_insecure_remote);
    ASSERT_EQ_INT(c.max_queued_jobs, 7);
    ASSERT_EQ_INT(c.max_waiters, 3);
    ASSERT_EQ_INT(c.max_large_requests, 2);
    ASSERT_CODE(parse(&c, "[daemon]\nsocket_mode = \"0999\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "[daemon] socket_mode = \"0999\": expected an octal permission mode");
    ASSERT_CODE(parse(&c, "[daemon]\nsocket_mode = \"0066\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_CODE(parse(&c, "[daemon]\ntls_cert = \"server.pem\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "expected an absolute file path");
    ASSERT_CODE(parse(&c, "[daemon]\nmax_queued_jobs = 0\n", &w, err), CUZK_E_FORMAT, err);
    /* durations: the largest accepted value still fits in nanoseconds */
    ASSERT_OK(parse(&c, "[daemon]\nresult_retention = \"36500d\"\n", &w, err), err);
    ASSERT_EQ_U64(c.result_retention_ms, CFG_DURATION_MAX_MS);
    ASSERT(c.result_retention_ms <= UINT64_MAX / 1000000);
    ASSERT_CODE(parse(&c, "[daemon]\nresult_retention = 18446744074\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_CODE(parse(&c, "[daemon]\nresult_retention = \"18446744074\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_CODE(parse(&c, "[memory]\neviction_min_idle = \"36501d\"\n", &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "at most \"36500d\"");
    /* a socket path a socket address cannot hold, or inside /proc: refused by the reader */
    char t[400], longp[200];
    memset(longp, 'x', 120);
    longp[120] = 0;
    snprintf(t, sizeof t, "[daemon]\nlisten = \"unix:///run/%s\"\n", longp);
    ASSERT_CODE(parse(&c, t, &w, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "holds at most 107");
    ASSERT_CODE(parse(&c, "[daemon]\nlisten = \"unix:///proc/x.sock\"\n", &w, err), CUZK_E_FORMAT, err);
}
