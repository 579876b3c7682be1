/* awari_egdb.h: the C API of awari-egdb, exact endgame scores of Awari
 * (Oware) from a folder of tables (ours, raw or compressed; a VU dataset
 * folder; a folder of scores only).
 *
 * Link with libawari_egdb.a (and -lpthread -ldl -lm) or libawari_egdb.so,
 * built by `cargo build --release` into target/release/.
 *
 * Boards are 12 pit counts from the side to move's view: its pits 0..5
 * (from its left), then the opponent's 6..11. Every function returns a
 * status (AWARI_OK on success) and writes results through the caller's
 * pointers; awari_last_error() gives the message of the last failure on
 * the calling thread. A handle may be probed by any number of threads at
 * once. Checked against src/capi.rs by tests/c_api.rs. */
#ifndef AWARI_EGDB_H
#define AWARI_EGDB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int awari_status;
#define AWARI_OK 0        /* success */
#define AWARI_BAD_INPUT 1 /* a board the tables cannot take, a null pointer, a bad path */
#define AWARI_NOT_BUILT 2 /* a layer the folder does not hold */
#define AWARI_DAMAGED 3   /* a damaged table (named in the message) */
#define AWARI_IO 4        /* the operating system failed a file operation */
#define AWARI_INTERNAL 5  /* a bug inside the library */

/* One of the mover's six pits as a move. */
typedef struct awari_move {
    uint8_t pit;      /* 0..5 */
    uint8_t legal;    /* 1 when legal, else 0 (an empty pit, or illegal) */
    uint8_t captures; /* seeds it captures */
    int8_t worth;     /* its exact worth for the mover (only when legal) */
} awari_move;

/* An open folder of tables. */
typedef struct awari_db awari_db;

/* Opens the folder at path (UTF-8) into *out; close it with awari_close.
 * Tables are read with pread: a table cut short while open is an error. */
awari_status awari_open(const char *path, awari_db **out);
/* The same with the tables mapped into memory (probes at memory speed).
 * The caller promises that no table of the folder is truncated or modified
 * while the handle is open: a mapped page gone from its file kills the
 * process (SIGBUS). */
awari_status awari_open_mapped(const char *path, awari_db **out);
/* Closes a handle (NULL is ignored). */
void awari_close(awari_db *db);
/* The folder's rule set ("awari", "abapa", "olympiad", "awale"). */
const char *awari_rules(const awari_db *db);
/* The exact score of pits[12] for the side to move. */
awari_status awari_score(const awari_db *db, const uint8_t *pits, int8_t *score);
/* The six pits of pits[12] as moves, into moves[6]. */
awari_status awari_moves(const awari_db *db, const uint8_t *pits, awari_move *moves);
/* A best move of pits[12], -1 when the game is over: of best worth, then,
 * where the folder has the distance, of best distance (so that play by it
 * reaches the score, never repeating a position before the capture the
 * score needs); the lowest pit among equals. */
awari_status awari_best_move(const awari_db *db, const uint8_t *pits, int *pit);
/* The distance of pits[12] to the next capture when both sides keep the
 * score, into *plies: the plies (0: the game is over), -1 when only endless
 * play keeps the score, -2 when the folder has no distance table for its
 * layer (built without it, or a VU folder). */
awari_status awari_distance(const awari_db *db, const uint8_t *pits, int *plies);
/* The scores of count boards (pits[12 * count]) into scores[count]. A board
 * without a Goedel number (every opponent pit holding seeds) is answered from
 * its moves, as by awari_score. */
awari_status awari_scores(const awari_db *db, const uint8_t *pits, size_t count, int8_t *scores);
/* awari_scores, where a board whose layer the folder does not hold is "not
 * available" instead of failing the batch: missing[i] is 1 for it (its score
 * 0), else 0. With missing NULL it is awari_scores. */
awari_status awari_scores_where_built(const awari_db *db, const uint8_t *pits, size_t count,
                                      int8_t *scores, uint8_t *missing);
/* The message of the last failed call on this thread ("" if none). */
const char *awari_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
