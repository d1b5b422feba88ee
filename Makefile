# fluxcc — build with `make`, test with `make test`.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -D_GNU_SOURCE
B       ?= build
SRC      = compiler/arena.c compiler/diag.c compiler/ctx.c compiler/dtype.c compiler/ast.c compiler/graph.c compiler/fp8.c \
           compiler/elaborate.c compiler/interpret.c runtime/safetensors.c runtime/files.c compiler/model_io.c \
           compiler/symbolic.c compiler/schedule.c compiler/optimize.c compiler/attention.c compiler/lower.c compiler/render.c compiler/emit.c compiler/pipeline.c compiler/report.c compiler/dot.c \
           compiler/records.c compiler/features.c compiler/costmodel.c compiler/model_check.c compiler/search.c compiler/actions.c compiler/measure.c compiler/predict.c compiler/beam.c compiler/tree.c compiler/finals.c compiler/cache.c compiler/target.c compiler/device_opencl.c compiler/device_cuda.c compiler/device_c.c compiler/warm.c compiler/compare.c \
           compiler/main.c
GEN      = $(B)/fdsl.tab.c $(B)/fdsl.lex.c
HDR      = compiler/fluxcc.h compiler/search.h runtime/flux_rt.h runtime/numbers.h runtime/safetensors.h runtime/files.h templates/c/host_cpu.h \
           $(B)/fdsl.tab.h $(B)/prelude.inc $(B)/runtime_files.inc $(B)/template_files.inc
