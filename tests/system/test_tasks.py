"""Ring-3 tasks: newlib programs, pmuos-cc, SPMD launches, RDPMC and SPFLT
without entering the kernel (emulated on the model), faults that end only
their task (issue: Ring-3 tasks)."""
import os
import re
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, cpu_rows

PMUOS_CC = os.path.join(BUILD, "bin", "pmuos-cc")


def status(out, rank=0):
    m = re.search(rf"^task \d+ \(\w+, rank {rank}, CPU \d+\): (.*)$", out, re.M)
    return m[1] if m else None


def test_user_program_from_pmuos_cc_runs_on_the_card(card_factory, tmp_path):
    src = tmp_path / "mine.c"
    src.write_text("""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    long *v = malloc(n * sizeof(long));
    long sum = 0;
    pmu_region_begin("sum");
    for (int i = 0; i < n; i++) { v[i] = i * i; sum += v[i]; }
    pmu_region_end("sum");
    printf("mine: sum of %d squares = %ld on CPU %d\\n", n, sum, pmuos_getcpu());
    free(v);
    return (int)(sum % 100);
}
""")
    elf = tmp_path / "mine.elf"
    subprocess.run([PMUOS_CC, "-O2", "-o", str(elf), str(src)], check=True)
    card = card_factory(cpus=4, boot="multiboot", env={"PROGRAMS": str(elf)})  # modules: Multiboot
    out = card.cmd("run mine 1000 on 2")
    n = 1000
    want = sum(i * i for i in range(n))
    assert f"mine: sum of 1000 squares = {want} on CPU 2" in out
    assert re.search(r"^region sum: calls 1, counter0 \d+, counter1 \d+, tsc \d+$", out, re.M)
    assert status(out) == f"exit status {want % 100}"


def test_spmd_launch_one_instance_per_cpu(card):
    out = card.cmd("run hello a b on 1-3")
    for rank, cpu in enumerate((1, 2, 3)):
        assert f"[rank {rank}] hello from pmuos: rank {rank} of 3 on CPU {cpu} a b" in out
        assert status(out, rank) == "exit status 0"
    assert card.cmd("run hello fail").count("exit status 3") == 1


def test_spflt_regions_count_exactly_k_user_instructions_run_after_run(card):
    card.cmd("pmu set 1 0 INSTRUCTIONS_EXECUTED:u")
    card.cmd("pmu spflt 1 0")
    card.cmd("pmu start 1")
    # Run after run: CPU 0's mailbox heartbeat, re-armed while a launch was
    # being handed to CPU 1, once woke it inside the 10^6 region in 4 runs of 10.
    for run in range(10):
        out = card.cmd("run calib", timeout=120)
        for k in (0, 1, 10, 1000, 1000000):
            m = re.search(rf"^calib: region of {k} user instructions counted (\d+)$", out, re.M)
            assert m and int(m[1]) == k, (run, out)


def test_rdpmc_monotonic_and_agrees_with_the_kernel(card):
    card.cmd("pmu set 1 0 INSTRUCTIONS_EXECUTED:u")
    card.cmd("pmu spflt 1 0")
    card.cmd("pmu start 1")
    out = card.cmd("run calib", timeout=120)
    assert "calib: rdpmc monotonic over 1000 reads: yes" in out
    final = int(re.search(r"final counter 0 = (\d+)", out)[1])
    # SPFLT gated the counter off after the last region: the task's last RDPMC
    # and the kernel's reading afterwards are the same count.
    read = card.cmd("pmu read 1")
    assert int(re.search(r"^\s+1\s+0\s+INSTRUCTIONS_EXECUTED:u\s+(\d+)", read, re.M)[1]) == final
    assert final >= 1001011 - 100  # the calib regions alone are 1,001,011


