// clip_tokenizer.c — CLIP's byte-level BPE (see clip_tokenizer.h for the steps).
#define _POSIX_C_SOURCE 200809L
#define PCRE2_CODE_UNIT_WIDTH 8

#include "clip_tokenizer.h"
#include "files.h"
#include "numbers.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <utf8proc.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILE ((size_t)256 << 20)  // vocab.json is 1.6 MB, merges.txt 0.5 MB

static const char *const special[2] = {"<|startoftext|>", "<|endoftext|>"};

// vocab.json: token -> id (open addressing; keys point into one buffer)
typedef struct { const char *key; int id; } VocabSlot;
// merges.txt: (left id, right id) -> rank and the merged token's id
typedef struct { uint64_t pair; int rank, id; } MergeSlot;

struct ClipTokenizer {
  VocabSlot *vocab; size_t vcap;
  MergeSlot *merges; size_t mcap;
  char *keys;                    // the vocabulary's strings, NUL-separated
  int nvocab;                    // largest id + 1
  int byte_id[2][256];           // byte b's symbol, [1]: with "</w>" (a word's last)
  int bos, eos, pad;
  pcre2_code *pattern;
};

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

// The whole file dir/name, NUL-terminated; NULL with a message naming it.
static char *clip_read_text(const char *dir, const char *name, char *err, size_t n) {
  char path[4096];
  char why[200];
  size_t len;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *buf = in_read(path, MAX_FILE, &len, why, sizeof why);
  if (!buf) fail(err, n, "%s: %s%s", path, why, !strncmp(why, "cannot open", 11) ? " (the tokenizer folder needs vocab.json and merges.txt)" : "");
  else if (strlen(buf) != len) free(buf), buf = NULL, fail(err, n, "%s: holds a NUL byte: not a text file", path);
  return buf;
}

static size_t pow2_above(size_t n) {
  size_t c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}

static int vocab_find(const ClipTokenizer *t, const char *s, size_t len) {
  size_t i = nb_fnv(NB_FNV_SEED, s, len) & (t->vcap - 1);
  for (; t->vocab[i].key; i = (i + 1) & (t->vcap - 1))
    if (!strncmp(t->vocab[i].key, s, len) && !t->vocab[i].key[len]) return t->vocab[i].id;
  return -1;
}

static const MergeSlot *merge_find(const ClipTokenizer *t, int a, int b) {
  uint64_t pair = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
  size_t i = nb_fnv(NB_FNV_SEED, &pair, sizeof pair) & (t->mcap - 1);
  for (; t->merges[i].rank >= 0; i = (i + 1) & (t->mcap - 1))
    if (t->merges[i].pair == pair) return &t->merges[i];
  return NULL;
}

static int load_vocab(ClipTokenizer *t, const char *dir, char *err, size_t n) {
  char *text = clip_read_text(dir, "vocab.json", err, n);
  if (!text) return -1;
  cJSON *j = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsObject(j)) { cJSON_Delete(j); return fail(err, n, "%s/vocab.json: not a JSON object of token -> id", dir); }
  size_t count = 0, bytes = 0;
  for (cJSON *e = j->child; e; e = e->next) count++, bytes += strlen(e->string) + 1;
  t->vcap = pow2_above(count);
  t->vocab = calloc(t->vcap, sizeof *t->vocab);
  t->keys = malloc(bytes ? bytes : 1);
  if (!t->vocab || !t->keys) { cJSON_Delete(j); return fail(err, n, "%s/vocab.json: out of memory", dir); }
  char *k = t->keys;
  for (cJSON *e = j->child; e; e = e->next) {
    double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
    size_t len = strlen(e->string);
    int bad = v < 0 || v >= (1 << 24) || v != (int)v, twice = !bad && vocab_find(t, e->string, len) >= 0;
    if (bad || twice) {
      fail(err, n, bad ? "%s/vocab.json: token \"%.40s\": its id must be a whole number from 0 to 16777215"
                       : "%s/vocab.json: token \"%.40s\" twice", dir, e->string);
      cJSON_Delete(j);
      return -1;
    }
    memcpy(k, e->string, len + 1);
    size_t i = nb_fnv(NB_FNV_SEED, k, len) & (t->vcap - 1);
    while (t->vocab[i].key) i = (i + 1) & (t->vcap - 1);
    t->vocab[i] = (VocabSlot){k, (int)v};
    if ((int)v + 1 > t->nvocab) t->nvocab = (int)v + 1;
    k += len + 1;
  }
  cJSON_Delete(j);
  return 0;
}

