// test_symbolic.c — index simplification: folding, div/mod over known
// ranges, recombination, masks, assumptions, translation between spaces.
#include "fluxcc.h"
#include "check.h"

#include <string.h>

static const char *const names[] = {"i", "j", "k", "l"};

static const char *show(Sym *s, int e) {
  static char buf[512];
  sym_str(s, e, names, buf, sizeof buf);
  return buf;
}

#define EXPECT(s, e, text) CHECK(!strcmp(show(s, e), text), "got %s, want %s", show(s, e), text)

int main(void) {
  Sym s = {0};
  s.var_size[0] = 4, s.var_size[1] = 16, s.var_size[2] = 1, s.var_size[3] = 8;
  s.nvars = 4;
  int i = sym_var(&s, 0), j = sym_var(&s, 1), k = sym_var(&s, 2), l = sym_var(&s, 3);
  EXPECT(&s, k, "0");  // a size-1 axis is the constant 0
  EXPECT(&s, sym_add(&s, sym_mul(&s, i, 16), j), "i*16+j");
  CHECK(sym_add(&s, j, sym_mul(&s, i, 16)) == sym_add(&s, sym_mul(&s, i, 16), j), "sums are canonical");
  Sym r = {0};  // the variables interned the other way round: the sum still reads by variable number
  r.var_size[0] = 4, r.var_size[1] = 16, r.nvars = 2;
  int rj = sym_var(&r, 1), ri = sym_var(&r, 0);
  EXPECT(&r, sym_add(&r, rj, sym_mul(&r, ri, 16)), "i*16+j");
  EXPECT(&r, sym_add(&r, sym_div(&r, rj, 4), ri), "i+(j/4)");
  sym_free(&r);
  // reshape [4,16] -> [64] -> [4,16] comes back to (i, j)
  int lin = sym_add(&s, sym_mul(&s, i, 16), j);
  EXPECT(&s, sym_div(&s, lin, 16), "i");
  EXPECT(&s, sym_mod(&s, lin, 16), "j");
  EXPECT(&s, sym_div(&s, sym_add(&s, lin, sym_const(&s, 3)), 16), "i+((j+3)/16)");  // the exact part leaves the division
  EXPECT(&s, sym_mod(&s, sym_mul(&s, lin, 2), 8), "((j*2)%8)");
  EXPECT(&s, sym_div(&s, sym_div(&s, lin, 2), 4), "i*2+(j/8)");  // (x/2)/4 = x/8, then split
  // a lane inside an aligned group leaves div and mod: (8j + l) with l < 8 over 32
  // (a vector of 8 over a merged [heads, channels] axis stays consecutive)
  int al = sym_add(&s, sym_mul(&s, j, 8), l);
  EXPECT(&s, sym_mod(&s, al, 32), "l+((j*8)%32)");
  EXPECT(&s, sym_div(&s, al, 32), "((j*8)/32)");
  EXPECT(&s, sym_mod(&s, sym_add(&s, al, sym_const(&s, 1)), 32), "((j*8+l+1)%32)");  // l + 1 reaches 8: no split
  // c*(x/c) + x%c = x
  int x = sym_add(&s, sym_mul(&s, j, 3), l);  // range 0..52
  int back = sym_add(&s, sym_mul(&s, sym_div(&s, x, 5), 5), sym_mod(&s, x, 5));
  CHECK(back == x, "recombination gives %s", show(&s, back));
  // masks fold with ranges
  EXPECT(&s, sym_lt(&s, j, 16), "1");
  EXPECT(&s, sym_lt(&s, j, 0), "0");
  EXPECT(&s, sym_and(&s, sym_lt(&s, j, 8), sym_ge(&s, i, 1)), "((i>=1)&&(j<8))");
  EXPECT(&s, sym_ge(&s, j, 0), "1");
  // behind a pad the source index has the source's range: [16] padded by 3 from [1]
  int src = sym_assume(&s, sym_add(&s, j, sym_const(&s, -3)), 0, 0);
  EXPECT(&s, src, "0");
  int src2 = sym_assume(&s, sym_add(&s, j, sym_const(&s, -8)), 0, 7);
  EXPECT(&s, sym_div(&s, src2, 8), "0");
  EXPECT(&s, sym_mod(&s, src2, 8), "j-8");
  // linear coefficients for axis merging
  bool linear;
  CHECK(sym_coef(&s, lin, 0, &linear) == 16 && linear, "coef of i");
  CHECK(sym_coef(&s, sym_div(&s, x, 5), 1, &linear) == 0 && !linear, "j inside a division is not linear");
  // translate: merge (i, j) into one variable m of size 64: i -> 0, j -> m
  Sym t = {0};
  t.var_size[0] = 64, t.var_size[1] = 8;
  t.nvars = 2;
  int map[4] = {sym_const(&t, 0), sym_var(&t, 0), sym_const(&t, 0), sym_var(&t, 1)};
  int e = sym_translate(&s, sym_add(&s, lin, sym_mul(&s, l, 64)), &t, map);
  EXPECT(&t, e, "i+j*64");
  sym_free(&s);
  sym_free(&t);
  return CHECK_DONE();
}
