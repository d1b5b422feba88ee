# Makefile of a fluxcc-emitted OpenCL project: `make` builds ./flux.
# The kernels (kernels/*.cl, kernel_prelude.cl) are built at run time by the
# OpenCL driver, next to the executable or in $FLUX_DIR.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -pthread
LDLIBS   = -lOpenCL -lcjson -lm -lpthread
SRC      = flux_main.c backend_opencl.c safetensors.c schedule.c
HDR      = flux_rt.h numbers.h safetensors.h backend.h
OBJ      = $(SRC:.c=.o)
SAN      = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

all: flux

flux: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

%.o: %.c $(HDR)
	$(CC) $(WARN) $(CFLAGS) -c -o $@ $<

# the same with AddressSanitizer and UBSan. PoCL leaks its LLVM state when it
# compiles a kernel that is not in its cache yet: LSAN_OPTIONS=suppressions=F
# with F holding the lines "leak:libpocl.so" and "leak:libLLVM".
flux-san: $(SRC) $(HDR)
	$(CC) $(WARN) $(SAN) $(LDFLAGS) -o $@ $(SRC) $(LDLIBS)

clean:
	rm -f flux flux-san $(OBJ)

.PHONY: all clean
