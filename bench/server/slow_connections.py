#!/usr/bin/env python3
"""A normal client's latency while many slow connections are held open.

Starts `gpuolap serve` on the demo cube, opens --slow connections that each
send one header line a second and never end their request (reopening any
the server closes, as an attacker would), and then times --requests
requests of GET /cell/value (a consolidated cell) from a normal client:
first over one kept-alive connection, then on a new connection each.
Prints a markdown table row per mode: p50, p99 and max latency, requests
that got no answer within --timeout seconds (the run of a mode stops after
5 of those), and how many slow connections were open at the end.

    python3 bench/server/slow_connections.py [--bin build/src/gpuolap] [--slow 1000]
        [--requests 1000] [--threads 64] [--label TEXT] [--header]

Standard library only. The client raises its own open-file limit.
"""
import argparse
import os
import resource
import socket
import subprocess
import tempfile
import threading
import time

PATH = "/cell/value?path=2024,Bikes,Europe"


def open_slow(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    s.send(b"GET /cube/info HTTP/1.1\r\nHost: x\r\n")
    return s


class SlowClients:
    """--slow connections, each sending a header line a second."""

    def __init__(self, port, count):
        self.port = port
        self.sockets = [open_slow(port) for _ in range(count)]
        self.reopened = 0
        self.done = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        line = 0
        while not self.done:
            start = time.monotonic()
            for i, s in enumerate(self.sockets):
                try:
                    s.send(b"X-Slow-%d: a\r\n" % line)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:  # closed by the server: open another
                    s.close()
                    try:
                        self.sockets[i] = open_slow(self.port)
                        self.reopened += 1
                    except OSError:
                        pass
            line += 1
            time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))

    def still_open(self):
        """Connections still waiting: the server has neither answered (a 408) nor closed them."""
        count = 0
        for s in self.sockets:
            try:
                s.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                count += 1
            except OSError:
                pass
        return count

    def stop(self):
        self.done = True
        self.thread.join()
        for s in self.sockets:
            s.close()


def read_answer(s, deadline):
    data = b""
    while True:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            length = 0
            for line in data[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(data) >= head_end + 4 + length:
                return data[: head_end + 4 + length]
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        s.settimeout(left)
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk


def time_requests(port, count, timeout, keep_alive):
    request = ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % PATH).encode()
    latencies, failures = [], 0
    s = None
    for _ in range(count):
        start = time.monotonic()
        deadline = start + timeout
        try:
            if s is None:
                s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(request)
            answer = read_answer(s, deadline)
            if not answer.startswith(b"HTTP/1.1 200"):
                raise ConnectionError(answer[:80])
            latencies.append((time.monotonic() - start) * 1000)
        except (OSError, TimeoutError, ConnectionError):
            failures += 1
            if s is not None:
                s.close()
            s = None
            if failures >= 5:
                break
            continue
        if not keep_alive:
            s.close()
            s = None
    if s is not None:
        s.close()
    return latencies, failures


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="build/src/gpuolap")
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--label", default="")
    parser.add_argument("--header", action="store_true", help="print the table's header first")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    with tempfile.TemporaryDirectory() as work:
        cube = os.path.join(work, "demo")
        subprocess.run([args.bin, "generate", "--kind", "demo", "--format", "store", "--out", cube],
                       check=True, stderr=subprocess.DEVNULL)
        log = open(os.path.join(work, "serve.err"), "w+")
        server = subprocess.Popen([args.bin, "serve", "--cube", cube, "--port", "0", "--engine", "cpu-serial",
                                   "--threads", str(args.threads)], stderr=log)
        try:
            port = None
            for _ in range(600):
                log.seek(0)
                text = log.read()
                if "listening on http://127.0.0.1:" in text:
                    port = int(text.split("listening on http://127.0.0.1:")[1].split()[0])
                    break
                time.sleep(0.1)
            if port is None:
                raise SystemExit("the server did not start:\n" + text)
            # Warm: the first answer loads what the engine caches.
            time_requests(port, 10, args.timeout, True)
            slow = SlowClients(port, args.slow)
            time.sleep(2)  # every slow connection accepted and past its first line
            if args.header:
                print("| server | slow connections | mode | requests answered | p50 ms | p99 ms | max ms "
                      "| no answer in %g s | slow ones open at the end (reopened) |" % args.timeout)
                print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
            for mode, keep_alive in (("one kept-alive connection", True), ("a new connection each", False)):
                latencies, failures = time_requests(port, args.requests, args.timeout, keep_alive)
                print("| %s | %d | %s | %d | %.2f | %.2f | %.2f | %d | %d (%d) |" % (
                    args.label, args.slow, mode, len(latencies), percentile(latencies, 50),
                    percentile(latencies, 99), max(latencies) if latencies else float("nan"), failures,
                    slow.still_open(), slow.reopened), flush=True)
            slow.stop()
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
