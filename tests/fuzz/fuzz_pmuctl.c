/*
 * libFuzzer target for pmuctl's reading of a card (host/mbox.c, host/rings.c):
 * the input is a hostile mailbox (its header, ring indices, the answers of a
 * fake card, output and sample ring indices, a reboot at some moment), and
 * pmuctl's own code opens it, calls the card, parses STATUS answers and
 * a PMU refusal's verdict, and drains the console, output and sample rings. Nothing may read or write
 * outside the mailbox (ASan/UBSan), hang, or break card_call's promises.
 * The input is XORed onto a valid card (template()): an empty input is a
 * card that works, so the fuzzer starts past the header checks even
 * without seeds.
 *
 * Fast: the mailbox is one 16 MiB mapping made once; the input writes
 * only the header and indices, and after each input exactly what the
 * input, the fake card and pmuctl can have written is zeroed again (no
 * page is ever given back: page faults cost more than the rest). Time is fake: each pause
 * of pmuctl's (card_time->nap) is 50 ms of a fake clock, and in it the
 * fake card beats, answers and reboots as the input says.
 * Seeds: tests/fuzz/corpus/fuzz_pmuctl/ (made by tests/fuzz/seeds_pmuctl.py).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/mbox.h"
#include "host/rings.h"

#define IMAGE_SIZE (16u << 20) /* the header's size must say so */
#define CALL_MS    1000        /* pmuctl waits 5 s; 1 s is the same code in 20 naps */

/* The fake card's answer to the k-th request it serves (INFO, STATUS, PMU_READ, SHELL). */
struct answer {
	int32_t seq_delta;  /* added to the request's seq: 0 echoes it */
	int32_t status;
	uint32_t len;
	uint8_t extra;      /* further answer slots the card claims (a hostile head) */
	uint8_t pad[3];
	uint8_t payload[64];
};

/* What an input describes (XORed onto template(); missing bytes change nothing). */
struct input {
	struct mbox_header hdr;
	struct mbox_ring_ctl req, resp;  /* written at the header's req_ctl_off and resp_ctl_off */
	struct answer answer[4];
	uint8_t beat;                    /* the heartbeat's step per nap (0: the card has stopped); a timer poll too */
	uint8_t answer_after;            /* naps before the card serves the requests waiting */
	uint8_t change_at;               /* at this nap (0: never) the card writes change_value ... */
	uint8_t change_word;             /* ... into this 32-bit word of the header: a reboot, a stray write */
	uint32_t change_value;
	struct {
		uint32_t ring, task;     /* ring index (mod 256), the task it belongs to */
		uint64_t head;
		char data[16];           /* the last 16 bytes written */
	} out[2];
	struct {
		uint32_t head, tail;
		uint64_t lost;
	} samples[2];                    /* CPUs 0 and 1's sample rings */
	uint64_t console_from;
};

static struct input valid;
static uint8_t *image;
static int lock_fd;
static FILE *devnull;
static struct input in;
static uint64_t fake_ms;
static unsigned naps, served;

/* Bounded copies into and out of the image: the input's offsets may be anything. */
static int in_image(uint64_t off, uint64_t len)
{
	return off <= IMAGE_SIZE && len <= IMAGE_SIZE - off;
}

static void put(uint64_t off, const void *p, size_t len)
{
	if (in_image(off, len))
		memcpy(image + off, p, len);
}

static int get(uint64_t off, void *p, size_t len)
{
	if (!in_image(off, len))
		return 0;
	memcpy(p, image + off, len);
	return 1;
}

static uint64_t fake_now_ms(void) { return fake_ms; }

/* Serves the requests waiting in the ring, as the input's answers say. */
static void fake_serve(void)
{
	const struct mbox_header *h = &in.hdr;
	uint32_t req_head, req_tail, resp_head;

	if (!get(h->req_ctl_off, &req_head, 4) || !get(h->req_ctl_off + 4, &req_tail, 4) ||
	    !get(h->resp_ctl_off, &resp_head, 4))
		return;
	for (int k = 0; k < MBOX_REQ_SLOTS && req_tail != req_head; k++, req_tail++) {
		struct mbox_request r;
		if (!get(h->req_off + (uint64_t)(req_tail % MBOX_REQ_SLOTS) * sizeof(r), &r, sizeof(r)))
			return;
		const struct answer *a = &in.answer[served < 4 ? served : 3];
		served++;
		struct mbox_response head = { .seq = r.seq + a->seq_delta, .status = a->status, .len = a->len };
		uint64_t slot = h->resp_off + (uint64_t)(resp_head % MBOX_RESP_SLOTS) * sizeof(struct mbox_response);
		put(slot, &head, offsetof(struct mbox_response, payload));
		put(slot + offsetof(struct mbox_response, payload), a->payload, sizeof(a->payload));
		resp_head += 1 + a->extra;
	}
	put(h->req_ctl_off + 4, &req_tail, 4);   /* struct mbox_ring_ctl: head, then tail */
	put(h->resp_ctl_off, &resp_head, 4);
}

