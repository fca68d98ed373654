/*
 * The card <-> host mailbox (docs/design.md §7): the wire format, compiled into the
 * card and into host tools alike. In QEMU it is an ivshmem-plain device
 * backed by /dev/shm/pmuos-<card>; on a KNC card the same layout lives in
 * card memory the host maps through the PCIe aperture.
 *
 * Layout: a header at offset 0, then a request ring (host -> card) and a
 * response ring (card -> host), at the offsets the header gives. Each ring
 * has a control block {head, tail}: the producer writes slots and then
 * advances head, the consumer reads and then advances tail; both count
 * slots modulo 2^32 and index slot (count % slots). The card answers every
 * request, in order: response n answers request n (both counted from 0
 * when the card lays the mailbox out). A request head more than a ring's
 * slots ahead of the card's tail is no ring state: the card skips those
 * requests unanswered and moves the response head on with them. The card
 * keeps its own copy of the layout and of the indices it produces; what a
 * host writes elsewhere in the header is not read back. All fields are
 * little-endian fixed-width integers.
 *
 * Host processes take turns on the rings under the host lock: an
 * open-file-description lock (fcntl F_OFD_SETLK) on the whole mailbox file,
 * which the OS drops when its holder ends, whatever its PID or PID
 * namespace. The holder numbers its requests from host_seq, so sequence
 * numbers are unique across processes.
 */
#ifndef PMUOS_MAILBOX_H
#define PMUOS_MAILBOX_H

#include <stdint.h>
#include <pmuos/sample.h>

#define MBOX_MAGIC        0x584f424d554d50ULL /* "PMUMBOX" */
#define MBOX_VERSION      11 /* 9: mbox_info describes the PMU; 10: its fixed counters' width; 11: threads (RUN's flags, a task's thread) */
#define MBOX_HEARTBEAT_US 1000   /* the card bumps heartbeat at least this often */
#define MBOX_MIN_SIZE     (1u << 20)
/*
 * Where in card memory the host puts the mailbox unless told otherwise
 * (pmuos.mbox=BASE,SIZE on the card's command line; pmuctl --card
 * sim:NAME@BASE / pci:BDF@BASE): 256 MiB, clear of a card's download
 * address (64 MiB) and of the initramfs place (128 MiB) that Intel's loader
 * used (Linux drivers/misc/mic/host/mic_x100.c mic_x100_load_ramdisk).
 */
#define MBOX_CARD_BASE    0x10000000ULL
#define MBOX_REQ_SLOTS    16
#define MBOX_RESP_SLOTS   16
#define MBOX_REQ_PAYLOAD  256
#define MBOX_RESP_PAYLOAD (96u << 10) /* a PMU_READ of 8 events on 256 CPUs */
#define MBOX_CPUSET_WORDS 4      /* 256 CPUs */
#define MBOX_CONSOLE_SIZE (64u << 10) /* console output ring, bytes */
#define MBOX_UPLOAD_SIZE  (4u << 20)  /* program image area, bytes */
#define MBOX_SAMPLE_SLOTS 2048        /* samples per CPU ring */
#define MBOX_OUTPUT_RINGS 256         /* program output rings, one per task, reused round-robin */
#define MBOX_OUTPUT_SIZE  (16u << 10) /* bytes per output ring */
/*
 * Limits the card, pmuctl and the tests share (each written here only):
 * MBOX_SHELL_LINE_CAP is a capacity, in bytes with the NUL, so a shell line
 * (serial console or MBOX_OP_SHELL) holds at most MBOX_SHELL_LINE_CAP - 1
 * characters; MBOX_MUX_MAX events take turns on the counters (and the PMU
 * driver multiplexes no more); MBOX_RUN_ARGS is MBOX_OP_RUN's most argv
 * strings, the program's name included.
 */
#define MBOX_SHELL_LINE_CAP 256
#define MBOX_MUX_MAX      8
#define MBOX_RUN_ARGS     16

enum mbox_state {
	MBOX_BOOTING = 1, /* the card is starting; requests are not served yet */
	MBOX_READY   = 2,
	MBOX_PANIC   = 3,
};

