//! Datatypes as the C layer sees them. Predefined types only for now: MPICH encodes the
//! size of a builtin type in bits 8..16 of its handle; the pair types have their own table.

use crate::abi::*;

/// What point-to-point needs to know of a datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// Bytes one element occupies in the buffer (contiguous use: the extent).
    pub extent: usize,
    /// Basic elements per item (2 for the pair types), for MPI_Get_elements.
    pub elements: usize,
}

/// (handle, extent) of the MINLOC/MAXLOC pair types that are not builtin-encoded.
const PAIR_TYPES: [(MPI_Datatype, usize); 5] = [
    (MPI_FLOAT_INT, 8),
    (MPI_DOUBLE_INT, 16),
    (MPI_LONG_INT, 16),
    (MPI_SHORT_INT, 8),
    (MPI_LONG_DOUBLE_INT, 32),
];

/// Builtin pair types encoded like scalars but holding two elements.
const BUILTIN_PAIRS: [MPI_Datatype; 4] = [MPI_2INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER];

#[inline]
pub fn type_info(dt: MPI_Datatype) -> Option<TypeInfo> {
    let h = dt as u32;
    if h & 0xff00_0000 == 0x4c00_0000 {
        if dt == MPI_LB || dt == MPI_UB {
            return Some(TypeInfo { extent: 0, elements: 0 });
        }
        let extent = ((h >> 8) & 0xff) as usize;
        let elements = if BUILTIN_PAIRS.contains(&dt) { 2 } else { 1 };
        return (extent > 0).then_some(TypeInfo { extent, elements });
    }
    PAIR_TYPES.iter().find(|(t, _)| *t == dt).map(|&(_, extent)| TypeInfo { extent, elements: 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(type_info(MPI_INT).unwrap().extent, 4);
        assert_eq!(type_info(MPI_DOUBLE).unwrap().extent, 8);
        assert_eq!(type_info(MPI_CHAR).unwrap().extent, 1);
        assert_eq!(type_info(MPI_LONG_DOUBLE).unwrap().extent, 16);
        assert_eq!(type_info(MPI_DOUBLE_INT).unwrap(), TypeInfo { extent: 16, elements: 2 });
        assert_eq!(type_info(MPI_2INT).unwrap(), TypeInfo { extent: 8, elements: 2 });
        assert_eq!(type_info(MPI_DATATYPE_NULL), None);
        assert_eq!(type_info(12345), None);
    }
}
