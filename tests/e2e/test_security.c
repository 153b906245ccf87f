/* test_security.c: issue 28 §2 and §3 end to end, each case against a real cuzk-daemon:
 * TLS (certificates made here with the openssl CLI) and the bearer token refuse every wrong
 * client and let the right one prove; a remote listener without either refuses to start;
 * configurations that cannot work fail --check-config (and so a start) naming key and value;
 * ids with newlines, NULs or invalid UTF-8 are INVALID_ARGUMENT and forge no log line; the
 * socket mode, queue and waiter bounds, large Prove calls, the paged /status, the HTTP
 * listener's CORS header and thread count; printable ids quoted in the log; a PoRep C1 whose
 * ticket, miner or sector number was changed is refused. (Request memory and the status
 * listener under load: test_limits.c.) */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(security_needs_grpc) { test_skip("built with CUZK_CLIENT=0 (no gRPC): no daemon to test"); }
#else
#include <errno.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cuzk/filecoin.h"
#include "cuzk/v1/proving.pb-c.h"
#include "big_request.h"
#include "daemon_harness.h"

/* ------------------------------------------------------------- helpers -- */

static struct cz_client *connect_opts(const char *addr, const struct cz_opts *o)
{
    struct cz_client *c = NULL;
    struct cuzk_error err_s, *err = &err_s;
    cuzk_error_clear(err);
    ASSERT_OK(cz_connect_opts(&c, addr, o, err), err);
    return c;
}

static int prove_synth(struct cz_client *c, uint64_t n, Cuzk__V1__ProveResponse **out, char *det)
{
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = n;
    return cz_prove(c, &q, out, 60000, det, 512);
}

static int submit_synth(struct cz_client *c, const char *rid, uint64_t n, uint32_t parts,
                        char *det)
{
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)rid;
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = n;
    q.synthetic_partitions = parts;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("SubmitProof"), &q.base,
                     &cuzk__v1__submit_proof_response__descriptor, &m, 30000, det, 512);
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return st;
}

/* A message with a raw length-delimited field 1 (bytes exactly as given, NUL included) put in
 * front of the packed rest: protobuf-c packs strings with strlen, so this is how a client with
 * another library sends "same\0A". */
static int call_with_raw_id(struct cz_client *c, const char *method, const ProtobufCMessage *rest,
                            const char *id, size_t id_len, bool nested, char *det)
{
    size_t n = protobuf_c_message_get_packed_size(rest);
    uint8_t *buf = malloc(n + id_len + 16), *p = buf;
    if (nested) {   /* ProveRequest: field 1 = SubmitProofRequest { field 1 = id, rest } */
        *p++ = 0x0a;
        *p++ = (uint8_t)(n + id_len + 2);
    }
    *p++ = 0x0a;
    *p++ = (uint8_t)id_len;
    memcpy(p, id, id_len);
    p += id_len;
    protobuf_c_message_pack(rest, p);
    p += n;
    uint8_t *resp = NULL;
    size_t rl = 0;
    int st = cz_call_raw(c, method, buf, (size_t)(p - buf), &resp, &rl, 30000, det, 512);
    free(resp);
    free(buf);
    return st;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Threads of a process (entries of /proc/PID/task). */
static int thread_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Raw HTTP GET with optional extra header; the whole response (headers too) in *resp. */
static int http_raw(const char *hostport, const char *path, const char *hdr, char **resp)
{
    int port = atoi(strrchr(hostport, ':') + 1);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(0x7f000001);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    *resp = strdup("");
    if (connect(s, (struct sockaddr *)&a, sizeof a)) { close(s); return -1; }
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\nOrigin: http://evil.example\r\n%s%s\r\n",
                     path, hostport, hdr ? hdr : "", hdr ? "\r\n" : "");
    if (write(s, req, (size_t)n) != n) { close(s); return -1; }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(s, buf + len, cap - len - 1);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(s);
    buf[len] = 0;
    int code = 0;
    sscanf(buf, "HTTP/%*s %d", &code);
    free(*resp);
    *resp = buf;
    return code;
}

/* ------------------------------------------------ TLS and authentication -- */

/* A CA, a server certificate for 127.0.0.1 / localhost, a client certificate from that CA,
 * and a rogue CA with a client certificate of its own, in dir. */
