#!/usr/bin/env python3
"""gen_fdsl.py SEED: a random, valid-looking .fdsl program on stdout.

Structure-aware: it keeps the shape and dtype of every variable it made, and
picks each next statement among the operations that apply to them:
elementwise unary and binary ops (with NumPy broadcasting), reductions that
keep axes, the prelude's softmax, layer_norm, rms_norm, linear, matmul, movement
(reshape, permute, transpose, slicing, pad, concat, unsqueeze/squeeze), casts,
functions with `in` paths called in `for` loops, and several outputs. Values
stay bounded (no exp of large numbers), so compiled programs can be compared
with the interpreter. A small share of programs is made wrong on purpose
(mismatched shapes, out-of-range axes): those must be refused cleanly.
"""
import random
import sys


def prod(s):
    p = 1
    for d in s:
        p *= d
    return p


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.lines = []
        self.vars = []  # (name, shape)
        self.n = 0
        self.dt = self.r.choice(["f32", "f32", "bf16"])

    def fresh(self):
        self.n += 1
        return "t%d" % self.n

    def dim(self):
        return self.r.choice([1, 2, 3, 4, 5, 7, 8, 16, 16, 32])

    def shape(self, rank=None):
        rank = rank or self.r.randint(1, 4)
        return [self.dim() for _ in range(rank)]

    def emit(self, line):
        self.lines.append(line)

    def add(self, expr, shape):
        v = self.fresh()
        self.emit("%s = %s" % (v, expr))
        self.vars.append((v, shape))
        return v

    def pick(self):
        return self.r.choice(self.vars[-6:])

    def bounded(self, x):
        # keep values in a modest range whatever came before
        return self.r.choice(["tanh(%s)", "sin(%s)", "%s * 0.5", "sigmoid(%s)", "silu(%s)"]) % x

    def step(self):
        v, s = self.pick()
        r = self.r.random()
        rank = len(s)
        if r < 0.18:
            u = self.r.choice(["tanh", "sin", "cos", "abs", "sigmoid", "silu", "gelu_tanh", "-"])
            e = "-%s" % v if u == "-" else "%s(%s)" % (u, v)
            if u == "abs":
                e = "sqrt(abs(%s) + 1.0)" % v
            self.add(e, s)
        elif r < 0.36:
            # binary with a compatible partner: same shape, or a broadcast of it
            cands = [(w, t) for w, t in self.vars if t == s or (len(t) <= len(s) and all(a in (1, b) for a, b in zip(t[::-1], s[::-1])))]
            w, t = self.r.choice(cands)
            op = self.r.choice(["+", "-", "*", "max", "min", "where"])
            if op in ("max", "min"):
                self.add("%s(%s, %s)" % (op, v, w), s)
            elif op == "where":
                self.add("where(%s > %s, %s, %s * 2.0)" % (v, w, v, w), s)
            else:
                self.add("%s %s %s" % (v, op, w), s)
        elif r < 0.46:
            ax = self.r.randrange(rank)
            f = self.r.choice(["sum", "max", "mean"])
            t = list(s)
            t[ax] = 1
            e = "%s(%s, %d)" % (f, v, ax - rank if self.r.random() < 0.5 else ax)
            if f == "sum" and s[ax] > 4:
                e = "%s / %d.0" % (e, s[ax])
            self.add(e, t)
        elif r < 0.52:
            self.add("softmax(%s, %d)" % (v, self.r.randrange(rank)), s)
        elif r < 0.57:
            self.add("layer_norm(%s)" % v, s)
        elif r < 0.62:
            n = self.r.choice([4, 8, 16, 24])
            path = self.fresh().replace("t", "lin")
            self.add("linear(%s, %d) in %s" % (v, n, path), s[:-1] + [n])
        elif r < 0.67 and rank >= 2:
            n = self.r.choice([2, 8, 16])
            w = self.add("sin(arange(%d, dtype=%s))" % (s[-1] * n, self.dt), [s[-1] * n])
            w2 = self.add("reshape(%s, [%d, %d])" % (w, s[-1], n), [s[-1], n])
            self.add("matmul(%s, %s)" % (v, w2), s[:-1] + [n])
        elif r < 0.73:
            perm = list(range(rank))
            self.r.shuffle(perm)
            self.add("permute(%s, [%s])" % (v, ", ".join(map(str, perm))), [s[p] for p in perm])
        elif r < 0.78 and prod(s) > 1:
            # reshape: merge two neighbours or split one
            t = list(s)
            if rank >= 2 and self.r.random() < 0.5:
                i = self.r.randrange(rank - 1)
                t[i:i + 2] = [t[i] * t[i + 1]]
            else:
                i = self.r.randrange(rank)
                for f in (2, 4, 8):
                    if t[i] % f == 0 and t[i] > f:
                        t[i:i + 1] = [f, t[i] // f]
                        break
            if len(t) <= 5:
                self.add("reshape(%s, [%s])" % (v, ", ".join(map(str, t))), t)
        elif r < 0.83:
            i = self.r.randrange(rank)
            if s[i] >= 2:
                a = self.r.randrange(s[i] - 1)
                b = self.r.randint(a + 1, s[i])
                idx = [":"] * rank
                idx[i] = "%d:%d" % (a, b)
                t = list(s)
                t[i] = b - a
                self.add("%s[%s]" % (v, ", ".join(idx)), t)
        elif r < 0.87:
            pads = [[self.r.randint(0, 2), self.r.randint(0, 2)] for _ in range(rank)]
            t = [d + a + b for d, (a, b) in zip(s, pads)]
            self.add("pad(%s, [%s])" % (v, ", ".join("[%d, %d]" % tuple(p) for p in pads)), t)
        elif r < 0.91:
            i = self.r.randrange(rank)
            t = list(s)
            t[i] *= 2
            self.add("concat(%s, %s, axis=%d)" % (v, self.bounded(v), i), t)
        elif r < 0.94 and rank < 4:
            i = self.r.randint(0, rank)
            self.add("unsqueeze(%s, %d)" % (v, i), s[:i] + [1] + s[i:])
        elif r < 0.97:
            self.add("cast(cast(%s, f32) * 0.75, %s)" % (v, self.dt), s)
        else:
            self.add(self.bounded(v), s)

    def function(self):
        # a block applied in a loop, with its own parameters under a path
        v, s = self.pick()
        d = s[-1]
        f = self.fresh().replace("t", "block")
        self.emit("fn %s(x) {" % f)
        self.emit("  h = linear(x, %d) in proj" % d)
        self.emit("  param g: %s[%d] ~ normal(1, 0.1)" % (self.dt, d))
        self.emit("  return x + %s * g" % self.r.choice(["tanh(h)", "silu(h)", "h * 0.5"]))
        self.emit("}")
        n = self.r.randint(1, 3)
        w = self.fresh()
        self.emit("%s = %s" % (w, v))
        self.emit("for i in 0..%d {" % n)
        self.emit("  %s = %s(%s) in %ss[i]" % (w, f, w, f))
        self.emit("}")
        self.vars.append((w, s))

    def program(self):
        ninputs = self.r.randint(1, 3)
        base = self.shape()
        for i in range(ninputs):
            s = base if i == 0 or self.r.random() < 0.5 else [d if self.r.random() < 0.6 else 1 for d in base]
            name = "x%d" % i
            self.emit("input %s: %s[%s]" % (name, self.dt, ", ".join(map(str, s))))
            self.vars.append((name, s))
        for _ in range(self.r.randint(2, 14)):
            if self.r.random() < 0.08:
                self.function()
            else:
                self.step()
        if self.r.random() < 0.05:  # wrong on purpose: must be refused with a clear error
            v, s = self.pick()
            self.emit("bad = %s + reshape(%s, [%d])" % (v, v, prod(s) + 1))
        outs = self.r.sample(self.vars[ninputs:] or self.vars, k=min(2, len(self.vars[ninputs:] or self.vars)))
        for i, (v, s) in enumerate(outs):
            self.emit("output o%d = %s" % (i, v))
        return "# generated by tests/fuzz/gen_fdsl.py\n" + "\n".join(self.lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(Gen(int(sys.argv[1]) if len(sys.argv) > 1 else 0).program())
