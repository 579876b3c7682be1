//! Random boards for the foundation tests, written independently of the
//! library: uniform (stars and bars), multinomial, lumpy (a big pile in one
//! mover pit), and indexable ones by rejection.

use awari_egdb::rules::Position;
use rand::rngs::StdRng;
use rand::Rng;

const PITS: usize = 12;

/// Whether the opponent's pits 6..11 have an empty pit (the database's
/// validity rule).
pub fn valid(b: &[u8; PITS]) -> bool {
    b[6..].contains(&0)
}

/// A uniformly random distribution of `n` seeds over 12 pits (stars and bars).
pub fn random_distribution(rng: &mut StdRng, n: u32) -> [u8; PITS] {
    let slots = n as usize + PITS - 1;
    let mut bars: Vec<usize> = rand::seq::index::sample(rng, slots, PITS - 1).into_vec();
    bars.sort_unstable();
    let mut b = [0u8; PITS];
    let mut prev = 0usize;
    for (i, &bar) in bars.iter().enumerate() {
        b[i] = (bar - prev) as u8;
        prev = bar + 1;
    }
    b[PITS - 1] = (slots - prev) as u8;
    debug_assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>(), n);
    b
}

/// Each seed dropped into a random pit (multinomial: small pits, few zeros).
pub fn random_multinomial(rng: &mut StdRng, n: u32) -> [u8; PITS] {
    let mut b = [0u8; PITS];
    for _ in 0..n {
        b[rng.gen_range(0..PITS)] += 1;
    }
    b
}

/// A big pile (often >= 12) in one mover pit, the rest spread out.
pub fn random_lumpy(rng: &mut StdRng, n: u32) -> [u8; PITS] {
    if n == 0 {
        return [0; PITS];
    }
    let pile = rng.gen_range(1..=n);
    let mut b = random_distribution(rng, n - pile);
    b[rng.gen_range(0..6)] += pile as u8;
    b
}

/// A random board of `n` seeds from a mix of the generators above.
pub fn random_board(rng: &mut StdRng, n: u32) -> [u8; PITS] {
    match rng.gen_range(0..3) {
        0 => random_distribution(rng, n),
        1 => random_multinomial(rng, n),
        _ => random_lumpy(rng, n),
    }
}

/// A random indexable board of `n` seeds (rejection sampling).
pub fn random_indexable(rng: &mut StdRng, n: u32, uniform: bool) -> Position {
    loop {
        let b = if uniform {
            random_distribution(rng, n)
        } else {
            random_board(rng, n)
        };
        if valid(&b) {
            return Position(b);
        }
    }
}
