// AF_XDP forwarder prototype (issue 17): every frame in on IF_IN goes out on IF_OUT.
// One UMEM shared by both sockets, so a frame is handed from one ring to the other
// without a copy in user space; copy mode (veth has no zero-copy). libxdp loads its
// default XDP program. Build: gcc -O2 -o fwd fwd.c -lxdp -lbpf (libxdp-dev, libbpf-dev).
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <xdp/xsk.h>
#include <signal.h>

#define NFRAMES 16384
#define FSIZE 2048
#define RING 4096
#define BATCH 64

static volatile int stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "fwd IF_IN IF_OUT [drv|skb] [spin]\n"); return 2; }
  int skb = argc > 3 && !strcmp(argv[3], "skb");
  int spin = argc > 4 && !strcmp(argv[4], "spin");
  signal(SIGTERM, on_sig); signal(SIGINT, on_sig);
  void *bufs = mmap(NULL, (size_t)NFRAMES * FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (bufs == MAP_FAILED) { perror("mmap"); return 1; }
  struct xsk_ring_prod fq1, fq2, tx1, tx2; struct xsk_ring_cons cq1, cq2, rx1, rx2;
  struct xsk_umem *umem;
  struct xsk_umem_config ucfg = { .fill_size = RING, .comp_size = RING, .frame_size = FSIZE, .frame_headroom = 0, .flags = 0 };
  int r = xsk_umem__create(&umem, bufs, (size_t)NFRAMES * FSIZE, &fq1, &cq1, &ucfg);
  if (r) { fprintf(stderr, "umem: %s\n", strerror(-r)); return 1; }
  struct xsk_socket_config cfg = { .rx_size = RING, .tx_size = RING, .libxdp_flags = 0,
    .xdp_flags = skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, .bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP };
  struct xsk_socket *x1, *x2;
  r = xsk_socket__create_shared(&x1, argv[1], 0, umem, &rx1, &tx1, &fq1, &cq1, &cfg);
  if (r) { fprintf(stderr, "xsk %s: %s\n", argv[1], strerror(-r)); return 1; }
  r = xsk_socket__create_shared(&x2, argv[2], 0, umem, &rx2, &tx2, &fq2, &cq2, &cfg);
  if (r) { fprintf(stderr, "xsk %s: %s\n", argv[2], strerror(-r)); return 1; }
  // Half the frames to IF1's fill ring; the rest are free for nothing else here.
  unsigned idx; unsigned n = xsk_ring_prod__reserve(&fq1, RING, &idx);
  for (unsigned i = 0; i < n; i++) *xsk_ring_prod__fill_addr(&fq1, idx + i) = (unsigned long long)i * FSIZE;
  xsk_ring_prod__submit(&fq1, n);
  unsigned long long fwd = 0, kicks = 0, waits = 0;
  int fd1 = xsk_socket__fd(x1), fd2 = xsk_socket__fd(x2);
  fprintf(stderr, "fwd: %s -> %s (%s mode)\n", argv[1], argv[2], skb ? "skb" : "drv");
  while (!stop) {
    // Completions of IF2's transmissions go back to IF1's fill ring.
    unsigned ic; unsigned c = xsk_ring_cons__peek(&cq2, RING, &ic);
    if (c) {
      unsigned ifq = 0; unsigned got = 0;
      while (got != c) got = xsk_ring_prod__reserve(&fq1, c, &ifq);
      for (unsigned i = 0; i < c; i++) *xsk_ring_prod__fill_addr(&fq1, ifq + i) = *xsk_ring_cons__comp_addr(&cq2, ic + i) & ~(unsigned long long)(FSIZE - 1);
      xsk_ring_prod__submit(&fq1, c);
      xsk_ring_cons__release(&cq2, c);
    }
    unsigned ir; unsigned m = xsk_ring_cons__peek(&rx1, BATCH, &ir);
    if (!m) {
      if (xsk_ring_prod__needs_wakeup(&fq1)) recvfrom(fd1, NULL, 0, MSG_DONTWAIT, NULL, NULL);
      if (!spin) {
        struct pollfd p = { .fd = fd1, .events = POLLIN };
        waits++;
        poll(&p, 1, 100);
      }
      continue;
    }
    unsigned it; unsigned t = xsk_ring_prod__reserve(&tx2, m, &it);
    if (t < m) { // TX ring full: kick and drop the rest back to the fill ring
      sendto(fd2, NULL, 0, MSG_DONTWAIT, NULL, 0);
      unsigned ifq = 0; xsk_ring_prod__reserve(&fq1, m - t, &ifq);
      for (unsigned i = t; i < m; i++) *xsk_ring_prod__fill_addr(&fq1, ifq + i - t) = xsk_ring_cons__rx_desc(&rx1, ir + i)->addr & ~(unsigned long long)(FSIZE - 1);
      xsk_ring_prod__submit(&fq1, m - t);
    }
    for (unsigned i = 0; i < t; i++) {
      const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx1, ir + i);
      struct xdp_desc *o = xsk_ring_prod__tx_desc(&tx2, it + i);
      o->addr = d->addr; o->len = d->len; o->options = 0;
    }
    xsk_ring_prod__submit(&tx2, t);
    xsk_ring_cons__release(&rx1, m);
    fwd += t;
    // Copy mode transmits only from a system call, whatever needs_wakeup says.
    sendto(fd2, NULL, 0, MSG_DONTWAIT, NULL, 0);
    kicks++;
  }
  fprintf(stderr, "fwd: %llu frames, %llu kicks, %llu waits\n", fwd, kicks, waits);
  xsk_socket__delete(x1); xsk_socket__delete(x2); xsk_umem__delete(umem);
  return 0;
}