RUNTIME  = $(sort $(wildcard runtime/*))
TEMPLATES = $(sort $(shell find templates -type f))
COMMIT  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
INC      = -Icompiler -Iruntime -I$(B)
LIBS     = -lcjson -lm -lpthread -ldl

all: fluxcc

fluxcc: $(B)/fluxcc
	cp $< $@

$(B)/fluxcc: $(SRC) $(GEN) $(HDR)
	$(CC) $(WARN) $(CFLAGS) $(INC) -DFLUXCC_COMMIT='"$(COMMIT)"' -o $@ $(SRC) $(GEN) $(LIBS)

$(B)/fdsl.tab.c $(B)/fdsl.tab.h: grammar/fdsl.y
	@mkdir -p $(B)
	bison -Wall -d -o $(B)/fdsl.tab.c $<

$(B)/fdsl.lex.c: grammar/fdsl.l $(B)/fdsl.tab.h
	flex -o $@ $<

# the prelude is compiled in as a C string
$(B)/prelude.inc: compiler/prelude.fdsl
	@mkdir -p $(B)
	{ echo 'static const char prelude_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/  "/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

# the runtime and the templates are compiled in too: emitted projects get a
# copy of runtime/ and of templates/<target>/
# (the folders too: a file removed or renamed there changes the list)
$(B)/runtime_files.inc: $(RUNTIME) runtime scripts/embed.sh
	@mkdir -p $(B)
	sh scripts/embed.sh runtime_files runtime $(RUNTIME) > $@

$(B)/template_files.inc: $(TEMPLATES) $(shell find templates -type d) scripts/embed.sh
	@mkdir -p $(B)
	sh scripts/embed.sh template_files templates $(TEMPLATES) > $@

# ASan + UBSan build of the same sources
$(B)/san/fluxcc: $(SRC) $(GEN) $(HDR)
	@mkdir -p $(B)/san
	$(CC) $(WARN) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(INC) -o $@ $(SRC) $(GEN) $(LIBS)

san: $(B)/san/fluxcc

# The CUDA stand-in (cuda-stand-in/): libcuda.so.1 and libnvrtc.so over the
# CUDA emulation, for running the CUDA search path without a GPU
# (FLUXCC_CUDA_LIBS=$(B)/cuda-stand-in/lib64). include/ holds the emulation's
# headers, which the stand-in NVRTC builds kernels against.
SI       = $(B)/cuda-stand-in
EMUSRC   = $(sort $(wildcard templates/cuda/emu/*))
cuda-stand-in: $(SI)/lib64/libcuda.so.1 $(SI)/lib64/libnvrtc.so

$(SI)/include/flux_emu.h: $(EMUSRC) runtime/numbers.h
	@mkdir -p $(SI)/include $(SI)/lib64
	cp $(EMUSRC) $(SI)/include/ && cp runtime/numbers.h $(SI)/

$(SI)/lib64/libcuda.so.1: cuda-stand-in/libcuda.cc cuda-stand-in/stand_in.h $(SI)/include/flux_emu.h
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -shared -pthread -I$(SI)/include -I$(SI) -Icuda-stand-in \
	  -Wl,-soname,libcuda.so.1 -o $@ cuda-stand-in/libcuda.cc $(SI)/include/flux_emu.cc -ldl

$(SI)/lib64/libnvrtc.so: cuda-stand-in/libnvrtc.c cuda-stand-in/stand_in.h $(SI)/include/flux_emu.h
	$(CC) $(WARN) -O2 -g -fPIC -shared -Icuda-stand-in -Wl,-soname,libnvrtc.so -o $@ $< -ldl -lpthread

# `make test` and `make demo` first install what is missing (scripts/deps.sh:
# apt-get as root or with passwordless sudo, else the command to run), then
# build: in a sub-make, since the build needs what the check installs
test:
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) fluxcc san cuda-stand-in
	@UPDATE=$(UPDATE) B=$(B) sh tests/run.sh

# The edit loop's few minutes: unit tests, code structure, the golden files
# and a numeric smoke of each target (tests/run.sh --list names the
# sections; SECTIONS=a,b runs those and what they need)
CHECK_SECTIONS = unit,structure,params,diag,ir,pictures,emitted,vec,smoke
check:
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) fluxcc san
	@UPDATE=$(UPDATE) B=$(B) sh tests/run.sh --section $(if $(SECTIONS),$(SECTIONS),$(CHECK_SECTIONS))

# Prompt to PNG on the CPU with the tiny pipeline (examples/pipeline-tiny, one
# binary by fluxcc pipeline): noise
# from random tiny weights, the path of the real one (scripts/demo-image.sh)
demo-image:
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory fluxcc
	@sh scripts/demo-image.sh $(B)/demo-image.png

# The main job on an embedded default: full FLUX.1 schnell (768x768) on the
# GPU if there is one, else flux-tiny built for OpenCL and run on the CPU
# (PoCL), its output checked against the float64 interpreter; seeded random
# weights and inputs either way.
DEMO_GPU_OPT ?= tc
DEMO_CPU_OPT ?= hc
DEMO_SEED    ?= 7
demo:
	@sh scripts/deps.sh demo
	@$(MAKE) --no-print-directory fluxcc
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
	  echo "GPU found: full FLUX.1 schnell, CUDA"; \
	  ./fluxcc examples/flux.fdsl --opt $(DEMO_GPU_OPT) -o $(B)/demo-cuda && \
	  $(MAKE) -s -j$$(nproc) -C $(B)/demo-cuda PATH="$$PATH:/usr/local/cuda/bin" && $(B)/demo-cuda/flux; \
	else \
	  set -e; P=$(B)/demo-opencl D=$(B)/demo-data M=examples/flux-tiny.fdsl; \
	  echo "no GPU: flux-tiny, OpenCL on the CPU (PoCL)"; \
	  ./fluxcc $$M --opt $(DEMO_CPU_OPT) --target opencl -o $$P; \
	  $(MAKE) -s -C $$P; \
	  mkdir -p $$D; \
	  ./fluxcc init $$M --seed $(DEMO_SEED) --weights $$D/weights.safetensors --inputs $$D/inputs.safetensors; \
	  ./fluxcc run $$M --weights $$D/weights.safetensors --inputs $$D/inputs.safetensors -o $$D/reference.safetensors; \
	  rc=0; $$P/flux --weights $$D/weights.safetensors --inputs $$D/inputs.safetensors --out $$D/out.safetensors \
	    --check $$D/reference.safetensors --bench 5 > $$D/flux.log 2>&1 || rc=$$?; cat $$D/flux.log; \
	  [ $$rc = 0 ] || { echo "make demo: ./flux failed or its output differs from the interpreter's (exit $$rc)"; exit 1; }; \
	  dev=$$(sed -n 's/^device: *//p' $$D/flux.log); fwd=$$(sed -n 's/^forward: *\([^ ]* ms\).*/\1/p' $$D/flux.log); \
	  med=$$(sed -n 's/^bench: *median \([^ ]* ms\).*/\1/p' $$D/flux.log); \
	  chk=$$(sed -n 's/^check out: rel_l2=\([^ ]*\) max_abs=\([^ ]*\) .*/rel L2 \1, max abs \2/p' $$D/flux.log); \
	  echo; echo "== make demo: done"; \
	  echo "ran:     $$M (FLUX.1's structure at hidden 64, 2+2 blocks), fluxcc --opt $(DEMO_CPU_OPT) --target opencl:"; \
	  echo "         $$(ls $$P/kernels | wc -l) OpenCL kernels built with cc, run by ./flux on $$dev:"; \
	  echo "         first forward $$fwd (PoCL compiles each kernel on first use, cached after), then median $$med over 5"; \
	  echo "checked: ./flux's output against fluxcc's float64 reference interpreter (fluxcc run) on the same"; \
	  echo "         seeded weights and inputs (seed $(DEMO_SEED)): $$chk, every element written: ok"; \
	  echo "files:   $$P/ (the project: kernels/*.cl, schedule.c, records.json, ./flux)"; \
	  echo "         $$D/ (weights, inputs, reference and out .safetensors)"; \
	  echo "next:    ./fluxcc $$M --opt beam --target opencl --budget 20 -o $(B)/beam    # search: kernels timed on this CPU"; \
	  echo "         ./fluxcc report $(B)/beam    # per kernel: method, opts, measured time"; \
	  echo "         ./fluxcc $$M --opt tc -o $(B)/tiny-cuda && make -C $(B)/tiny-cuda emu    # the CUDA project, emulated on the CPU"; \
	  echo "         $(B)/tiny-cuda/flux-emu --random-weights $(DEMO_SEED) --random-inputs $(DEMO_SEED) --check $$D/reference.safetensors"; \
	  echo "         make test    # the whole suite"; \
	fi

# The README's pictures (docs/): FLUX.1 at 768x768 with one double and one single
# block, its schedule and its per-kernel report, and a small graph. The .dot text
# is committed next to each SVG (the tests check it is current); rendering needs
# graphviz's dot, which nothing else needs.
PICTURES = docs/flux-blocks-schedule docs/flux-blocks-report docs/softmax-graph
pictures: fluxcc
	@command -v dot >/dev/null 2>&1 || { echo "make pictures: graphviz's dot is not installed (apt-get install graphviz)"; exit 2; }
	@mkdir -p docs
	./fluxcc --dump schedule --format dot --opt tc examples/flux-blocks.fdsl > docs/flux-blocks-schedule.dot
	./fluxcc examples/flux-blocks.fdsl --opt tc -o $(B)/pictures >/dev/null && ./fluxcc report $(B)/pictures --format dot > docs/flux-blocks-report.dot
	./fluxcc --dump graph --format dot tests/golden/src/softmax.fdsl > docs/softmax-graph.dot
	for p in $(PICTURES); do dot -Tsvg $$p.dot -o $$p.svg || exit 1; done
	@echo "pictures: $(addsuffix .svg,$(PICTURES))"

clean:
	rm -rf $(B) fluxcc

.PHONY: all san cuda-stand-in test check demo demo-image pictures clean
