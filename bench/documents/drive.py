#!/usr/bin/env python3
"""Drives genhost for bench/documents/run.sh (docs/performance.md, "Documents").

  drive.py list   BASE KEY N        stores N small documents, then times GET /v1/documents pages
  drive.py search BASE KEY N CHARS  stores N documents of CHARS characters, waits for their index,
                                    then times GET /_genhost/documents/search

Each timing is one request on a kept-alive connection (loopback), measured by the client from
sending to the last byte. Prints one line per measured kind: count, p50, p95, p99, max in ms.
"""
import http.client
import json
import random
import statistics
import struct
import sys
import time
import zlib
import base64

BASE, KEY = sys.argv[2], sys.argv[3]
HOST, PORT = BASE.split("//")[1].split(":")
CONN = http.client.HTTPConnection(HOST, int(PORT))
HEADERS = {"Authorization": "Bearer " + KEY, "X-Service-Version": "2024-11-06",
           "Content-Type": "application/json"}


def call(method, path, body=None):
    data = json.dumps(body) if body is not None else None
    CONN.request(method, path, body=data, headers=HEADERS)
    r = CONN.getresponse()
    text = r.read()
    if r.status >= 300:
        raise SystemExit(f"{method} {path}: {r.status} {text[:300]!r}")
    return json.loads(text) if text else None


def timed(method, path):
    t = time.perf_counter()
    out = call(method, path)
    return (time.perf_counter() - t) * 1000, out


def report(name, ms):
    ms = sorted(ms)
    q = lambda p: ms[min(len(ms) - 1, int(round(p * (len(ms) - 1))))]
    print(f"{name:<44} n={len(ms):<5} p50={q(0.5):7.2f}  p95={q(0.95):7.2f}  "
          f"p99={q(0.99):7.2f}  max={ms[-1]:7.2f} ms", flush=True)


def png(w, h):
    raw = b"".join(b"\x00" + bytes([200, 120, 40]) * w for _ in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def avatar_with(doc_ids):
    uri = "data:image/png;base64," + base64.b64encode(png(600, 800)).decode()
    return call("POST", "/v1/avatars", {"name": "Bench", "referenceImage": uri,
                                        "personality": "Answers from the documents.",
                                        "voice": {"type": "service-live-preset", "presetId": "clara"},
                                        "documentIds": doc_ids})["id"]


def list_bench(n):
    t = time.perf_counter()
    ids = [call("POST", "/v1/documents", {"name": f"Doc {i}", "content": f"# Doc {i}\nShort text {i}."})["id"]
           for i in range(n)]
    print(f"stored {n} documents in {time.perf_counter() - t:.1f} s", flush=True)
    avatar_with(ids[:50])  # so that usedBy is not empty for some
    # Timed once the job engine has indexed them all (it shares the two cores meanwhile).
    t = time.perf_counter()
    while call("GET", "/_genhost/documents/search?q=x&limit=1")["indexing"]:
        time.sleep(0.5)
    print(f"indexed them in {time.perf_counter() - t:.1f} s more", flush=True)
    for name, query in [("first page, 50, createdAt desc", ""),
                        ("first page, 100, updatedAt asc", "?limit=100&sort=updatedAt&order=asc")]:
        report(f"GET /v1/documents {name}", [timed("GET", "/v1/documents" + query)[0] for _ in range(500)])
    # Walk every page: deep pages cost the same as the first (keyset).
    ms, cursor, pages = [], None, 0
    for _ in range(3):
        cursor = None
        while True:
            path = "/v1/documents?limit=100" + (f"&cursor={cursor}" if cursor else "")
            took, page = timed("GET", path)
            ms.append(took)
            pages += 1
            cursor = page["nextCursor"]
            if not cursor:
                break
    report(f"GET /v1/documents every page of 100 ({pages} pages)", ms)


def words(rng, n):
    # A Zipf-like vocabulary of pronounceable pseudo-words (no dictionary on a bare machine).
    syll = ["ka", "lo", "mi", "ten", "ra", "vo", "sel", "dan", "pri", "mu", "ko", "zen", "ta", "ne",
            "bor", "li", "sa", "fen", "do", "gri", "pa", "wen", "tu", "hel", "mor", "ci", "ven", "ba"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(n)})
    rng.shuffle(vocab)
    return vocab


def document_text(rng, vocab, weights, chars):
    out, size, section = [], 0, 0
    while size < chars:
        section += 1
        head = f"\n## {' '.join(rng.choices(vocab[:2000], k=3)).title()} {section}\n"
        para = " ".join(rng.choices(vocab, weights=weights, k=300)) + ".\n"
        out += [head, para]
        size += len(head) + len(para)
    return "".join(out)[:chars]


def search_bench(n, chars):
    rng = random.Random(7)
    vocab = words(rng, 30000)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    t = time.perf_counter()
    ids = []
    for i in range(n):
        ids.append(call("POST", "/v1/documents",
                        {"name": f"Manual {i}", "content": document_text(rng, vocab, weights, chars)})["id"])
    print(f"stored {n} documents of {chars} characters in {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    while call("GET", "/_genhost/documents/search?q=x&limit=1")["indexing"]:
        time.sleep(1)
    print(f"indexed them in {time.perf_counter() - t:.1f} s after the last one was stored", flush=True)
    avatar = avatar_with(ids[:50])
    common = vocab[:50]
    middle = vocab[500:3000]
    rare = vocab[10000:30000]
    queries = {
        "two common words": [f"{rng.choice(common)} {rng.choice(common)}" for _ in range(100)],
        "two mid-frequency words": [f"{rng.choice(middle)} {rng.choice(middle)}" for _ in range(100)],
        "a rare word": [rng.choice(rare) for _ in range(100)],
        "a quoted phrase": ['"' + " ".join(rng.choices(vocab[:300], k=2)) + '"' for _ in range(100)],
        "a misspelt word (similar_words)": [w[:-1] + "q" for w in rng.sample(middle, 100)],
        "nothing found (all three strategies)": [f"zzq{i}xx" for i in range(100)],
    }
    for scope, extra in [("all 1000 documents", ""), ("an avatar's 50 documents", f"&avatarId={avatar}")]:
        for kind, qs in queries.items():
            ms, strategies = [], {}
            for q in qs:
                took, out = timed("GET", "/_genhost/documents/search?limit=5&q=" +
                                  urllib_quote(q) + extra)
                ms.append(took)
                strategies[out["strategy"]] = strategies.get(out["strategy"], 0) + 1
            report(f"search {scope}: {kind}", ms)
            print(f"    strategies: {strategies}", flush=True)


def urllib_quote(q):
    from urllib.parse import quote
    return quote(q)


if sys.argv[1] == "list":
    list_bench(int(sys.argv[4]))
else:
    search_bench(int(sys.argv[4]), int(sys.argv[5]))
