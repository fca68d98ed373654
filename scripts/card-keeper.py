#!/usr/bin/python3
"""A card's name and its files in /dev/shm, held for QEMU's lifetime.
scripts/qemu.sh execs this with QEMU's command line, and this execs QEMU
(the same PID: a kill of qemu.sh's PID is a kill of QEMU).

    card-keeper.py --card=NAME [--mbox BYTES] [--doorbell VECTORS [--qemu-closes-peers]] [--pmu] [--knc] [--ram | --keep-ram] -- COMMAND...

- One card per name: /dev/shm/pmuos-NAME.lock, locked with flock and
  holding the card's PID. QEMU inherits the lock, so it is held while QEMU
  runs even if the watcher below is killed; a second card of that name is
  refused with the PID that holds it. The lock is taken before any file of
  the card is touched.
- Its files are this user's only: created 0600 with O_EXCL|O_NOFOLLOW
  (the mailbox /dev/shm/pmuos-NAME sized to --mbox, -pmu, -ram empty for
  QEMU to size, -knc empty for the plugin's report of instructions a KNC
  core lacks (scripts/qemu.sh CPU=knc), .sock bound under umask 077). One left by a card whose
  watcher was killed (the lock had no holder) is removed first if it is
  this user's and not a symbolic link; any other is refused, named.
  --keep-ram: the RAM file is the simulated card's (tests/cardsim/card.py):
  used if it is this user's regular file, made 0600, never removed.
- A watcher, in a process group of its own (a kill of the terminal's
  process group leaves it), serves the doorbell (scripts/ivshmem-server.py,
  --doorbell) or only waits, and when QEMU ends, however it ends, removes
  every file made here, the lock last.
"""

import argparse
import errno
import fcntl
import importlib.util
import os
import select
import signal
import socket
import stat
import sys
import time

SHM = "/dev/shm"
HANDOVER_S = 5.0  # a lock whose PID has ended: its watcher is removing the files; wait this long


MADE = []  # (path, inode) of what this card made, the lock first: removed when the card ends or is refused


def remove_made(only=None):
    for path, ino in reversed(MADE):  # the lock last
        if only not in (None, path):
            continue
        try:  # only what is still ours: never a later card's
            if os.lstat(path).st_ino == ino:
                os.unlink(path)
        except OSError:
            pass


def die(msg):
    print(f"qemu.sh: {msg}", file=sys.stderr)
    remove_made()
    sys.exit(2)


def check_ours(path, st, kind):
    """Refuses a file at the card's path that is not this user's `kind` (S_ISREG, S_ISSOCK)."""
    if stat.S_ISLNK(st.st_mode):
        die(f"{path} is a symbolic link, not a card's file: refused (remove it)")
    if st.st_uid != os.geteuid():
        die(f"{path} belongs to user {st.st_uid}, not this one ({os.geteuid()}): refused (another user's card, "
            "or a file put there to take this card's: remove it, or choose another CARD=)")
    if not kind(st.st_mode):
        die(f"{path} is not a card's file (mode {st.st_mode:o}): refused (remove it)")


def holders_of(path):
    """The processes that hold an open descriptor of `path` (from /proc/*/fd): 'PID (NAME)', or 'none found'."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == path for fd in fds):
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                with open(f"/proc/{pid}/wchan") as f:
                    wchan = f.read().strip()
                found.append(f"{pid} ({st[st.index('(') + 1:st.rindex(')')]}, state {st[st.rindex(')') + 2]}, "
                             f"parent {st[st.rindex(')') + 2:].split()[1]}, waiting in {wchan or '-'})")
        except OSError:
            continue
    return ", ".join(found) or "none found"


def take_lock(name):
    """The card's lock, held (its descriptor, inheritable), with this PID in it."""
    path = f"{SHM}/pmuos-{name}.lock"
    end = time.monotonic() + HANDOVER_S
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as e:
            die(f"cannot open {path}: {e.strerror}" + (" (a symbolic link: refused)" if e.errno == errno.ELOOP else ""))
        check_ours(path, os.fstat(fd), stat.S_ISREG)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            if holder.isdigit() and os.path.exists(f"/proc/{holder}"):
                die(f"card {name} is in use by PID {holder} (it holds {path}): "
                    f"end that card first, or choose another CARD=")
            if time.monotonic() > end:
                die(f"card {name}: its last QEMU (PID {holder or '?'}) has ended, but {path} is still locked "
                    f"after {HANDOVER_S:g} s, held by: {holders_of(path)}")
            time.sleep(0.05)  # that card has ended: its watcher is removing its files
            continue
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the last card's watcher removed the file we locked: take the new one
    MADE.append((path, os.fstat(fd).st_ino))
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    os.set_inheritable(fd, True)  # QEMU holds it as long as it runs
    return fd


def clear_stale(path, kind):
    """Removes a file a card of this name left (we hold its lock: nobody uses it), if it is ours."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    check_ours(path, st, kind)
    os.unlink(path)


def make_file(path, size):
    """A new file of the card's, 0600, of `size` bytes (0: its user sizes it); its descriptor."""
    clear_stale(path, stat.S_ISREG)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        die(f"cannot create {path}: {e.strerror}")
    MADE.append((path, os.fstat(fd).st_ino))
    os.ftruncate(fd, size)
    return fd


