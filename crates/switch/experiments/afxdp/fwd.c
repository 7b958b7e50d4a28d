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
#include <stdint.h>
#include <net/if.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#define NFRAMES 16384
#define FSIZE 2048
#define RING 4096
#define BATCH 64

static int sys_bpf(int cmd, union bpf_attr *a) { return syscall(__NR_bpf, cmd, a, sizeof(*a)); }

// Mode "raw": the redirect program without libxdp or a BPF compiler, as a Rust switch
// would do it. An XSKMAP, five instructions (`bpf_redirect_map(&map, rx_queue_index,
// XDP_PASS)`), attached in driver mode through a BPF link (detached when the link's
// descriptor closes, at exit). Gives the link, and the map in *map_out.
static int load_redirect(const char *ifname, int *map_out) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_type = BPF_MAP_TYPE_XSKMAP; a.key_size = 4; a.value_size = 4; a.max_entries = 64;
  int map = sys_bpf(BPF_MAP_CREATE, &a);
  if (map < 0) { perror("BPF_MAP_CREATE"); return -1; }
  struct bpf_insn insns[] = {
    { .code = BPF_LDX | BPF_W | BPF_MEM, .dst_reg = 2, .src_reg = 1, .off = 16 }, // r2 = ctx->rx_queue_index
    { .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
    { 0 },                                                                         // (second half of the 64-bit load)
    { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = XDP_PASS },         // no socket on the queue: to the stack
    { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
    { .code = BPF_JMP | BPF_EXIT },
  };
  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_XDP; a.insn_cnt = sizeof insns / sizeof insns[0];
  a.insns = (uintptr_t)insns; a.license = (uintptr_t)"GPL";
  int prog = sys_bpf(BPF_PROG_LOAD, &a);
  if (prog < 0) { perror("BPF_PROG_LOAD"); return -1; }
  memset(&a, 0, sizeof a);
  a.link_create.prog_fd = prog; a.link_create.target_ifindex = if_nametoindex(ifname);
  a.link_create.attach_type = BPF_XDP; a.link_create.flags = XDP_FLAGS_DRV_MODE;
  int link = sys_bpf(BPF_LINK_CREATE, &a);
  if (link < 0) { perror("BPF_LINK_CREATE"); return -1; }
  *map_out = map;
  return link;
}

static volatile int stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "fwd IF_IN IF_OUT [drv|skb|raw] [spin]\n"); return 2; }
  int skb = argc > 3 && !strcmp(argv[3], "skb");
  int raw = argc > 3 && !strcmp(argv[3], "raw");
  int map = -1;
  if (raw && load_redirect(argv[1], &map) < 0) return 1;
  int spin = argc > 4 && !strcmp(argv[4], "spin");
  signal(SIGTERM, on_sig); signal(SIGINT, on_sig);
  void *bufs = mmap(NULL, (size_t)NFRAMES * FSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (bufs == MAP_FAILED) { perror("mmap"); return 1; }
  struct xsk_ring_prod fq1, fq2, tx1, tx2; struct xsk_ring_cons cq1, cq2, rx1, rx2;
  struct xsk_umem *umem;
  struct xsk_umem_config ucfg = { .fill_size = RING, .comp_size = RING, .frame_size = FSIZE, .frame_headroom = 0, .flags = 0 };
  int r = xsk_umem__create(&umem, bufs, (size_t)NFRAMES * FSIZE, &fq1, &cq1, &ucfg);
  if (r) { fprintf(stderr, "umem: %s\n", strerror(-r)); return 1; }
  struct xsk_socket_config cfg = { .rx_size = RING, .tx_size = RING,
    .libxdp_flags = raw ? XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD : 0,
    .xdp_flags = skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, .bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP };
  struct xsk_socket *x1, *x2;
  r = xsk_socket__create_shared(&x1, argv[1], 0, umem, &rx1, &tx1, &fq1, &cq1, &cfg);
  if (r) { fprintf(stderr, "xsk %s: %s\n", argv[1], strerror(-r)); return 1; }
  if (raw && (r = xsk_socket__update_xskmap(x1, map))) { fprintf(stderr, "xskmap: %s\n", strerror(-r)); return 1; }
  r = xsk_socket__create_shared(&x2, argv[2], 0, umem, &rx2, &tx2, &fq2, &cq2, &cfg);
  if (r) { fprintf(stderr, "xsk %s: %s\n", argv[2], strerror(-r)); return 1; }
  // Half the frames to IF1's fill ring; the rest are free for nothing else here.
  unsigned idx; unsigned n = xsk_ring_prod__reserve(&fq1, RING, &idx);
  for (unsigned i = 0; i < n; i++) *xsk_ring_prod__fill_addr(&fq1, idx + i) = (unsigned long long)i * FSIZE;
  xsk_ring_prod__submit(&fq1, n);
  unsigned long long fwd = 0, kicks = 0, waits = 0;
  int fd1 = xsk_socket__fd(x1), fd2 = xsk_socket__fd(x2);
  fprintf(stderr, "fwd: %s -> %s (%s mode)\n", argv[1], argv[2], raw ? "raw drv" : skb ? "skb" : "drv");
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
