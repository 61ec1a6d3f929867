//! Process topologies: Cartesian grids, graphs and distributed graphs, as pure data with
//! the rank arithmetic the standard defines (row-major coordinates, shifts, neighbour lists
//! in the order neighbourhood collectives use them).

/// A topology attached to a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart { dims: Vec<usize>, periods: Vec<bool> },
    /// `index[i]` = cumulative neighbour count up to node i, as in `MPI_Graph_create`.
    Graph { index: Vec<usize>, edges: Vec<usize> },
    /// This process's in- and out-edges (with weights when given).
    DistGraph { sources: Vec<usize>, source_weights: Option<Vec<i32>>, dests: Vec<usize>, dest_weights: Option<Vec<i32>> },
}

/// Row-major coordinates of `rank` in a grid of `dims`.
pub fn cart_coords(dims: &[usize], mut rank: usize) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for i in (0..dims.len()).rev() {
        c[i] = rank % dims[i];
        rank /= dims[i];
    }
    c
}

/// Rank at `coords` (periodic dimensions wrap; out of range in a non-periodic one: None).
pub fn cart_rank(dims: &[usize], periods: &[bool], coords: &[i64]) -> Option<usize> {
    let mut r = 0usize;
    for i in 0..dims.len() {
        let d = dims[i] as i64;
        let mut c = coords[i];
        if periods[i] {
            c = c.rem_euclid(d);
        } else if c < 0 || c >= d {
            return None;
        }
        r = r * dims[i] + c as usize;
    }
    Some(r)
}

/// `MPI_Cart_shift`: (source, dest) of a shift by `disp` along `dim`; None = MPI_PROC_NULL.
pub fn cart_shift(dims: &[usize], periods: &[bool], rank: usize, dim: usize, disp: i64) -> (Option<usize>, Option<usize>) {
    let c: Vec<i64> = cart_coords(dims, rank).into_iter().map(|x| x as i64).collect();
    let mut up = c.clone();
    up[dim] += disp;
    let mut down = c;
    down[dim] -= disp;
    (cart_rank(dims, periods, &down), cart_rank(dims, periods, &up))
}

/// `MPI_Dims_create`: fills the zero entries of `dims` so the product is `nnodes`, in
/// non-increasing order, as balanced as possible (see `balanced`). None if impossible.
pub fn dims_create(nnodes: usize, dims: &[usize]) -> Option<Vec<usize>> {
    let fixed: usize = dims.iter().filter(|&&d| d > 0).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if fixed == 0 || !nnodes.is_multiple_of(fixed) {
        return None;
    }
    let rest = nnodes / fixed;
    if free == 0 {
        return (rest == 1).then(|| dims.to_vec());
    }
    let mut it = balanced(rest, free).into_iter();
    Some(dims.iter().map(|&d| if d == 0 { it.next().unwrap() } else { d }).collect())
}

/// `n` as `k` factors in non-increasing order, "as close to each other as possible" (MPI
/// 4.1 §8.5.2) in MPICH's sense, so grids match MPICH's: the smallest difference between
/// the largest and the smallest factor; among equally balanced choices the largest
/// smallest factor, then the largest second-smallest, and so on. MPICH gets there by an
/// exhaustive search after Träff and Lübbe (EuroMPI'15); its topo/dims5 compares 75 000
/// cases (72 in 2-D is 9 x 8, not 12 x 6).
fn balanced(n: usize, k: usize) -> Vec<usize> {
    let mut primes = Vec::new();
    let (mut rest, mut p) = (n, 2);
    while p * p <= rest {
        while rest.is_multiple_of(p) {
            primes.push(p);
            rest /= p;
        }
        p += 1;
    }
    if rest > 1 {
        primes.push(rest);
    }
    if primes.len() <= k {
        // Some factor is 1 whatever we do: one prime each gives the smallest largest factor
        // and the fewest 1s.
        let mut v: Vec<usize> = primes.into_iter().rev().collect();
        v.resize(k, 1);
        return v;
    }
    // More primes than factors: no factor of a best choice is 1, so the candidates are the
    // divisors from 2 up.
    let divs: Vec<usize> = (2..).take_while(|d| d * d <= n).filter(|d| n.is_multiple_of(*d)).flat_map(|d| [d, n / d]).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let mut best = None;
    balance_search(n, k, 0, &divs, &mut Vec::with_capacity(k), &mut best);
    let (_, mut v) = best.expect("a product of more than k primes splits into k factors above 1");
    v.reverse();
    v
}