FAULTS = [
    ("pf", "#PF page fault (vector 14)", "read of a kernel page"),
    ("kwrite", "#PF page fault (vector 14)", "address 0x100000: write to a read-only or kernel page"),
    ("kread", "#PF page fault (vector 14)", "address 0xfee00020: read of a kernel page"),
    ("gp", "#GP general protection (vector 13)", ""),
    ("ud", "#UD invalid opcode (vector 6)", ""),
    ("de", "#DE divide error (vector 0)", ""),
    ("stack", "#PF page fault (vector 14)", "access to an unmapped address"),
    ("exec", "#PF page fault (vector 14)", "instruction fetch from a non-executable page"),
    ("wrmsr", "#GP general protection (vector 13)", "privileged instruction"),
    ("rdmsr", "#GP general protection (vector 13)", "privileged instruction"),
    ("cr4", "#GP general protection (vector 13)", "privileged instruction"),
    ("hlt", "#GP general protection (vector 13)", "privileged instruction"),
]


@pytest.mark.parametrize("kind,exc,cause", FAULTS)
def test_fault_ends_only_its_task(card, kind, exc, cause):
    out = card.cmd(f"run fault {kind}")
    m = re.search(rf"^task \d+ \(fault, rank 0\) on CPU 1: (.*); task ended$", out, re.M)
    assert m and exc in m[1] and cause in m[1], out
    assert status(out).startswith("ended by exception vector")
    assert "exit status 0" in card.cmd("run hello")
    assert all(r[3] == "online" for r in cpu_rows(card.cmd("cpus")).values())


def test_hundred_faulting_launches_leave_the_kernel_healthy(card):
    kinds = [k for k, _, _ in FAULTS]
    for i in range(100):
        out = card.cmd(f"run fault {kinds[i % len(kinds)]} on {1 + i % 3}")
        assert "ended by exception vector" in status(out), out
    mem_before = int(re.search(r"free (\d+) KiB", card.cmd("mem"))[1])
    assert "exit status 0" in card.cmd("run hello on 1-3")
    # Every task's memory came back.
    card.cmd("run fault stack")
    assert int(re.search(r"free (\d+) KiB", card.cmd("mem"))[1]) == mem_before
    assert all(r[3] == "online" for r in cpu_rows(card.cmd("cpus")).values())


def mem_kib(card):
    """The `mem` command's usable and free memory, KiB."""
    m = re.search(r"usable (\d+) KiB, free (\d+) KiB", card.cmd("mem"))
    return int(m[1]), int(m[2])


def test_heap_exhaustion_is_an_error_not_a_crash(card):
    out = card.cmd("run fault heap", timeout=120)
    assert status(out) == "exit status 7"
    # sbrk refuses at the task's limit, a quarter of usable memory (kernel/task.h),
    # not when the card runs out: the program, its stack, page tables and
    # malloc's own words take the rest of the limit.
    usable, _ = mem_kib(card)
    heap = int(re.search(r"^fault: heap: (\d+) MiB$", out, re.M)[1]) * 1024
    assert usable // 4 - 4096 <= heap <= usable // 4, out


def test_program_over_the_task_memory_limit_is_refused(card_factory, tmp_path):
    """A program with 256 MiB of bss: less than the card has free, more than
    a task may hold (a quarter of usable memory, kernel/task.h). It is refused
    at launch with its size and the limit, and the card goes on."""
    src = tmp_path / "bigbss.c"
    src.write_text("static char big[256 << 20];\n"
                   "int main(int argc, char **argv) { big[argc] = 1; return big[1] - 1; }\n")
    elf = tmp_path / "bigbss.elf"
    subprocess.run([PMUOS_CC, "-O2", "-o", str(elf), str(src)], check=True)
    card = card_factory(boot="multiboot", env={"PROGRAMS": str(elf)})  # modules: Multiboot
    usable, free = mem_kib(card)
    assert 256 * 1024 < free - 4096  # it would fit in the card's memory
    out = card.cmd("run bigbss")
    m = re.search(r"^error: run: segment \d+ \((\d+) KiB\) takes the task to (\d+) KiB; its limit is (\d+) KiB$",
                  out, re.M)
    assert m, out
    size, total, limit = int(m[1]), int(m[2]), int(m[3])
    assert 256 * 1024 <= size < total and limit < size
    assert usable // 4 - 4 <= limit <= usable // 4  # in whole 4 KiB pages
    assert mem_kib(card)[1] == free  # the refused load gave every page back
    assert card.cmd("echo ok") == "ok\n"
    assert "exit status 0" in card.cmd("run hello")


