/*
 * POSIX threads for card programs (docs/design.md §6.1), on the kernel's
 * threads and futexes (include/pmuos/syscall.h), with newlib's types
 * (sys/_pthreadtypes.h, whose mutexes, condition variables and barriers
 * are one 32-bit word each: the futex word itself). And what newlib needs
 * to be shared by threads: its lock hooks (sys/lock.h, newlib built with
 * --enable-newlib-retargetable-locking: malloc, stdio, atexit) and a
 * reentrancy structure per thread (__getreent, newlib built with
 * __DYNAMIC_REENT__: errno, strtok's state ...).
 *
 * A thread is one allocation: its stack, its TLS block and its TCB, in
 * the x86-64 ABI's variant II (FS points at the TCB, whose first word
 * points at itself, and the TLS block ends there; ELF Handling For
 * Thread-Local Storage, Drepper, §3.4.6). Mutexes follow Drepper's
 * "Futexes Are Tricky" (2011), mutex 3: 0 unlocked, 1 locked, 2 locked
 * with waiters. Atomics are LOCK-prefixed instructions and XCHG only,
 * as a KNC core has them (no fences, no PAUSE: 327364-001 App. B).
 *
 * Not supported: recursive and error-checking mutex types (ENOTSUP),
 * timed waits, cancellation, signals; pthread_t is a slot number (newlib's
 * type is 32 bits), so at most THREADS_MAX threads exist at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <reent.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/lock.h>
#include <pmuos/pmu.h>
#include <pmuos/syscall.h>
#include <pmuos/thread.h>
#include "sys.h"

#define THREADS_MAX   1024        /* pthread_t slots: more than a card's 244 CPUs */
#define KEYS_MAX      64          /* pthread_key_t */
#define STACK_DEFAULT (128 << 10) /* bytes; 243 threads' stacks fit a 512 MiB card's process share */
#define STACK_MIN     (16 << 10)
#define TCB_ALIGN     64          /* a cache line: two threads' TCBs never share one */
#define BARRIER_MAX   1023        /* the count's 10 bits in a barrier word */

struct tcb {
	struct tcb *self;              /* %fs:0, the ABI's thread pointer */
	pthread_t id;                  /* slot in threads[] */
	int thread;                    /* the kernel's thread number */
	volatile uint32_t running;     /* 1 until the kernel clears it at the thread's end (join waits on it) */
	void *(*fn)(void *);
	void *arg, *ret;
	void *block;                   /* the allocation (NULL: the main thread's, never freed) */
	struct _reent *reent;
	int detached;
	const void *value[KEYS_MAX];
	struct _reent own_reent;       /* a created thread's newlib state */
};

extern char __tls_start[], __tdata_end[], __tls_end[], __tls_align[]; /* user/user.ld */
#pragma weak pmu_regions_thread_end

static struct tcb *threads[THREADS_MAX];
static volatile uint32_t threads_lock;
static volatile int live = 1; /* threads not yet ended: the last to end ends the process */
static int tls_ready;
static void (*key_dtor[KEYS_MAX])(void *);
static volatile uint32_t key_used[KEYS_MAX];

static struct tcb *self(void)
{
	struct tcb *t;
	__asm__("movq %%fs:0, %0" : "=r"(t));
	return t;
}

/* ---- futex words ---- */

static void futex_wait(volatile uint32_t *w, uint32_t v) { sys3(SYS_FUTEX_WAIT, (long)w, v, 0); }
static void futex_wake(volatile uint32_t *w, uint32_t n) { sys3(SYS_FUTEX_WAKE, (long)w, n, 0); }

static uint32_t cas(volatile uint32_t *w, uint32_t old, uint32_t new)
{
	__atomic_compare_exchange_n(w, &old, new, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return old;
}

static int word_trylock(volatile uint32_t *w)
{
	return cas(w, 0, 1) == 0;
}

static void word_lock(volatile uint32_t *w)
{
	uint32_t c = cas(w, 0, 1);

	if (c == 0)
		return;
	if (c != 2)
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex_wait(w, 2);
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	}
}

