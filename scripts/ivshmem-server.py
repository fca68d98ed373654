#!/usr/bin/python3
"""The card's doorbell server: QEMU's ivshmem server protocol (QEMU 7.2
docs/specs/ivshmem-spec.rst, "The ivshmem Client-Server Protocol"), which
Debian does not ship a server for. scripts/qemu.sh starts it before QEMU;
QEMU's ivshmem-doorbell device connects first (peer 0, the card), pmuctl
processes connect after it as peers of their own.

It hands every client the mailbox file (created at --size bytes if it is
missing or of another size) and one eventfd per vector for each peer (see
Server for where it departs from the spec, for QEMU's sake), and it ends when the process --watch names ends (qemu.sh execs QEMU, so its PID is
QEMU's). It returns once the socket listens, leaving a child that serves.

Python rather than C: the protocol is a few messages at connect time,
never on a doorbell's path (a ring is an eventfd write between QEMU and
pmuctl), and the standard library has every call it needs (send_fds,
eventfd, pidfd_open); nothing to build or to keep apart from the card's C.
"""

import argparse
import os
import selectors
import socket
import struct
import sys

PROTOCOL_VERSION = 0      # spec, message 1
MAX_ID = 65535            # spec: IDs fit the Doorbell register's 16 bits
SEND_TIMEOUT_S = 1.0      # a client that does not read its messages is dropped, not waited for


class Client:
    def __init__(self, conn, pid):
        self.conn, self.id = conn, pid
        self.heard = set()  # the peers whose eventfds it has been sent

    def send(self, value, fd=None):
        msg = struct.pack("<q", value)  # spec: one 8-byte little-endian signed number ...
        if fd is None:
            self.conn.sendall(msg)
        else:
            socket.send_fds(self.conn, [msg], [fd])  # ... with a file descriptor via SCM_RIGHTS


class Server:
    """A departed client's ID and eventfds stay for the next client that
    takes the ID, and no disconnection is ever sent (the spec's message 6):
    QEMU 7.2's hw/misc/ivshmem.c close_peer_eventfds frees a peer's eventfd
    array without forgetting it, so a disconnection makes QEMU write into
    freed memory when the ID comes back (process_msg_connect) and free the
    array again at exit (ivshmem_exit: "double free or corruption")."""

    def __init__(self, shm_fd, vectors):
        self.shm_fd, self.vectors = shm_fd, vectors
        self.clients = {}   # ID -> Client, connected now
        self.eventfds = {}  # ID -> its eventfds, one per vector, kept for good
        self.sel = selectors.DefaultSelector()

    def connect(self, conn):
        # The lowest ID no client holds: the first client (QEMU) gets 0, as the
        # spec says, and QEMU's peer table stays as small as the clients at once.
        pid = next((i for i in range(MAX_ID + 1) if i not in self.clients), None)
        if pid is None:
            conn.close()
            return
        conn.settimeout(SEND_TIMEOUT_S)
        if pid not in self.eventfds:
            self.eventfds[pid] = [os.eventfd(0, os.EFD_CLOEXEC) for _ in range(self.vectors)]
        new = Client(conn, pid)
        try:
            # spec, on connect: 1 the version, 2 its ID, 3 -1 with the shared memory, ...
            new.send(PROTOCOL_VERSION)
            new.send(pid)
            new.send(-1, self.shm_fd)
            for other in self.clients.values():  # ... 4 the other clients' eventfds, ...
                self.tell(new, other.id)
        except OSError:
            conn.close()
            return
        for other in list(self.clients.values()):  # ... the new one to the others (once ever) ...
            try:
                self.tell(other, pid)
            except OSError:
                self.drop(other)
        try:
            for fd in self.eventfds[pid]:  # ... and 5 its own, to receive interrupts.
                new.send(pid, fd)
        except OSError:
            conn.close()
            return
        self.clients[pid] = new
        self.sel.register(conn, selectors.EVENT_READ, new)

    def tell(self, client, pid):
        if pid not in client.heard:
            for fd in self.eventfds[pid]:
                client.send(pid, fd)
            client.heard.add(pid)

    def drop(self, client):
        if self.clients.pop(client.id, None) is not None:
            self.sel.unregister(client.conn)
            client.conn.close()

    def serve(self, listener, pidfd):
        self.sel.register(listener, selectors.EVENT_READ, "listen")
        self.sel.register(pidfd, selectors.EVENT_READ, "watch")
        while True:
            for key, _ in self.sel.select():
                if key.data == "watch":
                    return
                if key.data == "listen":
                    try:
                        conn, _ = listener.accept()
                    except OSError:
                        continue
                    self.connect(conn)
                    continue
                try:  # clients send nothing: readable means gone (or misbehaving)
                    data = key.data.conn.recv(64)
                except OSError:
                    data = b""
                if not data:
                    self.drop(key.data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="the UNIX socket to listen on (replaced if stale)")
    ap.add_argument("--shm", required=True, help="the shared memory file to hand out")
    ap.add_argument("--size", type=int, required=True, help="its size in bytes (a power of two)")
    ap.add_argument("--vectors", type=int, default=1, help="eventfds per peer (QEMU's vectors=)")
    ap.add_argument("--watch", type=int, required=True, help="end when this process ends")
    a = ap.parse_args()
    if a.size <= 0 or a.size & (a.size - 1):
        sys.exit(f"ivshmem-server: --size must be a power of two, got {a.size}")
    if not 1 <= a.vectors <= 64:
        sys.exit(f"ivshmem-server: --vectors must be 1 to 64, got {a.vectors}")
    try:
        pidfd = os.pidfd_open(a.watch)
        shm = os.open(a.shm, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if os.fstat(shm).st_size != a.size:
            os.ftruncate(shm, a.size)
        if os.path.exists(a.socket):
            os.unlink(a.socket)  # a server that was killed left it
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(a.socket)
        listener.listen(16)
        ours = os.stat(a.socket).st_ino
    except OSError as e:
        sys.exit(f"ivshmem-server: {e}")
    if os.fork():
        os._exit(0)  # the socket listens: QEMU may connect
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # not the caller's output: whoever reads it would wait for this process
    try:
        Server(shm, a.vectors).serve(listener, pidfd)
    finally:
        try:  # not a later server's, for the same card, that replaced it
            if os.stat(a.socket).st_ino == ours:
                os.unlink(a.socket)
        except OSError:
            pass


if __name__ == "__main__":
    main()