/* Capabilities (header.capabilities) */
#define MBOX_CAP_EXACT    (1ULL << 0) /* the PMU backend's instruction counts are exact */
/*
 * The card has a doorbell (QEMU: ivshmem-doorbell, whose server's socket is
 * the mailbox file's path + ".sock"): a host rings peer card_peer's vector 0
 * after posting a request, and the card rings peer host_peer - 1 after
 * answering. Without it the card polls the request ring.
 */
#define MBOX_CAP_DOORBELL (1ULL << 1)
/* Each thread's counts are its own whatever other threads run (MBOX_COUNT_SHARED never comes). */
#define MBOX_CAP_OWN_THREAD (1ULL << 2)
/*
 * CPU_CLK_UNHALTED counts the QEMU plugin's KNC timing model's cycles
 * (plugin/timing.h), and the TSC is QEMU's -icount virtual time (every
 * vCPU's instructions, one tick each): the two are different clocks.
 */
#define MBOX_CAP_MODEL_CYCLES (1ULL << 3)

struct mbox_ring_ctl {
	volatile uint32_t head; /* slots produced */
	volatile uint32_t tail; /* slots consumed */
};

struct mbox_header {
	uint64_t magic;
	uint32_t version;
	volatile uint32_t state;         /* enum mbox_state */
	volatile uint64_t heartbeat;     /* +1 at each timer poll and doorbell, and each program copy a RUN
					    loads; at least every MBOX_HEARTBEAT_US while the card runs without
					    a doorbell */
	uint64_t size;                   /* bytes of the whole mailbox */
	uint64_t tsc_hz;
	uint32_t cpu_count;
	uint32_t cpus_online;
	uint64_t capabilities;           /* MBOX_CAP_* */
	char backend[16];                /* PMU backend: "model" or "knc", NUL-terminated */
	char kernel_version[16];
	uint32_t req_ctl_off, req_off;   /* struct mbox_ring_ctl, then MBOX_REQ_SLOTS requests */
	uint32_t resp_ctl_off, resp_off; /* struct mbox_ring_ctl, then MBOX_RESP_SLOTS responses */
	volatile uint32_t host_lock;     /* pid of the lock holder (in its PID namespace), 0 if none: for messages only */
	uint32_t console_off;            /* MBOX_CONSOLE_SIZE bytes: everything the card's console prints */
	volatile uint64_t console_head;  /* bytes written so far; byte n is at console_off + n % size */
	uint32_t upload_off;             /* MBOX_UPLOAD_SIZE bytes: the host writes a program image here */
	uint32_t samples_off;            /* cpu_count struct mbox_sample_ring, one per CPU, back to back */
	uint32_t output_off;             /* MBOX_OUTPUT_RINGS struct mbox_output_ring */
	volatile uint32_t shell_done;    /* seq of the last MBOX_OP_SHELL line that has finished */
	volatile uint32_t host_seq;      /* last request seq a host used; advanced by the lock holder, not read by the card */
	uint32_t boot_count;             /* 1 + the count in the mailbox the card found at boot (1 if none): a host sees a reset */
	uint32_t card_peer;              /* with MBOX_CAP_DOORBELL: the card's peer ID at the doorbell server (0..65535) */
	volatile uint32_t host_peer;     /* 1 + the lock holder's peer ID, rung after answers; 0: none (host-written) */
	volatile uint32_t poll_us;       /* the serving CPU's poll timer period, us; 0: no poll timer armed */
	volatile uint32_t doorbells;     /* rings from the host that reached the serving CPU */
	volatile uint32_t timer_polls;   /* the service's timer polls (heartbeats) so far */
	volatile uint32_t ring_ticks;    /* TSC ticks from a ring's interrupt to the card's ring with the answer (last one) */
	/*
	 * +1 each time a task ends (exit, fault, kill, INIT; more if an INIT cut
	 * its end short), once what STATUS answers about it is final. A host waiting for a launch asks STATUS when it moves,
	 * not on a timer: each request runs kernel code on a measured CPU at
	 * host-timed points (version 8).
	 */
	volatile uint32_t tasks_ended;
	char pmu[16];                    /* libpfm4's name of the PMU, whose events pmuctl names: "knc", "knl", "ix86arch" (version 9) */
};