/// Depth-first search of `rest` as `slots` more factors, non-decreasing after those in `cur`
/// and taken from `divs[from..]`; keeps in `best` (spread, factors in increasing order) the
/// best balanced choice. Candidates come in increasing lexicographic order, so keeping the
/// last of equal spread keeps the lexicographically largest.
fn balance_search(rest: usize, slots: usize, from: usize, divs: &[usize], cur: &mut Vec<usize>, best: &mut Option<(usize, Vec<usize>)>) {
    if slots == 1 {
        // The last (largest) factor is what is left; the callers keep it >= cur's last.
        let spread = rest - cur.first().copied().unwrap_or(rest);
        if best.as_ref().is_none_or(|(b, _)| spread <= *b) {
            let mut v = cur.clone();
            v.push(rest);
            *best = Some((spread, v));
        }
        return;
    }
    for (i, &a) in divs.iter().enumerate().skip(from) {
        // The remaining factors are all >= a, so their product is at least a^slots, and the
        // spread at least a - smallest: both only grow with a.
        if a.checked_pow(slots as u32).is_none_or(|p| p > rest) {
            break;
        }
        if let (Some(&min), Some((b, _))) = (cur.first(), best.as_ref()) {
            if a - min > *b {
                break;
            }
        }
        if rest.is_multiple_of(a) {
            cur.push(a);
            balance_search(rest / a, slots - 1, i, divs, cur, best);
            cur.pop();
        }
    }
}

/// Neighbours of `rank` in a graph topology.
pub fn graph_neighbors(index: &[usize], edges: &[usize], rank: usize) -> Vec<usize> {
    let start = if rank == 0 { 0 } else { index[rank - 1] };
    edges[start..index[rank]].to_vec()
}

/// A neighbour list entry: a rank, or `None` for MPI_PROC_NULL (Cartesian edges).
pub type Neighbor = Option<usize>;

/// One entry per neighbour, inline up to 8 (a 3-D Cartesian grid has 6): the lists are
/// rebuilt on every neighbourhood collective, so they should not allocate.
pub type Neighbors<T> = smallvec::SmallVec<[T; 8]>;

