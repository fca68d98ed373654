/* hello: printf, malloc and the task's place in its launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pmuos/pmu.h>

int main(int argc, char **argv)
{
	char *msg = malloc(64);

	if (!msg)
		return 1;
	strcpy(msg, "hello from pmuos");
	printf("%s: rank %d of %d on CPU %d", msg, pmuos_rank(), pmuos_nranks(), pmuos_getcpu());
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	if (argc > 1 && strcmp(argv[1], "time") == 0)
		printf("hello: time() %ld, clock() %ld\n", (long)time(NULL), (long)clock());
	free(msg);
	return argc > 1 && strcmp(argv[1], "fail") == 0 ? 3 : 0;
}
