"""Threads of one process (issue 41, docs/design.md §6.1): `run --threads` starts one process
whose threads (user/pthread.c) each take a CPU of the set, sharing its memory; mutexes,
condition variables, barriers, __thread variables and newlib's malloc and printf work in every
thread; the counts are each thread's own; a fault ends the process naming the thread; bad
arguments to the threads' system calls fail with their errno. On the strict KNC CPU
(user/programs/threads.c)."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, Card

PMUCTL = os.path.join(BUILD, "pmuctl")
THREADS = os.path.join(BUILD, "user", "threads.elf")
OMP = os.path.join(BUILD, "user", "omp.elf")
PMUOS_CC = os.path.join(BUILD, "bin", "pmuos-cc")
EVENT = "INSTRUCTIONS_EXECUTED:u"


@pytest.fixture(scope="module")
def card():
    """A card of 5 CPUs: 4 application threads, CPUs 1-4."""
    c = Card(cpus=5)
    yield c
    c.close()


def pmuctl(card, *args):
    return subprocess.run([PMUCTL, "--card", card.name, *args], capture_output=True, text=True, timeout=300)


def run_threads(card, *args, cpus="1-4"):
    return pmuctl(card, "run", "--threads", "-C", cpus, THREADS, *args)


def check_threads(p, n, cpus):
    """Each of the n threads printed its line, on its CPU (the set's, in order), with its own TLS value."""
    lines = re.findall(rf"^thread (\d+) of {n} on CPU (\d+): tls (\d+)$", p.stdout, re.M)
    assert sorted((int(i), int(c), int(t)) for i, c, t in lines) == [(i, cpus[i], i) for i in range(n)], p.stdout


def test_four_threads_share_a_counter_a_barrier_and_a_condition(card):
    p = run_threads(card)
    assert p.returncode == 0, p.stdout + p.stderr
    check_threads(p, 4, [1, 2, 3, 4])
    assert p.stdout.endswith("threads: 4 threads, 1 rounds: counter 4000 (expected 4000)\n"), p.stdout
    assert "[rank" not in p.stdout  # one process: no rank prefix


def test_rounds_of_creation_and_join_and_runs_in_a_row(card):
    """100 rounds of 3 threads created and joined in one process (300 threads, the CPUs reused),
    then runs in a row (make test's share of the 100 the issue asks for; a hang fails by timeout)."""
    p = run_threads(card, "4", "100")
    assert p.returncode == 0 and "counter 400000 (expected 400000)\n" in p.stdout, p.stdout + p.stderr
    for _ in range(5):
        p = run_threads(card)
        assert p.returncode == 0 and "counter 4000 (expected 4000)\n" in p.stdout, p.stdout + p.stderr


def test_more_threads_than_cpus_is_a_named_error(card):
    """A thread per CPU: the fifth thread of a 4-CPU set, and a second one of an instance (an SPMD
    launch's process has its CPU alone), fail with EAGAIN, which the program names."""
    p = run_threads(card, "5")
    assert p.returncode == 1, p.stdout + p.stderr
    assert re.search(r"^threads: thread 4 of 5: pthread_create: .* \(EAGAIN: a thread per CPU, and every CPU of the "
                     r"process holds one\)$", p.stdout, re.M), p.stdout
    p = pmuctl(card, "run", "-C", "1", THREADS, "2")
    assert p.returncode == 1 and "threads: thread 1 of 2: pthread_create: " in p.stdout, p.stdout + p.stderr


def test_a_faulting_thread_ends_its_process_naming_the_thread(card):
    p = run_threads(card, "fault", "4")
    assert p.returncode == 128 + 11, p.stdout + p.stderr
    assert re.search(r"^task \d+ \(threads\.elf, thread 1\) on CPU 2: #PF page fault \(vector 14\) at RIP 0x[0-9a-f]+, "
                     r"error code 0x[0-9a-f]+, address 0: .*; its process ended$", p.stdout, re.M), p.stdout
    assert "counter" not in p.stdout  # the main thread, waiting for the others, was ended too
    assert not re.search(r"^\s*\d+\s+\S+\s+\d+\s+\d+\s+(ready|running)\b", card.cmd("tasks"), re.M)
    assert run_threads(card).returncode == 0  # its CPUs are free again


def test_bad_arguments_to_the_threads_system_calls_fail_with_their_errno(card):
    p = run_threads(card, "hostile")
    assert p.returncode == 0 and p.stdout.endswith("hostile: ok\n"), p.stdout + p.stderr
    assert "WRONG" not in p.stdout


def test_the_shell_runs_a_process_of_threads(card):
    out = card.cmd("run --threads threads on 1-3")
    assert "threads: 3 threads, 1 rounds: counter 3000 (expected 3000)" in out, out
    assert re.search(r"^task \d+ \(threads, 3 threads, CPU 1 first\): exit status 0$", out, re.M), out


def counts(p, label):
    """{label: count} of stat's table rows of EVENT whose label matches `label` (a regex group)."""
    return {m[1]: int(m[2].replace(",", ""))
            for m in re.finditer(rf"^\s*{label}\s+(?:\d+\s+)?([\d,]+)\s+{EVENT}$", p.stderr, re.M)}


def test_per_thread_counts_of_a_calibrated_region_are_one_threads_exactly(card):
    """Each thread runs the same loop between SPFLT 1 and 0: gated by SPFLT, each thread's count
    (--per-thread, its CPU's counters) is exactly the count of a process of one thread, and the
    threads' named regions (each thread's own table) sum to 4 of it; --per-core sums them by core
    (the shell's `cpus` says which CPU is on which)."""
    one = pmuctl(card, "stat", "--threads", "--spflt", "-e", EVENT, "-C", "1", "--", THREADS, "work", "1")
    assert one.returncode == 0, one.stderr
    single = int(re.search(rf"^\s*([\d,]+)\s+{EVENT}$", one.stderr, re.M)[1].replace(",", ""))
    assert single > 10000
    p = pmuctl(card, "stat", "--threads", "--per-thread", "--spflt", "-e", EVENT, "-C", "1-4", "--", THREADS, "work")
    assert p.returncode == 0, p.stderr
    assert counts(p, r"threads\.elf-(\d+)") == {str(1000 + i): single for i in range(4)}, p.stderr
    region = re.search(rf"^ Region 'work': 4 calls, .*\n\n\s+([\d,]+)\s+{EVENT}$", p.stderr, re.M)
    assert region and int(region[1].replace(",", "")) == 4 * single, p.stderr  # each thread's region, summed
    cores = {}
    for m in re.finditer(r"^\s*(\d+)\s+\d+\s+(\d+)\s+\d+\s+online", card.cmd("cpus"), re.M):
        if m[1] != "0":
            cores[m[2]] = cores.get(m[2], 0) + single
    p = pmuctl(card, "stat", "--threads", "--per-core", "--spflt", "-e", EVENT, "-C", "1-4", "--", THREADS, "work")
    assert p.returncode == 0, p.stderr
    assert counts(p, r"S0-D0-C(\d+)") == cores, p.stderr


def test_record_of_threads_has_a_row_per_thread_in_perf(card, tmp_path):
    """Samples carry their thread as perf.data's tid (1000 + its number; the main thread's is the
    pid, 1000): perf's report by thread (Debian's perf 6.1 calls the key `pid`) has one row each."""
    data, perf = tmp_path / "t.data", tmp_path / "t.perf"
    rec = pmuctl(card, "record", "--threads", "-C", "1-4", "-e", EVENT, "-c", "2000", "-o", str(data), "--",
                 THREADS, "work")
    assert rec.returncode == 0, rec.stderr
    subprocess.run([PMUCTL, "report", "-i", str(data), f"--to-perf={perf}"], check=True, capture_output=True)
    rep = subprocess.run(["perf", "report", "-i", str(perf), "--stdio", "--sort", "pid"], capture_output=True,
                         text=True, check=True).stdout
    assert sorted(re.findall(r"^\s+[\d.]+%\s+(\d+):threads\.elf\s*$", rep, re.M)) == \
        ["1000", "1001", "1002", "1003"], rep


def test_openmp_parallel_for_runs_a_thread_per_cpu_and_sums_right(card):
    """user/programs/omp.c, built with pmuos-cc -fopenmp (GCC's libgomp on user/pthread.c): a team of
    one thread per CPU of the set, each where libgomp put it, and a `parallel for` reduction's sum."""
    p = pmuctl(card, "run", "--threads", "-C", "1-4", OMP, "100000")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = re.findall(r"^omp: thread (\d) of 4 on CPU (\d)$", p.stdout, re.M)
    assert sorted((int(t), int(c)) for t, c in lines) == [(0, 1), (1, 2), (2, 3), (3, 4)], p.stdout
    assert p.stdout.endswith("omp: 4 threads, sum of 1..100000 = 5000050000 (expected 5000050000)\n"), p.stdout
    p = pmuctl(card, "stat", "--threads", "--per-thread", "-C", "1-3", "-e", EVENT, "--", OMP, "100000")
    assert p.returncode == 0 and "omp: 3 threads, sum of 1..100000 = 5000050000" in p.stdout, p.stdout + p.stderr
    each = counts(p, r"omp\.elf-(\d+)")
    assert sorted(each) == ["1000", "1001", "1002"] and all(v > 100000 // 3 for v in each.values()), p.stderr


def test_openmp_code_with_floating_point_is_refused_at_compile_time(tmp_path):
    """gcc compiles -fopenmp code without SSE or x87, and would pass a double to printf where newlib's
    soft-float printf does not look: a floating constant is an error, as gcc's own for arithmetic."""
    src = tmp_path / "f.c"
    src.write_text('#include <stdio.h>\nint main(void) {\n#pragma omp parallel\nprintf("%f\\n", 1.5);\n'
                   'return 0; }\n')
    p = subprocess.run([PMUOS_CC, "-fopenmp", "-o", str(tmp_path / "f.elf"), str(src)], capture_output=True,
                       text=True)
    assert p.returncode != 0 and "unsuffixed floating constant" in p.stderr, p.stderr
    src.write_text("double half(double x) { return x / 2; }\n")
    p = subprocess.run([PMUOS_CC, "-fopenmp", "-c", "-o", str(tmp_path / "h.o"), str(src)], capture_output=True,
                       text=True)
    assert p.returncode != 0 and "SSE disabled" in p.stderr, p.stderr
    p = subprocess.run([PMUOS_CC, "--qemu-sse", "-fopenmp", "-o", str(tmp_path / "q.elf"), str(src)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "libgomp is built for card programs only" in p.stderr, p.stderr


def test_constructors_and_destructors_run_around_main(card, tmp_path):
    """A program's .init_array runs before main, its .fini_array at exit, last first (user/start.c)."""
    src = tmp_path / "ctor.c"
    src.write_text("""#include <stdio.h>
static int order;
__attribute__((constructor(200))) static void second(void) { order = order * 10 + 2; }
__attribute__((constructor(101))) static void first(void) { order = order * 10 + 1; }
__attribute__((destructor)) static void last(void) { printf("destructor after main\\n"); }
int main(void) { printf("constructors %d\\n", order); return 0; }
""")
    elf = tmp_path / "ctor.elf"
    subprocess.run([PMUOS_CC, "-O2", "-o", str(elf), str(src)], check=True)
    p = pmuctl(card, "run", "-C", "1", str(elf))
    assert p.returncode == 0 and p.stdout == "constructors 12\ndestructor after main\n", p.stdout + p.stderr
