#!/usr/bin/python3
"""The card's doorbell server: QEMU's ivshmem server protocol (QEMU 7.2
docs/specs/ivshmem-spec.rst, "The ivshmem Client-Server Protocol"), which
Debian does not ship a server for. scripts/card-keeper.py runs it for a
card (DOORBELL=1), from before QEMU starts until QEMU ends; QEMU's
ivshmem-doorbell device is peer 0, the card; pmuctl processes connect as
peers of their own.

It hands every client the mailbox file and one eventfd per vector for each
peer it needs (see Server for where it departs from the spec, for QEMU's
sake and for the clients'). It never waits on a client: sockets are
non-blocking and what a client has not taken waits in the server's queue.

Run alone (tests, or a card started by hand), it serves --shm (an existing
file) on --socket (which must not exist) until the process --watch names
ends; that process's connection is peer 0. It returns once the socket
listens, leaving a child that serves.

Python rather than C: the protocol is a few messages at connect time,
never on a doorbell's path (a ring is an eventfd write between QEMU and
pmuctl), and the standard library has every call it needs (send_fds,
eventfd, pidfd_open); nothing to build or to keep apart from the card's C.
"""

import argparse
import collections
import errno
import os
import resource
import selectors
import socket
import struct
import sys
import time

PROTOCOL_VERSION = 0   # spec, message 1
MAX_ID = 65535         # spec: IDs fit the Doorbell register's 16 bits
MAX_PEERS = 64         # IDs whose eventfds the server holds at once: connected peers and departed ones
                       # whose eventfds QEMU has yet to take; a client beyond is refused (connection closed)
PER_PROCESS = 8        # connections one process may hold: one hoarding process leaves room for pmuctl
SEND_DEADLINE_S = 5.0  # a client that has not taken its messages by then is dropped (never QEMU)
ACCEPT_PAUSE_S = 1.0   # out of descriptors: no accept for this long, or until a peer leaves
QEMU_RESERVE = 64      # of QEMU's descriptor limit, left for QEMU's own use
NEW_PER_S = 10         # new peers a second, sustained (MAX_PEERS at once): QEMU takes each one's eventfds
                       # in its main loop and keeps them for good; a connect storm told it 2,850 a second,
                       # and the card, starved, stopped answering until QEMU had taken them all
LOG_EVERY_S = 1.0      # at most one log line of a kind per second (a hostile client could flood it)
COUNT_EVERY_S = 1.0    # QEMU's descriptors counted (/proc/PID/fd) at most this often: a count costs time
                       # in proportion to them (50 ms at 11,000), and a connect storm would starve the card
NOFD = object()        # a message without a descriptor


class Peer:
    def __init__(self, conn, pid, proc):
        self.conn, self.id, self.proc = conn, pid, proc  # proc: the client's process (SO_PEERCRED)
        self.out = collections.deque()  # (bytes, descriptor or None, ID whose eventfd it is or None)
        self.deadline = None            # set while out holds messages
        self.told = False               # QEMU was sent its eventfds