static void word_unlock(volatile uint32_t *w)
{
	if (__atomic_fetch_sub(w, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(w, 0, __ATOMIC_SEQ_CST);
		futex_wake(w, 1);
	}
}

/* ---- the TLS block and the TCB ---- */

static uintptr_t tls_align(void)
{
	uintptr_t a = (uintptr_t)__tls_align;
	return a > TCB_ALIGN ? a : TCB_ALIGN;
}

static size_t tls_size(void)
{
	uintptr_t a = tls_align();
	return ((uintptr_t)(__tls_end - __tls_start) + a - 1) & ~(a - 1);
}

/* Lays out a TLS block and TCB at the top of `block` (`size` bytes); returns the TCB. */
static struct tcb *tcb_make(void *block, size_t size)
{
	uintptr_t top = (uintptr_t)block + size - sizeof(struct tcb);
	struct tcb *t = (struct tcb *)(top & ~(tls_align() - 1));
	char *tls = (char *)t - tls_size();

	memcpy(tls, __tls_start, __tdata_end - __tls_start);
	memset(tls + (__tdata_end - __tls_start), 0, tls_size() - (__tdata_end - __tls_start));
	memset(t, 0, sizeof(*t));
	t->self = t;
	t->running = 1;
	return t;
}

static size_t tcb_room(void)
{
	return tls_size() + sizeof(struct tcb) + tls_align();
}

/* crt0, before main: the main thread's TLS and TCB (pthread_t 0), newlib's global reentrancy structure. */
void __pmuos_thread_init(void)
{
	void *block = malloc(tcb_room());

	if (!block)
		_exit(127);
	struct tcb *t = tcb_make(block, tcb_room());
	t->reent = _impure_ptr;
	t->thread = 0;
	threads[0] = t;
	sys3(SYS_SET_TLS, (long)t, 0, 0);
	tls_ready = 1;
}

/* newlib's reentrancy structure of the calling thread (__DYNAMIC_REENT__). */
struct _reent *__getreent(void)
{
	return tls_ready ? self()->reent : _impure_ptr;
}

/* ---- threads ---- */

pthread_t pthread_self(void)
{
	return tls_ready ? self()->id : 0;
}

int pthread_equal(pthread_t a, pthread_t b)
{
	return a == b;
}

int pmuos_thread_number(void)
{
	return tls_ready ? self()->thread : 0;
}

int pmuos_thread_cpus(void)
{
	return (uint64_t)sys3(SYS_THREAD_SELF, 0, 0, 0) >> 32;
}

int sched_getcpu(void)
{
	return pmuos_getcpu();
}

/* Frees the slots of detached threads that have ended; under threads_lock. */
static void reap_detached(void)
{
	for (int i = 1; i < THREADS_MAX; i++)
		if (threads[i] && threads[i]->detached && !threads[i]->running) {
			free(threads[i]->block);
			threads[i] = NULL;
		}
}

static void run_key_destructors(struct tcb *t)
{
	for (int round = 0; round < 4; round++) /* PTHREAD_DESTRUCTOR_ITERATIONS */
		for (int k = 0; k < KEYS_MAX; k++) {
			void *v = (void *)t->value[k];
			if (v && key_used[k] && key_dtor[k]) {
				t->value[k] = NULL;
				key_dtor[k](v);
			}
		}
}

void pthread_exit(void *ret)
{
	struct tcb *t = self();

	run_key_destructors(t);
	/* its named regions, if the program has any: a weak reference, called through its GOT entry (0 if none) */
	void (*volatile regions_end)(void) = pmu_regions_thread_end;
	if (regions_end && t->id != 0)
		regions_end();
	t->ret = ret;
	if (__atomic_sub_fetch(&live, 1, __ATOMIC_ACQ_REL) == 0)
		exit(0); /* the last thread: the process ends as if main returned 0 (atexit, stdio) */
	for (;;)
		sys3(SYS_THREAD_EXIT, 0, 0, 0);
}

static void __attribute__((noreturn)) thread_start(struct tcb *t)
{
	pthread_exit(t->fn(t->arg));
}

int pthread_attr_init(pthread_attr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->is_initialized = 1;
	a->stacksize = STACK_DEFAULT;
	a->detachstate = PTHREAD_CREATE_JOINABLE;
	return 0;
}

int pthread_attr_destroy(pthread_attr_t *a)
{
	a->is_initialized = 0;
	return 0;
}

int pthread_attr_setstacksize(pthread_attr_t *a, size_t size)
{
	if (size < STACK_MIN || size > INT32_MAX)
		return EINVAL;
	a->stacksize = size;
	return 0;
}

int pthread_attr_getstacksize(const pthread_attr_t *a, size_t *size)
{
	*size = a->stacksize;
	return 0;
}

int pthread_attr_setdetachstate(pthread_attr_t *a, int state)
{
	if (state != PTHREAD_CREATE_JOINABLE && state != PTHREAD_CREATE_DETACHED)
		return EINVAL;
	a->detachstate = state;
	return 0;
}

int pthread_attr_getdetachstate(const pthread_attr_t *a, int *state)
{
	*state = a->detachstate;
	return 0;
}

/* The CPU is kept as CPU + 1 in the scheduling parameter: the card has no priorities to keep there. */
int pthread_attr_setcpu_np(pthread_attr_t *a, int cpu)
{
	if (cpu < -1)
		return EINVAL;
	a->schedparam.sched_priority = cpu + 1;
	return 0;
}

int pthread_attr_getcpu_np(const pthread_attr_t *a, int *cpu)
{
	*cpu = a->schedparam.sched_priority - 1;
	return 0;
}

int pthread_create(pthread_t *id, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_attr_t def;

	if (!attr) {
		pthread_attr_init(&def);
		attr = &def;
	}
	size_t stack = attr->stacksize, size = stack + tcb_room();
	char *block = malloc(size);
	if (!block)
		return EAGAIN;
	struct tcb *t = tcb_make(block, size);
	t->block = block;
	t->fn = fn;
	t->arg = arg;
	t->detached = attr->detachstate == PTHREAD_CREATE_DETACHED;
	_REENT_INIT_PTR(&t->own_reent);
	t->reent = &t->own_reent;

	word_lock(&threads_lock);
	reap_detached();
	int slot = 1;
	while (slot < THREADS_MAX && threads[slot])
		slot++;
	if (slot < THREADS_MAX) {
		t->id = slot;
		threads[slot] = t;
	}
	word_unlock(&threads_lock);
	if (slot == THREADS_MAX) {
		free(block);
		return EAGAIN;
	}

	/* The stack ends below the TLS block, 16-aligned, less the return address a call would have pushed. */
	uintptr_t sp = (((uintptr_t)t - tls_size()) & ~(uintptr_t)15) - 8;
	struct pmuos_thread_start st = {
		.rip = (uintptr_t)thread_start, .rsp = sp, .arg = (uintptr_t)t, .fs_base = (uintptr_t)t,
		.clear_tid = (uintptr_t)&t->running, .cpu = attr->schedparam.sched_priority - 1,
	};
	__atomic_add_fetch(&live, 1, __ATOMIC_ACQ_REL);
	long r = sys3(SYS_THREAD_CREATE, (long)&st, 0, 0);
	if (r < 0) {
		__atomic_sub_fetch(&live, 1, __ATOMIC_ACQ_REL);
		word_lock(&threads_lock);
		threads[slot] = NULL;
		word_unlock(&threads_lock);
		free(block);
		return -r; /* EAGAIN: every CPU of the set holds a thread; EBUSY, EINVAL: the attribute's CPU */
	}
	t->thread = r;
	*id = slot;
	return 0;
}

static struct tcb *lookup(pthread_t id)
{
	return id < THREADS_MAX ? threads[id] : NULL;
}

int pthread_join(pthread_t id, void **ret)
{
	struct tcb *t = lookup(id);
	uint32_t v;

	if (!t || id == 0)
		return ESRCH;
	if (id == pthread_self())
		return EDEADLK;
	if (t->detached)
		return EINVAL;
	while ((v = __atomic_load_n(&t->running, __ATOMIC_ACQUIRE)) != 0)
		futex_wait(&t->running, v);
	if (ret)
		*ret = t->ret;
	word_lock(&threads_lock);
	threads[id] = NULL;
	word_unlock(&threads_lock);
	free(t->block);
	return 0;
}

int pthread_detach(pthread_t id)
{
	struct tcb *t = lookup(id);

	if (!t)
		return ESRCH;
	t->detached = 1;
	return 0;
}

/* ---- mutexes, condition variables, barriers, once ---- */

/* A word newlib's static initializer (0xFFFFFFFF) left: made an unlocked mutex first. */
static volatile uint32_t *mutex_word(pthread_mutex_t *m)
{
	cas(m, _PTHREAD_MUTEX_INITIALIZER, 0);
	return m;
}

/* newlib's attribute (without UNIX98 types, as it is configured here) has a `recursive` flag only. */
int pthread_mutexattr_init(pthread_mutexattr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->is_initialized = 1;
	return 0;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t *a)
{
	a->is_initialized = 0;
	return 0;
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	if (a && a->recursive)
		return ENOTSUP; /* one word holds no owner or depth */
	*m = 0;
	return 0;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	return *m == 0 || *m == _PTHREAD_MUTEX_INITIALIZER ? 0 : EBUSY;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	word_lock(mutex_word(m));
	return 0;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	return word_trylock(mutex_word(m)) ? 0 : EBUSY;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	word_unlock(m);
	return 0;
}

/* A condition variable's word is a sequence number: a signal changes it, so a wait that began before returns. */
int pthread_condattr_init(pthread_condattr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->is_initialized = 1;
	return 0;
}

int pthread_condattr_destroy(pthread_condattr_t *a)
{
	a->is_initialized = 0;
	return 0;
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a __attribute__((unused)))
{
	*c = 0;
	return 0;
}

int pthread_cond_destroy(pthread_cond_t *c __attribute__((unused)))
{
	return 0;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	uint32_t seq = __atomic_load_n(c, __ATOMIC_ACQUIRE);
	volatile uint32_t *w = mutex_word(m);

	word_unlock(w);
	futex_wait(c, seq);
	/* locked as contended: other waiters the broadcast woke may sleep on the mutex, and its unlock must wake them */
	while (__atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE) != 0)
		futex_wait(w, 2);
	return 0;
}

