//! Process groups: ordered lists of world ranks, and the group algebra of the standard.
//! Everything here is local (no communication); errors are (rank-check) messages.

use crate::error::{ErrorClass, MpiError, MpiResult};

pub type Group = Vec<usize>;

fn rank_err(msg: String) -> MpiError {
    MpiError::new(ErrorClass::Rank, msg)
}

/// `MPI_Group_incl`: members `ranks[i]` of `g`, in that order (no duplicates).
pub fn incl(g: &[usize], ranks: &[i32]) -> MpiResult<Group> {
    let mut seen = vec![false; g.len()];
    ranks
        .iter()
        .map(|&r| {
            let i = usize::try_from(r).ok().filter(|&i| i < g.len()).ok_or_else(|| rank_err(format!("rank {r} is not in the group (size {})", g.len())))?;
            if std::mem::replace(&mut seen[i], true) {
                return Err(rank_err(format!("rank {r} appears twice")));
            }
            Ok(g[i])
        })
        .collect()
}

/// `MPI_Group_excl`: `g` without the members at `ranks`, order kept.
pub fn excl(g: &[usize], ranks: &[i32]) -> MpiResult<Group> {
    incl(g, ranks)?; // validates range and duplicates
    Ok(g.iter().enumerate().filter(|(i, _)| !ranks.contains(&(*i as i32))).map(|(_, &w)| w).collect())
}

/// Expands (first, last, stride) triplets into ranks.
pub fn expand_ranges(size: usize, ranges: &[[i32; 3]]) -> MpiResult<Vec<i32>> {
    let mut out = Vec::new();
    for &[first, last, stride] in ranges {
        if stride == 0 {
            return Err(MpiError::new(ErrorClass::Arg, "range stride is 0"));
        }
        for r in [first, last] {
            if r < 0 || r as usize >= size {
                return Err(rank_err(format!("range bound {r} is not in the group (size {size})")));
            }
        }
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            out.push(r);
            r += stride;
        }
    }
    Ok(out)
}

/// `MPI_Group_union`: all of `a`, then the members of `b` not in `a`.
pub fn union(a: &[usize], b: &[usize]) -> Group {
    let mut g = a.to_vec();
    g.extend(b.iter().filter(|w| !a.contains(w)));
    g
}

/// `MPI_Group_intersection`: members of `a` also in `b`, in `a`'s order.
pub fn intersection(a: &[usize], b: &[usize]) -> Group {
    a.iter().copied().filter(|w| b.contains(w)).collect()
}

/// `MPI_Group_difference`: members of `a` not in `b`, in `a`'s order.
pub fn difference(a: &[usize], b: &[usize]) -> Group {
    a.iter().copied().filter(|w| !b.contains(w)).collect()
}

/// Rank of world rank `w` in `g`.
pub fn rank_of(g: &[usize], w: usize) -> Option<usize> {
    g.iter().position(|&x| x == w)
}

/// Comparison result, as `MPI_IDENT` / `MPI_SIMILAR` / `MPI_UNEQUAL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Ident,
    Similar,
    Unequal,
}

pub fn compare(a: &[usize], b: &[usize]) -> Cmp {
    if a == b {
        Cmp::Ident
    } else if a.len() == b.len() && a.iter().all(|w| b.contains(w)) {
        Cmp::Similar
    } else {
        Cmp::Unequal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algebra() {
        let a = vec![0, 1, 2, 3];
        let b = vec![5, 3, 1];
        assert_eq!(union(&a, &b), vec![0, 1, 2, 3, 5]);
        assert_eq!(intersection(&a, &b), vec![1, 3]);
        assert_eq!(difference(&a, &b), vec![0, 2]);
        assert_eq!(incl(&a, &[3, 1]).unwrap(), vec![3, 1]);
        assert_eq!(excl(&a, &[3, 1]).unwrap(), vec![0, 2]);
        assert!(incl(&a, &[1, 1]).is_err());
        assert!(incl(&a, &[4]).is_err());
        assert_eq!(expand_ranges(10, &[[0, 9, 3], [8, 6, -1]]).unwrap(), vec![0, 3, 6, 9, 8, 7, 6]);
        assert_eq!(compare(&[1, 2], &[2, 1]), Cmp::Similar);
        assert_eq!(compare(&[1, 2], &[1, 2]), Cmp::Ident);
        assert_eq!(compare(&[1], &[1, 2]), Cmp::Unequal);
    }
}
