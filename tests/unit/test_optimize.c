// test_optimize.c — opt actions: legality (refused with a reason), limits,
// the shapes they produce, and replay (an opt list rebuilds the same kernel).
#include "fluxcc.h"
#include "check.h"

#include <string.h>

static Ctx c;
static Schedule s;

// schedule a one-line model; returns its first kernel
static Kernel *kernel_of(const char *src) {
  schedule_free(&s);
  ctx_free(&c);
  ctx_init(&c);
  s.target = &targets[TARGET_CUDA];
  if (elaborate_source(&c, "t.fdsl", src) || schedule_build(&c, &s)) return NULL;
  return &s.k.v[0];  // the first unique kernel
}

static bool refused(Kernel *k, Opt o, const char *reason) {
  char why[256] = "";
  int rc = opt_apply(k, o, why, sizeof why);
  if (rc == 0 || !strstr(why, reason)) fprintf(stderr, "  got rc %d, '%s'\n", rc, why);
  return rc != 0 && strstr(why, reason);
}

static bool applied(Kernel *k, Opt o) {
  char why[256] = "";
  int rc = opt_apply(k, o, why, sizeof why);
  if (rc) fprintf(stderr, "  refused: %s\n", why);
  return rc == 0;
}

static const char *mm = "input a: bf16[64, 32]\ninput b: bf16[48, 32]\n"
                        "output out = squeeze(sum(cast(unsqueeze(a, 1), f32) * cast(b, f32), -1), -1)\n";