def test_writable_code_only_when_asked(card_factory, tmp_path):
    """W^X: smc's code section is writable and executable; built without ld's executable-stack
    mark it is refused at launch, the segment named; built-in smc (linked with -z execstack)
    rewrites and runs its code."""
    elf = tmp_path / "wxno.elf"
    subprocess.run([PMUOS_CC, "-O2", "-Wl,--no-warn-rwx-segments", "-o", str(elf),
                    os.path.join(ROOT, "user", "programs", "smc.c")], check=True)
    card = card_factory(cpus=2, boot="multiboot", env={"PROGRAMS": str(elf)})  # modules: Multiboot
    out = card.cmd("run wxno 10")
    assert re.fullmatch(r"error: run: segment \d+ at 0x[0-9a-f]+ is writable and executable "
                        r"\(W\^X; ld -z execstack allows it\)\n", out), out
    out = card.cmd("run smc 100")
    assert "smc: 100 rounds, each a new block of 400 instructions" in out and status(out) == "exit status 0", out


def test_kill_and_ctrl_c_end_a_spinning_task(card):
    card.child.send("run fault spin on 2\r")
    card.child.expect_exact("fault: spin")
    card.send_raw(b"\x03")
    card.wait_prompt()
    out = card.cmd("tasks")
    assert re.search(r"^\s+\d+\s+fault\s+2\s+0\s+killed", out, re.M), out
    assert "exit status 0" in card.cmd("run hello on 2")


BUILT_IN = " ".join(sorted(f[:-2] for f in os.listdir(os.path.join(ROOT, "user", "programs")) if f.endswith(".c")))


@pytest.mark.parametrize("line,error", [
    ("run", "expected arguments"),
    ("run nosuch", f"error: run: no program 'nosuch'; there are: {BUILT_IN}"),
    ("run hello on 0", "CPU 0 runs the shell"),
    ("run hello on 7", "no CPU 7"),
    ("kill 999", "no running or waiting task 999"),
    ("kill x", "'x' is not a task ID"),
])
def test_bad_task_commands(card, line, error):
    out = card.cmd(line)
    assert out.startswith("error: ") and error in out, out


def test_bad_program_image_is_refused_with_the_reason(card_factory, tmp_path):
    bad = tmp_path / "junk.elf"
    bad.write_bytes(b"\x7fELF" + bytes(60))
    host = tmp_path / "host.elf"
    subprocess.run(["gcc", "-x", "c", "-o", str(host), "-"], input=b"int main(){return 0;}", check=True)
    card = card_factory(cpus=2, boot="multiboot", env={"PROGRAMS": f"{bad} {host}"})  # modules: Multiboot
    assert "error: run: not a 64-bit little-endian ELF" in card.cmd("run junk")
    out = card.cmd("run host")
    assert out.startswith("error: run: ") and ("ET_EXEC" in out or "outside the user region" in out), out
    assert "exit status 0" in card.cmd("run hello")


def test_a_console_nobody_reads_stops_no_host_launch(tmp_path):
    """Issue 36's card that stopped answering: a host's launch sends its tasks' lines to their output
    rings, not to the console too. When they went to both, a console whose reader had stopped (QEMU's
    standard output a full pipe: 64 KiB unread) held the console lock's owner in the UART for good,
    every other CPU printing spun on the lock, and the card took no request (STATUS, then KILL, then
    `info`): 243 calib tasks' 1,215 lines did it twice. Here three softfloat tasks print about 70 KiB
    while nothing reads the card's console."""
    name = f"test{os.getpid()}-mute"
    env = dict(os.environ, CARD=name, CPUS="4", CPU="knc")
    qemu = subprocess.Popen([os.path.join(ROOT, "scripts", "qemu.sh")], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # stdout never read
    try:
        pmuctl = [os.path.join(BUILD, "pmuctl"), "--card", name]
        for _ in range(600):
            if subprocess.run(pmuctl + ["info"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        p = subprocess.run(pmuctl + ["run", "-C", "1-3", os.path.join(BUILD, "user", "softfloat.elf")],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert len(p.stdout) > 65536 and all(p.stdout.count(f"[rank {r}] ") > 300 for r in range(3)), p.stdout[-500:]
        assert subprocess.run(pmuctl + ["info"], capture_output=True, timeout=60).returncode == 0
    finally:
        qemu.kill()
        qemu.wait()