def load_server():
    sys.dont_write_bytecode = True  # nothing written beside the sources
    spec = importlib.util.spec_from_file_location(
        "ivshmem_server", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ivshmem-server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def watch(name, pidfd, doorbell):
    """The watcher: serves the doorbell or waits until QEMU ends, then removes what was made."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # not the caller's output: whoever reads it would wait for this process
    os.close(null)
    try:
        if doorbell:
            server, shm_fd, listener, vectors, qemu_pid, closes = doorbell
            try:
                server.Server(shm_fd, vectors, qemu_pid, name, closes).serve(listener, pidfd)
            except Exception as e:  # whatever it was, the card runs on without its doorbell
                listener.close()
                remove_made(f"{SHM}/pmuos-{name}.sock")  # no server there: pmuctl polls at once
                try:
                    print(f"ivshmem-server: card {name}: the doorbell server failed ({type(e).__name__}: {e}); "
                          "pmuctl polls the mailbox", file=sys.stderr, flush=True)
                except OSError:
                    pass
        select.select([pidfd], [], [])  # until QEMU ends
    finally:
        remove_made()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--card", required=True, metavar="NAME", help="the card's name (qemu.sh CARD)")
    ap.add_argument("--mbox", type=int, default=0, help="the mailbox file /dev/shm/pmuos-NAME, of BYTES")
    ap.add_argument("--doorbell", type=int, default=0, metavar="VECTORS",
                    help="serve the mailbox's doorbell on /dev/shm/pmuos-NAME.sock")
    ap.add_argument("--qemu-closes-peers", action="store_true",
                    help="QEMU closes a departed peer's eventfds when told (scripts/qemu-fixes/0002)")
    ap.add_argument("--pmu", action="store_true", help="the plugin's page /dev/shm/pmuos-NAME-pmu")
    ap.add_argument("--knc", action="store_true", help="the plugin's KNC report /dev/shm/pmuos-NAME-knc")
    ap.add_argument("--ram", action="store_true", help="card memory /dev/shm/pmuos-NAME-ram")
    ap.add_argument("--keep-ram", action="store_true", help="card memory that exists already and is not ours")
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    try:
        keep(a)
    except OSError as e:  # each call's failure named; what was made goes
        die(str(e))


def keep(a):
    """Takes the card's name and files, starts the watcher and becomes QEMU."""
    if a.doorbell and not a.mbox:
        die("card-keeper.py: --doorbell serves the mailbox: give --mbox")
    base = f"{SHM}/pmuos-{a.card}"
    os.umask(0o077)  # whatever QEMU creates too: this user's only
    take_lock(a.card)
    shm_fd = make_file(base, a.mbox) if a.mbox else None
    for wanted, suffix in ((a.pmu, "-pmu"), (a.knc, "-knc"), (a.ram, "-ram")):
        if wanted:
            os.close(make_file(base + suffix, 0))
    if a.keep_ram:
        try:
            fd = os.open(base + "-ram", os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as e:
            die(f"RAM_KEEP=1: cannot open {base}-ram: {e.strerror}")
        check_ours(base + "-ram", os.fstat(fd), stat.S_ISREG)
        os.fchmod(fd, 0o600)
        os.close(fd)
    doorbell = None
    if a.doorbell:
        sock = base + ".sock"
        clear_stale(sock, stat.S_ISSOCK)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(sock)
            listener.listen(16)
        except OSError as e:
            die(f"cannot listen on {sock}: {e.strerror}")
        MADE.append((sock, os.lstat(sock).st_ino))
        # Listening before QEMU starts: its device reads its ID and memory while it is created.
        doorbell = (load_server(), shm_fd, listener, a.doorbell, os.getpid(), a.qemu_closes_peers)
    pidfd = os.pidfd_open(os.getpid())  # this process, QEMU after the exec below
    child = os.fork()
    if child == 0:
        # A process group of its own, not a session: a session is also a scheduler autogroup
        # (CONFIG_SCHED_AUTOGROUP), and a watcher alone in a new one was seen runnable for 12 s
        # before its first time slice on a loaded 2-core host (/proc/PID/schedstat), its doorbell
        # unserved and its lock held that long after QEMU had ended.
        os.setpgid(0, 0)
        # Still in the terminal's session: what the terminal sends a group it is not in
        # (SIGHUP, SIGINT) and SIGTTOU (a background write to the terminal under `stty tostop`)
        # must not stop or end it. Nor SIGTERM: its command line holds QEMU's, so `pkill -f
        # qemu-system` reaches it beside QEMU, and it ends when QEMU does, its files removed.
        for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
            signal.signal(sig, signal.SIG_IGN)
        if os.fork():
            os._exit(0)  # the watcher's parent is init, not QEMU
        try:
            watch(a.card, pidfd, doorbell)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    try:
        os.execvp(a.command[0], a.command)
    except OSError as e:
        die(f"cannot run {a.command[0]}: {e.strerror}")


if __name__ == "__main__":
    main()