static int load_merges(ClipTokenizer *t, const char *dir, char *err, size_t n) {
  char *text = clip_read_text(dir, "merges.txt", err, n);
  if (!text) return -1;
  size_t lines = 1;
  for (char *p = text; *p; p++) lines += *p == '\n';
  t->mcap = pow2_above(lines);
  t->merges = malloc(t->mcap * sizeof *t->merges);
  if (!t->merges) { free(text); return fail(err, n, "%s/merges.txt: out of memory", dir); }
  for (size_t i = 0; i < t->mcap; i++) t->merges[i].rank = -1;
  int rank = 0, line = 0, rc = 0;
  char *save = NULL;
  for (char *p = text; p && !rc; p = save) {
    save = strchr(p, '\n');
    if (save) *save++ = 0;
    line++;
    size_t len = strlen(p);
    if (len && p[len - 1] == '\r') p[--len] = 0;
    if ((line == 1 && !strncmp(p, "#version", 8)) || !len) continue;
    char *sp = strchr(p, ' ');
    if (!sp || sp == p || !sp[1] || strchr(sp + 1, ' ')) {
      rc = fail(err, n, "%s/merges.txt:%d: want two tokens separated by one space, not \"%.60s\"", dir, line, p);
      break;
    }
    *sp = 0;
    int a = vocab_find(t, p, strlen(p)), b = vocab_find(t, sp + 1, strlen(sp + 1));
    char merged[1024];
    int m = snprintf(merged, sizeof merged, "%s%s", p, sp + 1);
    int id = m < (int)sizeof merged ? vocab_find(t, merged, (size_t)m) : -1;
    if (a < 0 || b < 0 || id < 0) {
      rc = fail(err, n, "%s/merges.txt:%d: \"%.40s\" is not in vocab.json", dir, line, a < 0 ? p : b < 0 ? sp + 1 : merged);
      break;
    }
    if (merge_find(t, a, b)) continue;  // a repeated merge keeps its first (lowest) rank
    uint64_t pair = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t i = nb_fnv(NB_FNV_SEED, &pair, sizeof pair) & (t->mcap - 1);
    while (t->merges[i].rank >= 0) i = (i + 1) & (t->mcap - 1);
    t->merges[i] = (MergeSlot){pair, rank++, id};
  }
  free(text);
  return rc;
}

// The pad token's text from special_tokens_map.json or tokenizer_config.json
// ("pad_token": a string or {"content": ...}); CLIP's end token where neither says.
static int load_pad(ClipTokenizer *t, const char *dir, char *err, size_t n) {
  static const char *const files[] = {"special_tokens_map.json", "tokenizer_config.json"};
  t->pad = t->eos;
  for (int f = 0; f < 2; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, files[f]);
    if (access(path, F_OK)) continue;   // optional; one that is there must be read
    char *text = clip_read_text(dir, files[f], err, n);
    if (!text) return -1;
    cJSON *j = cJSON_Parse(text);
    free(text);
    cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "pad_token");
    if (cJSON_IsObject(p)) p = cJSON_GetObjectItemCaseSensitive(p, "content");
    int found = cJSON_IsString(p), id = found ? vocab_find(t, p->valuestring, strlen(p->valuestring)) : -1;
    if (found && id < 0) {
      fail(err, n, "%s/%s: pad_token \"%.40s\" is not in vocab.json", dir, files[f], p->valuestring);
      cJSON_Delete(j);
      return -1;
    }
    cJSON_Delete(j);
    if (!j) return fail(err, n, "%s/%s: not valid JSON", dir, files[f]);
    if (found) { t->pad = id; return 0; }
  }
  return 0;
}

// GPT-2's byte -> printable character map (the byte-level alphabet), as UTF-8.
static void byte_char(int b, char out[3]) {
  int c = b, k = 0;
  if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
    for (int x = 0; x < b; x++) k += !((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF));
    c = 256 + k;
  }
  if (c < 0x80) out[0] = (char)c, out[1] = 0;
  else out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3F)), out[2] = 0;
}

// White_Space (Unicode), the set `\s` means in transformers' regexes.
#define WS "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
static const char clip_pattern[] = "<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|\\p{L}+|\\p{N}|[^" WS "\\p{L}\\p{N}]+";