static void make_certs(const char *dir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
        "set -e; cd '%s'; "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > srv.ext; "
        "printf 'extendedKeyUsage=clientAuth\\n' > cli.ext; "
        "for ca in ca rogue; do openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "  -nodes -keyout $ca.key -out $ca.pem -days 2 -subj /CN=cuzk-test-$ca 2>/dev/null; done; "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key "
        "  -out server.csr -subj /CN=localhost 2>/dev/null; "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "  -extfile srv.ext -out server.pem 2>/dev/null; "
        "for who in client:ca rogue-client:rogue; do n=${who%%:*}; ca=${who#*:}; "
        "  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $n.key "
        "    -out $n.csr -subj /CN=$n 2>/dev/null; "
        "  openssl x509 -req -in $n.csr -CA $ca.pem -CAkey $ca.key -CAcreateserial -days 2 "
        "    -extfile cli.ext -out $n.pem 2>/dev/null; done; "
        "openssl rand -hex 32 > token; chmod 600 token; echo wrong-token-0123456789 > wrong",
        dir);
    ASSERT_MSG(run(cmd) == 0, "openssl could not make the test certificates in %s", dir);
}

TEST_T(tls_and_token_refuse_wrong_clients_and_prove_for_the_right_one, 240)
{
    struct daemon d;
    h_new(&d);
    make_certs(d.dir);
    int port = h_free_port(), hp = h_free_port();
    char cfg[2048], addr[64], http[64];
    snprintf(cfg, sizeof cfg,
             "[daemon]\nlisten = \"127.0.0.1:%d\"\nstatus_listen = \"127.0.0.1:%d\"\n"
             "state_dir = \"off\"\ntls_cert = \"%%DIR%%/server.pem\"\ntls_key = \"%%DIR%%/server.key\"\n"
             "tls_client_ca = \"%%DIR%%/ca.pem\"\nauth_token_file = \"%%DIR%%/token\"\n"
             "[memory]\ntotal_budget = \"1GiB\"\n[srs]\nparam_cache = \"%%DIR%%\"\n", port, hp);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    snprintf(http, sizeof http, "127.0.0.1:%d", hp);
    h_start_at_or_fail(&d, cfg, addr, 30);
    char f_ca[400], f_cert[400], f_key[400], f_rcert[400], f_rkey[400], f_rogue[400],
        f_tok[400], f_wrong[400];
    snprintf(f_ca, sizeof f_ca, "%s/ca.pem", d.dir);
    snprintf(f_cert, sizeof f_cert, "%s/client.pem", d.dir);
    snprintf(f_key, sizeof f_key, "%s/client.key", d.dir);
    snprintf(f_rcert, sizeof f_rcert, "%s/rogue-client.pem", d.dir);
    snprintf(f_rkey, sizeof f_rkey, "%s/rogue-client.key", d.dir);
    snprintf(f_rogue, sizeof f_rogue, "%s/rogue.pem", d.dir);
    snprintf(f_tok, sizeof f_tok, "%s/token", d.dir);
    snprintf(f_wrong, sizeof f_wrong, "%s/wrong", d.dir);
    static const struct { const char *what; int ca, cert, tok; bool unauth; } cases[] = {
        /* ca: 0 none (plaintext), 1 right CA, 2 rogue CA; cert: 0 none, 1 ours, 2 rogue;
         * tok: 0 none, 1 right, 2 wrong */
        {"plaintext client", 0, 0, 1, false},
        {"TLS without the daemon's CA (server not trusted)", 2, 1, 1, false},
        {"TLS without a client certificate", 1, 0, 1, false},
        {"TLS with a client certificate from another CA", 1, 2, 1, false},
        {"mutual TLS without a token", 1, 1, 0, true},
        {"mutual TLS with a wrong token", 1, 1, 2, true},
    };
    char det[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cz_opts o = {cases[i].ca == 1 ? f_ca : cases[i].ca == 2 ? f_rogue : NULL,
                            cases[i].cert == 1 ? f_cert : cases[i].cert == 2 ? f_rcert : NULL,
                            cases[i].cert == 1 ? f_key : cases[i].cert == 2 ? f_rkey : NULL,
                            NULL, NULL,
                            cases[i].tok == 1 ? f_tok : cases[i].tok == 2 ? f_wrong : NULL};
        struct cz_client *c = connect_opts(addr, &o);
        Cuzk__V1__ProveResponse *r = NULL;
        int st = prove_synth(c, 256, &r, det);
        ASSERT_MSG(st != 0 && !r, "%s: the daemon answered (status %d)", cases[i].what, st);
        if (cases[i].unauth) {
            ASSERT_MSG(st == 16, "%s: expected UNAUTHENTICATED, got %s (%s)", cases[i].what,
                       cz_status_name(st), det);
            ASSERT_MSG(!strcmp(det, "authentication required"), "%s: details '%s' say more "
                       "than needed", cases[i].what, det);
        }
        cz_close(c);
    }
    /* the right client proves */
    struct cz_opts good = {f_ca, f_cert, f_key, NULL, NULL, f_tok};
    struct cz_client *c = connect_opts(addr, &good);
    Cuzk__V1__ProveResponse *r = NULL;
    int st = prove_synth(c, 256, &r, det);
    ASSERT_MSG(st == 0, "right client: %s %s", cz_status_name(st), det);
    ASSERT_MSG(r->result->status == 1, "status %d: %s", r->result->status, r->result->error_message);
    ASSERT_EQ_U64(r->result->proof.len, 192);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    cz_close(c);
    /* cuzk-bench reaches it with the same files */
    char args[2400], *out = NULL;
    snprintf(args, sizeof args, "--tls-ca '%s' --tls-cert '%s' --tls-key '%s' --token-file '%s' "
             "single -t synthetic --constraints 256", f_ca, f_cert, f_key, f_tok);
    ASSERT_EQ_INT(h_bench(&out, addr, args), 0);
    ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
    free(out);
    ASSERT(h_bench(&out, addr, "single -t synthetic --constraints 256") != 0);
    free(out);
    /* the HTTP listener asks for the same token */
    char *resp = NULL, hdr[700];
    ASSERT_EQ_INT(http_raw(http, "/metrics", NULL, &resp), 401);
    free(resp);
    char *tok = h_slurp(f_tok);
    tok[strcspn(tok, "\n")] = 0;
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tok);
    ASSERT_EQ_INT(http_raw(http, "/metrics", hdr, &resp), 200);
    ASSERT_STR_CONTAINS(resp, "cuzk_proofs_completed_total 2");
    free(resp);
    free(tok);
    char *log = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log, "(tls=mutual, token=required)");
    ASSERT_STR_CONTAINS(log, "refused a call without a valid token");
    free(log);
    h_stop_and_clean(&d, 30);
}

