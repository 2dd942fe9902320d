//! Brings the loopback interface of a fresh network namespace up: one
//! `RTM_NEWLINK` request over a route netlink socket, and its
//! acknowledgement. Never touches any other interface or namespace.

use std::io;

use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType, recv, sendto, socket};

const RTM_NEWLINK: u16 = 16;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;
const IFF_UP: u32 = 1;
/// A new network namespace has loopback and nothing else, at index 1.
const LOOPBACK_INDEX: i32 = 1;

pub fn loopback_up() -> io::Result<()> {
    let fd = socket(AddressFamily::NETLINK, SocketType::RAW, None)?;
    let mut msg = Vec::with_capacity(32);
    // struct nlmsghdr
    msg.extend_from_slice(&32u32.to_ne_bytes());
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    msg.extend_from_slice(&0u32.to_ne_bytes()); // port: the kernel fills it
    // struct ifinfomsg
    msg.push(0); // AF_UNSPEC
    msg.push(0);
    msg.extend_from_slice(&0u16.to_ne_bytes()); // device type
    msg.extend_from_slice(&LOOPBACK_INDEX.to_ne_bytes());
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // change mask
    sendto(&fd, &msg, SendFlags::empty(), &SocketAddrNetlink::new(0, 0))?;
    let mut buf = [0u8; 1024];
    let (got, _) = recv(&fd, &mut buf[..], RecvFlags::empty())?;
    let reply = &buf[..got];
    // struct nlmsgerr after the header: error 0 is the acknowledgement.
    let kind = reply
        .get(4..6)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .unwrap_or(0);
    let error = reply
        .get(16..20)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(-1);
    if kind == NLMSG_ERROR && error == 0 {
        Ok(())
    } else if kind == NLMSG_ERROR && error < 0 {
        Err(io::Error::from_raw_os_error(-error))
    } else {
        Err(io::Error::other("unexpected netlink reply"))
    }
}