/* pmuctl pauses: the card moves on. */
static void fake_nap(void)
{
	struct mbox_header *h = (struct mbox_header *)image;

	fake_ms += 50;
	naps++;
	h->heartbeat += in.beat;
	h->timer_polls += in.beat != 0; /* its clock (host/mbox.c times calls on it) */
	if (naps == in.change_at)
		put((in.change_word % (sizeof(*h) / 4)) * 4, &in.change_value, 4);
	if (naps > in.answer_after)
		fake_serve();
}

static const struct card_time fake_time = { fake_now_ms, fake_nap };

#define ALIGN_4K(x) (((x) + 4095u) & ~4095u)

static struct answer answer(int32_t status, uint32_t len, const void *payload, size_t n)
{
	struct answer a = { .status = status, .len = len };
	if (n)
		memcpy(a.payload, payload, n);
	return a;
}

/*
 * The valid card: laid out as mailbox/mailbox.c lays it out, 4 CPUs, READY,
 * beating, answering INFO, STATUS (one task ended, one running), PMU_READ
 * and SHELL; two output rings and two sample rings with something in them.
 * tests/fuzz/seeds_pmuctl.py knows these values.
 */
static void template(struct input *t)
{
	uint32_t req = 8192, resp = ALIGN_4K(req + MBOX_REQ_SLOTS * sizeof(struct mbox_request) + 4096);
	uint32_t console = ALIGN_4K(resp + MBOX_RESP_SLOTS * sizeof(struct mbox_response));
	uint32_t upload = console + MBOX_CONSOLE_SIZE, output = upload + MBOX_UPLOAD_SIZE;
	uint32_t samples = output + MBOX_OUTPUT_RINGS * sizeof(struct mbox_output_ring);
	struct mbox_info info = { 4, 4, 1000000000, MBOX_CAP_EXACT, "model", "0.1.0" };
	struct mbox_task tasks[2] = {
		{ .id = 1, .cpu = 1, .rank = 0, .state = MBOX_TASK_EXITED, .output_ring = 0 },
		{ .id = 2, .cpu = 2, .rank = 1, .state = MBOX_TASK_RUNNING, .output_ring = 1 },
	};
	struct mbox_pmu_count count = { .cpu = 1, .evtsel = 0x16, .flags = MBOX_COUNT_RUNNING | MBOX_COUNT_COUNTED,
					.value = 1234, .enabled = 5000, .running = 5000 };

	memset(t, 0, sizeof(*t));
	t->hdr = (struct mbox_header){
		.magic = MBOX_MAGIC, .version = MBOX_VERSION, .state = MBOX_READY, .heartbeat = 1000,
		.size = IMAGE_SIZE, .tsc_hz = 1000000000, .cpu_count = 4, .cpus_online = 4,
		.capabilities = MBOX_CAP_EXACT, .backend = "model", .kernel_version = "0.1.0",
		.req_ctl_off = req - 64, .req_off = req, .resp_ctl_off = resp - 64, .resp_off = resp,
		.console_off = console, .console_head = 100, .upload_off = upload, .samples_off = samples,
		.output_off = output,
	};
	t->answer[0] = answer(MBOX_OK, sizeof(info), &info, sizeof(info));
	t->answer[1] = answer(MBOX_OK, sizeof(tasks), tasks, sizeof(tasks));
	t->answer[2] = answer(MBOX_OK, sizeof(count), &count, sizeof(count));
	t->answer[3] = answer(MBOX_OK, 0, NULL, 0);
	t->beat = 1;
	t->out[0].ring = 0;
	t->out[0].task = 1;
	t->out[0].head = 20;
	memcpy(t->out[0].data, "llo\nfrom rank 0\n", 16);
	t->out[1].ring = 1;
	t->out[1].task = 2;
	t->out[1].head = 5;
	memcpy(t->out[1].data, "............part", 16);
	t->samples[0].head = 5;
	t->samples[0].tail = 2;
	t->samples[1].head = 30;
	t->samples[1].tail = 1;
	t->samples[1].lost = 7;
	t->console_from = 50;
}