TEST_T(token_on_unix_socket, 60)
{
    struct daemon d;
    h_new(&d);
    char path[400], addr[420];
    snprintf(path, sizeof path, "%s/token", d.dir);
    FILE *f = fopen(path, "w");
    fputs("0123456789abcdef0123456789abcdef\n", f);
    fclose(f);
    chmod(path, 0600);
    snprintf(addr, sizeof addr, "unix://%s/cuzk.sock", d.dir);
    h_start_at_or_fail(&d, "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n"
                           "auth_token_file = \"%DIR%/token\"\n[srs]\nparam_cache = \"%DIR%\"\n", addr, 30);
    char det[512];
    struct cz_client *c = connect_opts(addr, NULL);
    Cuzk__V1__ProveResponse *r = NULL;
    ASSERT_EQ_INT(prove_synth(c, 256, &r, det), 16);
    cz_close(c);
    struct cz_opts o = {NULL, NULL, NULL, NULL, "0123456789abcdef0123456789abcdef", NULL};
    c = connect_opts(addr, &o);
    ASSERT_EQ_INT(prove_synth(c, 256, &r, det), 0);
    ASSERT_EQ_INT(r->result->status, 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}

TEST_T(remote_listener_needs_tls_or_token, 60)
{
    struct daemon d;
    h_new(&d);
    char cfg[512], *out = NULL;
    int port = h_free_port();
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"0.0.0.0:%d\"\nstate_dir = \"off\"\n", port);
    ASSERT_EQ_INT(h_check_config(&d, cfg, &out), 1);
    ASSERT_STR_CONTAINS(out, "neither tls_cert nor auth_token_file is set");
    ASSERT_STR_CONTAINS(out, "allow_insecure_remote");
    free(out);
    /* and a real start refuses too, binding nothing */
    ASSERT(!h_start(&d, cfg, 20));
    out = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(out, "neither tls_cert nor auth_token_file is set");
    free(out);
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"0.0.0.0:%d\"\nstate_dir = \"off\"\n"
             "allow_insecure_remote = true\n", port);
    ASSERT_EQ_INT(h_check_config(&d, cfg, &out), 0);
    ASSERT_STR_CONTAINS(out, "serves other hosts without TLS or a token");
    free(out);
    /* the status listener on all interfaces without a token: refused too */
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/c.sock\"\nstatus_listen = "
             "\"0.0.0.0:%d\"\n", port);
    ASSERT_EQ_INT(h_check_config(&d, cfg, &out), 1);
    ASSERT_STR_CONTAINS(out, "status_listen");
    free(out);
    /* loopback stays as it was: no TLS, no token */
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"127.0.0.1:%d\"\n", port);
    ASSERT_EQ_INT(h_check_config(&d, cfg, &out), 0);
    free(out);
    h_cleanup(&d);
}

/* -------------------------------- configuration that cannot work (§3) -- */

static void expect_config_error(const char *cfg, const char *msg)
{
    struct daemon d;
    h_new(&d);
    char *out = NULL;
    int rc = h_check_config(&d, cfg, &out);
    ASSERT_MSG(rc == 1, "--check-config accepted it (exit %d): %s", rc, out);
    ASSERT_STR_CONTAINS(out, msg);
    free(out);
    h_cleanup(&d);
}