static int is_ws(int32_t c) {
  return (c >= 9 && c <= 13) || c == ' ' || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

ClipTokenizer *clip_tok_open(const char *dir, char *err, size_t n) {
  ClipTokenizer *t = calloc(1, sizeof *t);
  if (!t) { fail(err, n, "out of memory"); return NULL; }
  if (load_vocab(t, dir, err, n) || load_merges(t, dir, err, n)) goto bad;
  for (int b = 0; b < 256; b++)
    for (int w = 0; w < 2; w++) {
      char s[16];
      byte_char(b, s);
      if (w) strcat(s, "</w>");
      if ((t->byte_id[w][b] = vocab_find(t, s, strlen(s))) < 0) {
        fail(err, n, "%s/vocab.json: lacks the byte-level token \"%s\" (byte 0x%02x): not a byte-level BPE vocabulary", dir, s, b);
        goto bad;
      }
    }
  t->bos = vocab_find(t, special[0], strlen(special[0]));
  t->eos = vocab_find(t, special[1], strlen(special[1]));
  if (t->bos < 0 || t->eos < 0) {
    fail(err, n, "%s/vocab.json: lacks %s: not CLIP's vocabulary", dir, t->bos < 0 ? special[0] : special[1]);
    goto bad;
  }
  if (load_pad(t, dir, err, n)) goto bad;
  int code;
  PCRE2_SIZE off;
  t->pattern = pcre2_compile((PCRE2_SPTR)clip_pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK,
                             &code, &off, NULL);
  if (!t->pattern) { fail(err, n, "PCRE2 refused CLIP's pattern (error %d at %zu)", code, (size_t)off); goto bad; }
  return t;
bad:
  clip_tok_close(t);
  return NULL;
}

void clip_tok_close(ClipTokenizer *t) {
  if (!t) return;
  free(t->vocab), free(t->merges), free(t->keys);
  if (t->pattern) pcre2_code_free(t->pattern);
  free(t);
}

int clip_tok_vocab_size(const ClipTokenizer *t) { return t->nvocab; }

// The ids being written: stops taking pieces once `cap` are there.
typedef struct { int32_t *ids; int len, cap; } Out;

// One pre-tokenized piece through BPE: a linked list of symbols and a binary
// heap of candidate merges (rank, left position), stale ones skipped when popped.
typedef struct { int rank, left, a, b; } Cand;
typedef struct { int id, prev, next; } Sym;

static int cand_less(Cand x, Cand y) { return x.rank != y.rank ? x.rank < y.rank : x.left < y.left; }

static void heap_push(Cand *h, int *nh, Cand c) {
  int i = (*nh)++;
  for (; i > 0 && cand_less(c, h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
  h[i] = c;
}

static Cand heap_pop(Cand *h, int *nh) {
  Cand top = h[0], last = h[--*nh];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *nh) break;
    if (c + 1 < *nh && cand_less(h[c + 1], h[c])) c++;
    if (!cand_less(h[c], last)) break;
    h[i] = h[c], i = c;
  }
  h[i] = last;
  return top;
}

static void push_pair(const ClipTokenizer *t, const Sym *s, int left, Cand *h, int *nh) {
  int right = s[left].next;
  if (right < 0) return;
  const MergeSlot *m = merge_find(t, s[left].id, s[right].id);
  if (m) heap_push(h, nh, (Cand){m->rank, left, s[left].id, s[right].id});
}

static int bpe(const ClipTokenizer *t, const unsigned char *p, int len, Out *o) {
  Sym *s = malloc((size_t)len * sizeof *s);
  Cand *h = malloc((size_t)len * 3 * sizeof *h);  // len-1 pairs, then at most 2 per merge
  if (!s || !h) { free(s), free(h); return -1; }
  for (int i = 0; i < len; i++) s[i] = (Sym){t->byte_id[i == len - 1][p[i]], i - 1, i + 1 < len ? i + 1 : -1};
  int nh = 0;
  for (int i = 0; i + 1 < len; i++) push_pair(t, s, i, h, &nh);
  while (nh) {
    Cand c = heap_pop(h, &nh);
    int r = s[c.left].next;
    if (s[c.left].id != c.a || r < 0 || s[r].id != c.b) continue;   // stale
    s[c.left].id = merge_find(t, c.a, c.b)->id;
    s[c.left].next = s[r].next;
    if (s[r].next >= 0) s[s[r].next].prev = c.left;
    s[r].id = -1;
    if (s[c.left].prev >= 0) push_pair(t, s, s[c.left].prev, h, &nh);
    push_pair(t, s, c.left, h, &nh);
  }
  for (int i = 0; i >= 0 && o->len < o->cap; i = s[i].next) o->ids[o->len++] = s[i].id;
  free(s), free(h);
  return 0;
}

// One stretch of text between special tokens: normalize, pre-tokenize, BPE.
static int encode_plain(const ClipTokenizer *t, const char *p, size_t len, Out *o, char *err, size_t n) {
  if (!len || o->len >= o->cap) return 0;
  utf8proc_uint8_t *nfc = NULL;
  utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)p, (utf8proc_ssize_t)len, &nfc, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
  if (m < 0) return fail(err, n, "prompt: %s", utf8proc_errmsg(m));
  // white space runs -> one space, then lower case (U+0130's is two characters)
  unsigned char *q = malloc((size_t)m * 2 + 8), *w = q;
  if (!q) { free(nfc); return fail(err, n, "out of memory"); }
  int in_ws = 0;
  for (utf8proc_ssize_t i = 0; i < m;) {
    utf8proc_int32_t c;
    i += utf8proc_iterate(nfc + i, m - i, &c);
    if (is_ws(c)) {
      if (!in_ws) *w++ = ' ';
      in_ws = 1;
      continue;
    }
    in_ws = 0;
    if (c == 0x130) { w += utf8proc_encode_char('i', w); w += utf8proc_encode_char(0x307, w); continue; }
    w += utf8proc_encode_char(utf8proc_tolower(c), w);
  }
  free(nfc);
  size_t qlen = (size_t)(w - q);
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(t->pattern, NULL);
  int rc = md ? 0 : fail(err, n, "out of memory");
  for (PCRE2_SIZE at = 0; !rc && at < qlen && o->len < o->cap;) {
    int r = pcre2_match(t->pattern, q, qlen, at, PCRE2_NO_UTF_CHECK, md, NULL);
    if (r == PCRE2_ERROR_NOMATCH) break;
    if (r < 0) { rc = fail(err, n, "prompt: PCRE2 match error %d", r); break; }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (ov[1] == ov[0]) { rc = fail(err, n, "prompt: empty match"); break; }  // the pattern cannot; be safe
    // A special token's text that only lower-casing made (the literal ones were cut out
    // before): the pattern keeps it whole, then transformers' byte-level step splits it
    // by GPT-2's pattern into "<|", the word and "|>", three words for BPE.
    int whole = (int)(ov[1] - ov[0]), sp = 0;
    for (int k = 0; k < 2; k++) sp |= whole == (int)strlen(special[k]) && !memcmp(q + ov[0], special[k], (size_t)whole);
    if (sp) {
      int r = bpe(t, q + ov[0], 2, o) || bpe(t, q + ov[0] + 2, whole - 4, o) || bpe(t, q + ov[1] - 2, 2, o);
      if (r) rc = fail(err, n, "out of memory");
    } else if (bpe(t, q + ov[0], whole, o)) rc = fail(err, n, "out of memory");
    at = ov[1];
  }
  pcre2_match_data_free(md);
  free(q);
  return rc;
}

