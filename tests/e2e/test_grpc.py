#!/usr/bin/python3
# test_grpc.py: cuzk-daemon end to end with an independent client: Debian's python3-grpcio and
# python3-protobuf, stubs generated from proto/cuzk/v1/proving.proto with protoc at test time,
# calls through channel.unary_unary. Prints the suite line "N passed, N failed, N skipped".
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("CUZK_BIN_DIR", os.path.join(ROOT, "build", "bin"))
RESULTS = {"passed": 0, "failed": 0, "skipped": 0}

try:
    import grpc
except ImportError:  # the suite line still counts the skip
    print("SKIP python grpc tests: python3-grpcio is not installed for %s" % sys.executable)
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

TMP = tempfile.mkdtemp(prefix="cuzk-py-")
subprocess.check_call(["protoc", "--python_out=" + TMP, "-I" + os.path.join(ROOT, "proto"),
                       os.path.join(ROOT, "proto", "cuzk", "v1", "proving.proto")])
sys.path.insert(0, TMP)
from cuzk.v1 import proving_pb2 as pb  # noqa: E402

SERVICE = "/cuzk.v1.ProvingEngine/"
METHODS = {
    "SubmitProof": (pb.SubmitProofRequest, pb.SubmitProofResponse),
    "AwaitProof": (pb.AwaitProofRequest, pb.AwaitProofResponse),
    "Prove": (pb.ProveRequest, pb.ProveResponse),
    "CancelProof": (pb.CancelProofRequest, pb.CancelProofResponse),
    "GetStatus": (pb.GetStatusRequest, pb.GetStatusResponse),
    "GetMetrics": (pb.GetMetricsRequest, pb.GetMetricsResponse),
    "PreloadSRS": (pb.PreloadSrsRequest, pb.PreloadSrsResponse),
    "EvictSRS": (pb.EvictSrsRequest, pb.EvictSrsResponse),
}
COMPLETED, FAILED, CANCELLED, TIMEOUT = 1, 2, 3, 4


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Daemon:
    def __init__(self, listen, extra="", env=None):
        self.dir = tempfile.mkdtemp(prefix="cuzk-pyd-", dir=TMP)
        self.http_port = free_port()
        self.listen = listen.replace("%DIR%", self.dir)
        self.cfg = os.path.join(self.dir, "cuzk.toml")
        with open(self.cfg, "w") as f:
            f.write('[daemon]\nlisten = "%s"\nstatus_listen = "127.0.0.1:%d"\n%s\n'
                    '[memory]\ntotal_budget = "2GiB"\n[srs]\nparam_cache = "%s"\n'
                    % (self.listen, self.http_port, extra, self.dir))
        self.out = open(os.path.join(self.dir, "out.log"), "w+")
        self.err = open(os.path.join(self.dir, "err.log"), "w+")
        env = dict(env or os.environ, TMPDIR=self.dir)  # TCP lock files stay in our dir
        self.proc = subprocess.Popen([os.path.join(BIN, "cuzk-daemon"), "-c", self.cfg],
                                     stdout=self.out, stderr=self.err, env=env)
        t0 = time.time()
        while time.time() - t0 < 30:
            self.out.seek(0)
            if "cuzk-daemon ready, serving on " + self.listen in self.out.read():
                break
            if self.proc.poll() is not None:
                raise RuntimeError("daemon exited: " + self.stderr())
            time.sleep(0.02)
        else:
            raise RuntimeError("daemon not ready: " + self.stderr())
        target = self.listen if self.listen.startswith("unix:") else self.listen
        self.channel = grpc.insecure_channel(target, options=[
            ("grpc.max_send_message_length", 512 << 20),
            ("grpc.max_receive_message_length", 512 << 20)])

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def call(self, method, req, timeout=60):
        req_t, resp_t = METHODS[method]
        fn = self.channel.unary_unary(SERVICE + method, request_serializer=req_t.SerializeToString,
                                      response_deserializer=resp_t.FromString)
        return fn(req, timeout=timeout)

    def raw(self, method, data, timeout=30):
        fn = self.channel.unary_unary(SERVICE + method, request_serializer=lambda b: b,
                                      response_deserializer=lambda b: b)
        return fn(data, timeout=timeout)

    def http(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.http_port, path), timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()

    def stop(self, sig=signal.SIGTERM):
        self.channel.close()
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -999


def synthetic(n=512, parts=0, rid="", seed=None):
    r = pb.SubmitProofRequest(request_id=rid, proof_kind=pb.SYNTHETIC, synthetic_constraints=n,
                              synthetic_partitions=parts)
    if seed is not None:
        r.vanilla_proof = seed.to_bytes(8, "little")
    return r