TEST_T(config_socket_path_longer_than_a_socket_address, 30)
{
    char cfg[600];
    char longp[200];
    memset(longp, 'a', 140);
    longp[140] = 0;
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix:///tmp/%s.sock\"\n", longp);
    expect_config_error(cfg, "a unix socket address holds at most 107");
}

TEST_T(config_tcp_host_that_does_not_resolve, 60)
{
    expect_config_error("[daemon]\nlisten = \"no-such-host.invalid:9820\"\n",
                        "[daemon] listen = \"no-such-host.invalid:9820\": host 'no-such-host.invalid' does not resolve");
}

TEST_T(config_listen_path_in_proc, 30)
{
    expect_config_error("[daemon]\nlisten = \"unix:///proc/self/cuzk.sock\"\n", "inside /proc or /sys");
}

TEST_T(config_gpu_devices_without_cuda, 30)
{
    expect_config_error("[daemon]\nlisten = \"unix://%DIR%/c.sock\"\n[gpus]\ndevices = [0]\n",
                        "[gpus] devices = [0]: GPU 0 cannot be used: gpu: this build has no CUDA support");
}

TEST_T(config_safety_margin_larger_than_memory_warns_the_budget, 30)
{
    struct daemon d;
    h_new(&d);
    char *out = NULL;
    ASSERT_EQ_INT(h_check_config(&d, "[daemon]\nlisten = \"unix://%DIR%/c.sock\"\n[memory]\n"
                                   "safety_margin = \"100TiB\"\n", &out), 0);
    ASSERT_STR_CONTAINS(out, "[memory] safety_margin = 102400.0 GiB leaves nothing of MemTotal");
    ASSERT_STR_CONTAINS(out, "the memory budget is the 256 MiB minimum");
    free(out);
    h_cleanup(&d);
}

TEST_T(config_durations_that_would_wrap, 30)
{
    expect_config_error("[daemon]\nlisten = \"unix://%DIR%/c.sock\"\nresult_retention = 18446744074\n",
                        "[daemon] result_retention = 18446744074: expected a duration");
    expect_config_error("[daemon]\nlisten = \"unix://%DIR%/c.sock\"\n[memory]\neviction_min_idle = 18446744074\n",
                        "at most \"36500d\"");
}

/* ------------------------------------------------------- the socket mode -- */

TEST_T(socket_mode_is_set_whatever_the_umask, 60)
{
    struct daemon d;
    h_new(&d);
    char addr[400], sock[400];
    snprintf(addr, sizeof addr, "unix://%s/cuzk.sock", d.dir);
    snprintf(sock, sizeof sock, "%s/cuzk.sock", d.dir);
    mode_t old = umask(0);   /* the daemon inherits it: its socket would be 0777 */
    static const struct { const char *cfg; unsigned mode; } cases[] = {
        {"[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n", 0660},
        {"[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\nsocket_mode = \"0600\"\n", 0600},
    };
    for (int i = 0; i < 2; i++) {
        if (!h_start(&d, cases[i].cfg, 30)) {
            umask(old);
            test_fail_at(__FILE__, __LINE__, "not ready: %s", h_slurp(d.err_path));
        }
        struct stat st;
        ASSERT(stat(sock, &st) == 0);
        unsigned mode = st.st_mode & 0777;
        if (mode != cases[i].mode) umask(old);
        ASSERT_MSG(mode == cases[i].mode, "socket mode %04o, expected %04o", mode, cases[i].mode);
        h_stop_or_fail(&d, 30);
    }
    umask(old);
    (void)addr;
    h_cleanup(&d);
}

/* ------------------------------------------------------- ids and the log -- */

static const char *plain_cfg =
    "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n"
    "[memory]\ntotal_budget = \"1GiB\"\n[srs]\nparam_cache = \"%DIR%\"\n";

/* No line of the log may start with forged text. */
static void assert_no_line_starts_with(const char *log, const char *forged)
{
    for (const char *p = log; p; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        ASSERT_MSG(strncmp(p, forged, strlen(forged)), "forged log line: %.120s", p);
    }
}

