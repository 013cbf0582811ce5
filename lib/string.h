/* SPDX-License-Identifier: MIT */
/* The C string and memory functions the kernel uses; GCC may also emit calls to the mem* ones. */
#ifndef LIB_STRING_H
#define LIB_STRING_H

#include <stddef.h>

void *memset(void *dest, int value, size_t count);
void *memcpy(void *dest, const void *src, size_t count);
void *memmove(void *dest, const void *src, size_t count);
int memcmp(const void *a, const void *b, size_t count);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t count);
char *strchr(const char *s, int c);

/* Copy at most size - 1 characters and always NUL-terminate; return strlen(src). */
size_t strlcpy(char *dest, const char *src, size_t size);

#endif