enum mbox_opcode {
	MBOX_OP_INFO       = 1, /* -> struct mbox_info */
	MBOX_OP_PMU_CONFIG = 2, /* struct mbox_pmu_config, on the CPU set */
	MBOX_OP_PMU_START  = 3, /* on the CPU set */
	MBOX_OP_PMU_STOP   = 4,
	MBOX_OP_PMU_CLEAR  = 5,
	MBOX_OP_PMU_READ   = 6, /* -> one struct mbox_pmu_count per CPU of the set and counter in use */
	MBOX_OP_PMU_SPFLT  = 7, /* uint32_t mask: PERF_SPFLT_CONTROL enable bits, on the CPU set */
	MBOX_OP_RUN        = 8, /* struct mbox_run: start the uploaded image on the CPU set -> struct mbox_run_answer */
	MBOX_OP_STATUS     = 9, /* uint32_t launch id -> one struct mbox_task per task of the launch */
	MBOX_OP_KILL       = 10, /* uint32_t launch id: end its tasks */
	MBOX_OP_RESET_WARM = 11, /* answered, then the card resets (every PMU register to 0) */
	MBOX_OP_CPU_INIT   = 12, /* uint32_t cpu: INIT-SIPI-SIPI, PMU state kept (327357-001 §1.4.4) */
	MBOX_OP_SHELL      = 13, /* a shell line (NUL-terminated, at most MBOX_SHELL_LINE_CAP bytes) for CPU 0: answered when
				    queued; output on the console ring; header.shell_done = seq when done */
	MBOX_OP_PMU_MUX    = 14, /* struct mbox_pmu_mux: events taking turns on the counters, on the CPU set */
	MBOX_OP_SHELL_INTR = 15, /* Ctrl-C for the host's shell line: cancelled if queued, interrupted if running */
	MBOX_OP_PMU_CALLCHAIN = 16, /* uint32_t frames, 0..PMU_CALLCHAIN_MAX: call chains in samples, on the CPU set */
	MBOX_OP_EVENTS_COUNTED = 17, /* 1..MBOX_COUNTED_MAX uint32_t EvtSels -> uint64_t: bit i, the backend counts the i-th */
	MBOX_OP_PMU_CPU_CLOCK = 18, /* uint64_t ns, 0 (off) or 10^4..10^9: a time sample every ns of card time, on the CPU set
				       (perf's cpu-clock; each sample with both counters; version 8) */
};
#define MBOX_COUNTED_MAX 64 /* EvtSels one EVENTS_COUNTED asks about: the answer's 64 bits */

enum mbox_status {
	MBOX_OK          = 0,
	MBOX_E_OPCODE    = -1, /* unknown opcode */
	MBOX_E_CPUSET    = -2, /* empty set, a CPU the card does not have, or one not online (nothing done) */
	MBOX_E_PAYLOAD   = -3, /* payload length or a reserved field is wrong */
	MBOX_E_EVENT     = -4, /* EvtSel value refused (reserved bits, counter constraint) */
	MBOX_E_BUSY      = -5, /* some CPUs did not answer (the others did it) */
	MBOX_E_RANGE     = -6, /* a value out of range (counter, period, events, slice, SPFLT mask) */
	MBOX_E_PROGRAM   = -7, /* the image is not a pmuos program (the console says why) */
	MBOX_E_LAUNCH    = -8, /* no such launch */
	MBOX_E_AGAIN     = -9, /* not now: a shell line from the host is still queued or running */
};

/*
 * The PMU's verdict (pmu/rules.h struct pmu_result): an answer to a PMU
 * request (PMU_CONFIG .. PMU_READ, PMU_SPFLT, PMU_MUX, PMU_CALLCHAIN, PMU_CPU_CLOCK) whose
 * status is MBOX_E_EVENT, MBOX_E_RANGE, MBOX_E_CPUSET or MBOX_E_BUSY carries
 * one as its payload (PMU_READ's after the counts of the CPUs that did
 * answer), so the host prints the shell's words (pmu_result_text). Its
 * other error answers (MBOX_E_PAYLOAD, MBOX_E_OPCODE) carry nothing.
 */
