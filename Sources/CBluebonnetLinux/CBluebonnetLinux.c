// Shims that need _GNU_SOURCE live here; the rest are static inline in include/CBluebonnetLinux.h.
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>
#include "CBluebonnetLinux.h"

int cbluebonnet_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

int cbluebonnet_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }
