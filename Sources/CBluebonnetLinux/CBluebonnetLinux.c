// Shims that need _GNU_SOURCE live here; the rest are static inline in include/CBluebonnetLinux.h.
#define _GNU_SOURCE
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include "CBluebonnetLinux.h"

int cbluebonnet_accept4(int fd, int flags) { return accept4(fd, NULL, NULL, flags); }

int cbluebonnet_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }

int cbluebonnet_netlink_bind(int fd, uint32_t groups) {
    struct sockaddr_nl address;
    memset(&address, 0, sizeof(address));
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    return bind(fd, (struct sockaddr *)&address, sizeof(address));
}

int cbluebonnet_setns_network(int fd) { return setns(fd, CLONE_NEWNET); }