struct mbox_verdict {
	uint32_t err;          /* enum pmu_err, 1..PMU_ERR_COUNT-1 */
	uint32_t cpu;          /* the CPU it names, < MBOX_CPUSET_WORDS * 64 */
	uint64_t value;        /* the value it names (an EvtSel, a period, a mask ...) */
	uint32_t done, wanted; /* CPUs of the set that did it, of those asked */
};

struct mbox_request {
	uint32_t seq;             /* echoed in the response */
	uint16_t opcode;          /* enum mbox_opcode */
	uint16_t flags;           /* reserved, 0 */
	uint64_t cpuset[MBOX_CPUSET_WORDS];
	uint32_t len;             /* payload bytes used, <= MBOX_REQ_PAYLOAD */
	uint32_t reserved;        /* 0 */
	uint8_t payload[MBOX_REQ_PAYLOAD];
};

struct mbox_response {
	uint32_t seq;
	int32_t status;           /* enum mbox_status */
	uint32_t len;             /* payload bytes, <= MBOX_RESP_PAYLOAD */
	uint32_t reserved;
	uint8_t payload[MBOX_RESP_PAYLOAD];
};

struct mbox_info {
	uint32_t cpu_count, cpus_online;
	uint64_t tsc_hz;
	uint64_t capabilities;
	char backend[16];
	char kernel_version[16];
	/*
	 * core[i]: the core of CPU i (its APIC ID's core field, as the shell's
	 * `cpus` shows it), for i < cpu_count; 0xffff past it. Threads of one
	 * core share its L1, L2 and issue slots (perf's --per-core sums them).
	 */
	uint16_t core[MBOX_CPUSET_WORDS * 64];
	/*
	 * The PMU the backend drives or models (the kernel's pmu/desc.h): its
	 * name, architectural perfmon version (CPUID leaf 0xA; 0: not
	 * architectural, as KNC's), general-purpose counters per thread and their
	 * width in bits, fixed counters (those the kernel runs: 0 on KNC; see
	 * <pmuos/syscall.h> struct pmuos_events) and their width; `pmu_flags`
	 * MBOX_PMU_SPFLT.
	 */
	char pmu[64];
	uint8_t pmu_version, counters, counter_bits, fixed;
	uint8_t fixed_bits, reserved_pmu[3];
	uint32_t pmu_flags;
};
#define MBOX_PMU_SPFLT 1u /* the PMU has PERF_SPFLT_CONTROL and the ISA SPFLT (KNC) */

struct mbox_pmu_config {
	uint32_t counter;  /* 0 or 1 */
	uint32_t evtsel;   /* EvtSel without EN/INT (pmu/evtsel.h); 0 frees the counter */
	uint64_t period;   /* 0: counting; else sample every `period` events, 1..2^40 */
};

/*
 * Multiplexing (time slices, as perf does): the first `nev` EvtSel values
 * take turns on the two counters, the next ones every `slice_us` of the
 * CPU's counting time. Replaces PMU_CONFIG's configuration; counting only.
 * The card puts the events on the counters (an L2 event on counter 0 only):
 * events that all fit stay there for good, so this is also the request
 * that counts up to two events without naming counters.
 */
struct mbox_pmu_mux {
	uint32_t nev;       /* 1..MBOX_MUX_MAX */
	uint32_t slice_us;  /* 1000..1000000 (the PMU's slice: 1 ms to 1 s) */
	uint32_t evtsel[MBOX_MUX_MAX]; /* EvtSel without EN/INT; the unused ones 0 */
	uint32_t paired;    /* bit i: events i and i+1 are one group, on the counters together; bits >= nev - 1 0 */
};