int pthread_cond_signal(pthread_cond_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_ACQ_REL);
	futex_wake(c, 1);
	return 0;
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_ACQ_REL);
	futex_wake(c, UINT32_MAX);
	return 0;
}

/*
 * A barrier's word: the threads to wait for (bits 0-9), those arrived
 * (10-19) and a generation (20-31), which the last arrival advances (the
 * others wait on the word until it does).
 */
#define B_COUNT(w)   ((w) & 0x3ff)
#define B_ARRIVED(w) (((w) >> 10) & 0x3ff)
#define B_GEN(w)     ((w) >> 20)

int pthread_barrierattr_init(pthread_barrierattr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->is_initialized = 1;
	return 0;
}

int pthread_barrierattr_destroy(pthread_barrierattr_t *a)
{
	a->is_initialized = 0;
	return 0;
}

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a __attribute__((unused)),
			 unsigned count)
{
	if (count == 0 || count > BARRIER_MAX)
		return EINVAL;
	*b = count;
	return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *b)
{
	return B_ARRIVED(*b) ? EBUSY : 0;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	for (;;) {
		uint32_t w = __atomic_load_n(b, __ATOMIC_ACQUIRE);
		if (B_ARRIVED(w) + 1 == B_COUNT(w)) {
			if (cas(b, w, ((B_GEN(w) + 1) << 20) | B_COUNT(w)) != w)
				continue;
			futex_wake(b, UINT32_MAX);
			return PTHREAD_BARRIER_SERIAL_THREAD;
		}
		if (cas(b, w, w + (1 << 10)) != w)
			continue;
		uint32_t now;
		while (B_GEN(now = __atomic_load_n(b, __ATOMIC_ACQUIRE)) == B_GEN(w))
			futex_wait(b, now);
		return 0;
	}
}