TEST_T(log_forging_ids_with_newlines, 60)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, plain_cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[4][512];
    const char *fake_err = "2026-01-01T00:00:00.000Z error FORGED-ERROR";
    const char *fake_tl = "TIMELINE,1,GPU_END,FORGED-JOB,gpu_ms=1";
    char rid[200], cid[200];
    snprintf(rid, sizeof rid, "x\n%s", fake_err);
    snprintf(cid, sizeof cid, "synthetic-16\n%s", fake_tl);
    int st[4];
    st[0] = submit_synth(c, rid, 256, 1, det[0]);
    Cuzk__V1__PreloadSrsRequest pq = CUZK__V1__PRELOAD_SRS_REQUEST__INIT;
    pq.circuit_id = cid;
    ProtobufCMessage *m = NULL;
    st[1] = cz_call(c, CZ_METHOD("PreloadSRS"), &pq.base,
                    &cuzk__v1__preload_srs_response__descriptor, &m, 30000, det[1], 512);
    Cuzk__V1__EvictSrsRequest eq = CUZK__V1__EVICT_SRS_REQUEST__INIT;
    eq.circuit_id = cid;
    st[2] = cz_call(c, CZ_METHOD("EvictSRS"), &eq.base,
                    &cuzk__v1__evict_srs_response__descriptor, &m, 30000, det[2], 512);
    Cuzk__V1__AwaitProofRequest aq = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    aq.job_id = rid;
    st[3] = cz_call(c, CZ_METHOD("AwaitProof"), &aq.base,
                    &cuzk__v1__await_proof_response__descriptor, &m, 30000, det[3], 512);
    cz_close(c);
    usleep(200000);
    /* first what the issue is about: no forged line, whatever the answers were */
    char *log = h_slurp(d.err_path);
    assert_no_line_starts_with(log, fake_err);
    assert_no_line_starts_with(log, fake_tl);
    free(log);
    /* then every one of them is a malformed request */
    for (int i = 0; i < 4; i++)
        ASSERT_MSG(st[i] == 3, "call %d: %s (%s)", i, cz_status_name(st[i]), det[i]);
    ASSERT_STR_CONTAINS(det[0], "request_id has a control character");
    ASSERT_STR_CONTAINS(det[1], "circuit_id has a control character");
    h_stop_and_clean(&d, 30);
}

/* Printable ids are quoted in text log lines (issue 49): request_id "a kind=porep
 * status=FAILED" must not read as fields of a line, and "x,y,z" must not add TIMELINE columns
 * (the escaping itself: tests/util/test_log.c). */
TEST_T(log_quotes_printable_ids, 60)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, plain_cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512];
    const char *ids[2] = {"a kind=porep status=FAILED", "x,y,z"};
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ_INT(submit_synth(c, ids[i], 256, 1, det), 0);
        Cuzk__V1__AwaitProofRequest aq = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
        aq.job_id = (char *)ids[i];
        ProtobufCMessage *m = NULL;
        ASSERT_EQ_INT(cz_call(c, CZ_METHOD("AwaitProof"), &aq.base,
                              &cuzk__v1__await_proof_response__descriptor, &m, 30000, det, sizeof det), 0);
        ASSERT_EQ_INT(((Cuzk__V1__AwaitProofResponse *)m)->status, 1);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    cz_close(c);
    usleep(200000);
    char *log = h_slurp(d.err_path);
    ASSERT(log);
    ASSERT_STR_CONTAINS(log, "proof completed: job=\"a kind=porep status=FAILED\" kind=synthetic");
    ASSERT_MSG(!strstr(log, "job=a kind=porep"), "an id was logged unquoted");
    /* every TIMELINE line has the job in column 4 and its detail after: x,y,z's in one column */
    int lines = 0;
    for (char *p = log; (p = strstr(p, "TIMELINE,")); p++) {
        if (p != log && p[-1] != '\n') continue;
        char line[512];
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        char *f[4], *save = NULL, *tok = strtok_r(line, ",", &save);
        int k = 0;
        for (; tok && k < 4; tok = strtok_r(NULL, ",", &save)) f[k++] = tok;
        ASSERT_EQ_INT(k, 4);
        if (!strncmp(f[3], "\"x", 2)) {
            ASSERT_MSG(!strcmp(f[3], "\"x\\x2cy\\x2cz\""), "job column %s", f[3]);
            lines++;
        }
    }
    ASSERT_MSG(lines >= 3, "%d TIMELINE lines of job x,y,z", lines);
    free(log);
    h_stop_and_clean(&d, 30);
}

TEST_T(request_id_not_utf8_or_too_long, 60)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, plain_cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512];
    ASSERT_EQ_INT(submit_synth(c, "bad-\xff\xfe-utf8", 256, 1, det), 3);
    ASSERT_STR_CONTAINS(det, "invalid UTF-8 at byte offset 4");
    ASSERT_EQ_INT(submit_synth(c, "overlong-\xc0\xaf", 256, 1, det), 3);
    ASSERT_EQ_INT(submit_synth(c, "c1-control-\xc2\x9b", 256, 1, det), 3);
    char big[200];
    memset(big, 'a', 150);
    big[150] = 0;
    ASSERT_EQ_INT(submit_synth(c, big, 256, 1, det), 3);
    /* printable UTF-8 is fine */
    ASSERT_EQ_INT(submit_synth(c, "job-\xc3\xa9t\xc3\xa9-\xe2\x82\xac", 256, 1, det), 0);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}

