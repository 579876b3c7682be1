//! Ranks that are MPI processes (feature `mpi`): `mpirun -np N awari build
//! --mpi ...` starts N of them, and each sees the others through
//! `MPI_COMM_WORLD`.

use super::Comm;
use crate::comm::CommError;
use crate::error::Result;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

/// Elements per destination in one all-to-all at most (MPI counts and
/// displacements are `i32`: a round also sends at most `i32::MAX`
/// elements in all, see [`Mpi::piece`]).
const PIECE: usize = 1 << 28;

/// This process's rank in `MPI_COMM_WORLD`.
pub struct Mpi {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    // Finalizes MPI when dropped; declared last so the communicator goes
    // first.
    _universe: mpi::environment::Universe,
}

impl Mpi {
    /// Initializes MPI (once per process) for a program whose threads
    /// other than this one never call MPI (`MPI_THREAD_FUNNELED`).
    pub fn init() -> Result<Self> {
        let (universe, provided) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or(CommError::Mpi("MPI is initialized already".into()))?;
        if provided < mpi::Threading::Funneled {
            return Err(CommError::Mpi(format!(
                "the MPI library offers {provided:?} threading; the build needs Funneled"
            ))
            .into());
        }
        let world = universe.world();
        Ok(Mpi {
            rank: world.rank() as usize,
            size: world.size() as usize,
            world,
            _universe: universe,
        })
    }

    /// Elements per destination in one round of an all-to-all: the
    /// displacements of a round's pieces sum them, and must fit in `i32`.
    fn piece(&self) -> usize {
        PIECE.min(i32::MAX as usize / self.size).max(1)
    }

    /// Stops every rank of the job with exit status `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Comm for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn exchange(&self, out: Vec<Vec<u64>>) -> Result<Vec<u64>> {
        assert_eq!(out.len(), self.size, "one outbox per rank");
        let send_counts: Vec<u64> = out.iter().map(|v| v.len() as u64).collect();
        let mut recv_counts = vec![0u64; self.size];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        // As many rounds as the largest count needs, on every rank.
        let most = send_counts
            .iter()
            .chain(&recv_counts)
            .copied()
            .max()
            .unwrap_or(0);
        let piece_len = self.piece();
        let mut rounds = (most as usize).div_ceil(piece_len) as u64;
        let mine = rounds;
        self.world
            .all_reduce_into(&mine, &mut rounds, SystemOperation::max());
        let total: u64 = recv_counts.iter().sum();
        let mut got: Vec<Vec<u64>> = Vec::new();
        let mut out = Some(out);
        for r in 0..rounds as usize {
            let piece = |v: usize| {
                let from = (r * piece_len).min(v);
                from..((r + 1) * piece_len).min(v)
            };
            let o = out
                .as_ref()
                .expect("the outboxes are kept until the last round");
            let send: Vec<u64> = o.iter().flat_map(|v| &v[piece(v.len())]).copied().collect();
            let sc: Vec<Count> = o.iter().map(|v| piece(v.len()).len() as Count).collect();
            if r + 1 == rounds as usize {
                out = None; // sent from `send` now: free the outboxes
            }
            let rc: Vec<Count> = recv_counts
                .iter()
                .map(|&c| piece(c as usize).len() as Count)
                .collect();
            let displs = |c: &[Count]| -> Vec<Count> {
                c.iter()
                    .scan(0, |acc, &x| {
                        let at = *acc;
                        *acc += x;
                        Some(at)
                    })
                    .collect()
            };
            let (sd, rd) = (displs(&sc), displs(&rc));
            let mut recv = vec![0u64; rc.iter().map(|&c| c as usize).sum()];
            {
                let sp = Partition::new(&send[..], &sc[..], &sd[..]);
                let mut rp = PartitionMut::new(&mut recv[..], &rc[..], &rd[..]);
                self.world.all_to_all_varcount_into(&sp, &mut rp);
            }
            drop(send);
            if rounds == 1 {
                // One round: `recv` holds every source's updates in order.
                debug_assert_eq!(recv.len() as u64, total);
                return Ok(recv);
            }
            got.resize_with(self.size, Vec::new);
            for (from, (&at, &c)) in rd.iter().zip(&rc).enumerate() {
                got[from].extend_from_slice(&recv[at as usize..(at + c) as usize]);
            }
        }
        let all: Vec<u64> = got.concat();
        debug_assert_eq!(all.len() as u64, total);
        Ok(all)
    }
    fn sum(&self, v: &mut [u64]) -> Result<()> {
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::sum());
        Ok(())
    }
    fn max(&self, v: &mut [u64]) -> Result<()> {
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::max());
        Ok(())
    }
    fn broadcast(&self, v: &mut [u64]) -> Result<()> {
        self.world.process_at_rank(0).broadcast_into(v);
        Ok(())
    }
    fn barrier(&self) -> Result<()> {
        self.world.barrier();
        Ok(())
    }
}
