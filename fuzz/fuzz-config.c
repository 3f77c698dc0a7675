/*
 * The config file (lib/config.c): any bytes as firebreakd.conf, read by config_load() over the
 * defaults as the daemon and the CLI read it. The file is written to a tmpfs for each input.
 */
#include "fuzz.h"
#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char path[PATH_MAX];

	config_defaults(&cfg);
	if (config_load(&cfg, fuzz_file("config", data, size), 1) == 0) {
		(void)config_socket_path(&cfg, FB_CONTROL_SOCKET, path, sizeof(path));
		(void)config_sandbox_path(&cfg, "fuzz", "state.json", path, sizeof(path));
	}
	return 0;
}
