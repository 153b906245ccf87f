#!/usr/bin/env python3
"""doc_idents.py: the names the documentation puts in backticks must exist in the code.

Run through scripts/check-doc-idents.sh (see there for the command line). Each inline code span
(`...`) of the given Markdown files, outside fenced blocks, is classified:

  checked  a C-style identifier with an underscore (engine_submit, msm_plan, CUZK_E_IO,
           cuzk_queue_depth; a trailing "(...)" or "{labels}" is dropped, and a->b / a.b with
           an underscore in a is split into its words): each word must occur as a whole word
           in a tracked file of the code tree (CODE_PATHS).
  checked  a path into the tree (src/..., tests/..., scripts/x.sh, .ci/run) or a bare source
           file name (queue.c, msm.cu, engine.h): a tracked file or directory of that path (of
           that base name) must exist. build/tests/M/T must have its source tests/M/T.c and
           build/bin/P its directory cmd/P.
  skipped  anything with a space (shell commands, "[section] key"), flags (--x, -Dx), config
           keys written section.key (no underscore before the dot), numbers, quoted strings,
           patterns with * < { | or an ellipsis, names that begin or end with "_" (fragments
           such as _total), Rust/Go paths (upstream code), and every name in the allow list.

A name that is not found is printed as "file:line: `name`: what is missing" and the exit status
is 1. The code tree is read once (git ls-files), so whole-word matching is the same as
`git grep -w -F -q NAME -- CODE_PATHS` without starting one git per name.
"""
import os
import re
import subprocess
import sys

# Where a documented name may live: the code, its tests, scripts, build and packaging files.
# docs/ is left out on purpose (a doc naming itself proves nothing) and so is the allow list.
CODE_PATHS = ["src", "include", "cmd", "tests", "scripts", "fuzz", "proto", "deploy", ".ci",
              "Makefile"]
ALLOW_FILE = "scripts/doc-idents.allow"
# Extensions of the tree's own source files; a bare "name.ext" with one of these is a file name.
SRC_EXT = ("c", "h", "cu", "cuh", "sh", "py", "html", "proto", "toml", "json", "service", "dict")
# Upstream code (bellperson, rust-fil-proofs, Curio) is cited by these; it is not in this tree.
UPSTREAM_EXT = ("rs", "go")
TREE_DIRS = ("src/", "include/", "cmd/", "tests/", "scripts/", "docs/", "deploy/", "fuzz/",
             "proto/", ".ci/")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SPAN = re.compile(r"(`+)(.+?)\1")


def git_files(root, paths):
    r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--"] + paths, capture_output=True)
    if r.returncode != 0:
        # the tree is what git tracks: without a checkout there is nothing to look names up in
        raise SystemExit("check-doc-idents: FAIL: %s is not a git checkout (git ls-files: %s)"
                         % (root, r.stderr.decode().strip()))
    return [p for p in r.stdout.decode().split("\0") if p]


def load_allow(root):
    """The allow list: "NAME [DOC]  # why" per line. Returns {name: set of docs}, where an
    empty set allows the name in every doc."""
    allow = {}
    path = os.path.join(root, ALLOW_FILE)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                fields = line.split("#", 1)[0].split()
                if not fields:
                    continue
                if len(fields) > 2:
                    raise SystemExit("%s:%d: expected NAME [DOC]  # why, got %r"
                                     % (ALLOW_FILE, n, line.strip()))
                docs = allow.setdefault(fields[0], set())
                if len(fields) == 2:
                    docs.add(fields[1])
                else:
                    allow[fields[0]] = set()  # everywhere wins over a per-doc entry
    return allow


def allowed(allow, name, doc):
    if name not in allow:
        return False
    docs = allow[name]
    return not docs or any(doc == d or doc.endswith("/" + d) for d in docs)


class Tree:
    def __init__(self, root):
        self.files = set(git_files(root, ["."]))
        self.dirs = set()
        for p in self.files:
            parts = p.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.basenames = {p.rsplit("/", 1)[-1] for p in self.files}
        self.words = set()
        for p in git_files(root, CODE_PATHS):
            if p == ALLOW_FILE:
                continue
            try:
                with open(os.path.join(root, p), encoding="utf-8", errors="replace") as f:
                    self.words.update(re.findall(r"[A-Za-z0-9_]+", f.read()))
            except (IsADirectoryError, FileNotFoundError):
                pass  # a submodule or a file deleted in the work tree

    def has_path(self, p):
        p = p.rstrip("/")
        return p in self.files or p in self.dirs


