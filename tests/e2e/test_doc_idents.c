/* test_doc_idents.c: scripts/check-doc-idents.sh (what CI runs on README.md and the docs)
 * against Markdown files this test writes into a temporary directory, searched against this
 * checkout's code: stale names of each kind it checks (identifier, metric with labels, struct
 * field, path, bare file name) make it fail and are each listed with file:line; current names
 * and the spans it must skip (config keys, flags, commands, fenced blocks) pass; an allow-list
 * entry scoped to docs/decisions.md does not allow the name in another doc.
 * The stale names are glued from two string literals so that this file, which the checker
 * searches as part of tests/, does not contain them as words. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef CUZK_REPO_DIR
#error "CUZK_REPO_DIR (the repository root, for scripts/check-doc-idents.sh) is set by the Makefile"
#endif

/* A fresh temporary directory with a docs/ folder; path written to dir. */
static void make_docs_dir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/cuzk-docid-XXXXXX");
    ASSERT(mkdtemp(dir) != NULL);
    char d[512];
    snprintf(d, sizeof d, "%s/docs", dir);
    ASSERT(mkdir(d, 0700) == 0);
}

static void write_doc(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ASSERT_MSG(f != NULL, "cannot write %s", path);
    ASSERT(fputs(text, f) >= 0);
    ASSERT(fclose(f) == 0);
}

/* Runs the checker on one doc; returns its exit status and its output in out. */
static int run_check(const char *doc, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/scripts/check-doc-idents.sh' '%s' '%s' 2>&1", CUZK_REPO_DIR,
             CUZK_REPO_DIR, doc);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    ASSERT_MSG(WIFEXITED(st), "checker did not exit normally: %d", st);
    printf("%s", out);
    return WEXITSTATUS(st);
}

static void rm_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT(system(cmd) == 0);
}

TEST(stale_names_fail_each_with_file_and_line)
{
    char dir[256], doc[512], want[512];
    static char out[1 << 16];
    make_docs_dir(dir, sizeof dir);
    snprintf(doc, sizeof doc, "%s/docs/guide.md", dir);
    write_doc(doc,
              "# Title\n"
              "The engine calls `no_such_" "function_xyz` first.\n"              /* line 2 */
              "It exports `cuzk_no_such_" "metric_total{proof_kind}`.\n"         /* line 3 */
              "Read `ctx->no_such_" "field_xyz` and `src/engine/no_such_" "file.c`.\n" /* 4 */
              "See `no_such_" "module.c` and `build/tests/e2e/test_no_such_" "case`.\n"); /* 5 */
    int rc = run_check(doc, out, sizeof out);
    ASSERT_MSG(rc == 1, "checker exit %d, expected 1 (stale names)", rc);
    const char *stale[][2] = {
        {"2", "no_such_" "function_xyz"},
        {"3", "cuzk_no_such_" "metric_total"},
        {"4", "no_such_" "field_xyz"},
        {"4", "src/engine/no_such_" "file.c"},
        {"5", "no_such_" "module.c"},
        {"5", "test_no_such_" "case"},
    };
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        snprintf(want, sizeof want, "guide.md:%s: `", stale[i][0]);
        ASSERT_STR_CONTAINS(out, want);
        ASSERT_STR_CONTAINS(out, stale[i][1]);
    }
    ASSERT_STR_CONTAINS(out, "check-doc-idents: FAIL: 6 of 6 names");
    rm_tree(dir);
}

TEST(current_names_and_skipped_spans_pass)
{
    char dir[256], doc[512];
    static char out[1 << 16];
    make_docs_dir(dir, sizeof dir);
    snprintf(doc, sizeof doc, "%s/docs/guide.md", dir);
    write_doc(doc,
              "`engine_submit()` in `src/engine/engine.c` (`engine.c`), `srv_request_of`,\n"
              "`cuzk_queue_depth`, `cuzk_proofs_failed_by_kind_total{proof_kind}`,\n"
              "`scripts/test.sh`, `build/tests/e2e/test_daemon`, `tests/e2e/`.\n"
              "Skipped: `daemon.max_" "no_such_key`, `[daemon] no_such_" "key`, `--no-such_" "flag`,\n"
              "`make no_such_" "target`, `_no_such_" "suffix`, `upstream/no_such_" "file.rs`.\n"
              "```\n"
              "no_such_" "function_in_a_fence()\n"
              "`no_such_" "function_in_a_fence`\n"
              "```\n");
    int rc = run_check(doc, out, sizeof out);
    ASSERT_MSG(rc == 0, "checker exit %d, expected 0 (every name exists or is skipped)", rc);
    ASSERT_STR_CONTAINS(out, "check-doc-idents: OK: 10 names");
    rm_tree(dir);
}

/* scripts/doc-idents.allow allows the deleted one-thread Horner kernel's name in
 * docs/decisions.md only (glued below, like the stale names, so this file does not contain it). */
TEST(allow_entry_scoped_to_one_doc)
{
    char dir[256], doc[512];
    static char out[1 << 16];
    make_docs_dir(dir, sizeof dir);
    snprintf(doc, sizeof doc, "%s/docs/decisions.md", dir);
    write_doc(doc, "The one-thread `k_" "final` kernel is gone.\n");
    ASSERT_EQ_INT(run_check(doc, out, sizeof out), 0);
    snprintf(doc, sizeof doc, "%s/docs/gpu.md", dir);
    write_doc(doc, "The one-thread `k_" "final` kernel is gone.\n");
    ASSERT_EQ_INT(run_check(doc, out, sizeof out), 1);
    ASSERT_STR_CONTAINS(out, "gpu.md:1: `k_" "final`");
    rm_tree(dir);
}