def expect_code(fn, code, contains=None):
    try:
        fn()
    except grpc.RpcError as e:
        assert e.code() == code, "expected %s, got %s: %s" % (code, e.code(), e.details())
        if contains:
            assert contains in e.details(), "%r not in %r" % (contains, e.details())
        return e
    raise AssertionError("expected %s, the call succeeded" % code)


# ------------------------------------------------------------------- tests --

def t_prove_submit_await_duplicates(d):
    r = d.call("Prove", pb.ProveRequest(submit=synthetic(512, seed=42)))
    assert r.result.status == COMPLETED, r.result.error_message
    assert len(r.result.proof) == 192
    assert r.result.total_ms >= r.result.gpu_compute_ms
    s1 = d.call("SubmitProof", synthetic(512, parts=3, rid="py-dup", seed=7))
    s2 = d.call("SubmitProof", synthetic(512, parts=3, rid="py-dup", seed=7))
    assert s1.job_id == s2.job_id == "py-dup"
    a1 = d.call("AwaitProof", pb.AwaitProofRequest(job_id="py-dup"))
    a2 = d.call("AwaitProof", pb.AwaitProofRequest(job_id="py-dup"))
    assert a1.status == COMPLETED and len(a1.proof) == 3 * 192
    assert a1.proof == a2.proof
    # an empty request id gets a fresh UUID
    s3 = d.call("SubmitProof", synthetic(256))
    assert len(s3.job_id) == 36 and s3.job_id.count("-") == 4
    assert d.call("AwaitProof", pb.AwaitProofRequest(job_id=s3.job_id)).status == COMPLETED


def t_timeout_and_cancel(d):
    d.call("SubmitProof", synthetic(1024, parts=64, rid="py-slow"))
    a = d.call("AwaitProof", pb.AwaitProofRequest(job_id="py-slow", timeout_ms=1))
    assert a.status == TIMEOUT, a
    got = {}

    def waiter():
        got["r"] = d.call("AwaitProof", pb.AwaitProofRequest(job_id="py-slow"))
    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.2)
    c = d.call("CancelProof", pb.CancelProofRequest(job_id="py-slow"))
    assert isinstance(c.was_running, bool)
    t.join(30)
    assert got["r"].status == CANCELLED, got
    assert d.call("AwaitProof", pb.AwaitProofRequest(job_id="py-slow")).status == CANCELLED
    expect_code(lambda: d.call("CancelProof", pb.CancelProofRequest(job_id="nope")),
                grpc.StatusCode.NOT_FOUND)


def t_malformed_unknown_oversized(d):
    expect_code(lambda: d.raw("Prove", b"\x0a\xff\xff\xff\xff\x0f"), grpc.StatusCode.INVALID_ARGUMENT,
                "malformed")
    expect_code(lambda: d.raw("SubmitProof", b"\xff"), grpc.StatusCode.INVALID_ARGUMENT, "malformed")
    expect_code(lambda: d.call("Prove", pb.ProveRequest()), grpc.StatusCode.INVALID_ARGUMENT,
                "submit is missing")
    bad_kind = pb.SubmitProofRequest(synthetic_constraints=512)
    bad_kind.proof_kind = 57
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=bad_kind)),
                grpc.StatusCode.INVALID_ARGUMENT, "unknown proof_kind 57")
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=synthetic(0))),
                grpc.StatusCode.INVALID_ARGUMENT, "synthetic_constraints")
    # SnapDeals without its commitments / partitions: a malformed request
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    proof_kind=pb.SNAP_DEALS_UPDATE))),
                grpc.StatusCode.INVALID_ARGUMENT, "comm_r_old: expected 32 bytes, got 0")
    # PoSt without randomness / a registered proof of its kind: malformed requests
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    proof_kind=pb.WINNING_POST))),
                grpc.StatusCode.INVALID_ARGUMENT, "randomness")
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    proof_kind=pb.WINDOW_POST_PARTITION))),
                grpc.StatusCode.INVALID_ARGUMENT, "registered_proof 0 is StackedDrgWinning2KiBV1")
    # PoRep: a malformed C1 output is a malformed request, named by its JSON path
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    proof_kind=pb.POREP_SEAL_COMMIT))),
                grpc.StatusCode.INVALID_ARGUMENT, "needs vanilla_proof")
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=pb.SubmitProofRequest(
                    proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b'{"SectorNum":"x"}'))),
                grpc.StatusCode.INVALID_ARGUMENT, "SectorNum: expected integer, got string")
    expect_code(lambda: d.call("AwaitProof", pb.AwaitProofRequest(job_id="missing")),
                grpc.StatusCode.NOT_FOUND)
    expect_code(lambda: d.raw("Frobnicate", b""), grpc.StatusCode.UNIMPLEMENTED)
    # over the daemon's 1 MiB limit (configured for this daemon)
    big = pb.SubmitProofRequest(proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b"\0" * (2 << 20))
    expect_code(lambda: d.call("Prove", pb.ProveRequest(submit=big)), grpc.StatusCode.RESOURCE_EXHAUSTED)
    # still serving
    assert d.call("Prove", pb.ProveRequest(submit=synthetic(256))).result.status == COMPLETED