class Server:
    """Where it departs from the spec:
    - IDs are handed out once, in order (0 to the watched process, QEMU): a
      departed peer's eventfds may live on in its process (a copy it kept,
      or passed on), so a later peer never gets its ID or its eventfds. The
      server closes its copies when the peer has left and QEMU has them.
    - QEMU is told that a peer left (the spec's disconnection: the peer's
      ID without a descriptor) only with qemu_closes_peers, a QEMU with
      scripts/qemu-fixes/0002: Debian's 7.2 (hw/misc/ivshmem.c
      close_peer_eventfds) frees a peer's eventfd array without forgetting
      it, and frees it again at exit (ivshmem_exit: "double free or
      corruption"). Not told, QEMU keeps one eventfd per vector for every
      peer it was told of: the server tells it of no more than its
      descriptor limit allows (QEMU_RESERVE left), then refuses clients
      (pmuctl polls).
    - New peers come at most NEW_PER_S a second (MAX_PEERS at once): each
      costs QEMU work in its main loop and descriptors for good; a client
      beyond is refused (pmuctl polls).
    - A client gets the card's eventfds (peer 0) and its own, not other
      clients': pmuctl rings only the card, and another client's eventfd
      would let it take that client's rings."""

    def __init__(self, shm_fd, vectors, watch_pid, name, qemu_closes_peers=False):
        self.shm_fd, self.vectors, self.watch_pid, self.name = shm_fd, vectors, watch_pid, name
        self.qemu_closes_peers = qemu_closes_peers
        self.peers = {}     # ID -> Peer, connected now
        self.fds = {}       # ID -> its eventfds, while a peer or a queued message holds them
        self.refs = {}      # ID -> how many hold them
        self.next_id = 0
        self.qemu = None    # peer 0 while connected
        self.per_proc = collections.Counter()
        self.paused_until = None
        self.counted = None   # (when, QEMU's descriptors then) of the last count
        self.told = 0         # eventfds queued to QEMU since that count
        self.tokens, self.tokens_at = float(MAX_PEERS), time.monotonic()  # new peers allowed now (NEW_PER_S)
        self.logged = {}    # kind -> (last time, lines not printed since)
        self.sel = selectors.DefaultSelector()

    def log(self, kind, text):
        now = time.monotonic()
        last, quiet = self.logged.get(kind, (0.0, 0))
        if now - last < LOG_EVERY_S:
            self.logged[kind] = (last, quiet + 1)
            return
        self.logged[kind] = (now, 0)
        more = f" ({quiet} more like it)" if quiet else ""
        try:
            print(f"ivshmem-server: card {self.name}: {text}{more}", file=sys.stderr, flush=True)
        except OSError:
            pass  # nobody reads our stderr any more

    def unref(self, pid):
        self.refs[pid] -= 1
        if not self.refs[pid]:
            for fd in self.fds.pop(pid):
                os.close(fd)
            del self.refs[pid]

    def queue(self, peer, value, fd=NOFD, owner=None):
        # spec: one 8-byte little-endian signed number, perhaps with a file descriptor (SCM_RIGHTS)
        peer.out.append((struct.pack("<q", value), None if fd is NOFD else fd, owner))
        if owner is not None:
            self.refs[owner] += 1

    def refuse(self, conn, kind, why):
        conn.close()
        self.log(kind, f"client refused: {why}")

    def qemu_room(self):
        """Whether QEMU can take one more peer's eventfds within its descriptor limit: what it held at
        the last count (at most COUNT_EVERY_S old), and every eventfd queued to it since or then."""
        if self.qemu is None:
            return True
        try:
            soft = resource.prlimit(self.watch_pid, resource.RLIMIT_NOFILE)[0]
            now = time.monotonic()
            if self.counted is None or now - self.counted[0] >= COUNT_EVERY_S:
                self.counted = (now, len(os.listdir(f"/proc/{self.watch_pid}/fd")))
                self.told = sum(1 for m in self.qemu.out if m[1] is not None)
        except OSError:
            return True  # not ours to read: QEMU's recvmsg is the judge
        return soft == resource.RLIM_INFINITY or self.counted[1] + self.told + self.vectors + QEMU_RESERVE <= soft

    def connect(self, conn):
        conn.setblocking(False)
        proc = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        if self.next_id == 0 and proc != self.watch_pid:
            return self.refuse(conn, "early", f"process {proc} came before the card's QEMU (PID {self.watch_pid})")
        if len(self.fds) >= MAX_PEERS:
            return self.refuse(conn, "cap", f"{MAX_PEERS} peers hold eventfds, the most")
        if self.per_proc[proc] >= PER_PROCESS:
            return self.refuse(conn, "proc", f"process {proc} holds {PER_PROCESS} connections, the most")
        if self.next_id > MAX_ID:
            return self.refuse(conn, "ids", f"all {MAX_ID + 1} IDs were given out in this card's life")
        if not self.qemu_room():
            return self.refuse(conn, "qemu", "QEMU would have too few descriptors left to take its eventfds")
        now = time.monotonic()
        self.tokens = min(float(MAX_PEERS), self.tokens + (now - self.tokens_at) * NEW_PER_S)
        self.tokens_at = now
        if self.next_id and self.tokens < 1:
            return self.refuse(conn, "rate", f"more than {NEW_PER_S} new clients a second, the most")
        fds = []
        try:
            for _ in range(self.vectors):
                fds.append(os.eventfd(0, os.EFD_CLOEXEC))
        except OSError as e:
            for fd in fds:
                os.close(fd)
            self.out_of_fds(e)
            return self.refuse(conn, "eventfd", f"no eventfd: {e.strerror}")
        pid, self.next_id = self.next_id, self.next_id + 1
        self.tokens -= pid != 0
        new = Peer(conn, pid, proc)
        self.fds[pid], self.refs[pid] = fds, 1  # held by the peer while it is connected
        self.peers[pid] = new
        self.per_proc[proc] += 1
        try:
            self.sel.register(conn, selectors.EVENT_READ, new)
        except OSError as e:
            self.log("register", f"cannot watch a client: {e.strerror}")
            return self.drop(new)
        if pid == 0:
            self.qemu = new
        # spec, on connect: 1 the version, 2 its ID, 3 -1 with the shared memory, 4 the card's
        # eventfds (the only other peer a client needs), 5 its own, to receive interrupts;
        # and the new peer's eventfds to the card.
        self.queue(new, PROTOCOL_VERSION)
        self.queue(new, pid)
        self.queue(new, -1, self.shm_fd)
        if pid and 0 in self.fds:
            for fd in self.fds[0]:
                self.queue(new, 0, fd, 0)
        for fd in fds:
            self.queue(new, pid, fd, pid)
        qemu = self.qemu if pid else None
        if qemu:
            for fd in fds:
                self.queue(qemu, pid, fd, pid)
            self.told += len(fds)
            new.told = True
        self.flush(new)  # each may drop its peer: what is queued holds the eventfds it carries
        if qemu:
            self.flush(qemu)

    def flush(self, peer):
        """Sends what the kernel takes now; the rest waits for the socket to be writable."""
        while peer.out:
            data, fd, owner = peer.out[0]
            try:
                if fd is None:
                    sent = peer.conn.send(data)
                else:
                    sent = socket.send_fds(peer.conn, [data], [fd])
            except BlockingIOError:
                break
            except OSError:
                return self.drop(peer)
            peer.out.popleft()
            if sent < len(data):  # the descriptor went with the first byte
                peer.out.appendleft((data[sent:], None, None))
            if owner is not None:
                self.unref(owner)
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if peer.out else 0)
        try:
            self.sel.modify(peer.conn, events, peer)
        except (OSError, KeyError, ValueError):
            pass
        if not peer.out:
            peer.deadline = None
        elif peer.deadline is None and peer is not self.qemu:
            peer.deadline = time.monotonic() + SEND_DEADLINE_S

    def drop(self, peer):
        if self.peers.pop(peer.id, None) is None:
            return
        try:
            self.sel.unregister(peer.conn)
        except (KeyError, ValueError):
            pass
        peer.conn.close()
        for _, _, owner in peer.out:
            if owner is not None:
                self.unref(owner)
        peer.out.clear()
        self.per_proc[peer.proc] -= 1
        if not self.per_proc[peer.proc]:
            del self.per_proc[peer.proc]
        self.unref(peer.id)  # its eventfds go once QEMU has taken them
        if peer is self.qemu:
            self.qemu = None  # gone for good (QEMU ends): its ID is never given again
        elif peer.told and self.qemu is not None and self.qemu_closes_peers:
            self.queue(self.qemu, peer.id)  # after its eventfds, if they still wait: QEMU closes them
            self.flush(self.qemu)
        self.resume()  # a descriptor is free

    def out_of_fds(self, e):
        if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM) and self.paused_until is None:
            self.paused_until = time.monotonic() + ACCEPT_PAUSE_S
            try:
                self.sel.unregister(self.listener)
            except (KeyError, ValueError):
                pass
            self.log("pause", f"out of descriptors ({e.strerror}): no new clients for {ACCEPT_PAUSE_S:g} s "
                              "or until one leaves")

    def resume(self):
        if self.paused_until is not None:
            self.paused_until = None
            try:
                self.sel.register(self.listener, selectors.EVENT_READ, "listen")
            except OSError as e:
                self.out_of_fds(e)

    def accept(self):
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        except OSError as e:
            self.out_of_fds(e)
            return
        try:
            self.connect(conn)
        except OSError as e:
            conn.close()
            self.out_of_fds(e)
            self.log("connect", f"client dropped at connect: {e.strerror}")

    def serve(self, listener, pidfd):
        """Serves until the watched process ends (pidfd readable)."""
        self.listener = listener
        listener.setblocking(False)
        self.sel.register(listener, selectors.EVENT_READ, "listen")
        self.sel.register(pidfd, selectors.EVENT_READ, "watch")
        while True:
            now = time.monotonic()
            times = [p.deadline for p in self.peers.values() if p.deadline] + [self.paused_until or now + 60]
            for key, events in self.sel.select(max(0.0, min(times) - now)):
                if key.data == "watch":
                    return
                if key.data == "listen":
                    self.accept()
                    continue
                peer = key.data
                if events & selectors.EVENT_WRITE:
                    self.flush(peer)
                if events & selectors.EVENT_READ and peer.id in self.peers:
                    try:  # clients send nothing: readable means gone (or misbehaving)
                        data = peer.conn.recv(4096)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if not data:
                        self.drop(peer)
            now = time.monotonic()
            for p in [p for p in self.peers.values() if p.deadline and p.deadline <= now]:
                self.log("slow", f"peer {p.id} (process {p.proc}) took not its messages in {SEND_DEADLINE_S:g} s: dropped")
                self.drop(p)
            if self.paused_until is not None and self.paused_until <= now:
                self.resume()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="the UNIX socket to listen on (must not exist)")
    ap.add_argument("--shm", required=True, help="the shared memory file to hand out (must exist)")
    ap.add_argument("--size", type=int, required=True, help="its size in bytes (checked)")
    ap.add_argument("--vectors", type=int, default=1, help="eventfds per peer (QEMU's vectors=)")
    ap.add_argument("--watch", type=int, required=True, help="peer 0; end when this process ends")
    ap.add_argument("--qemu-closes-peers", action="store_true",
                    help="tell QEMU when a peer leaves (a QEMU with scripts/qemu-fixes/0002)")
    a = ap.parse_args()
    if not 1 <= a.vectors <= 64:
        sys.exit(f"ivshmem-server: --vectors must be 1 to 64, got {a.vectors}")
    os.umask(0o077)  # the socket: this user's only
    try:
        pidfd = os.pidfd_open(a.watch)
        shm = os.open(a.shm, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        if os.fstat(shm).st_size != a.size:
            sys.exit(f"ivshmem-server: {a.shm} is not of --size {a.size} bytes")
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
    os.close(null)
    try:
        Server(shm, a.vectors, a.watch, os.path.basename(a.shm), a.qemu_closes_peers).serve(listener, pidfd)
    finally:
        try:
            if os.stat(a.socket).st_ino == ours:
                os.unlink(a.socket)
        except OSError:
            pass


if __name__ == "__main__":
    main()
