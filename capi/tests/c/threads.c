/* Four threads probe one handle at once (tests/c_api.rs): each scores
 * every board of standard input and the results must agree. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "awari_egdb.h"

enum { THREADS = 4 };
static awari_db *db;
static uint8_t *boards;
static size_t n;

static void *work(void *out) {
    int8_t *scores = out;
    for (size_t i = 0; i < n; i++) {
        if (awari_score(db, boards + 12 * i, &scores[i]) != AWARI_OK) {
            fprintf(stderr, "threads: %s\n", awari_last_error());
            exit(1);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2 || awari_open(argv[1], &db) != AWARI_OK)
        return 2;
    size_t cap = 1024;
    boards = malloc(12 * cap);
    int v[12];
    while (scanf("%d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3], &v[4],
                 &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) == 12) {
        if (n == cap)
            boards = realloc(boards, 12 * (cap *= 2));
        for (int i = 0; i < 12; i++)
            boards[12 * n + i] = (uint8_t)v[i];
        n++;
    }
    pthread_t t[THREADS];
    int8_t *scores[THREADS];
    for (int k = 0; k < THREADS; k++) {
        scores[k] = malloc(n ? n : 1);
        pthread_create(&t[k], NULL, work, scores[k]);
    }
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    for (int k = 1; k < THREADS; k++)
        if (memcmp(scores[0], scores[k], n) != 0) {
            fprintf(stderr, "threads: thread %d disagrees\n", k);
            return 1;
        }
    for (size_t i = 0; i < n; i++)
        printf("%d\n", scores[0][i]);
    awari_close(db);
    return 0;
}
