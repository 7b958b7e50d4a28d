/*
 * null-controller: the least an OpenFlow 1.0 controller does, as the yardstick for
 * cbench (issue 35: "a C null controller answering each PACKET_IN with one FLOW_MOD").
 *
 * One thread, one epoll loop, level-triggered, non-blocking sockets. Per switch:
 *   - on accept: HELLO and FEATURES_REQUEST (OpenFlow 1.0), sent at once;
 *   - ECHO_REQUEST: ECHO_REPLY with the same xid and body;
 *   - PACKET_IN: one FLOW_MOD ADD, the shape of the learning switch's answer
 *     (match in_port, eth_src, eth_dst from the packet; idle timeout 60, priority
 *     0x8000; the PACKET_IN's buffer id; one output action, to port 2: cbench's
 *     destination host is behind port 2), 80 bytes;
 *   - anything else (HELLO, FEATURES_REPLY, ERROR, ...) is read and dropped.
 * Each read takes what the socket holds (up to the free input space), answers every
 * whole message in it into the connection's output buffer, and writes that buffer
 * once: one write per read, as a fast controller batches. What the socket does not
 * take waits for EPOLLOUT, and the connection stops reading while more than OUT_HIGH
 * bytes wait (the switch's own writes then back up: backpressure, no unbounded
 * buffer).
 *
 * Build: cc -O2 -Wall -o null-controller null-controller.c
 * Run:   null-controller [PORT]      (default 6633; listens on 0.0.0.0)
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    OFP_VERSION = 0x01,
    OFPT_HELLO = 0,
    OFPT_ECHO_REQUEST = 2,
    OFPT_ECHO_REPLY = 3,
    OFPT_FEATURES_REQUEST = 5,
    OFPT_PACKET_IN = 10,
    OFPT_FLOW_MOD = 14,
    OFP_HEADER_LEN = 8,
    PACKET_IN_DATA = 18, /* header, buffer_id, total_len, in_port, reason, pad */
    FLOW_MOD_LEN = 80,   /* header, match (40), fields (24), one output action (8) */
    IN_SIZE = 256 * 1024,
    OUT_HIGH = 256 * 1024,
    MAX_EVENTS = 256,
};

/* OFPFW_ALL with IN_PORT (bit 0), DL_SRC (bit 2) and DL_DST (bit 3) cleared. */
#define WILDCARDS ((uint32_t)((1u << 22) - 1) & ~(1u | 4u | 8u))

struct conn {
    int fd;
    uint32_t events; /* the epoll interest set */
    unsigned char in[IN_SIZE];
    size_t in_start, in_end;
    unsigned char *out;
    size_t out_start, out_end, out_cap;
};

static int epfd;

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put16(unsigned char *p, uint16_t v) { p[0] = v >> 8; p[1] = v & 0xff; }
static void put32(unsigned char *p, uint32_t v)
{
    p[0] = v >> 24; p[1] = (v >> 16) & 0xff; p[2] = (v >> 8) & 0xff; p[3] = v & 0xff;
}

static void die(const char *what) { perror(what); exit(1); }

/* Room for n more output bytes. */
static unsigned char *out_reserve(struct conn *c, size_t n)
{
    if (c->out_start == c->out_end)
        c->out_start = c->out_end = 0;
    if (c->out_end + n > c->out_cap) {
        size_t used = c->out_end - c->out_start;
        memmove(c->out, c->out + c->out_start, used);
        c->out_start = 0;
        c->out_end = used;
        if (used + n > c->out_cap) {
            size_t cap = c->out_cap ? c->out_cap : 64 * 1024;
            while (cap < used + n)
                cap *= 2;
            if (!(c->out = realloc(c->out, cap)))
                die("realloc");
            c->out_cap = cap;
        }
    }
    unsigned char *p = c->out + c->out_end;
    c->out_end += n;
    return p;
}

static void header(unsigned char *p, uint8_t type, uint16_t len, const unsigned char *xid)
{
    p[0] = OFP_VERSION;
    p[1] = type;
    put16(p + 2, len);
    memcpy(p + 4, xid, 4);
}