def t_srs_status_metrics(d):
    p = d.call("PreloadSRS", pb.PreloadSrsRequest(circuit_id="synthetic-300"))
    assert not p.already_loaded
    assert d.call("PreloadSRS", pb.PreloadSrsRequest(circuit_id="synthetic-300")).already_loaded
    expect_code(lambda: d.call("PreloadSRS", pb.PreloadSrsRequest(circuit_id="bogus")),
                grpc.StatusCode.INVALID_ARGUMENT, "unknown circuit id")
    st = d.call("GetStatus", pb.GetStatusRequest())
    ids = {s.circuit_id: s for s in st.loaded_srs}
    assert "synthetic-300" in ids and ids["synthetic-300"].size_bytes > 0, st
    # CI has no GPU: no GPU listed, and the key is in host memory (WARM), not in VRAM (HOT)
    assert len(st.gpus) == 0, st
    assert ids["synthetic-300"].tier == pb.SRSStatus.WARM, st
    assert st.memory_budget_bytes == 2 << 30
    kinds = [q.proof_kind for q in st.queues]
    assert kinds == ["porep-c2", "snap-update", "window-post", "winning-post", "synthetic",
                     "ni-porep-c2"], kinds
    e = d.call("EvictSRS", pb.EvictSrsRequest(circuit_id="synthetic-300"))
    assert e.was_loaded and e.freed_bytes == ids["synthetic-300"].size_bytes
    e = d.call("EvictSRS", pb.EvictSrsRequest(circuit_id="synthetic-300"))
    assert not e.was_loaded and e.freed_bytes == 0
    st = d.call("GetStatus", pb.GetStatusRequest())
    done, failed = st.total_proofs_completed, st.total_proofs_failed
    m = d.call("GetMetrics", pb.GetMetricsRequest()).prometheus_text
    assert "cuzk_proofs_completed_total %d\n" % done in m, m
    assert "cuzk_proofs_failed_total %d\n" % failed in m, m
    code, ctype, body = d.http("/metrics")
    assert code == 200 and ctype.startswith("text/plain")
    assert "cuzk_proofs_completed_total %d\n" % done in body
    samples = [l for l in body.splitlines() if l and not l.startswith("#")]
    for line in samples:  # every sample is "name{labels} value" with a number
        float(line.rsplit(" ", 1)[1])
    code, ctype, body = d.http("/status")
    assert code == 200 and ctype == "application/json"
    doc = json.loads(body)
    assert doc["counters"]["total_completed"] == done
    assert doc["counters"]["total_failed"] == failed
    assert doc["memory"]["total_bytes"] == 2 << 30
    for job in doc["pipelines"]:
        assert job["partitions_done"] <= job["total_partitions"]
        assert all(p["state"] in ("pending", "synthesizing", "synth_done", "gpu", "done",
                                  "failed", "dropped") for p in job["partitions"])
    assert isinstance(doc["gpu_workers"], list) and doc["gpu_workers"]
    assert doc["gpus"] == [] and doc["prover"]["device"] == "cpu", doc["prover"]
    assert doc["prover"]["reason"].startswith("no GPU found"), doc["prover"]
    assert doc["allocations"]["srs_validation"] == "full"
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/nope" % d.http_port, timeout=10)
        raise AssertionError("404 expected")
    except urllib.error.HTTPError as e:
        assert e.code == 404


def t_concurrent_clients(d):
    errors = []
    results = []
    lock = threading.Lock()
    jobs = list(range(16))

    def client():
        ch = grpc.insecure_channel(d.listen)
        fn = ch.unary_unary(SERVICE + "Prove", request_serializer=pb.ProveRequest.SerializeToString,
                            response_deserializer=pb.ProveResponse.FromString)
        while True:
            with lock:
                if not jobs:
                    break
                i = jobs.pop()
            try:
                r = fn(pb.ProveRequest(submit=synthetic(256, rid="py-c-%d" % i)), timeout=120)
                with lock:
                    results.append((i, r.result.status, len(r.result.proof)))
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(repr(e))
        ch.close()
    ts = [threading.Thread(target=client) for _ in range(4)]
    [t.start() for t in ts]
    [t.join(180) for t in ts]
    assert not errors, errors
    assert sorted(i for i, _, _ in results) == list(range(16))
    assert all(s == COMPLETED and n == 192 for _, s, n in results), results