/* init_executed: 0 not run, 1 running (waiters wait on it), 2 done. */
int pthread_once(pthread_once_t *o, void (*fn)(void))
{
	volatile uint32_t *w = (volatile uint32_t *)&o->init_executed;
	uint32_t v;

	if (cas(w, 0, 1) == 0) {
		fn();
		__atomic_store_n(w, 2, __ATOMIC_SEQ_CST);
		futex_wake(w, UINT32_MAX);
		return 0;
	}
	while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != 2)
		futex_wait(w, v);
	return 0;
}

/* ---- keys ---- */

int pthread_key_create(pthread_key_t *key, void (*dtor)(void *))
{
	for (int k = 0; k < KEYS_MAX; k++)
		if (cas(&key_used[k], 0, 1) == 0) {
			key_dtor[k] = dtor;
			*key = k;
			return 0;
		}
	return EAGAIN;
}

int pthread_key_delete(pthread_key_t key)
{
	if (key >= KEYS_MAX || !key_used[key])
		return EINVAL;
	key_used[key] = 0;
	return 0;
}

int pthread_setspecific(pthread_key_t key, const void *v)
{
	if (key >= KEYS_MAX || !key_used[key])
		return EINVAL;
	self()->value[key] = v;
	return 0;
}

void *pthread_getspecific(pthread_key_t key)
{
	return key < KEYS_MAX && tls_ready ? (void *)self()->value[key] : NULL;
}

