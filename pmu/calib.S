/*
 * Kernel code of known instruction counts (pmu/calib.h), for the exactness check
 * (pmu_calibrate) and `pmu selftest`. Each is called; the call and the ret
 * belong to every region alike, so a region's count minus the empty region's
 * is exactly the instructions listed here.
 */
	.text
	.globl pmu_calib_empty, pmu_calib_1, pmu_calib_100, pmu_calib_1m, pmu_calib_1m_end

pmu_calib_empty:
	ret

pmu_calib_1:
	nop
	ret

pmu_calib_100:
	.rept 100
	nop
	.endr
	ret

/* 1 + 1 + 2 * 499999 = 1,000,000 instructions before the ret. */
pmu_calib_1m:
	nop
	movl $499999, %ecx
1:	decl %ecx
	jnz 1b
	ret
pmu_calib_1m_end:
