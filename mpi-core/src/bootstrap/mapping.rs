//! `PMI_process_mapping`: which node each rank runs on.
//!
//! Format: `(vector,(start_node,node_count,ranks_per_node),…)`. Ranks are assigned block by
//! block, node by node; if the blocks cover fewer ranks than the job has, the whole list
//! repeats (MPICH does the same: hydra's `(vector,(0,1,1))` for `-n 2` means both ranks on
//! node 0).

/// Node index of every rank of a job of `size` ranks.
pub fn parse_process_mapping(text: &str, size: usize) -> Result<Vec<usize>, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = compact
        .strip_prefix("(vector,")
        .and_then(|s| s.strip_suffix(')'))
        .ok_or("expected `(vector,(start,nodes,ppn),...)`")?;
    let mut blocks = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let body = rest
            .strip_prefix('(')
            .ok_or("expected `(` starting a block")?;
        let end = body.find(')').ok_or("unterminated block")?;
        let nums: Vec<usize> = body[..end]
            .split(',')
            .map(|n| {
                n.parse::<usize>()
                    .map_err(|_| format!("`{n}` is not a number"))
            })
            .collect::<Result<_, _>>()?;
        let [start, nodes, ppn] = nums[..] else {
            return Err(format!("block `({})` needs 3 numbers", &body[..end]));
        };
        blocks.push((start, nodes, ppn));
        rest = &body[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    if blocks.iter().all(|&(_, nodes, ppn)| nodes == 0 || ppn == 0) {
        return Err("the mapping places no ranks".into());
    }
    if blocks
        .iter()
        .any(|&(start, nodes, _)| start.checked_add(nodes).is_none())
    {
        return Err("node numbers overflow".into());
    }
    let mut out = Vec::with_capacity(size);
    loop {
        for &(start, nodes, ppn) in blocks.iter().filter(|b| b.2 > 0) {
            for node in start..start + nodes {
                for _ in 0..ppn {
                    if out.len() == size {
                        return Ok(out);
                    }
                    out.push(node);
                }
            }
        }
        if out.len() == size {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_process_mapping as p;

    #[test]
    fn observed_mappings() {
        assert_eq!(p("(vector,(0,1,2))", 2).unwrap(), vec![0, 0]);
        assert_eq!(p("(vector,(0,2,2))", 4).unwrap(), vec![0, 0, 1, 1]);
        assert_eq!(p("(vector,(0,2,1),(0,2,1))", 4).unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(p("(vector,(0,1,2),(1,1,1))", 3).unwrap(), vec![0, 0, 1]);
        // hydra without an allocation: wraps around, all ranks on node 0.
        assert_eq!(p("(vector,(0,1,1))", 2).unwrap(), vec![0, 0]);
        assert_eq!(p(" (vector, (0,1,4)) ", 4).unwrap(), vec![0; 4]);
        assert_eq!(p("(vector,(0,1000000000000,1))", 2).unwrap(), vec![0, 1]);
    }

    #[test]
    fn malformed_mappings() {
        for bad in [
            "",
            "(vector)",
            "(vector,)",
            "(vector,(0,1))",
            "(vector,(0,a,1))",
            "(vector,(0,0,0))",
            "(list,(0,1,1))",
            "(vector,(18446744073709551615,2,1))",
            "(vector,(0,1,1)",
            "(vector,(0,1,1)x)",
        ] {
            assert!(p(bad, 2).is_err(), "accepted {bad:?}");
        }
    }
}
