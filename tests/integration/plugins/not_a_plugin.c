/*
 * Discovery fixture: an ordinary shared library with neither UROM plugin entry point. The
 * service must skip it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
__attribute__((visibility("default"))) int not_a_plugin_answer(void);

int not_a_plugin_answer(void)
{
	return 42;
}