/* The FLOW_MOD answering the PACKET_IN at m (whole, len bytes). */
static void answer_packet_in(struct conn *c, const unsigned char *m, uint16_t len)
{
    unsigned char *f = out_reserve(c, FLOW_MOD_LEN);
    memset(f, 0, FLOW_MOD_LEN);
    header(f, OFPT_FLOW_MOD, FLOW_MOD_LEN, m + 4);
    /* ofp_match: wildcards, in_port, dl_src, dl_dst; the rest wildcarded (zero). */
    put32(f + 8, WILDCARDS);
    memcpy(f + 12, m + 14, 2); /* in_port */
    if (len >= PACKET_IN_DATA + 12) {
        memcpy(f + 14, m + PACKET_IN_DATA + 6, 6); /* dl_src */
        memcpy(f + 20, m + PACKET_IN_DATA, 6);     /* dl_dst */
    }
    /* cookie (48..55) 0, command ADD (56) 0 */
    put16(f + 58, 60);      /* idle_timeout */
    put16(f + 60, 0);       /* hard_timeout */
    put16(f + 62, 0x8000);  /* priority */
    memcpy(f + 64, m + 8, 4); /* buffer_id */
    put16(f + 68, 0xffff);  /* out_port: OFPP_NONE */
    put16(f + 70, 0);       /* flags */
    put16(f + 72, 0);       /* action: OFPAT_OUTPUT */
    put16(f + 74, 8);
    put16(f + 76, 2);       /* port */
    put16(f + 78, 0);       /* max_len */
}

static void close_conn(struct conn *c)
{
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->out);
    free(c);
}

/* Reads while at most OUT_HIGH bytes wait; asks for EPOLLOUT while any do. Calls
 * epoll_ctl only when that changes. */
static void set_events(struct conn *c)
{
    size_t waiting = c->out_end - c->out_start;
    uint32_t want = (waiting <= OUT_HIGH ? EPOLLIN : 0) | (waiting ? EPOLLOUT : 0);
    if (want == c->events)
        return;
    struct epoll_event ev = { .events = want, .data.ptr = c };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        die("epoll_ctl");
    c->events = want;
}

/* Writes what waits; returns -1 when the connection is gone. */
static int flush(struct conn *c)
{
    while (c->out_end > c->out_start) {
        ssize_t n = write(c->fd, c->out + c->out_start, c->out_end - c->out_start);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EINTR)
                continue;
            return -1;
        }
        c->out_start += (size_t)n;
    }
    return 0;
}

/* One read, every whole message answered, one flush. -1: the connection is gone. */
static int on_readable(struct conn *c)
{
    if (c->in_start > 0) { /* a partial message left: move it to the front */
        memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
        c->in_end -= c->in_start;
        c->in_start = 0;
    }
    ssize_t n = read(c->fd, c->in + c->in_end, IN_SIZE - c->in_end);
    if (n == 0)
        return -1;
    if (n < 0)
        return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    c->in_end += (size_t)n;
    while (c->in_end - c->in_start >= OFP_HEADER_LEN) {
        const unsigned char *m = c->in + c->in_start;
        uint16_t len = get16(m + 2);
        if (len < OFP_HEADER_LEN)
            return -1; /* framing broken */
        if (c->in_end - c->in_start < len)
            break;
        if (m[1] == OFPT_PACKET_IN && len >= PACKET_IN_DATA) {
            answer_packet_in(c, m, len);
        } else if (m[1] == OFPT_ECHO_REQUEST) {
            unsigned char *r = out_reserve(c, len);
            memcpy(r, m, len);
            r[0] = OFP_VERSION;
            r[1] = OFPT_ECHO_REPLY;
        }
        c->in_start += len;
    }
    if (c->in_start == c->in_end)
        c->in_start = c->in_end = 0;
    return flush(c);
}

static void on_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                perror("accept4");
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            die("calloc");
        c->fd = fd;
        static const unsigned char xid[4] = { 0, 0, 0, 1 };
        header(out_reserve(c, OFP_HEADER_LEN), OFPT_HELLO, OFP_HEADER_LEN, xid);
        header(out_reserve(c, OFP_HEADER_LEN), OFPT_FEATURES_REQUEST, OFP_HEADER_LEN, xid);
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
            die("epoll_ctl");
        c->events = EPOLLIN;
        if (flush(c) < 0)
            close_conn(c);
        else
            set_events(c);
    }
}

int main(int argc, char **argv)
{
    int port = argc > 1 ? atoi(argv[1]) : 6633;
    signal(SIGPIPE, SIG_IGN);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (lfd < 0)
        die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_ANY) };
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0)
        die("bind");
    if (listen(lfd, 1024) < 0)
        die("listen");
    if ((epfd = epoll_create1(0)) < 0)
        die("epoll_create1");
    static int listener; /* its address tags the listening socket's events */
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listener };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) < 0)
        die("epoll_ctl");
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == &listener) {
                on_accept(lfd);
                continue;
            }
            struct conn *c = events[i].data.ptr;
            int gone = 0;
            if (events[i].events & (EPOLLERR | EPOLLHUP))
                gone = 1;
            if (!gone && (events[i].events & EPOLLIN))
                gone = on_readable(c) < 0;
            if (!gone && (events[i].events & EPOLLOUT))
                gone = flush(c) < 0;
            if (gone) {
                close_conn(c);
                continue;
            }
            set_events(c);
        }
    }
}
