/*
 * warpmc-testu01: run chosen tests of one of TestU01's batteries on raw 32-bit words.
 *
 *   warpmc-testu01 SmallCrush|Crush|BigCrush LIST < words
 *
 * LIST is the battery's test numbers (as in TestU01's guide and its summaries, from 1), comma
 * separated, with ranges: "1,4-6". The words are read from stdin as raw little-endian u32. The
 * battery's usual output (per-test details and its summary) goes to stdout, followed by one line
 * per statistic, for warpmc to read the p-values at full precision:
 *
 *   warpmc-testu01-result <test number> <p-value, %.17g> <statistic's name>
 *
 * `warpmc quality --jobs N` runs one such process per test, N at a time, each on the tested
 * stream from its start. `cargo xtask setup --quality` compiles this file with TestU01 1.2.3's
 * C sources (from the crates.io package TestU01Drv).
 *
 * Exit status: 0 after the battery ran, 2 for a bad argument, 4 if the words ran out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbattery.h"
#include "unif01.h"

#define WORDS_PER_READ (1 << 16)
/* bbattery.c's NDIM: the size of its per-test arrays. */
#define MAX_TESTS 200

static unsigned int words[WORDS_PER_READ];
static size_t next_word = 0, words_held = 0;

static unsigned int read_word(void) {
    if (next_word == words_held) {
        words_held = fread(words, sizeof words[0], WORDS_PER_READ, stdin);
        next_word = 0;
        if (words_held == 0) {
            fprintf(stderr, "warpmc-testu01: the words on stdin ran out\n");
            exit(4);
        }
    }
    return words[next_word++];
}

static int usage(const char *why) {
    fprintf(stderr,
            "warpmc-testu01: %s\n"
            "usage: warpmc-testu01 SmallCrush|Crush|BigCrush LIST < words\n"
            "  LIST: test numbers from 1, comma separated, ranges allowed (\"1,4-6\")\n",
            why);
    return 2;
}

/* Parses a whole decimal number in [1, most] from s; returns -1 if it is not one. */
static long test_number(const char *s, long most) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > most)
        return -1;
    return v;
}

int main(int argc, char **argv) {
    if (argc != 3)
        return usage("expected two arguments");
    int count;
    void (*battery)(unif01_Gen *, int[]);
    if (strcmp(argv[1], "SmallCrush") == 0) {
        count = 10;
        battery = bbattery_RepeatSmallCrush;
    } else if (strcmp(argv[1], "Crush") == 0) {
        count = 96;
        battery = bbattery_RepeatCrush;
    } else if (strcmp(argv[1], "BigCrush") == 0) {
        count = 106;
        battery = bbattery_RepeatBigCrush;
    } else {
        return usage("the battery must be SmallCrush, Crush or BigCrush");
    }

    int rep[MAX_TESTS + 1] = {0};
    char *list = strdup(argv[2]);
    int chosen = 0;
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
        char *dash = strchr(item, '-');
        long lo, hi;
        if (dash != NULL) {
            *dash = '\0';
            lo = test_number(item, count);
            hi = test_number(dash + 1, count);
        } else {
            lo = hi = test_number(item, count);
        }
        if (lo < 0 || hi < 0 || lo > hi) {
            char why[128];
            snprintf(why, sizeof why, "the test list must name tests from 1 to %d of %s", count, argv[1]);
            return usage(why);
        }
        for (long t = lo; t <= hi; t++) {
            chosen += rep[t] == 0;
            rep[t] = 1;
        }
    }
    free(list);
    if (chosen == 0)
        return usage("the test list is empty");

    unif01_Gen *gen = unif01_CreateExternGenBits("warpmc (words on stdin)", read_word);
    battery(gen, rep);
    /* The numbers of bbattery.c's entries are not public; with one test per process the test
     * number is the list's only one, which warpmc passes. Entries start at 1; a p-value below 0
     * marks a statistic the run did not compute. */
    for (int j = 0; j < bbattery_NTests && j <= MAX_TESTS; j++) {
        if (bbattery_pVal[j] >= 0.0 && bbattery_TestNames[j] != NULL)
            printf("warpmc-testu01-result %s %.17g %s\n", argv[2], bbattery_pVal[j], bbattery_TestNames[j]);
    }
    unif01_DeleteExternGenBits(gen);
    return 0;
}