def check_path(span, tree):
    """None when the path exists (or is not ours to check), else what is missing."""
    if span.startswith("build/tests/"):
        # A test program comes from tests/M/T.c; anything else built there (T_py, a fake
        # library) is named by the Makefile.
        src = "tests/" + span[len("build/tests/"):] + ".c"
        base = span.rsplit("/", 1)[-1].split(".", 1)[0]
        if span.count("/") == 3 and not tree.has_path(src) and base not in tree.words:
            return "no source %s for this test program, and the Makefile does not name it" % src
        return None
    if span.startswith("build/bin/"):
        prog = span[len("build/bin/"):]
        for suffix in ("-gpu", ""):
            if prog.endswith(suffix) and tree.has_path("cmd/" + prog[:len(prog) - len(suffix)]):
                return None
        return "no program directory cmd/%s" % prog
    if span.startswith(TREE_DIRS):
        if span.rsplit(".", 1)[-1] in UPSTREAM_EXT:
            return None
        return None if tree.has_path(span) else "no such file or directory in the tree"
    return None


def classify(span):
    """('path', p), ('file', name), ('words', [w...]) or None (not checked)."""
    if re.search(r"\s", span) or any(c in span.replace("->", "") for c in "*<>{|…[\"'\\$?=,;`!%&"):
        # Metric labels are the one {...} worth stripping: cuzk_x_total{proof_kind}.
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\{[A-Za-z_,]*\}", span)
        if not m:
            return None
        span = m.group(1)
    if span.startswith("-") or span.startswith("/"):
        return None
    if "/" in span:
        return ("path", span)
    span = re.sub(r"\([^()]*\)$", "", span)  # engine_submit(), inv(0)
    if "." in span and "->" not in span:
        head, _, ext = span.rpartition(".")
        if ext in UPSTREAM_EXT:
            return None
        if any(p.isupper() for p in span.split(".")):
            return None  # a placeholder: FILE.commitments.json, DIR.params
        if ext in SRC_EXT and IDENT.fullmatch(head.replace("-", "_").replace(".", "_")):
            return ("file", span)
    words = re.split(r"->|\.", span)
    if not all(IDENT.fullmatch(w) for w in words):
        return None
    if "_" not in words[0] and "->" not in span:
        # section.key (config), x.c0, Phase1Out.comm_d: keys and upstream fields, not ours to
        # check; a->b is always our C (ctx->msm_reserve)
        if len(words) > 1 or "_" not in span:
            return None
    checked = [w for w in words if "_" in w]
    if any(w.startswith("_") or w.endswith("_") for w in checked):
        return None  # a fragment (_total, msm_pairs_add_) or a compiler builtin
    return ("words", checked)


def code_spans(path):
    """(line number, span text) for each inline code span outside fenced blocks."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.lstrip()
            if s.startswith("```") or s.startswith("~~~"):
                mark = s[:3]
                fence = None if fence == mark else (fence or mark)
                continue
            if fence:
                continue
            for m in SPAN.finditer(line):
                yield n, m.group(2).strip()


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: doc_idents.py ROOT DOC.md...\n")
        return 2
    root, docs = argv[1], argv[2:]
    tree = Tree(root)
    allow = load_allow(root)
    bad = 0
    nchecked = 0
    for doc in docs:
        for n, span in code_spans(doc):
            if allowed(allow, span, doc):
                continue
            c = classify(span)
            if c is None:
                continue
            kind, val = c
            nchecked += 1
            why = None
            if kind == "path":
                why = check_path(val, tree)
            elif kind == "file":
                if val not in tree.basenames:
                    why = "no tracked file has this name"
            else:
                missing = [w for w in val if w not in tree.words and not allowed(allow, w, doc)]
                if missing:
                    why = "%s occurs nowhere in %s" % (", ".join(missing), " ".join(CODE_PATHS))
            if why:
                bad += 1
                print("%s:%d: `%s`: %s" % (os.path.normpath(doc), n, span, why))
    if bad:
        print("check-doc-idents: FAIL: %d of %d names in backticks are not in the tree; rename "
              "them to the current name, drop the sentence, or (upstream names only) add them "
              "to %s with the reason" % (bad, nchecked, ALLOW_FILE))
        return 1
    print("check-doc-idents: OK: %d names in backticks in %d files, all found in the tree"
          % (nchecked, len(docs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
