// host_cpu.h — what this CPU is, for the name of a device that runs on it:
// its model (from /proc/cpuinfo) and the threads OpenMP will use. fluxcc's C
// device (records, provenance) and the C target's backend (./flux) both say
// it, in the same words.
#ifndef HOST_CPU_H
#define HOST_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// "AMD EPYC (C, OpenMP, 2 threads)"
static inline void host_cpu_name(char *buf, size_t n) {
  char model[200] = "unknown CPU", line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
      model[strcspn(model, "\n")] = 0;
      break;
    }
  if (f) fclose(f);
  const char *omp = getenv("OMP_NUM_THREADS");
  snprintf(buf, n, "%.150s (C, OpenMP, %s%ld threads)", model, omp && *omp ? "OMP_NUM_THREADS=" : "",
           omp && *omp ? atol(omp) : sysconf(_SC_NPROCESSORS_ONLN));
}

#endif