static char *lock_name;
static void remove_lock(void) { unlink(lock_name); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	image = mmap(NULL, IMAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * The host lock's file, as /dev/shm's: linked (a memfd has no link, and
	 * pmuctl takes an unlinked card file for a card that has gone), removed at exit.
	 */
	static char lock_path[] = "/tmp/fuzz_pmuctl.XXXXXX";
	lock_fd = mkstemp(lock_path);
	lock_name = lock_path;
	if (lock_fd >= 0)
		atexit(remove_lock);
	devnull = fopen("/dev/null", "w");
	if (image == MAP_FAILED || lock_fd < 0 || !devnull)
		abort();
	/* pmuctl's messages (a card refused, ...): libFuzzer keeps its own stream, taken at start. */
	stderr = devnull;
	card_time = &fake_time;
	template(&valid);
	return 0;
}

/* The image the input describes. */
static void lay_out(void)
{
	const struct mbox_header *h = &in.hdr;

	memcpy(image, h, sizeof(*h));
	put(h->req_ctl_off, &in.req, sizeof(in.req));
	put(h->resp_ctl_off, &in.resp, sizeof(in.resp));
	for (int k = 0; k < 2; k++) {
		uint64_t ring = h->output_off + (uint64_t)(in.out[k].ring % MBOX_OUTPUT_RINGS) *
						  sizeof(struct mbox_output_ring);
		put(ring + offsetof(struct mbox_output_ring, task), &in.out[k].task, sizeof(in.out[k].task));
		put(ring + offsetof(struct mbox_output_ring, head), &in.out[k].head, sizeof(in.out[k].head));
		for (int i = 0; i < 16; i++)
			put(ring + offsetof(struct mbox_output_ring, data) + (in.out[k].head - 16 + i) % MBOX_OUTPUT_SIZE,
			    &in.out[k].data[i], 1);
		uint64_t s = h->samples_off + (uint64_t)k * sizeof(struct mbox_sample_ring);
		put(s + offsetof(struct mbox_sample_ring, head), &in.samples[k].head, sizeof(in.samples[k].head));
		put(s + offsetof(struct mbox_sample_ring, tail), &in.samples[k].tail, sizeof(in.samples[k].tail));
		put(s + offsetof(struct mbox_sample_ring, lost), &in.samples[k].lost, sizeof(in.samples[k].lost));
	}
}

static void zero(uint64_t off, uint64_t len)
{
	if (in_image(off, len))
		memset(image + off, 0, len);
}

/*
 * Zeroes all that can have been written for this input: every write (the
 * input's, the fake card's, pmuctl's) lands in these parts of the layout
 * the input's header gives, which is the layout pmuctl checked and copied.
 */
static void wipe(void)
{
	const struct mbox_header *h = &in.hdr;

	zero(0, sizeof(*h));
	zero(h->req_ctl_off, sizeof(struct mbox_ring_ctl));
	zero(h->resp_ctl_off, sizeof(struct mbox_ring_ctl));
	zero(h->req_off, MBOX_REQ_SLOTS * sizeof(struct mbox_request));
	for (uint64_t k = 0; k < MBOX_RESP_SLOTS; k++)
		zero(h->resp_off + k * sizeof(struct mbox_response), offsetof(struct mbox_response, payload) + 64);
	for (int k = 0; k < 2; k++) {
		uint64_t ring = h->output_off + (uint64_t)(in.out[k].ring % MBOX_OUTPUT_RINGS) *
						  sizeof(struct mbox_output_ring);
		zero(ring, offsetof(struct mbox_output_ring, data));
		for (int i = 0; i < 16; i++)
			zero(ring + offsetof(struct mbox_output_ring, data) + (in.out[k].head - 16 + i) % MBOX_OUTPUT_SIZE, 1);
		zero(h->samples_off + (uint64_t)k * sizeof(struct mbox_sample_ring), offsetof(struct mbox_sample_ring, slot));
	}
}

/* card_call's promises: a known status; an OK answer has the payload its opcode has. */
static void check_call(const struct card *c, int st, uint16_t op, const struct mbox_response *r)
{
	if (c->locked && !c->hold)
		abort(); /* the lock outlived the call */
	if (st < MBOX_OK && st >= MBOX_E_AGAIN) {
		/* A refusal: its text (the card's verdict in the shell's words, or the status's) is bounded. */
		if (strnlen(card_strerror(c, st), sizeof(c->verdict)) == sizeof(c->verdict))
			abort();
		return;
	}
	if (st != MBOX_OK) {
		if (st != CARD_TIMEOUT && st != CARD_RESET && st != CARD_PANIC && st != CARD_PROTOCOL && st != CARD_LOCKED &&
		    st != CARD_GONE)
			abort();
		return;
	}
	if (r->status != MBOX_OK || r->len > MBOX_RESP_PAYLOAD ||
	    (op == MBOX_OP_INFO && r->len != sizeof(struct mbox_info)) ||
	    (op == MBOX_OP_STATUS && (r->len == 0 || r->len % sizeof(struct mbox_task))) ||
	    (op == MBOX_OP_PMU_READ && r->len % sizeof(struct mbox_pmu_count)) || (op == MBOX_OP_SHELL && r->len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mbox_response resp;
	static struct outputs outs;
	struct card c = { .path = "fuzz", .fd = lock_fd, .base = image, .size = IMAGE_SIZE };
	uint32_t launch = 7;
	int st;

	in = valid;
	for (size_t i = 0; i < size && i < sizeof(in); i++)
		((uint8_t *)&in)[i] ^= data[i];
	memset(&outs, 0, sizeof(outs));
	fake_ms = 1000;
	naps = served = 0;
	lay_out();

	if (card_check(&c) == 0) {
		st = card_call(&c, MBOX_OP_INFO, NULL, NULL, 0, &resp, CALL_MS);
		check_call(&c, st, MBOX_OP_INFO, &resp);
		st = card_call(&c, MBOX_OP_STATUS, NULL, &launch, sizeof(launch), &resp, CALL_MS);
		check_call(&c, st, MBOX_OP_STATUS, &resp);
		if (st == MBOX_OK) {
			int status = launch_status(&resp);
			if (status < -1 || status > 255)
				abort();
			outputs_drain(&c, &outs, &resp, 0, devnull);
			outputs_drain(&c, &outs, &resp, 1, devnull);
			for (int k = 0; k < outs.n; k++) /* a ring is followed once, however many tasks share it */
				for (int j = 0; j < k; j++)
					if (outs.t[j].ring == outs.t[k].ring)
						abort();
			uint32_t tid[CPUSET_MAX];
			int cpus = launch_tids(&resp, 1, tid), with = 0;
			for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++)
				with += tid[cpu] != 0;
			if (cpus != with || (size_t)cpus > resp.len / sizeof(struct mbox_task))
				abort();
		}
		/* A launch's wait (host/launch.c): it ends, on the word or the time, or names why not. */
		struct card_watch w;
		card_watch_start(&c, &w);
		c.err[0] = 0;
		st = card_watch(&c, &w, &c.hdr->tasks_ended, 0, 30);
		if (st != 0 && ((st != CARD_TIMEOUT && st != CARD_RESET && st != CARD_PANIC && st != CARD_GONE) || !c.err[0]))
			abort();
		struct cpuset set = { { 3 } }; /* CPUs 0 and 1, beyond the card's CPU count too */
		uint64_t n = 0;
		samples_drain(&c, &set, devnull, &n);
		if (n > 2 * MBOX_SAMPLE_SLOTS)
			abort();
		uint64_t from = in.console_from;
		console_drain(&c, &from, devnull);
		if (card_hold(&c) == 0) {
			st = card_call(&c, MBOX_OP_PMU_READ, set.bits, NULL, 0, &resp, CALL_MS);
			check_call(&c, st, MBOX_OP_PMU_READ, &resp);
			card_release(&c);
		}
		st = card_call(&c, MBOX_OP_SHELL, NULL, "cpus", 5, &resp, CALL_MS);
		check_call(&c, st, MBOX_OP_SHELL, &resp);
		if (c.locked)
			abort();
	}
	wipe(); /* the next input starts from a zeroed mailbox */
	return 0;
}
