//! Which local IPv4 address a rank listens on. `OXMPI_TCP_IF` names an interface (`eth0`)
//! or a CIDR (`10.1.0.0/16`); without it, loopback when every rank of the job is on this
//! node, else the first interface that is up and not loopback.

use std::net::Ipv4Addr;

/// One IPv4 address of an interface that is up.
#[derive(Clone, Debug)]
pub struct IfAddr {
    pub name: String,
    pub addr: Ipv4Addr,
    pub loopback: bool,
}

/// The IPv4 addresses of the interfaces that are up, in the kernel's order.
pub fn interfaces() -> Vec<IfAddr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut p = head;
    while !p.is_null() {
        // SAFETY: `p` is a node of the list getifaddrs returned, valid until freeifaddrs.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        let up = ifa.ifa_flags & libc::IFF_UP as u32 != 0;
        if !up || ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is a valid sockaddr; its family says which struct it is.
        if i32::from(unsafe { (*ifa.ifa_addr).sa_family }) != libc::AF_INET {
            continue;
        }
        // SAFETY: an AF_INET address is a sockaddr_in.
        let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
        let addr = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }.to_string_lossy().into_owned();
        out.push(IfAddr { name, addr, loopback: ifa.ifa_flags & libc::IFF_LOOPBACK as u32 != 0 });
    }
    // SAFETY: frees the list getifaddrs allocated; no node is used afterwards.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// A parsed `a.b.c.d/n`.
fn parse_cidr(s: &str) -> Option<(u32, u32)> {
    let (ip, bits) = s.split_once('/')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    let bits: u32 = bits.parse().ok().filter(|b| *b <= 32)?;
    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
    Some((u32::from(ip) & mask, mask))
}

/// The address to listen on, and why (for `OXMPI_VERBOSE`), or a one-line error.
pub fn choose(spec: Option<&str>, all_local: bool, ifs: &[IfAddr]) -> Result<(Ipv4Addr, String), String> {
    choose_by("OXMPI_TCP_IF", spec, all_local, ifs)
}

/// As `choose`, for an interface `spec` given in the variable `var` (named in messages;
/// the launcher's `OXMPI_LAUNCHER_IF` uses it too).
pub fn choose_by(var: &str, spec: Option<&str>, all_local: bool, ifs: &[IfAddr]) -> Result<(Ipv4Addr, String), String> {
    if let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) {
        let pick = if let Some((net, mask)) = parse_cidr(spec) {
            ifs.iter().find(|i| u32::from(i.addr) & mask == net)
        } else {
            ifs.iter().find(|i| i.name == spec)
        };
        let names: Vec<String> = ifs.iter().map(|i| format!("{} {}", i.name, i.addr)).collect();
        return pick.map(|i| (i.addr, format!("{var}={spec}: {} {}", i.name, i.addr))).ok_or_else(|| {
            format!("{var}={spec} matches no interface that is up with an IPv4 address (up: {})", names.join(", "))
        });
    }
    if all_local {
        return Ok((Ipv4Addr::LOCALHOST, "every rank on this node: loopback".into()));
    }
    match ifs.iter().find(|i| !i.loopback) {
        Some(i) => Ok((i.addr, format!("first interface up: {} {}", i.name, i.addr))),
        None => Ok((Ipv4Addr::LOCALHOST, "no interface up but loopback".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_by_name_cidr_and_default() {
        let ifs = vec![
            IfAddr { name: "lo".into(), addr: Ipv4Addr::LOCALHOST, loopback: true },
            IfAddr { name: "eth0".into(), addr: Ipv4Addr::new(192, 0, 2, 2), loopback: false },
            IfAddr { name: "ib0".into(), addr: Ipv4Addr::new(10, 1, 4, 7), loopback: false },
        ];
        assert_eq!(choose(None, true, &ifs).unwrap().0, Ipv4Addr::LOCALHOST);
        assert_eq!(choose(None, false, &ifs).unwrap().0, Ipv4Addr::new(192, 0, 2, 2));
        assert_eq!(choose(Some("ib0"), false, &ifs).unwrap().0, Ipv4Addr::new(10, 1, 4, 7));
        assert_eq!(choose(Some("10.1.0.0/16"), true, &ifs).unwrap().0, Ipv4Addr::new(10, 1, 4, 7));
        assert!(choose(Some("wlan0"), false, &ifs).unwrap_err().contains("matches no interface"));
        assert!(!interfaces().is_empty(), "loopback at least");
    }
}