int main(void) {
  ctx_init(&c);
  Kernel *k = kernel_of(mm);
  CHECK(k && !strcmp(k->name, "r_64_48_32"), "matmul kernel r_64_48_32, got %s", k ? k->name : "none");
  CHECK(refused(k, (Opt){OPT_LOCAL, 0, 5}, "does not divide"), "LOCAL 5 of 64");
  CHECK(refused(k, (Opt){OPT_UPCAST, 0, 32}, "at most 16"), "UPCAST 32");
  CHECK(refused(k, (Opt){OPT_UNROLL, 1, 4}, "no reduce axis 1"), "UNROLL of a missing reduce axis");
  CHECK(refused(k, (Opt){OPT_LOCAL, 5, 2}, "no output axis 5"), "LOCAL of a missing axis");
  CHECK(refused(k, (Opt){OPT_PADTO, 0, 16}, "already a multiple"), "PADTO of 64 to 16");
  CHECK(refused(k, (Opt){OPT_STAGE, 0, 0}, "STAGE needs TC"), "STAGE without TC");
  CHECK(applied(k, (Opt){OPT_LOCAL, 0, 16}) && applied(k, (Opt){OPT_LOCAL, 1, 16}), "two locals");
  CHECK(kernel_threads(k) == 256, "256 threads");
  CHECK(refused(k, (Opt){OPT_GROUP, 0, 8}, "more than 1024 threads"), "GROUP past the thread limit");
  CHECK(applied(k, (Opt){OPT_UPCAST, 0, 4}) && applied(k, (Opt){OPT_UNROLL, 0, 4}), "upcast and unroll");
  kernel_rename(k);
  CHECK(!strcmp(k->name, "r_3_16_16_8_4_4"), "name after opts: %s", k->name);  // the upcast used all of a global axis
  CHECK(refused(k, (Opt){OPT_TC, 0, 0}, "first opt"), "TC must come first");
  CHECK(refused(k, (Opt){OPT_NOLOCALS, 0, 0}, "after locals"), "NOLOCALS after LOCAL");

  // replay: the same list on a fresh kernel gives the same kernel
  Opt list[MAXOPTS];
  int n = k->nopts;
  memcpy(list, k->opts, sizeof(Opt) * (size_t)n);
  char name[160];
  snprintf(name, sizeof name, "%s", k->name);
  k = kernel_of(mm);
  for (int i = 0; i < n; i++) CHECK(applied(k, list[i]), "replay %d", i);
  kernel_rename(k);
  CHECK(!strcmp(k->name, name), "replayed name %s = %s", k->name, name);

  // TC: first, bf16 operands, m, n, k padded to 16, 8, 16; then only LOCAL, UPCAST, STAGE
  k = kernel_of(mm);
  CHECK(applied(k, (Opt){OPT_TC, 0, 0}), "TC on a bf16 matmul");
  CHECK(kernel_threads(k) == 32, "one warp");
  CHECK(refused(k, (Opt){OPT_UNROLL, 0, 2}, "after TC only"), "no UNROLL after TC");
  CHECK(applied(k, (Opt){OPT_UPCAST, 0, 2}) && applied(k, (Opt){OPT_LOCAL, 0, 2}), "fragments and warps");
  CHECK(applied(k, (Opt){OPT_STAGE, 0, 0}), "STAGE");
  CHECK(refused(k, (Opt){OPT_LOCAL, 0, 2}, "last opt"), "nothing after STAGE");
  k = kernel_of("input a: f32[64, 32]\ninput b: f32[48, 32]\n"
                "output out = squeeze(sum(unsqueeze(a, 1) * b, -1), -1)\n");
  CHECK(refused(k, (Opt){OPT_TC, 0, 0}, "bf16 or two f16"), "no TC for f32 without asking for tf32");
  CHECK(applied(k, (Opt){OPT_TC, 0, 1}) && k->tc_dt == DT_F32 && k->dims[k->naxes - 1] == 8, "TC(0,1): tf32 m16n8k8");
  k = kernel_of("input a: bf16[24, 32]\ninput b: bf16[48, 32]\n"
                "output out = squeeze(sum(cast(unsqueeze(a, 1), f32) * cast(b, f32), -1), -1)\n");
  CHECK(applied(k, (Opt){OPT_TC, 0, 0}) && k->dims[0] == 3 && k->dims[1] == 3 && k->tc_a == 3, "m = 24: the other way round, m = 48 (b), n = 24, unpadded");
  // unaligned dims are padded to the tile: masked loads and stores, zeros along k
  k = kernel_of("input a: bf16[15, 30]\ninput b: bf16[7, 30]\n"
                "output out = squeeze(sum(cast(unsqueeze(a, 1), f32) * cast(b, f32), -1), -1)\n");
  CHECK(applied(k, (Opt){OPT_TC, 0, 0}) && k->naxes == 5 && k->dims[1] == 2 && k->dims[4] == 16, "15 x 7 x 30 padded to 16 x 8 x 32: one tile, two k steps");
  int masked = 0;
  for (int i = 0; i < k->ops.n; i++) masked += k->ops.v[i].valid >= 0;
  CHECK(masked == 3, "both loads and the store masked: %d", masked);
  k = kernel_of("input a: bf16[2, 32]\ninput b: bf16[2, 32]\n"
                "output out = squeeze(sum(cast(unsqueeze(a, 1), f32) * cast(b, f32), -1), -1)\n");
  CHECK(refused(k, (Opt){OPT_TC, 0, 0}, "quadruple"), "m = n = 2: padding past 4x");
  // (a computed operand is realized before the matmul reads it through a
  // broadcast, so TC's operands are loads: the k padding's zero check holds)
  char why[256];
  k = kernel_of("input a: bf16[16, 32]\ninput b: f32[8, 32]\n"
                "output out = squeeze(sum(cast(unsqueeze(a, 1), f32) * b, -1), -1)\n");
  CHECK(tc_refusal(k, false, why, sizeof why) && strstr(why, "bf16 and f32") && k->nopts == 0, "tc_refusal says why (%s), kernel untouched", why);
  k = kernel_of("input a: f32[64, 30]\noutput out = sum(a * a, -1)\n");
  CHECK(!tc_refusal(k, false, why, sizeof why), "a sum of squares is not matmul-shaped: no note");
  k = kernel_of("input a: f32[64, 30]\noutput out = sum(exp(a), -1)\n");
  CHECK(refused(k, (Opt){OPT_TC, 0, 0}, "sum of products"), "TC needs a product");
  CHECK(refused(k, (Opt){OPT_PADTO, 0, -8}, "do not keep zero"), "no padding under exp");
  k = kernel_of("input a: f32[60, 30]\ninput b: f32[60, 30]\noutput out = sum(a * b, -1)\n");
  CHECK(applied(k, (Opt){OPT_PADTO, 0, -8}) && k->dims[k->naxes - 1] == 32, "reduce 30 padded to 32");
  CHECK(applied(k, (Opt){OPT_PADTO, 0, 16}) && k->dims[0] == 64, "output 60 padded to 64");
  CHECK(refused(k, (Opt){OPT_PADTO, 0, 1000}, "quadruple"), "PADTO past 4x");

  // the methods are deterministic
  k = kernel_of(mm);
  opt_hc(k);
  char hc1[160];
  kernel_rename(k);
  snprintf(hc1, sizeof hc1, "%s", k->name);
  k = kernel_of(mm);
  opt_hc(k);
  kernel_rename(k);
  CHECK(!strcmp(hc1, k->name) && k->nopts > 0, "hc twice: %s / %s", hc1, k->name);

  // a copy is independent: opts on it leave the original as it was (the
  // searches hold many variants of one kernel); ASan checks nothing is shared
  k = kernel_of(mm);
  Kernel cp;
  kernel_copy(&cp, k);
  CHECK(applied(&cp, (Opt){OPT_TC, 0, 0}) && applied(&cp, (Opt){OPT_UPCAST, 0, 2}), "opts on the copy");
  CHECK(k->nopts == 0 && k->naxes == 3 && k->tc_dt < 0 && cp.naxes > 3, "the original is untouched");
  Kernel cp2;
  kernel_copy(&cp2, &cp);
  kernel_free(&cp);
  CHECK(applied(&cp2, (Opt){OPT_STAGE, 0, 0}) && cp2.stage, "a copy of a copy outlives its source");
  kernel_free(&cp2);
  CHECK(applied(k, (Opt){OPT_LOCAL, 0, 16}), "the original still takes opts");

  // 256 accumulators are emitted before the first shared value: the lowering's
  // value table must still have room (it used to loop forever here)
  k = kernel_of("input a: f32[64, 64]\ninput b: f32[64, 64]\noutput c = matmul(a, b)\n");
  CHECK(applied(k, (Opt){OPT_UPCAST, 1, 8}) && applied(k, (Opt){OPT_UPCAST, 0, 8}) && applied(k, (Opt){OPT_UPCAST, 0, 4}), "256 upcast values");
  Program prog;
  lower_kernel(&c, &s, k, &prog);
  int accs = 0;
  for (int i = 0; i < prog.u.n; i++) accs += prog.u.v[i].op == U_DEFACC;
  CHECK(accs == 256, "lowered with 256 accumulators: %d", accs);
  program_free(&prog);

  // VEC: one vector axis of 2, 4, 8 or 16 lanes, never with TC; its lowering
  // holds each combination of the other upcasts as one vector: matmul(a, b) is
  // b's row read with one vector load (consecutive), a's value broadcast, and
  // the accumulators and stores vectors
  k = kernel_of("input a: f32[64, 64]\ninput b: f32[64, 64]\noutput c = matmul(a, b)\n");
  CHECK(refused(k, (Opt){OPT_VEC, 1, 32}, "2, 4, 8 or 16"), "VEC of 32 lanes");
  CHECK(applied(k, (Opt){OPT_VEC, 1, 8}) && refused(k, (Opt){OPT_VEC, 0, 4}, "one VEC"), "one VEC per kernel");
  CHECK(refused(k, (Opt){OPT_TC, 0, 1}, "first opt"), "no TC after VEC");
  CHECK(applied(k, (Opt){OPT_UPCAST, 0, 4}), "an upcast beside it");
  lower_kernel(&c, &s, k, &prog);
  int vload = 0, sload = 0, vacc = 0, vstore = 0, sstore = 0;
  for (int i = 0; i < prog.u.n; i++) {
    UOp *x = &prog.u.v[i];
    vload += x->op == U_LOAD && x->vw == 8, sload += x->op == U_LOAD && !x->vw;
    vacc += x->op == U_DEFACC && x->vw == 8, vstore += x->op == U_STORE && x->vw == 8, sstore += x->op == U_STORE && !x->vw;
  }
  CHECK(vload == 1 && sload == 4 && vacc == 4 && vstore == 4 && sstore == 0, "vector loads %d, scalar loads %d, vector accumulators %d, stores %d vector, %d scalar",
        vload, sload, vacc, vstore, sstore);
  program_free(&prog);
  k = kernel_of(mm);  // bf16, TC applied first: VEC is refused after it
  CHECK(applied(k, (Opt){OPT_TC, 0, 0}) && refused(k, (Opt){OPT_VEC, 0, 2}, "after TC only"), "no VEC after TC");

  // RVEC: a reduce held as vectors of partial sums, one vector axis per kernel,
  // never with TC or GROUP; a linear (x and W both contiguous along k) lowers to
  // two vector loads per step, vector accumulators, and the lanes added after
  // the loop (7 adds per output for 8 lanes) into scalar stores
  k = kernel_of("input x: f32[64, 96]\noutput y = linear(x, 48, 0) in lin\n");
  CHECK(refused(k, (Opt){OPT_RVEC, 0, 3}, "2, 4, 8 or 16"), "RVEC of 3 lanes");
  CHECK(refused(k, (Opt){OPT_RVEC, 1, 8}, "no reduce axis 1"), "RVEC names a reduce axis");
  CHECK(applied(k, (Opt){OPT_RVEC, 0, 8}) && refused(k, (Opt){OPT_VEC, 0, 4}, "one VEC or RVEC"), "one vector axis per kernel");
  CHECK(refused(k, (Opt){OPT_GROUP, 0, 4}, "not with RVEC"), "no GROUP after RVEC");
  CHECK(refused(k, (Opt){OPT_TC, 0, 1}, "first opt"), "no TC after RVEC");
  CHECK(applied(k, (Opt){OPT_UPCAST, 0, 2}) && applied(k, (Opt){OPT_UPCAST, 1, 2}), "upcasts beside it");
  kernel_rename(k);
  CHECK(!strcmp(k->name, "r_32_24_12_8_2_2"), "the reduce-vector axis in the name: %s", k->name);
  lower_kernel(&c, &s, k, &prog);
  vload = sload = vacc = vstore = sstore = 0;
  int adds = 0;
  for (int i = 0; i < prog.u.n; i++) {
    UOp *x = &prog.u.v[i];
    vload += x->op == U_LOAD && x->vw == 8, sload += x->op == U_LOAD && !x->vw, adds += x->op == U_ALU && x->alu == OP_ADD;
    vacc += x->op == U_DEFACC && x->vw == 8, vstore += x->op == U_STORE && x->vw, sstore += x->op == U_STORE && !x->vw;
  }
  CHECK(vload == 4 && sload == 0 && vacc == 4 && adds == 28 && vstore == 0 && sstore == 4,
        "vector loads %d, scalar loads %d, vector accumulators %d, lane adds %d, stores %d vector, %d scalar", vload, sload, vacc, adds,
        vstore, sstore);
  program_free(&prog);
  k = kernel_of("input x: f32[64, 96]\noutput y = linear(x, 48, 0) in lin\n");
  CHECK(applied(k, (Opt){OPT_GROUP, 0, 4}) && refused(k, (Opt){OPT_RVEC, 0, 8}, "not with GROUP"), "no RVEC after GROUP");
  k = kernel_of(mm);
  CHECK(applied(k, (Opt){OPT_TC, 0, 0}) && refused(k, (Opt){OPT_RVEC, 0, 2}, "after TC only"), "no RVEC after TC");

  // two paths to one kernel render one text (a search times it once): SWAP(0,1) twice is no SWAP,
  // and SWAP(0,1) SWAP(1,2) SWAP(0,1) is SWAP(0,2), however the reindexing interned the variables
  const char *e3 = "input a: f32[2, 4, 8, 16]\noutput out = exp(permute(a, [3, 2, 1, 0]))\n";  // no two axes merge
  const Opt s01 = {OPT_SWAP, 0, 1}, s12 = {OPT_SWAP, 1, 2}, s02 = {OPT_SWAP, 0, 2}, up = {OPT_UPCAST, 3, 0};
  const Opt paths[4][5] = {{up}, {up, s01, s01}, {up, s02}, {up, s01, s12, s01}};
  const int plen[4] = {1, 3, 2, 4};
  char *text[4] = {0};
  for (int p = 0; p < 4; p++) {
    k = kernel_of(e3);
    bool ok = k != NULL;
    for (int i = 0; ok && i < plen[p]; i++) ok = applied(k, paths[p][i]);
    CHECK(ok, "path %d applies", p);
    if (!ok) continue;
    kernel_rename(k);
    lower_kernel(&c, NULL, k, &prog);
    k->target = &targets[TARGET_OPENCL];  // lowered for CUDA, rendered as OpenCL text
    text[p] = render_kernel(&c, NULL, k, &prog);
    program_free(&prog);
  }
  CHECK(text[0] && text[1] && !strcmp(text[0], text[1]), "SWAP(0,1) twice renders as no SWAP");
  CHECK(text[2] && text[3] && !strcmp(text[2], text[3]), "SWAP(0,1) SWAP(1,2) SWAP(0,1) renders as SWAP(0,2)");
  CHECK(text[0] && text[2] && strcmp(text[0], text[2]), "SWAP(0,2) is another kernel");
  for (int p = 0; p < 4; p++) free(text[p]);

  // the methods table: fixed methods apply, searches do not, unknown names are refused
  CHECK(method_find("hc") && method_find("hc")->apply && method_find("beam") && !method_find("beam")->apply, "methods table");
  CHECK(!method_find("fast") && optimize_schedule(&c, &s, method_find("beam"), 0, false) == -1, "no fixed method beam, no method 'fast'");

  schedule_free(&s);
  ctx_free(&c);
  return CHECK_DONE();
}
