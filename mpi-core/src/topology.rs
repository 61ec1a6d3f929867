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

/// `MPI_Dims_create`: fills the zero entries of `dims` so the product is `nnodes`, as
/// balanced as possible, in non-increasing order. None if impossible.
pub fn dims_create(nnodes: usize, dims: &[usize]) -> Option<Vec<usize>> {
    let fixed: usize = dims.iter().filter(|&&d| d > 0).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if fixed == 0 || !nnodes.is_multiple_of(fixed) {
        return None;
    }
    let mut rest = nnodes / fixed;
    if free == 0 {
        return (rest == 1).then(|| dims.to_vec());
    }
    // Distribute prime factors, largest first, onto the currently smallest entry.
    let mut primes = Vec::new();
    let mut p = 2;
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
    let mut fill = vec![1usize; free];
    for &p in primes.iter().rev() {
        let i = (0..free).min_by_key(|&i| fill[i]).unwrap();
        fill[i] *= p;
    }
    fill.sort_unstable_by(|a, b| b.cmp(a));
    let mut it = fill.into_iter();
    Some(dims.iter().map(|&d| if d == 0 { it.next().unwrap() } else { d }).collect())
}

/// Neighbours of `rank` in a graph topology.
pub fn graph_neighbors(index: &[usize], edges: &[usize], rank: usize) -> Vec<usize> {
    let start = if rank == 0 { 0 } else { index[rank - 1] };
    edges[start..index[rank]].to_vec()
}

/// A neighbour list entry: a rank, or `None` for MPI_PROC_NULL (Cartesian edges).
pub type Neighbor = Option<usize>;

impl Topology {
    /// (sources, destinations) of `rank` in the order neighbourhood collectives use:
    /// receive block i comes from sources[i], send block j goes to dests[j].
    ///
    /// Cartesian: per dimension, the -1 then the +1 neighbour, for both lists (the standard's
    /// order). `recv_order` gives the order receives must be *posted* so that, when a peer
    /// is both the -1 and the +1 neighbour (a periodic dimension of size 1 or 2), the block
    /// it sent in direction +1 lands in the -1 source slot: non-overtaking matching pairs
    /// the k-th send with the k-th receive, and the peer sends -1 before +1.
    pub fn neighbors(&self, rank: usize) -> (Vec<Neighbor>, Vec<Neighbor>, Vec<usize>) {
        match self {
            Topology::Cart { dims, periods } => {
                let mut src = Vec::new();
                for d in 0..dims.len() {
                    let (minus, plus) = cart_shift(dims, periods, rank, d, 1);
                    src.push(minus);
                    src.push(plus);
                }
                let order = (0..src.len()).map(|i| i ^ 1).collect();
                (src.clone(), src, order)
            }
            Topology::Graph { index, edges } => {
                let n: Vec<Neighbor> = graph_neighbors(index, edges, rank).into_iter().map(Some).collect();
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
    }
}
