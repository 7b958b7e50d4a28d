/*
 * mem-chase: the latency of one dependent random read over a region, in 2 MiB pages
 * (MADV_HUGEPAGE) or 4 KiB ones: what a MAC-table lookup that misses every cache costs
 * on this machine (BENCHMARKS.md, issue 35's cbench section).
 *
 * Build: cc -O2 -o mem-chase scripts/mem-chase/mem-chase.c
 * Run:   taskset -c 1 mem-chase MIB HUGE     (HUGE 1: huge pages asked for; 0: refused)
 * Prints ns per read over 20 million reads along one random cycle through every
 * 64-byte line of the region, and the region's AnonHugePages.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t mb=atoi(argv[1]); int huge=atoi(argv[2]);
  size_t bytes=mb<<20, n=bytes/64;
  char*p=mmap(0,bytes+(2<<20),PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  p=(char*)(((uintptr_t)p+(2<<20)-1)&~((uintptr_t)(2<<20)-1));
  madvise(p,bytes,huge?MADV_HUGEPAGE:MADV_NOHUGEPAGE);
  size_t*perm=malloc(n*sizeof(size_t)); for(size_t i=0;i<n;i++)perm[i]=i;
  srand(1); for(size_t i=n-1;i>0;i--){size_t j=((size_t)rand()*RAND_MAX+rand())%(i+1);size_t t=perm[i];perm[i]=perm[j];perm[j]=t;}
  for(size_t i=0;i<n;i++) *(size_t*)(p+perm[i]*64)=perm[(i+1)%n]*64;
  size_t at=0; long iters=20000000; double t0=now();
  for(long i=0;i<iters;i++) at=*(size_t*)(p+at);
  double t=now()-t0; printf("%zu MB huge=%d: %.1f ns/access (%zu)\n",mb,huge,t*1e9/iters,at&1);
  FILE*f=fopen("/proc/self/smaps_rollup","r"); char l[256]; while(fgets(l,256,f)) if(strstr(l,"AnonHuge")) fputs(l,stdout);
}
