/* SPDX-License-Identifier: MIT */
/* The known-defects table (generated at build time) and the choice of what applies to a test. */
#include <stdbool.h>
#include <stddef.h>

#include "lib/glob.h"
#include "lib/string.h"
#include "runner/known_defects.h"

const struct known_defect known_defects[] = {
#include "known_defects_table.h"
};
const size_t known_defects_count = sizeof(known_defects) / sizeof(known_defects[0]);

static bool applies_on(const struct known_defect *defect, const char *identity)
{
	return glob_match(defect->platform, strlen(defect->platform), identity);
}

unsigned int known_defects_select(const struct known_defect *table, size_t count,
				  const char *identity, const char *test,
				  struct report_expected *expected, unsigned int max)
{
	unsigned int selected = 0;

	for (size_t i = 0; i < count && selected < max; i++) {
		if (!table[i].check || strcmp(table[i].test, test) != 0 ||
		    !applies_on(&table[i], identity))
			continue;
		expected[selected].check = table[i].check;
		expected[selected].got = table[i].got;
		expected[selected].reason = table[i].reason;
		expected[selected].failed = 0;
		selected++;
	}
	return selected;
}

/* The entry for test on identity that has the field `ends` (or, with runs, `runs`), or NULL. */
static const struct known_defect *find_kind(const struct known_defect *table, size_t count,
					    const char *identity, const char *test, bool runs)
{
	for (size_t i = 0; i < count; i++)
		if ((runs ? table[i].runs : table[i].ends) && strcmp(table[i].test, test) == 0 &&
		    applies_on(&table[i], identity))
			return &table[i];
	return NULL;
}

const struct known_defect *known_defects_ending(const struct known_defect *table, size_t count,
						const char *identity, const char *test)
{
	return find_kind(table, count, identity, test, false);
}

const struct known_defect *known_defects_never(const struct known_defect *table, size_t count,
					       const char *identity, const char *test)
{
	return find_kind(table, count, identity, test, true);
}

unsigned int known_defects_on(const struct known_defect *table, size_t count, const char *identity)
{
	unsigned int on = 0;

	for (size_t i = 0; i < count; i++)
		on += applies_on(&table[i], identity);
	return on;
}
