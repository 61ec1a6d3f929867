//! Device, port and address discovery.
//!
//! The first device with an ACTIVE port is used (or the one named by `OXMPI_IB_DEVICE`),
//! and its first ACTIVE port (or `OXMPI_IB_PORT`). InfiniBand ports are addressed by LID
//! (a GID only when `OXMPI_IB_GID_INDEX` is set: routed subnets); Ethernet ports (RoCE)
//! need a GID, and the IPv4-mapped one (`::ffff:a.b.c.d`) of RoCE v2 type is the one
//! that routes over IP between hosts, so that is preferred when scanning the GID table.

use crate::error::{Error, Result};
use rdma_sys::*;
use std::ffi::CStr;

/// `IBV_LINK_LAYER_*` (an anonymous enum in verbs.h, not in rdma-sys).
pub const LINK_LAYER_INFINIBAND: u8 = 1;
pub const LINK_LAYER_ETHERNET: u8 = 2;

/// What was chosen, and the limits of the device that size queues and transfers.
pub struct Device {
    pub ctx: *mut ibv_context,
    pub name: String,
    pub port: u8,
    pub link_layer: u8,
    pub lid: u16,
    /// The GID and its index, when addressing with a GRH (RoCE always).
    pub gid: [u8; 16],
    pub gid_index: Option<u8>,
    /// "RoCE v2", "IB/RoCE v1" or "" when sysfs does not tell.
    pub gid_type: String,
    /// `ibv_mtu` of the port's active MTU.
    pub active_mtu: u32,
    pub max_msg_sz: u32,
    pub max_qp_wr: u32,
    pub max_cqe: u32,
    pub max_sge: u32,
    /// RDMA READs a QP may issue / accept outstanding.
    pub max_qp_init_rd_atom: u32,
    pub max_qp_rd_atom: u32,
}

/// Bytes of an `ibv_mtu` value.
pub fn mtu_bytes(mtu: u32) -> u32 {
    match mtu {
        1..=5 => 128 << mtu,
        _ => 0,
    }
}

fn port_state_name(s: u32) -> &'static str {
    match s {
        0 => "NOP",
        1 => "DOWN",
        2 => "INIT",
        3 => "ARMED",
        4 => "ACTIVE",
        5 => "ACTIVE_DEFER",
        _ => "unknown",
    }
}

/// `::ffff:a.b.c.d`
pub fn is_ipv4_mapped(gid: &[u8; 16]) -> bool {
    gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff
}

/// A GID as text (IPv4-mapped ones as `::ffff:a.b.c.d`).
pub fn gid_text(gid: &[u8; 16]) -> String {
    std::net::Ipv6Addr::from(*gid).to_string()
}

/// How good a GID is for RoCE addressing (0 = unusable). IPv4-mapped RoCE v2 GIDs route
/// over IP; v1 ones only within one Ethernet segment; other v2 GIDs (IPv6) work too but
/// link-local ones only on one link.
pub fn gid_rank(gid: &[u8; 16], gid_type: &str) -> u32 {
    if gid.iter().all(|&b| b == 0) {
        return 0;
    }
    let v2 = gid_type.contains("v2");
    let v1 = !gid_type.is_empty() && !v2;
    let link_local = gid[0] == 0xfe && gid[1] & 0xc0 == 0x80;
    match (is_ipv4_mapped(gid), v2, v1) {
        (true, true, _) => 5,
        (true, false, false) => 4,
        (true, false, true) => 3,
        (false, true, _) if !link_local => 2,
        (false, false, false) if !link_local => 1,
        _ => 0,
    }
}

/// The GID type sysfs reports for a table entry ("" when it does not).
fn sysfs_gid_type(dev: &str, port: u8, index: usize) -> String {
    std::fs::read_to_string(format!(
        "/sys/class/infiniband/{dev}/ports/{port}/gid_attrs/types/{index}"
    ))
    .map(|s| s.trim().to_string())
    .unwrap_or_default()
}

fn query_gid(ctx: *mut ibv_context, port: u8, index: i32) -> Option<[u8; 16]> {
    let mut gid = ibv_gid { raw: [0; 16] };
    // SAFETY: ctx is an open device context; gid is a live, writable union of 16 bytes.
    let rc = unsafe { ibv_query_gid(ctx, port, index, &mut gid) };
    // SAFETY: every bit pattern of the union is a valid [u8; 16].
    (rc == 0).then_some(unsafe { gid.raw })
}

