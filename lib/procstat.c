#include "procstat.h"

#include <stdio.h>
#include <string.h>

uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], state, *p;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* The command may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &state, &start) != 2)
		return 0;
	/* A zombie's namespaces are gone already: it is not a live process (and our init's zombie
	 * lingers where the host's pid 1 does not reap). */
	if (state == 'Z' || state == 'X')
		return 0;
	return start;
}