def t_sigterm_answers_waiters():
    d = Daemon("unix://%DIR%/py.sock")
    d.call("SubmitProof", synthetic(1024, parts=64, rid="py-drain"))
    got = {}

    def waiter():
        ch = grpc.insecure_channel(d.listen)
        fn = ch.unary_unary(SERVICE + "AwaitProof", request_serializer=pb.AwaitProofRequest.SerializeToString,
                            response_deserializer=pb.AwaitProofResponse.FromString)
        try:
            got["r"] = fn(pb.AwaitProofRequest(job_id="py-drain"), timeout=60)
        except grpc.RpcError as e:  # not finished: kept in the journal for the next start
            got["e"] = (e.code(), e.details())
        ch.close()
    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.3)
    rc = d.stop(signal.SIGTERM)
    t.join(60)
    assert rc == 0, (rc, d.stderr()[-2000:])
    assert ("r" in got and got["r"].status == COMPLETED) or \
        ("e" in got and got["e"][0] == grpc.StatusCode.UNAVAILABLE and "kept in the journal" in got["e"][1]), got
    assert not os.path.exists(d.listen[len("unix://"):]), "socket left behind"


def t_sd_notify_and_second_signal():
    # systemd readiness: READY=1 arrives on NOTIFY_SOCKET once the daemon serves
    ns_path = os.path.join(TMP, "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(ns_path)
    ns.settimeout(30)
    env = dict(os.environ, NOTIFY_SOCKET=ns_path)
    d = Daemon("unix://%DIR%/n.sock", 'shutdown_grace = "60s"', env=env)
    msgs = ns.recv(4096).decode()
    assert "READY=1" in msgs, msgs
    # a job whose SRS is still being generated keeps the drain busy; a second SIGTERM exits at once
    d.call("SubmitProof", synthetic(24000, rid="py-big"))
    time.sleep(0.3)
    d.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    t0 = time.time()
    d.proc.send_signal(signal.SIGTERM)
    rc = d.proc.wait(timeout=10)
    assert rc == 128 + signal.SIGTERM, (rc, d.stderr()[-1500:])
    assert time.time() - t0 < 5
    assert "second signal" in d.stderr()
    stopping = ns.recv(4096).decode()
    assert "STOPPING=1" in stopping, stopping
    ns.close()


def t_json_logs():
    d = Daemon("unix://%DIR%/j.sock", '[logging]\nformat = "json"\nlevel = "debug"')
    assert d.call("Prove", pb.ProveRequest(submit=synthetic(256))).result.status == COMPLETED
    assert d.stop() == 0
    lines = [l for l in d.stderr().splitlines() if l.strip()]
    events = set()
    for line in lines:  # every line is one JSON object
        obj = json.loads(line)
        if "event" in obj:
            events.add(obj["event"])
        else:
            assert obj["level"] in ("error", "warn", "info", "debug", "trace") and "msg" in obj, obj
    assert {"SYNTH_START", "GPU_END", "VERIFY_END"} <= events, events
    assert any("cuzk-daemon ready" in json.loads(l).get("msg", "") for l in lines)


def main():
    tcp = "127.0.0.1:%d" % free_port()
    daemons = []
    try:
        dt = Daemon(tcp, 'max_message_size = "1MiB"')
        du = Daemon("unix://%DIR%/cuzk.sock")
        daemons = [dt, du]
    except Exception as e:  # noqa: BLE001
        print("FAIL daemon start: %s" % e)
        print("0 passed, 1 failed, 0 skipped")
        return 1
    tests = [
        ("prove_submit_await_duplicates_tcp", lambda: t_prove_submit_await_duplicates(dt)),
        ("prove_submit_await_duplicates_unix", lambda: t_prove_submit_await_duplicates(du)),
        ("timeout_and_cancel", lambda: t_timeout_and_cancel(du)),
        ("malformed_unknown_oversized", lambda: t_malformed_unknown_oversized(dt)),
        ("srs_status_metrics", lambda: t_srs_status_metrics(du)),
        ("concurrent_clients", lambda: t_concurrent_clients(dt)),
        ("sigterm_exit_zero", lambda: [d.stop() == 0 or (_ for _ in ()).throw(
            AssertionError("exit code != 0: " + d.stderr()[-2000:])) for d in daemons]),
        ("sigterm_answers_waiters", t_sigterm_answers_waiters),
        ("sd_notify_and_second_signal", t_sd_notify_and_second_signal),
        ("json_logs", t_json_logs),
    ]
    only = sys.argv[1:]
    for name, fn in tests:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
            RESULTS["passed"] += 1
            print("PASS %s (%.0f ms)" % (name, (time.time() - t0) * 1000))
        except Exception:  # noqa: BLE001
            RESULTS["failed"] += 1
            print("FAIL %s" % name)
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
    for d in daemons:
        if d.proc.poll() is None:
            d.proc.kill()
    if not RESULTS["failed"]:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print("daemon logs kept in %s" % TMP)
    print("%d passed, %d failed, %d skipped" % (RESULTS["passed"], RESULTS["failed"], RESULTS["skipped"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
