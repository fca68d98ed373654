/* TLBs and page walks; see plugin/tlb.h. */
#include "plugin/tlb.h"

#include <stddef.h>


bool tlb_init(struct tlbs *t)
{
	bool ok = sa_init(&t->data4k, 64, 4, false) & sa_init(&t->data2m, 8, 4, false) & sa_init(&t->code4k, 32, 4, false) &
		  sa_init(&t->code2m, 8, 4, false) & sa_init(&t->l2, 64, 4, false);

	t->epoch = 0;

	if (!ok)
		tlb_free(t);
	return ok;
}

void tlb_free(struct tlbs *t)
{
	sa_free(&t->data4k);
	sa_free(&t->data2m);
	sa_free(&t->code4k);
	sa_free(&t->code2m);
	sa_free(&t->l2);
}

void tlb_flush(struct tlbs *t)
{
	t->epoch++;
	sa_clear(&t->data4k);
	sa_clear(&t->data2m);
	sa_clear(&t->code4k);
	sa_clear(&t->code2m);
	sa_clear(&t->l2);
}

enum tlb_result tlb_access_slow(struct sacache *l1, struct tlbs *t, uint64_t vaddr, bool large)
{
	uint64_t page = vaddr >> (large ? TLB_SHIFT_2M : TLB_SHIFT_4K), region = vaddr >> TLB_SHIFT_2M;

	t->epoch++;
	if (sa_lookup(l1, page, NULL))
		return TLB_HIT;
	sa_insert(l1, page, 0, 0);
	if (sa_lookup(&t->l2, region, NULL))
		return TLB_WALK;
	sa_insert(&t->l2, region, 0, 0);
	return TLB_LONG_WALK;
}