impl Topology {
    /// (sources, destinations) of `rank` in the order neighbourhood collectives use:
    /// receive block i comes from sources[i], send block j goes to dests[j].
    ///
    /// Cartesian: per dimension, the -1 then the +1 neighbour, for both lists (the standard's
    /// order). `recv_order` gives the order receives must be *posted* so that, when a peer
    /// is both the -1 and the +1 neighbour (a periodic dimension of size 1 or 2), the block
    /// it sent in direction +1 lands in the -1 source slot: non-overtaking matching pairs
    /// the k-th send with the k-th receive, and the peer sends -1 before +1.
    pub fn neighbors(&self, rank: usize) -> (Neighbors<Neighbor>, Neighbors<Neighbor>, Neighbors<usize>) {
        match self {
            Topology::Cart { dims, periods } => {
                let mut src = Neighbors::new();
                for d in 0..dims.len() {
                    let (minus, plus) = cart_shift(dims, periods, rank, d, 1);
                    src.push(minus);
                    src.push(plus);
                }
                let order = (0..src.len()).map(|i| i ^ 1).collect();
                (src.clone(), src, order)
            }
            Topology::Graph { index, edges } => {
                let n: Neighbors<Neighbor> = graph_neighbors(index, edges, rank).into_iter().map(Some).collect();
                let order = (0..n.len()).collect();
                (n.clone(), n, order)
            }
            Topology::DistGraph { sources, dests, .. } => {
                let order = (0..sources.len()).collect();
                (sources.iter().map(|&s| Some(s)).collect(), dests.iter().map(|&d| Some(d)).collect(), order)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_round_trip() {
        let dims = [2, 3, 4];
        for r in 0..24 {
            let c: Vec<i64> = cart_coords(&dims, r).into_iter().map(|x| x as i64).collect();
            assert_eq!(cart_rank(&dims, &[false; 3], &c), Some(r));
        }
    }

    #[test]
    fn shifts_at_edges() {
        assert_eq!(cart_shift(&[4], &[false], 0, 0, 1), (None, Some(1)));
        assert_eq!(cart_shift(&[4], &[true], 0, 0, 1), (Some(3), Some(1)));
        assert_eq!(cart_shift(&[4], &[false], 3, 0, 1), (Some(2), None));
    }

    #[test]
    fn dims_factorizations() {
        assert_eq!(dims_create(6, &[0, 0]), Some(vec![3, 2]));
        assert_eq!(dims_create(8, &[0, 0, 0]), Some(vec![2, 2, 2]));
        assert_eq!(dims_create(12, &[0, 3, 0]), Some(vec![2, 3, 2]));
        assert_eq!(dims_create(7, &[0, 0]), Some(vec![7, 1]));
        assert_eq!(dims_create(1, &[0, 0]), Some(vec![1, 1]));
        assert_eq!(dims_create(5, &[2, 0]), None);
        assert_eq!(dims_create(16, &[0, 0]), Some(vec![4, 4]));
        assert_eq!(dims_create(36, &[0, 0, 0]), Some(vec![4, 3, 3]));
        assert_eq!(dims_create(20, &[0, 0, 0, 0]), Some(vec![5, 2, 2, 1]));
        assert_eq!(dims_create(24, &[0]), Some(vec![24]));
        assert_eq!(dims_create(12, &[3, 4]), Some(vec![3, 4]));
        assert_eq!(dims_create(12, &[3, 5]), None);
    }

    /// MPICH's choices where a greedy split of the primes is less balanced, or where equally
    /// balanced choices tie.
    #[test]
    fn dims_match_mpich_balance_and_ties() {
        assert_eq!(dims_create(72, &[0, 0]), Some(vec![9, 8]));
        assert_eq!(dims_create(960, &[0, 0]), Some(vec![32, 30]));
        assert_eq!(dims_create(72 * 5, &[0, 5, 0]), Some(vec![9, 5, 8]));
        assert_eq!(dims_create(19152, &[0, 0, 0]), Some(vec![38, 24, 21]));
        assert_eq!(dims_create(900000, &[0; 7]), Some(vec![10, 10, 10, 6, 6, 5, 5]));
        assert_eq!(dims_create(933120, &[0; 7]), Some(vec![10, 9, 8, 6, 6, 6, 6]));
    }

    /// Against every factorization, for all small `n` and up to 6 dimensions.
    #[test]
    fn dims_are_the_best_balanced_factorization() {
        /// All non-increasing `k`-tuples of factors <= `max` with product `n`.
        fn all(n: usize, k: usize, max: usize) -> Vec<Vec<usize>> {
            if k == 1 {
                return if n <= max { vec![vec![n]] } else { vec![] };
            }
            (1..=max.min(n)).filter(|d| n % d == 0).flat_map(|d| all(n / d, k - 1, d).into_iter().map(move |mut t| {
                t.insert(0, d);
                t
            })).collect()
        }
        for n in 1..=1500 {
            for k in 1..=6 {
                // Smallest spread, then the largest smallest factor, and so on upwards.
                let want = all(n, k, n).into_iter().min_by(|a, b| (a[0] - a[k - 1]).cmp(&(b[0] - b[k - 1])).then_with(|| b.iter().rev().cmp(a.iter().rev()))).unwrap();
                assert_eq!(dims_create(n, &vec![0; k]).unwrap(), want, "{n} in {k} dimensions");
            }
        }
    }

    /// The largest ranges stay fast (the search prunes by balance).
    #[test]
    fn dims_of_highly_composite_numbers() {
        for n in [735_134_400usize, 2_095_133_040, 1 << 30, 2_147_483_647] {
            for k in 2..=31 {
                let d = dims_create(n, &vec![0; k]).unwrap();
                assert_eq!(d.iter().product::<usize>(), n);
                assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
            }
        }
    }
}