TEST_T(nul_bytes_in_ids_are_refused, 60)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, plain_cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512];
    uint8_t seed[8] = {1};
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = 256;
    q.vanilla_proof.data = seed;
    q.vanilla_proof.len = 8;
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("SubmitProof"), &q.base, "same\0A", 6, false, det), 3);
    ASSERT_STR_CONTAINS(det, "request_id contains a NUL byte at offset 4");
    seed[0] = 2;
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("SubmitProof"), &q.base, "same\0B", 6, false, det), 3);
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("Prove"), &q.base, "same\0C", 6, true, det), 3);
    ASSERT_STR_CONTAINS(det, "NUL byte");
    /* no job "same" was made by any of them */
    Cuzk__V1__AwaitProofRequest aq = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    aq.job_id = (char *)"same";
    ProtobufCMessage *m = NULL;
    ASSERT_EQ_INT(cz_call(c, CZ_METHOD("AwaitProof"), &aq.base,
                          &cuzk__v1__await_proof_response__descriptor, &m, 30000, det, sizeof det), 5);
    Cuzk__V1__AwaitProofRequest empty_a = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("AwaitProof"), &empty_a.base, "same\0A", 6, false, det), 3);
    Cuzk__V1__CancelProofRequest empty_c = CUZK__V1__CANCEL_PROOF_REQUEST__INIT;
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("CancelProof"), &empty_c.base, "same\0A", 6, false, det), 3);
    Cuzk__V1__PreloadSrsRequest empty_p = CUZK__V1__PRELOAD_SRS_REQUEST__INIT;
    static const char bad_cid[] = "synthetic-16\0../../etc";
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("PreloadSRS"), &empty_p.base, bad_cid,
                                   sizeof bad_cid - 1, false, det), 3);
    ASSERT_STR_CONTAINS(det, "circuit_id contains a NUL byte at offset 12");
    Cuzk__V1__EvictSrsRequest empty_e = CUZK__V1__EVICT_SRS_REQUEST__INIT;
    ASSERT_EQ_INT(call_with_raw_id(c, CZ_METHOD("EvictSRS"), &empty_e.base, bad_cid,
                                   sizeof bad_cid - 1, false, det), 3);
    /* nothing was loaded */
    Cuzk__V1__GetStatusRequest sq = CUZK__V1__GET_STATUS_REQUEST__INIT;
    ASSERT_EQ_INT(cz_call(c, CZ_METHOD("GetStatus"), &sq.base,
                          &cuzk__v1__get_status_response__descriptor, &m, 30000, det, sizeof det), 0);
    Cuzk__V1__GetStatusResponse *gs = (Cuzk__V1__GetStatusResponse *)m;
    ASSERT_EQ_U64(gs->n_loaded_srs, 0);
    ASSERT_EQ_U64(gs->total_proofs_completed + gs->total_proofs_failed, 0);
    protobuf_c_message_free_unpacked(m, NULL);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}

/* ------------------------------------------------------------ admission -- */

TEST_T(queue_bound_refuses_with_the_limit_named, 120)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n"
                        "max_queued_jobs = 3\n[memory]\ntotal_budget = \"1GiB\"\n"
                        "[srs]\nparam_cache = \"%DIR%\"\n", 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512], id[32];
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof id, "long-%d", i);
        ASSERT_EQ_INT(submit_synth(c, id, 4096, 64, det), 0);
    }
    ASSERT_EQ_INT(submit_synth(c, "one-too-many", 256, 1, det), 8);
    ASSERT_STR_CONTAINS(det, "[daemon] max_queued_jobs = 3");
    /* an accepted id is still answered (idempotent resubmit) */
    ASSERT_EQ_INT(submit_synth(c, "long-1", 4096, 64, det), 0);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}

struct waiter { const char *addr; int st; };
static void *await_long(void *arg)
{
    struct waiter *w = arg;
    struct cz_client *c = NULL;
    if (cz_connect(&c, w->addr, NULL)) return NULL;
    Cuzk__V1__AwaitProofRequest q = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    q.job_id = (char *)"long";
    ProtobufCMessage *m = NULL;
    char det[512];
    w->st = cz_call(c, CZ_METHOD("AwaitProof"), &q.base, &cuzk__v1__await_proof_response__descriptor,
                    &m, 120000, det, sizeof det);
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    cz_close(c);
    return NULL;
}

