/*
 * calib: regions of exactly K user instructions between "spflt 1" and
 * "spflt 0", for K = 1, 10, 1000 and 10^6. `calib rank [ROUNDS]` instead
 * runs one region of a size its rank picks: N = (rank + 1) x ROUNDS
 * (default 100,000) rounds of a load, a decrement and a branch, so
 * 3 x N + 1 instructions and N data reads, different on each CPU of a launch. With counter 0 counting
 * INSTRUCTIONS_EXECUTED:u and PERF_SPFLT_CONTROL bit 0 set by the OS, each
 * region reads exactly K. RDPMC around each region shows the count; the
 * registers that switch SPFLT are loaded before the region, so the region
 * holds only its K instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

/* spflt eax = C5 FB AE F0, spflt edx = C5 FB AE F2 */
#define SPFLT_ON_EAX  ".byte 0xc5, 0xfb, 0xae, 0xf0\n\t"
#define SPFLT_OFF_EDX ".byte 0xc5, 0xfb, 0xae, 0xf2\n\t"
#define REGION(body) \
	__asm__ volatile("movl $1, %%eax\n\txorl %%edx, %%edx\n\t" SPFLT_ON_EAX body SPFLT_OFF_EDX \
			 ::: "eax", "ecx", "edx", "memory")
#define NOPS(n) ".rept " #n "\n\tnop\n\t.endr\n\t"
/* nop, mov, then 499999 x (dec, jnz): 1,000,000 instructions. */
#define MILLION "nop\n\tmovl $499999, %%ecx\n1:\n\tdecl %%ecx\n\tjnz 1b\n\t"

static unsigned long long measure(int k)
{
	unsigned long long before = pmu_rdpmc(0);

	switch (k) {
	case 0: REGION(""); break;
	case 1: REGION(NOPS(1)); break;
	case 10: REGION(NOPS(10)); break;
	case 1000: REGION(NOPS(1000)); break;
	default: REGION(MILLION); break;
	}
	return pmu_rdpmc(0) - before;
}

#define REPS 1000

/* The rank's region: N = (rank + 1) x `rounds` rounds; one more instruction, the MOV that sets ECX. */
static void ranked(unsigned long rounds)
{
	unsigned long n = (unsigned long)(pmuos_rank() + 1) * rounds;
	volatile unsigned word = 0;

	__asm__ volatile("movl $1, %%eax\n\txorl %%edx, %%edx\n\t" SPFLT_ON_EAX
			 "movl %k0, %%ecx\n2:\n\tmovl %1, %%eax\n\tdecl %%ecx\n\tjnz 2b\n\t" SPFLT_OFF_EDX
			 :: "r"(n), "m"(word) : "eax", "ecx", "edx", "memory");
	printf("calib: rank %d region of %lu instructions and %lu reads\n", pmuos_rank(), 3 * n + 1, n);
}

static void cost(void)
{
	uint64_t a = pmu_rdpmc(1);
	for (int i = 0; i < REPS; i++)
		pmu_rdpmc(0);
	uint64_t b = pmu_rdpmc(1);
	/* Each read's kernel time falls partly before and partly after its sample: REPS + 1 reads' worth. */
	uint64_t per_rdpmc = (b - a) / (REPS + 1);
	a = pmu_rdpmc(1);
	for (int i = 0; i < REPS; i++)
		pmu_spflt(0);
	b = pmu_rdpmc(1);
	printf("calib: kernel instructions per RDPMC %llu, per SPFLT %llu\n", (unsigned long long)per_rdpmc,
	       (unsigned long long)((b - a - per_rdpmc) / REPS));
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] == 'c') {
		cost();
		return 0;
	}
	if (argc > 1 && argv[1][0] == 'r') {
		unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
		if (rounds < 1 || rounds > 10000000) {
			fprintf(stderr, "calib: usage: calib rank [ROUNDS], 1 to 10000000 (default 100000)\n");
			return 2;
		}
		ranked(rounds);
		return 0;
	}
	static const int ks[] = { 0, 1, 10, 1000, 1000000 };
	unsigned long long last = 0, now;
	int monotonic = 1;

	for (unsigned i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
		printf("calib: region of %d user instructions counted %llu\n", ks[i], measure(ks[i]));
	for (int i = 0; i < 1000; i++) {
		now = pmu_rdpmc(0);
		if (now < last)
			monotonic = 0;
		last = now;
	}
	printf("calib: rdpmc monotonic over 1000 reads: %s\n", monotonic ? "yes" : "no");
	printf("calib: final counter 0 = %llu\n", (unsigned long long)pmu_rdpmc(0));
	return 0;
}
