/* Scores and moves of boards from the command line or standard input,
 * through the C API. Build and run (after `cargo build --release`):
 *
 *   cc -O2 -I include examples/c/probe.c target/release/libawari_egdb.a \
 *      -lpthread -ldl -lm -o probe
 *   ./probe DB 1 1 1 1 1 2 4 2 3 0 0 0
 *
 * With only DB, it reads one board per line (12 numbers) from standard
 * input and prints "score distance best moves" per line (the distance
 * to the next capture: -1 for endless play, -2 without a distance table),
 * then the batch scores. Every count is read as a byte (a whole number,
 * 0..255): a bad one is an error naming the pit and the line, exit 2; the
 * library refuses a pit over 48 or a board over 48 seeds, naming the pit
 * (awari_last_error), exit 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "awari_egdb.h"

/* Pit labels as players read them: the mover's A..F, the opponent's a..f. */
static const char LABELS[] = "ABCDEFabcdef";

/* One pit count from `text` (up to `end`, or its NUL): a whole number
 * 0..255, a byte as the C API takes it (which checks it against the board:
 * a pit over 48 is refused there, named); 0 and an error on stderr
 * otherwise, in the library's words. */
static int count(const char *text, const char **end, int pit, const char *where, uint8_t *out) {
    char *stop;
    errno = 0;
    long v = strtol(text, &stop, 10);
    if (stop == text || errno != 0 || v < 0 || v > 255 ||
        (*stop != '\0' && *stop != ' ' && *stop != '\t' && *stop != '\n' && *stop != '\r')) {
        int len = (int)strcspn(text, " \t\r\n");
        fprintf(stderr, "probe: %spit %c: '%.*s' is not a seed count (a whole number from 0 to 48)\n", where,
                LABELS[pit], len, text);
        return 0;
    }
    *out = (uint8_t)v;
    if (end)
        *end = stop;
    return 1;
}

/* Twelve counts from a line; 0 and an error on stderr otherwise. */
static int parse_line(const char *line, size_t lineno, uint8_t pits[12]) {
    char where[32];
    snprintf(where, sizeof where, "line %zu: ", lineno);
    const char *at = line;
    for (int i = 0; i < 12; i++) {
        at += strspn(at, " \t");
        if (*at == '\0' || *at == '\n' || *at == '\r') {
            fprintf(stderr, "probe: %s%d pit counts, not 12\n", where, i);
            return 0;
        }
        if (!count(at, &at, i, where, &pits[i]))
            return 0;
    }
    at += strspn(at, " \t\r\n");
    if (*at != '\0') {
        fprintf(stderr, "probe: %smore than 12 pit counts\n", where);
        return 0;
    }
    return 1;
}

static int show(const awari_db *db, const uint8_t pits[12]) {
    int8_t score;
    awari_move moves[6];
    int best, distance;
    if (awari_score(db, pits, &score) != AWARI_OK ||
        awari_moves(db, pits, moves) != AWARI_OK ||
        awari_best_move(db, pits, &best) != AWARI_OK ||
        awari_distance(db, pits, &distance) != AWARI_OK) {
        fprintf(stderr, "probe: %s\n", awari_last_error());
        return 1;
    }
    printf("score %d distance %d best %d moves", score, distance, best);
    for (int i = 0; i < 6; i++) {
        if (moves[i].legal)
            printf(" %d:%d", moves[i].pit, moves[i].worth);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 14) {
        fprintf(stderr, "usage: probe DB [P0 .. P11]\n");
        return 2;
    }
    awari_db *db = NULL;
    if (awari_open(argv[1], &db) != AWARI_OK) {
        fprintf(stderr, "probe: %s\n", awari_last_error());
        return 2;
    }
    printf("rules %s\n", awari_rules(db));
    uint8_t pits[12];
    int status = 0;
    if (argc == 14) {
        for (int i = 0; i < 12; i++) {
            if (!count(argv[i + 2], NULL, i, "", &pits[i])) {
                awari_close(db);
                return 2;
            }
        }
        status = show(db, pits);
    } else {
        size_t n = 0, cap = 1024, lineno = 0;
        uint8_t *all = malloc(12 * cap);
        char line[1024];
        while (fgets(line, sizeof line, stdin)) {
            lineno++;
            if (strspn(line, " \t\r\n") == strlen(line))
                continue; /* a blank line */
            if (!parse_line(line, lineno, pits)) {
                free(all);
                awari_close(db);
                return 2;
            }
            status |= show(db, pits);
            if (n == cap) {
                cap *= 2;
                all = realloc(all, 12 * cap);
            }
            for (int i = 0; i < 12; i++)
                all[12 * n + i] = pits[i];
            n++;
        }
        int8_t *scores = malloc(n ? n : 1);
        if (awari_scores(db, all, n, scores) != AWARI_OK) {
            fprintf(stderr, "probe: %s\n", awari_last_error());
            status = 1;
        } else {
            printf("batch");
            for (size_t i = 0; i < n; i++)
                printf(" %d", scores[i]);
            printf("\n");
        }
        free(scores);
        free(all);
    }
    awari_close(db);
    return status;
}