TEST_T(waiters_are_capped, 120)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n"
                        "max_waiters = 2\n[memory]\ntotal_budget = \"1GiB\"\n"
                        "[srs]\nparam_cache = \"%DIR%\"\n", 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512];
    ASSERT_EQ_INT(submit_synth(c, "long", 4096, 64, det), 0);
    struct waiter w[2] = {{d.addr, -1}, {d.addr, -1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, await_long, &w[i]);
    usleep(1500000);   /* both waiting (the 64-partition job runs for tens of seconds) */
    Cuzk__V1__AwaitProofRequest q = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    q.job_id = (char *)"long";
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("AwaitProof"), &q.base, &cuzk__v1__await_proof_response__descriptor,
                     &m, 60000, det, sizeof det);
    Cuzk__V1__CancelProofRequest cq = CUZK__V1__CANCEL_PROOF_REQUEST__INIT;
    cq.job_id = (char *)"long";
    ProtobufCMessage *cm = NULL;
    ASSERT_EQ_INT(cz_call(c, CZ_METHOD("CancelProof"), &cq.base,
                          &cuzk__v1__cancel_proof_response__descriptor, &cm, 30000, det + 256, 256), 0);
    protobuf_c_message_free_unpacked(cm, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    ASSERT_MSG(st == 8, "third waiter: %s (%s)", cz_status_name(st), det);
    ASSERT_STR_CONTAINS(det, "[daemon] max_waiters = 2");
    for (int i = 0; i < 2; i++) ASSERT_EQ_INT(w[i].st, 0);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}

/* A large Prove (over 1 MiB on the wire) holds its large-request slot only while it is decoded
 * and submitted, not while it waits for its proof: two concurrent large Prove calls are both
 * in the engine before the first proof is done (one at a time, the GPU idled between 32 GiB
 * PoRep jobs). The requests are SYNTHETIC jobs made large by an unused 2 MiB vanilla_proofs
 * entry. */
TEST_T(large_prove_calls_wait_for_their_proofs_concurrently, 240)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nstate_dir = \"off\"\n"
                        "max_large_requests = 1\n[memory]\ntotal_budget = \"2GiB\"\n", 30);
    static uint8_t pad[2u << 20];
    ProtobufCBinaryData vp = {sizeof pad, pad};
    struct big_ctx b[2];
    uint8_t *msg[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        char rid[32];
        snprintf(rid, sizeof rid, "big-prove-%d", i);
        Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
        q.request_id = rid;
        q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
        q.synthetic_constraints = 1u << 14;
        q.synthetic_partitions = 6;
        q.n_vanilla_proofs = 1;
        q.vanilla_proofs = &vp;
        Cuzk__V1__ProveRequest pr = CUZK__V1__PROVE_REQUEST__INIT;
        pr.submit = &q;
        size_t ml = protobuf_c_message_get_packed_size(&pr.base);
        msg[i] = malloc(ml);
        protobuf_c_message_pack(&pr.base, msg[i]);
        b[i] = (struct big_ctx){d.addr, msg[i], ml, -1, CZ_METHOD("Prove")};
    }
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, send_big, &b[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) free(msg[i]);
    for (int i = 0; i < 2; i++) ASSERT_MSG(b[i].st == 0, "Prove %d: status %d", i, b[i].st);
    /* both were submitted ("Prove: job=") before the first proof completed */
    char *log = h_slurp(d.err_path);
    ASSERT(log);
    const char *first_done = strstr(log, "proof completed:");
    ASSERT(first_done);
    const char *sub = log;
    int before = 0;
    while ((sub = strstr(sub, "Prove: job=")) && sub < first_done) before++, sub++;
    ASSERT_MSG(before == 2, "%d of 2 Prove calls were in the engine before the first proof completed", before);
    free(log);
    h_stop_and_clean(&d, 30);
}

/* -------------------------------------------------------- HTTP listener -- */

TEST_T(status_is_paged, 180)
{
    struct daemon d;
    int hp = h_free_port();
    char cfg[600], http[64];
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nstate_dir = \"off\"\n"
             "status_listen = \"127.0.0.1:%d\"\n[memory]\ntotal_budget = \"1GiB\"\n"
             "[srs]\nparam_cache = \"%%DIR%%\"\n", hp);
    snprintf(http, sizeof http, "127.0.0.1:%d", hp);
    h_new(&d);
    h_start_or_fail(&d, cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512], id[32];
    for (int i = 0; i < 150; i++) {
        snprintf(id, sizeof id, "queued-%d", i);
        ASSERT_EQ_INT(submit_synth(c, id, 2048, 64, det), 0);
    }
    cz_close(c);
    char *resp = NULL;
    ASSERT_EQ_INT(http_raw(http, "/status", NULL, &resp), 200);
    ASSERT_STR_CONTAINS(resp, "\"pipelines_total\": 150");
    ASSERT_STR_CONTAINS(resp, "\"job_id\": \"queued-99\"");
    ASSERT_MSG(!strstr(resp, "\"job_id\": \"queued-100\""), "more than 100 jobs listed by default");
    ASSERT_MSG(!strstr(resp, "Access-Control-Allow-Origin"), "CORS header sent");
    free(resp);
    ASSERT_EQ_INT(http_raw(http, "/status?jobs=5&offset=140", NULL, &resp), 200);
    ASSERT_STR_CONTAINS(resp, "\"job_id\": \"queued-144\"");
    ASSERT_MSG(!strstr(resp, "\"job_id\": \"queued-145\""), "jobs=5 listed more");
    ASSERT_MSG(!strstr(resp, "\"job_id\": \"queued-139\""), "offset ignored");
    free(resp);
    ASSERT_EQ_INT(http_raw(http, "/status?jobs=lots", NULL, &resp), 400);
    free(resp);
    h_stop_and_clean(&d, 30);
}

