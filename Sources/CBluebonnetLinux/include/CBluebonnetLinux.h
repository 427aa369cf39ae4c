// The Linux calls Swift's Glibc module does not cover, for BluebonnetPosix only (imported `internal`).
// One prefixed function per item, no logic; each says why it exists.
#ifndef CBLUEBONNET_LINUX_H
#define CBLUEBONNET_LINUX_H

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// why: <sys/epoll.h> is not in Swift's Glibc module map.
static inline int cbluebonnet_epoll_create1(int flags) { return epoll_create1(flags); }

// why: <sys/epoll.h> is not in Glibc; building the packed `struct epoll_event` in C keeps its layout C's.
static inline int cbluebonnet_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event = { .events = events, .data = { .u64 = data } };
    return epoll_ctl(epfd, op, fd, &event);
}

// why: <sys/epoll.h> is not in Swift's Glibc module map.
static inline int cbluebonnet_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    return epoll_wait(epfd, events, maxevents, timeout);
}

// why: reads a packed `struct epoll_event` field in C, so Swift never does unaligned access itself.
static inline uint32_t cbluebonnet_epoll_event_events(const struct epoll_event *events, int index) {
    return events[index].events;
}

// why: reads a packed `struct epoll_event` field in C, so Swift never does unaligned access itself.
static inline uint64_t cbluebonnet_epoll_event_data(const struct epoll_event *events, int index) {
    return events[index].data.u64;
}

// why: the size of the packed `struct epoll_event` (12 bytes on x86-64, 16 elsewhere), for allocation.
static inline int cbluebonnet_epoll_event_size(void) { return (int)sizeof(struct epoll_event); }

// why: <sys/eventfd.h> is not in Swift's Glibc module map.
static inline int cbluebonnet_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }

// why: accept4 is a GNU extension that Swift's Glibc module does not declare (defined in the .c file,
// which sets _GNU_SOURCE); addresses are read afterwards with getpeername.
int cbluebonnet_accept4(int fd, int flags);

// why: pthread_setname_np is a GNU extension that Swift's Glibc module does not declare; names the
// calling thread (at most 15 bytes) so loops and resolver threads show up in debuggers and `top -H`.
int cbluebonnet_set_thread_name(const char *name);

// why: `struct sockaddr_nl` is in <linux/netlink.h>, which Swift's Glibc module does not cover; binds a
// netlink socket to the multicast `groups` (RTMGRP_* bits) with a port id the kernel picks.
int cbluebonnet_netlink_bind(int fd, uint32_t groups);

// why: setns(2) and CLONE_NEWNET need _GNU_SOURCE, which Swift's Glibc module does not set; moves the
// calling thread into the network namespace open at `fd`.
int cbluebonnet_setns_network(int fd);

#endif