/* ---- newlib's locks (sys/lock.h, retargetable locking) ---- */

struct __lock {
	volatile uint32_t word; /* a mutex word, as above */
	pthread_t owner;        /* a recursive lock's holder, with its depth */
	uint32_t depth;
};

struct __lock __lock___sinit_recursive_mutex, __lock___sfp_recursive_mutex, __lock___atexit_recursive_mutex,
	__lock___at_quick_exit_mutex, __lock___malloc_recursive_mutex, __lock___env_recursive_mutex,
	__lock___tz_mutex, __lock___dd_hash_mutex, __lock___arc4random_mutex;

/* A FILE's lock (newlib allocates one per stream it opens): from calloc, whose own lock is static. */
void __retarget_lock_init(_LOCK_T *lock)
{
	*lock = calloc(1, sizeof(struct __lock));
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
	__retarget_lock_init(lock);
}

void __retarget_lock_close(_LOCK_T lock)
{
	free(lock);
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
	free(lock);
}

void __retarget_lock_acquire(_LOCK_T lock)
{
	if (lock)
		word_lock(&lock->word);
}

int __retarget_lock_try_acquire(_LOCK_T lock)
{
	return !lock || word_trylock(&lock->word);
}

void __retarget_lock_release(_LOCK_T lock)
{
	if (lock)
		word_unlock(&lock->word);
}

void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
	if (!lock)
		return;
	pthread_t me = pthread_self();
	if (lock->depth && lock->owner == me) {
		lock->depth++;
		return;
	}
	word_lock(&lock->word);
	lock->owner = me;
	lock->depth = 1;
}

int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
	if (!lock)
		return 1;
	pthread_t me = pthread_self();
	if (lock->depth && lock->owner == me) {
		lock->depth++;
		return 1;
	}
	if (!word_trylock(&lock->word))
		return 0;
	lock->owner = me;
	lock->depth = 1;
	return 1;
}

void __retarget_lock_release_recursive(_LOCK_T lock)
{
	if (lock && --lock->depth == 0)
		word_unlock(&lock->word);
}