int clip_tok_encode(const ClipTokenizer *t, const char *text, int32_t *ids, int n_ids, char *err, size_t n) {
  if (n_ids < 2) return fail(err, n, "CLIP's token count must be at least 2 (start and end), not %d", n_ids);
  size_t len = strlen(text);
  if (len > CLIP_TOK_MAX_TEXT) return fail(err, n, "prompt: %zu bytes, more than CLIP's tokenizer takes (%d)", len, CLIP_TOK_MAX_TEXT);
  long long bad = nb_utf8_bad(text, len);
  if (bad >= 0) return fail(err, n, "prompt: not valid UTF-8 at byte %lld", bad);
  Out o = {ids + 1, 0, n_ids - 2};
  // cut out the literal special tokens; the stretches between them are text
  const char *p = text;
  while (*p && o.len < o.cap) {
    const char *hit = NULL;
    int which = 0;
    for (int s = 0; s < 2; s++) {
      const char *h = strstr(p, special[s]);
      if (h && (!hit || h < hit)) hit = h, which = s;
    }
    size_t plain = hit ? (size_t)(hit - p) : strlen(p);
    if (encode_plain(t, p, plain, &o, err, n)) return -1;
    if (!hit) break;
    if (o.len < o.cap) o.ids[o.len++] = which ? t->eos : t->bos;
    p = hit + strlen(special[which]);
  }
  ids[0] = t->bos;
  ids[1 + o.len] = t->eos;
  for (int i = 2 + o.len; i < n_ids; i++) ids[i] = t->pad;
  return 0;
}