/* MBOX_OP_PMU_READ: one per CPU and counter (or multiplexed event) in use. */
struct mbox_pmu_count {
	uint32_t cpu;
	uint32_t slot;     /* the counter (0 or 1); with MBOX_COUNT_MUX the event's index in the list */
	uint32_t evtsel;
	uint32_t flags;    /* MBOX_COUNT_* */
	uint64_t value;    /* events, 64-bit total */
	uint64_t samples;
	uint64_t enabled;  /* ticks the counters ran since the last clear (the PMU's clock: the TSC, or the thread's instructions) */
	uint64_t running;  /* ticks this event was on a counter: scale value by enabled / running */
};
#define MBOX_COUNT_RUNNING 1u /* the counters are started */
#define MBOX_COUNT_COUNTED 2u /* the backend counts this event */
#define MBOX_COUNT_MUX     4u /* a multiplexed event */
#define MBOX_COUNT_THROTTLED 8u /* the PMI throttle held this CPU's counters back since the last clear */
/*
 * The count includes other threads': the card counts by a clock every CPU
 * advances (the model on the TSC under -icount, without the QEMU plugin),
 * and tasks ran on other CPUs since the last clear (docs/design.md §5.2).
 */
#define MBOX_COUNT_SHARED 16u

/*
 * A CPU's sample ring: the PMI handler appends (head), the host drains
 * (tail) without a request; a sample that finds the ring full is counted in
 * `lost` and dropped.
 */
struct mbox_sample_ring {
	volatile uint32_t head, tail;
	volatile uint64_t lost;
	uint64_t reserved[6];
	struct pmu_sample slot[MBOX_SAMPLE_SLOTS];
};

/*
 * A task's standard output and error, written by the card as whole lines
 * (or 256-byte pieces), read by the host without a request. A ring is
 * handed to a new task round-robin: `task` says whose bytes these are.
 */
struct mbox_output_ring {
	volatile uint32_t task;  /* id of the task writing here; 0: none yet */
	uint32_t launch, rank, nranks;
	volatile uint64_t head;  /* bytes written; byte n is at data[n % MBOX_OUTPUT_SIZE] */
	uint64_t reserved[5];
	char data[MBOX_OUTPUT_SIZE];
};

/* MBOX_OP_RUN: the image is the first `image_len` bytes of the upload area. */
struct mbox_run {
	uint32_t image_len;
	uint32_t argc;        /* 1..MBOX_RUN_ARGS, argv[0] is the program's name */
	uint32_t flags;       /* MBOX_RUN_*; other bits reserved, 0 */
	uint32_t reserved;    /* 0 */
	char args[192];       /* argc NUL-terminated strings, back to back */
};

/*
 * One process whose threads may use the CPUs of the set (docs/design.md
 * §6.1): its main thread starts on the set's first CPU, and each thread it
 * creates takes a CPU of the set no thread of it holds. Without the flag, an
 * instance (a process of one thread, its own address space) per CPU.
 */
#define MBOX_RUN_THREADS (1u << 0)

/*
 * MBOX_OP_RUN's answer: the launch ID, then its tasks as STATUS answers them
 * (their output rings), so that a host follows a launch without asking
 * again until header.tasks_ended moves (version 8).
 */
struct mbox_run_answer {
	uint32_t launch;
	uint32_t reserved; /* 0 */
	/* then one struct mbox_task per task, at least one */
};

enum mbox_task_state { MBOX_TASK_READY = 1, MBOX_TASK_RUNNING, MBOX_TASK_EXITED, MBOX_TASK_KILLED, MBOX_TASK_FAULTED };

/*
 * A task: an instance of an SPMD launch (rank of the launch's instances), or
 * a thread of a MBOX_RUN_THREADS launch's process (rank 0; `thread` counts
 * the threads the process made, 0 being its main one). The threads of a
 * process share one output ring. The main thread's task stands for the
 * process: RUNNING while any thread of it runs, and its exit status is the
 * process's.
 */
struct mbox_task {
	uint32_t id, cpu, rank, state; /* state: enum mbox_task_state */
	int32_t exit_status;           /* exit(status), or the exception vector when faulted */
	uint32_t output_ring;          /* index of its struct mbox_output_ring; MBOX_NO_RING if none */
	uint32_t thread;               /* its thread number in its process, 0: the main thread */
	uint32_t reserved;             /* 0 */
};
#define MBOX_NO_RING 0xffffffffu

#endif
