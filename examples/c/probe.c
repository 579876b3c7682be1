/* Scores and moves of boards from the command line or standard input,
 * through the C API. Build and run (after `cargo build --release`):
 *
 *   cc -O2 -I include examples/c/probe.c target/release/libawari_egdb.a \
 *      -lpthread -ldl -lm -o probe
 *   ./probe DB 1 1 1 1 1 2 4 2 3 0 0 0
 *
 * With only DB, it reads one board per line (12 numbers) from standard
 * input and prints "score best" per line, then the batch scores. */
#include <stdio.h>
#include <stdlib.h>
#include "awari_egdb.h"

static int show(const awari_db *db, const uint8_t pits[12]) {
    int8_t score;
    awari_move moves[6];
    int best;
    if (awari_score(db, pits, &score) != AWARI_OK ||
        awari_moves(db, pits, moves) != AWARI_OK ||
        awari_best_move(db, pits, &best) != AWARI_OK) {
        fprintf(stderr, "probe: %s\n", awari_last_error());
        return 1;
    }
    printf("score %d best %d moves", score, best);
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
        for (int i = 0; i < 12; i++)
            pits[i] = (uint8_t)atoi(argv[i + 2]);
        status = show(db, pits);
    } else {
        size_t n = 0, cap = 1024;
        uint8_t *all = malloc(12 * cap);
        int v[12];
        while (scanf("%d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) == 12) {
            for (int i = 0; i < 12; i++)
                pits[i] = (uint8_t)v[i];
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
