// test_elaborate.c — the elaborator on small sources: shapes, broadcasting,
// hash-consing, parameter keys, error counts and recovery.
#include "fluxcc.h"
#include "check.h"

#include <string.h>

static Ctx c;

static int elab(const char *src) {
  ctx_free(&c);
  ctx_init(&c);
  c.err = fopen("/dev/null", "w");
  int rc = elaborate_source(&c, "t.fdsl", src);
  fclose(c.err);
  c.err = stderr;
  return rc;
}

static Node *out_node(int i) { return &c.g.nodes.v[c.g.outs.v[i].node]; }

static int count_op(int op) {
  int n = 0;
  for (int i = 0; i < c.g.nodes.n; i++) n += c.g.nodes.v[i].op == op;
  return n;
}

static Buf *param(const char *key) {
  for (int i = 0; i < c.g.bufs.n; i++)
    if (!strcmp(c.g.bufs.v[i].name, key)) return &c.g.bufs.v[i];
  return NULL;
}

int main(void) {
  ctx_init(&c);

  CHECK(elab("input a: f32[2, 1, 4]\ninput b: f32[3, 1]\noutput out = a + b\n") == 0, "broadcast");
  CHECK(out_node(0)->shape.n == 3 && out_node(0)->shape.d[0] == 2 && out_node(0)->shape.d[1] == 3 && out_node(0)->shape.d[2] == 4,
        "broadcast shape [2,3,4]");
  CHECK(count_op(OP_EXPAND) == 2, "both sides expanded");

  CHECK(elab("input a: f32[4]\nx = exp(a) + 1.0\ny = exp(a) + 1.0\noutput out = x * y\n") == 0, "cse");
  CHECK(count_op(OP_EXP) == 1 && count_op(OP_ADD) == 1, "identical expressions share one node");

  CHECK(elab("input a: bf16[4]\noutput out = a * 3\n") == 0, "scalar adopts dtype");
  CHECK(out_node(0)->dt == DT_BF16, "bf16 result");

  CHECK(elab("input a: f32[2, 3]\noutput out = sum(a, -1)\n") == 0, "sum keeps dims");
  CHECK(out_node(0)->shape.n == 2 && out_node(0)->shape.d[1] == 1, "reduced axis kept as 1");

  CHECK(elab("input a: f32[2, 6]\nx, y = split(a, [2, 4], axis=1)\noutput out = y\n") == 0, "split");
  CHECK(out_node(0)->op == OP_SHRINK && out_node(0)->arg[2] == 2 && out_node(0)->arg[3] == 6, "split is a shrink 2:6");

  CHECK(elab("input a: f32[2, 3]\ninput b: f32[2, 5]\noutput out = concat(a, b, axis=-1)\n") == 0, "concat");
  CHECK(out_node(0)->op == OP_ADD && out_node(0)->shape.d[1] == 8 && count_op(OP_PAD) == 2, "concat = pads + add");

  const char *mod =
    "fn block(x) {\n  h = linear(x, 8) in attn.qkv\n  return linear(h, 4, 0) in mlp[2]\n}\n"
    "input x: bf16[3, 4]\nh = x\nfor i in 0..3 { h = block(h) in blocks[i] }\noutput out = h\n";
  CHECK(elab(mod) == 0, "nested keys");
  CHECK(param("blocks.2.attn.qkv.weight") && param("blocks.2.attn.qkv.bias"), "blocks.2.attn.qkv.{weight,bias}");
  CHECK(param("blocks.0.mlp.2.weight") && !param("blocks.0.mlp.2.bias"), "has_bias=0 declares no bias");
  CHECK(param("blocks.1.attn.qkv.weight")->shape.d[0] == 8 && param("blocks.1.attn.qkv.weight")->shape.d[1] == 4,
        "weight [out, in]");
  CHECK(c.g.bufs.n == 1 + 3 * 3, "1 input + 3 params per block");

  CHECK(elab("const N = 3\nconst DT = f16\nfn f(x, k = N * 2) { return x * k }\ninput a: DT[N]\noutput out = f(a)\n") == 0,
        "defaults and dtype constants");
  CHECK(out_node(0)->dt == DT_F16 && out_node(0)->shape.d[0] == 3, "f16[3]");

  // errors: several per run, with recovery
  CHECK(elab("input a: f32[4]\nb = a + c\nd = e + 1\noutput out = a\n") < 0 && c.nerrors == 2, "two unknown names");
  CHECK(elab("input a: f32[4]\nb = a + * 2\nc = a\nd = a\ne = ) 3\noutput out = a\n") < 0 && c.nerrors == 2,
        "two syntax errors, got %d", c.nerrors);
  CHECK(elab("input a: f32[4]\nb = a + 1\n") < 0 && c.nerrors == 1, "no output");
  CHECK(elab("input a: f32[4]\nx = a\nx = a[4:2]\noutput out = x\n") < 0, "empty slice");
  CHECK(elab("include \"/etc/passwd\"\n") < 0, "including a file that is not a model fails");

  // deep nesting is an error, not a crash
  char big[30000];
  strcpy(big, "input a: f32[1]\noutput out = a");
  for (int i = 0; i < 2500; i++) strcat(big, "+a");
  strcat(big, "\n");
  CHECK(elab(big) < 0, "2500-deep expression is refused");

  ctx_free(&c);
  return CHECK_DONE();
}