TEST_T(http_idle_connections_make_no_threads, 120)
{
    struct daemon d;
    int hp = h_free_port();
    char cfg[600], http[64];
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nstate_dir = \"off\"\n"
             "status_listen = \"127.0.0.1:%d\"\n", hp);
    snprintf(http, sizeof http, "127.0.0.1:%d", hp);
    h_new(&d);
    h_start_or_fail(&d, cfg, 30);
    char *resp = NULL;
    ASSERT_EQ_INT(http_raw(http, "/metrics", NULL, &resp), 200);
    ASSERT_MSG(!strstr(resp, "Access-Control-Allow-Origin"), "CORS header sent:\n%.400s", resp);
    free(resp);
    int before = thread_count(d.pid);
    enum { N = 300 };
    int fds[N];
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)hp);
    a.sin_addr.s_addr = htonl(0x7f000001);
    for (int i = 0; i < N; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fds[i], (struct sockaddr *)&a, sizeof a)) { close(fds[i]); fds[i] = -1; }
    }
    usleep(500000);
    int during = thread_count(d.pid);
    for (int i = 0; i < N; i++) if (fds[i] >= 0) close(fds[i]);
    printf("daemon threads: %d before, %d with %d idle HTTP connections\n", before, during, N);
    ASSERT_MSG(during <= before + 4, "%d idle connections made %d threads", N, during - before);
    /* and it still answers */
    usleep(200000);
    ASSERT_EQ_INT(http_raw(http, "/status", NULL, &resp), 200);
    free(resp);
    h_stop_and_clean(&d, 30);
}

/* ------------------------------------------------------ PoRep C1 check -- */

/* A C1 of sector 42: accepted as sector 42; with its ticket changed or sent for miner 1001 it
 * is refused by the replica_id check; sent as sector 43 or 0 it is refused naming both numbers
 * (issue 49: sector 43 was COMPLETED). */
TEST_T(porep_c1_with_changed_ticket_is_refused, 120)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg2KiBV1_1");
    struct fil_c1 c1;
    ASSERT_OK(fil_c1_generate(&c1, p, 1000, 42, test_seed(), err), err);
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, plain_cfg, 30);
    struct cz_client *c = connect_opts(d.addr, NULL);
    char det[512];
    for (int variant = 0; variant < 5; variant++) {
        struct fil_c1 x = c1;   /* shallow: only 32-byte arrays are changed */
        uint64_t miner = 1000;
        if (variant == 1) x.ticket[5] ^= 0x10;
        if (variant == 2) miner = 1001;
        uint64_t sector = variant == 3 ? 43 : variant == 4 ? 0 : 42;
        char *json;
        size_t n;
        ASSERT_OK(fil_c1_write_wrapper(&json, &n, &x, err), err);
        Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
        char rid[32];
        snprintf(rid, sizeof rid, "porep-variant-%d", variant);
        q.request_id = rid;
        q.proof_kind = CUZK__V1__PROOF_KIND__POREP_SEAL_COMMIT;
        q.sector_size = 2048;
        q.sector_number = sector;
        q.miner_id = miner;
        q.vanilla_proof.data = (uint8_t *)json;
        q.vanilla_proof.len = n;
        ProtobufCMessage *m = NULL;
        int st = cz_call(c, CZ_METHOD("SubmitProof"), &q.base,
                         &cuzk__v1__submit_proof_response__descriptor, &m, 60000, det, sizeof det);
        if (m) protobuf_c_message_free_unpacked(m, NULL);
        cuzk_free(json);
        if (variant == 0) {
            ASSERT_MSG(st == 0, "the consistent C1 was refused: %s", det);
            continue;
        }
        ASSERT_MSG(st == 3, "variant %d accepted (status %d)", variant, st);
        if (variant >= 3) {   /* the request names another sector than the C1's (issue 49) */
            char want[96];
            snprintf(want, sizeof want, "sector_number is %llu but the C1 output (vanilla_proof) is "
                     "for SectorNum 42", (unsigned long long)sector);
            ASSERT_STR_CONTAINS(det, want);
            continue;
        }
        ASSERT_STR_CONTAINS(det, "Phase1Out.replica_id is ");
        char hex[65];
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", c1.replica_id[i]);
        ASSERT_STR_CONTAINS(det, hex);
        ASSERT_STR_CONTAINS(det, variant == 2 ? "miner_id 1001" : "miner_id 1000");
    }
    fil_c1_free(&c1);
    cz_close(c);
    h_stop_and_clean(&d, 30);
}
#endif