/// Picks the addressing of one ACTIVE port; Err says why the port cannot be used.
fn address(
    ctx: *mut ibv_context,
    name: &str,
    port: u8,
    attr: &ibv_port_attr,
    gid_index: i32,
) -> Result<(Option<u8>, [u8; 16], String)> {
    if gid_index >= 0 {
        if gid_index >= attr.gid_tbl_len {
            return Err(Error::new(format!(
                "{name} port {port} has {} GIDs, no index {gid_index}",
                attr.gid_tbl_len
            )));
        }
        let gid = query_gid(ctx, port, gid_index).ok_or_else(|| {
            Error::last_os(&format!("ibv_query_gid({name}, {port}, {gid_index})"))
        })?;
        if gid.iter().all(|&b| b == 0) {
            return Err(Error::new(format!(
                "{name} port {port} GID index {gid_index} is empty"
            )));
        }
        return Ok((
            Some(gid_index as u8),
            gid,
            sysfs_gid_type(name, port, gid_index as usize),
        ));
    }
    if attr.link_layer != LINK_LAYER_ETHERNET {
        if attr.lid == 0 {
            return Err(Error::new(format!(
                "{name} port {port} has no LID (no subnet manager?)"
            )));
        }
        return Ok((
            None,
            query_gid(ctx, port, 0).unwrap_or([0; 16]),
            String::new(),
        ));
    }
    let mut best: Option<(u32, u8, [u8; 16], String)> = None;
    for i in 0..attr.gid_tbl_len.clamp(0, 256) {
        let Some(gid) = query_gid(ctx, port, i) else {
            continue;
        };
        if gid.iter().all(|&b| b == 0) {
            continue;
        }
        let ty = sysfs_gid_type(name, port, i as usize);
        let r = gid_rank(&gid, &ty);
        if r > best.as_ref().map_or(0, |b| b.0) {
            best = Some((r, i as u8, gid, ty));
        }
    }
    match best {
        Some((_, i, gid, ty)) => Ok((Some(i), gid, ty)),
        None => Err(Error::new(format!("{name} port {port} (Ethernet) has no usable GID: give its interface an IP address, or set OXMPI_IB_GID_INDEX"))),
    }
}

/// Opens the device and port to use. `want_port` 0 = the first ACTIVE one; `gid_index`
/// -1 = choose (see the module doc).
pub fn open(want_dev: Option<&str>, want_port: u32, gid_index: i32) -> Result<Device> {
    let mut n = 0i32;
    // SAFETY: n is writable; the list is freed below.
    let list = unsafe { ibv_get_device_list(&mut n) };
    if list.is_null() {
        let e = std::io::Error::last_os_error();
        return Err(Error::new(if e.raw_os_error() == Some(libc::ENOSYS) {
            format!("no RDMA devices (no RDMA support in the kernel: ibv_get_device_list: {e})")
        } else {
            format!("no RDMA devices (ibv_get_device_list: {e})")
        }));
    }
    let mut names = Vec::new();
    for i in 0..n.max(0) as usize {
        // SAFETY: the list holds n device pointers; the names are NUL-terminated strings.
        let name = unsafe { CStr::from_ptr(ibv_get_device_name(*list.add(i))) }
            .to_string_lossy()
            .into_owned();
        names.push(name);
    }
    let r = pick(list, &names, want_dev, want_port, gid_index);
    // SAFETY: list came from ibv_get_device_list; opened contexts stay valid after this.
    unsafe { ibv_free_device_list(list) };
    r
}

fn pick(
    list: *mut *mut ibv_device,
    names: &[String],
    want_dev: Option<&str>,
    want_port: u32,
    gid_index: i32,
) -> Result<Device> {
    if names.is_empty() {
        return Err(Error::new("no RDMA devices found (no RDMA driver loaded?)"));
    }
    if let Some(w) = want_dev {
        if !names.iter().any(|n| n == w) {
            return Err(Error::new(format!(
                "RDMA device {w} not found (devices: {})",
                names.join(", ")
            )));
        }
    }
    let mut why = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if want_dev.is_some_and(|w| w != name) {
            continue;
        }
        // SAFETY: i < n entries of the list.
        let ctx = unsafe { ibv_open_device(*list.add(i)) };
        if ctx.is_null() {
            why.push(Error::last_os(&format!("cannot open {name}")).0);
            continue;
        }
        match pick_port(ctx, name, want_port, gid_index) {
            Ok(d) => return Ok(d),
            Err(e) => {
                why.push(e.0);
                // SAFETY: ctx was opened above and nothing else uses it.
                unsafe { ibv_close_device(ctx) };
            }
        }
    }
    Err(Error::new(format!(
        "no usable RDMA port: {}",
        why.join("; ")
    )))
}

