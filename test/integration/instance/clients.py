#!/usr/bin/env python3
"""Customer connections for test/integration/instance/safety_checks.sh.

  clients.py PORT USER PASS FILL READY GO OUT      (CLIENTS_HOST: 127.0.0.1)

Opens one authenticated connection (the writer); with FILL=1 then opens idle connections
until the server refuses one ("max number of clients reached"), so no client slot is
left. Touches READY, waits until GO exists, sends SET on the writer and writes to OUT
what came back within 6 s: "+OK", another reply, "closed" or "timeout". Bounded: at
most 10,000 connections and 60 s in all."""
import os
import socket
import sys
import time

HOST = os.environ.get("CLIENTS_HOST", "127.0.0.1")


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def main():
    port, user, pw, fill, ready, go, out = sys.argv[1:8]
    deadline = time.time() + 60
    w = socket.create_connection((HOST, int(port)), timeout=3)
    w.sendall(resp("AUTH", user, pw))
    assert w.recv(64).startswith(b"+OK"), "AUTH failed"
    idle = []
    while fill == "1" and len(idle) < 10000 and time.time() < deadline:
        s = socket.create_connection((HOST, int(port)), timeout=3)
        s.sendall(resp("PING"))
        try:
            r = s.recv(128)
        except socket.timeout:
            r = b""
        if not r or b"max number of clients" in r:  # NOAUTH still holds a slot
            s.close()
            break
        idle.append(s)
    open(ready, "w").write("%d\n" % len(idle))
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.02)
    w.sendall(resp("SET", "safety:key", "1"))
    w.settimeout(6)
    try:
        r = w.recv(128)
        got = r.decode(errors="replace").strip() if r else "closed"
    except socket.timeout:
        got = "timeout"
    except OSError:
        got = "closed"
    open(out, "w").write(got + "\n")


if __name__ == "__main__":
    main()
