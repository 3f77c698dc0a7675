/* The migrations compiled in from schema/NNN-*.sql (see schema/embed.sh). */
#ifndef FB_STORE_SCHEMA_H
#define FB_STORE_SCHEMA_H

struct store_migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct store_migration store_migrations[];
extern const int store_migrations_count;

#endif
