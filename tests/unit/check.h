// check.h — the smallest test harness: CHECK(cond, ...) and a closing line.
#include <stdio.h>
static int check_pass, check_fail;
#define CHECK(cond, ...) do { \
    if (cond) check_pass++; \
    else { check_fail++; fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
           fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)
#define CHECK_DONE() (printf("%d passed, %d failed\n", check_pass, check_fail), check_fail ? 1 : 0)
