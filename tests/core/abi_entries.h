/* test_abi: the struct ABI at every entry point (test_abi_entries.c). */
#ifndef MXP_TEST_ABI_ENTRIES_H
#define MXP_TEST_ABI_ENTRIES_H

int abi_entries_setup(void **state);
int abi_entries_teardown(void **state);
void test_abi_every_entry_point(void **state);

#endif