fn pick_port(ctx: *mut ibv_context, name: &str, want_port: u32, gid_index: i32) -> Result<Device> {
    // SAFETY: all-zero is a valid ibv_device_attr (plain integers and arrays).
    let mut dattr: ibv_device_attr = unsafe { std::mem::zeroed() };
    // SAFETY: ctx is open; dattr is writable.
    let rc = unsafe { ibv_query_device(ctx, &mut dattr) };
    if rc != 0 {
        return Err(Error::os(&format!("ibv_query_device({name})"), rc));
    }
    let nports = dattr.phys_port_cnt as u32;
    if want_port > nports {
        return Err(Error::new(format!(
            "{name} has {nports} port(s), no port {want_port}"
        )));
    }
    let ports: Vec<u32> = if want_port > 0 {
        vec![want_port]
    } else {
        (1..=nports).collect()
    };
    let mut why = Vec::new();
    for p in ports {
        // SAFETY: all-zero is a valid ibv_port_attr.
        let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
        // SAFETY: ctx is open; attr is writable; p is a port of this device.
        let rc = unsafe { ___ibv_query_port(ctx, p as u8, &mut attr) };
        if rc != 0 {
            why.push(Error::os(&format!("ibv_query_port({name}, {p})"), rc).0);
            continue;
        }
        if attr.state != ibv_port_state::IBV_PORT_ACTIVE {
            why.push(format!(
                "{name} port {p} is {}",
                port_state_name(attr.state)
            ));
            continue;
        }
        match address(ctx, name, p as u8, &attr, gid_index) {
            Ok((gid_index, gid, gid_type)) => {
                return Ok(Device {
                    ctx,
                    name: name.to_string(),
                    port: p as u8,
                    link_layer: if attr.link_layer == LINK_LAYER_ETHERNET {
                        LINK_LAYER_ETHERNET
                    } else {
                        LINK_LAYER_INFINIBAND
                    },
                    lid: attr.lid,
                    gid,
                    gid_index,
                    gid_type,
                    active_mtu: attr.active_mtu,
                    max_msg_sz: attr.max_msg_sz,
                    max_qp_wr: dattr.max_qp_wr.max(1) as u32,
                    max_cqe: dattr.max_cqe.max(1) as u32,
                    max_sge: dattr.max_sge.max(1) as u32,
                    max_qp_init_rd_atom: dattr.max_qp_init_rd_atom.max(1) as u32,
                    max_qp_rd_atom: dattr.max_qp_rd_atom.max(1) as u32,
                })
            }
            Err(e) => why.push(e.0),
        }
    }
    Err(Error::new(why.join("; ")))
}

impl Drop for Device {
    /// Closes the context; the owner destroyed every object of it before (see
    /// `Verbs::drop`).
    fn drop(&mut self) {
        if !self.ctx.is_null() {
            // SAFETY: an open context, closed once.
            unsafe { ibv_close_device(self.ctx) };
        }
    }
}

impl Device {
    /// "rxe0 port 1, RoCE v2 (Ethernet), GID ::ffff:10.0.2.15 index 1, MTU 1024"
    pub fn describe(&self) -> String {
        let link = if self.link_layer == LINK_LAYER_ETHERNET {
            match self.gid_type.as_str() {
                "" => "RoCE (Ethernet)".to_string(),
                t if t.contains("v2") => "RoCE v2 (Ethernet)".to_string(),
                _ => "RoCE v1 (Ethernet)".to_string(),
            }
        } else {
            "InfiniBand".to_string()
        };
        let addr = match self.gid_index {
            Some(i) if self.link_layer == LINK_LAYER_ETHERNET => {
                format!("GID {} index {i}", gid_text(&self.gid))
            }
            Some(i) => format!("LID {:#x}, GID {} index {i}", self.lid, gid_text(&self.gid)),
            None => format!("LID {:#x}", self.lid),
        };
        format!(
            "{} port {}, {link}, {addr}, MTU {}",
            self.name,
            self.port,
            mtu_bytes(self.active_mtu)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: u8, b: u8, c: u8, d: u8) -> [u8; 16] {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d]
    }

    #[test]
    fn gid_preference() {
        let ll = [
            0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x12, 0x34, 0x56,
        ];
        let global6 = [0x20, 0x01, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(gid_rank(&[0; 16], "RoCE v2"), 0);
        assert_eq!(gid_rank(&ll, "RoCE v2"), 0, "link-local: one link only");
        assert!(gid_rank(&v4(10, 0, 2, 15), "RoCE v2") > gid_rank(&v4(10, 0, 2, 15), ""));
        assert!(gid_rank(&v4(10, 0, 2, 15), "") > gid_rank(&v4(10, 0, 2, 15), "IB/RoCE v1"));
        assert!(gid_rank(&v4(10, 0, 2, 15), "IB/RoCE v1") > gid_rank(&global6, "RoCE v2"));
        assert!(gid_rank(&global6, "RoCE v2") > 0);
        assert!(is_ipv4_mapped(&v4(1, 2, 3, 4)));
        assert!(!is_ipv4_mapped(&ll));
    }

    #[test]
    fn texts() {
        assert_eq!(gid_text(&v4(10, 0, 2, 15)), "::ffff:10.0.2.15");
        assert_eq!(mtu_bytes(3), 1024);
        assert_eq!(mtu_bytes(5), 4096);
        assert_eq!(mtu_bytes(0), 0);
        assert_eq!(port_state_name(4), "ACTIVE");
    }
}
