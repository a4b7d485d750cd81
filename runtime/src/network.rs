//! What network a guest may reach: nothing, unless its options grant it. Two grants, each a list
//! of rules:
//! - [`NetRule`]: the addresses a guest's `wasi:sockets` may connect to, send to, receive from,
//!   listen on and accept from (`wrt run --allow-net`);
//! - [`HttpRule`]: the servers a guest's outgoing `wasi:http` requests may go to, over plain
//!   HTTP/1.1 (`wrt run --allow-http`).
//!
//! A rule names addresses, never names to be resolved later, for sockets (guests get no
//! `ip-name-lookup`); an HTTP rule names the authority the guest writes in its request, which
//! the host resolves when it connects.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use wasmtime_wasi::sockets::SocketAddrUse;

/// Addresses a guest's sockets may use: a network (an address and a prefix length) and,
/// optionally, one port.
///
/// What a rule allows, by the use the socket makes of an address:
/// - connecting, sending a datagram to, and receiving one from a remote address: the address is
///   in the network, and its port is the rule's port, if the rule has one;
/// - listening: the socket's local address is in the network, and its port the rule's, if any
///   (a listener on the wildcard address needs a rule that holds it, such as `any`);
/// - accepting a connection: the client's address is in the network (its port is the client's
///   own, not checked);
/// - binding: the address is in the network or is the wildcard address, which the system binds
///   implicitly before a connect or a send (what a socket bound to it may then do is checked as
///   above).
///
/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is taken as the IPv4 address it maps.
///
/// Written `loopback` (127.0.0.0/8 and ::1, every port), `any` (every address and port),
/// `ADDRESS[/PREFIX][:PORT]` for IPv4 (`10.0.0.0/8`, `127.0.0.1:8080`), and `[ADDRESS][/PREFIX][:PORT]`
/// or a bare `ADDRESS[/PREFIX]` for IPv6 (`[::1]:8080`, `fd00::/8`); [`NetRule::parse`] reads
/// one, which can stand for two rules (`loopback`, `any`).
///
/// # Examples
///
/// ```
/// use wrt_runtime::NetRule;
///
/// let rules = NetRule::parse("127.0.0.1:8080").unwrap();
/// assert!(rules[0].holds("127.0.0.1:8080".parse().unwrap()));
/// assert!(!rules[0].holds("127.0.0.1:8081".parse().unwrap()));
/// assert_eq!(NetRule::parse("loopback").unwrap().len(), 2);
/// assert!(NetRule::parse("localhost").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetRule {
    network: IpAddr,
    prefix: u8,
    port: Option<u16>,
}

/// Why a network rule does not parse: the text and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a network rule: {reason} (expected `loopback`, `any`, ADDRESS[/PREFIX][:PORT], or [IPV6][/PREFIX][:PORT])"
)]
pub struct NetRuleError {
    text: String,
    reason: String,
}

impl NetRule {
    /// The rule of `network`/`prefix`, all ports or one.
    ///
    /// # Errors
    ///
    /// A prefix longer than the address (32 bits for IPv4, 128 for IPv6).
    pub fn new(network: IpAddr, prefix: u8, port: Option<u16>) -> Result<Self, NetRuleError> {
        let bits = if network.is_ipv4() { 32 } else { 128 };
        if prefix > bits {
            return Err(NetRuleError {
                text: format!("{network}/{prefix}"),
                reason: format!("the prefix is longer than the address's {bits} bits"),
            });
        }
        Ok(Self { network, prefix, port })
    }

    /// The rules `text` stands for.
    ///
    /// # Errors
    ///
    /// Text that is none of the forms above, names a host, or has a bad prefix or port.
    pub fn parse(text: &str) -> Result<Vec<Self>, NetRuleError> {
        let bad = |reason: &str| NetRuleError { text: text.to_owned(), reason: reason.to_owned() };
        let all = |network: IpAddr, prefix| Self { network, prefix, port: None };
        match text {
            "loopback" => {
                return Ok(vec![all(Ipv4Addr::new(127, 0, 0, 0).into(), 8), all(Ipv6Addr::LOCALHOST.into(), 128)]);
            }
            "any" => return Ok(vec![all(Ipv4Addr::UNSPECIFIED.into(), 0), all(Ipv6Addr::UNSPECIFIED.into(), 0)]),
            _ => {}
        }
        // `[v6]/prefix:port`, `v4/prefix:port`, or a bare IPv6 network (colons and no port).
        let (network, port) = if let Some(rest) = text.strip_prefix('[') {
            let (address, after) = rest.split_once(']').ok_or_else(|| bad("no `]` after the IPv6 address"))?;
            let (prefix, port) = match after.split_once(':') {
                Some((prefix, port)) => (prefix, Some(port)),
                None => (after, None),
            };
            (format!("{address}{prefix}"), port)
        } else if text.matches(':').count() == 1 {
            let (network, port) = text.split_once(':').expect("one colon");
            (network.to_owned(), Some(port))
        } else {
            (text.to_owned(), None)
        };
        let port = match port {
            Some(port) => Some(port.parse::<u16>().map_err(|_| bad("the port is not a number from 0 to 65535"))?),
            None => None,
        };
        let (address, prefix) = match network.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (network.as_str(), None),
        };
        let address: IpAddr = address.parse().map_err(|_| bad("not an IP address (names are not resolved)"))?;
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix.parse::<u8>().map_err(|_| bad("the prefix is not a number"))?,
            None => bits,
        };
        Self::new(address, prefix, port).map(|rule| vec![rule]).map_err(|e| NetRuleError { text: text.to_owned(), ..e })
    }

    /// Whether `addr` is in the rule's network and, if the rule has a port, on that port.
    pub fn holds(&self, addr: SocketAddr) -> bool {
        self.holds_ip(addr.ip()) && self.port.is_none_or(|port| port == addr.port())
    }

    /// Whether `ip` (an IPv4-mapped IPv6 address as its IPv4 address) is in the rule's network.
    fn holds_ip(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        match (self.network, ip) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => in_prefix(network.to_bits(), ip.to_bits(), self.prefix),
            (IpAddr::V6(network), IpAddr::V6(ip)) => in_prefix(network.to_bits(), ip.to_bits(), self.prefix),
            _ => false,
        }
    }
}

/// Whether the first `prefix` bits of `a` and `b` are equal.
fn in_prefix<T>(a: T, b: T, prefix: u8) -> bool
where
    T: Copy + std::ops::BitXor<Output = T> + std::ops::Shr<u32, Output = T> + PartialEq + From<u8>,
{
    let bits = (size_of::<T>() * 8) as u32;
    if prefix == 0 {
        return true;
    }
    ((a ^ b) >> (bits - u32::from(prefix))) == T::from(0)
}

impl fmt::Display for NetRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = if self.network.is_ipv4() { 32 } else { 128 };
        let network = match (self.network, self.prefix == bits) {
            (IpAddr::V6(v6), true) => format!("[{v6}]"),
            (IpAddr::V6(v6), false) => format!("[{v6}/{}]", self.prefix),
            (v4, true) => v4.to_string(),
            (v4, false) => format!("{v4}/{}", self.prefix),
        };
        match self.port {
            Some(port) => write!(f, "{network}:{port}"),
            None => f.write_str(&network),
        }
    }
}

/// Whether `rules` let a socket make `use_` of `addr` (see [`NetRule`]).
pub(crate) fn socket_allows(rules: &[NetRule], addr: SocketAddr, use_: SocketAddrUse) -> bool {
    match use_ {
        SocketAddrUse::TcpBind | SocketAddrUse::UdpBind => {
            addr.ip().is_unspecified() || rules.iter().any(|rule| rule.holds_ip(addr.ip()))
        }
        SocketAddrUse::TcpAccept => rules.iter().any(|rule| rule.holds_ip(addr.ip())),
        SocketAddrUse::TcpListen | SocketAddrUse::TcpConnect | SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => {
            rules.iter().any(|rule| rule.holds(addr))
        }
    }
}

/// A server a guest's outgoing HTTP requests may go to: a host (a name or an IP address, as
/// the request's authority writes it, compared without case) and a port, 80 unless given.
///
/// Written `HOST[:PORT]`, or `[IPV6][:PORT]`.
///
/// # Examples
///
/// ```
/// use wrt_runtime::HttpRule;
///
/// let rule: HttpRule = "example.com".parse().unwrap();
/// assert!(rule.holds("EXAMPLE.com", 80));
/// assert!(!rule.holds("example.com", 8080));
/// assert!("127.0.0.1:8080".parse::<HttpRule>().unwrap().holds("127.0.0.1", 8080));
/// assert!("http://example.com".parse::<HttpRule>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRule {
    host: String,
    port: u16,
}

/// Why an HTTP rule does not parse: the text and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an HTTP server: {reason} (expected HOST[:PORT] or [IPV6][:PORT])")]
pub struct HttpRuleError {
    text: String,
    reason: &'static str,
}

impl HttpRule {
    /// Whether a request to `host` (without brackets for IPv6) on `port` goes to this server.
    pub fn holds(&self, host: &str, port: u16) -> bool {
        self.port == port && self.host.eq_ignore_ascii_case(host.trim_start_matches('[').trim_end_matches(']'))
    }
}

impl FromStr for HttpRule {
    type Err = HttpRuleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |reason| HttpRuleError { text: text.to_owned(), reason };
        if text.contains("://") || text.contains('/') {
            return Err(bad("a server is a host and a port, without a scheme or a path"));
        }
        if text.contains('@') {
            return Err(bad("a server takes no user information"));
        }
        let authority: http::uri::Authority = text.parse().map_err(|_| bad("not a host with an optional port"))?;
        // What follows the host is `:PORT` or nothing (`Authority::port` hides a bad port).
        let port = match authority.as_str()[authority.host().len()..].strip_prefix(':') {
            Some(port) => port.parse().map_err(|_| bad("the port is not a number from 0 to 65535"))?,
            None => 80,
        };
        let host = authority.host().trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(bad("the host is empty"));
        }
        Ok(Self { host: host.to_ascii_lowercase(), port })
    }
}

impl fmt::Display for HttpRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.host.contains(':') {
            true => write!(f, "[{}]:{}", self.host, self.port),
            false => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    fn one(text: &str) -> NetRule {
        let rules = NetRule::parse(text).unwrap();
        assert_eq!(rules.len(), 1, "{text}");
        rules[0]
    }

    #[test]
    fn rules_parse_and_print_back() {
        for (text, shown) in [
            ("127.0.0.1", "127.0.0.1"),
            ("127.0.0.1:8080", "127.0.0.1:8080"),
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("10.0.0.0/8:53", "10.0.0.0/8:53"),
            ("::1", "[::1]"),
            ("fd00::/8", "[fd00::/8]"),
            ("[::1]:8080", "[::1]:8080"),
            ("[fd00::]/8:443", "[fd00::/8]:443"),
        ] {
            assert_eq!(one(text).to_string(), shown, "{text}");
        }
        for (text, reason) in [
            ("localhost", "names are not resolved"),
            ("example.com:80", "names are not resolved"),
            ("127.0.0.1:http", "the port is not a number"),
            ("127.0.0.1:70000", "the port is not a number"),
            ("10.0.0.0/33", "longer than the address's 32 bits"),
            ("::/129", "longer than the address's 128 bits"),
            ("10.0.0.0/x", "the prefix is not a number"),
            ("[::1:80", "no `]`"),
            ("", "not an IP address"),
        ] {
            let err = NetRule::parse(text).unwrap_err().to_string();
            assert!(err.contains(reason) && err.contains(&format!("`{text}`")), "{text}: {err}");
        }
    }

    #[test]
    fn a_rule_holds_its_network_and_port_only() {
        let rule = one("10.1.0.0/16:53");
        assert!(rule.holds(addr("10.1.200.3:53")));
        assert!(!rule.holds(addr("10.2.0.1:53")));
        assert!(!rule.holds(addr("10.1.0.1:54")));
        assert!(!rule.holds(addr("[::1]:53")));
        // An IPv4-mapped IPv6 address is its IPv4 address.
        assert!(rule.holds(addr("[::ffff:10.1.0.9]:53")));
        let loopback = NetRule::parse("loopback").unwrap();
        for (text, held) in [
            ("127.0.0.1:1", true),
            ("127.255.0.1:65535", true),
            ("[::1]:80", true),
            ("128.0.0.1:80", false),
            ("[::2]:80", false),
            ("0.0.0.0:0", false),
        ] {
            assert_eq!(loopback.iter().any(|r| r.holds(addr(text))), held, "{text}");
        }
        let any = NetRule::parse("any").unwrap();
        assert!(any.iter().any(|r| r.holds(addr("8.8.8.8:53"))) && any.iter().any(|r| r.holds(addr("[2001::1]:1"))));
    }

    #[test]
    fn sockets_bind_the_wildcard_but_listen_there_only_when_it_is_granted() {
        let loopback = NetRule::parse("loopback").unwrap();
        let wildcard = addr("0.0.0.0:0");
        assert!(socket_allows(&loopback, wildcard, SocketAddrUse::TcpBind));
        assert!(socket_allows(&loopback, wildcard, SocketAddrUse::UdpBind));
        assert!(!socket_allows(&loopback, addr("0.0.0.0:4000"), SocketAddrUse::TcpListen));
        assert!(socket_allows(&loopback, addr("127.0.0.1:4000"), SocketAddrUse::TcpListen));
        assert!(!socket_allows(&loopback, addr("10.0.0.1:0"), SocketAddrUse::TcpBind));
        assert!(socket_allows(&loopback, addr("127.0.0.1:5555"), SocketAddrUse::TcpConnect));
        assert!(!socket_allows(&loopback, addr("1.1.1.1:53"), SocketAddrUse::UdpSend));
        assert!(!socket_allows(&loopback, addr("1.1.1.1:53"), SocketAddrUse::UdpReceive));
        // A port rule checks the remote port, not an accepted client's own.
        let port = NetRule::parse("127.0.0.1:8080").unwrap();
        assert!(socket_allows(&port, addr("127.0.0.1:40000"), SocketAddrUse::TcpAccept));
        assert!(!socket_allows(&port, addr("127.0.0.1:40000"), SocketAddrUse::TcpConnect));
        assert!(socket_allows(&port, addr("127.0.0.1:8080"), SocketAddrUse::TcpListen));
        // No rule, nothing but binds to the wildcard (which reach nothing by themselves).
        assert!(!socket_allows(&[], addr("127.0.0.1:80"), SocketAddrUse::TcpConnect));
        assert!(!socket_allows(&[], addr("127.0.0.1:0"), SocketAddrUse::TcpBind));
        assert!(socket_allows(&NetRule::parse("any").unwrap(), addr("0.0.0.0:4000"), SocketAddrUse::TcpListen));
    }

    #[test]
    fn http_rules_name_a_host_and_a_port() {
        let rule: HttpRule = "Example.COM:8080".parse().unwrap();
        assert_eq!(rule.to_string(), "example.com:8080");
        assert!(rule.holds("example.com", 8080) && !rule.holds("example.com", 80) && !rule.holds("example.org", 8080));
        let v6: HttpRule = "[::1]".parse().unwrap();
        assert_eq!(v6.to_string(), "[::1]:80");
        assert!(v6.holds("[::1]", 80) && v6.holds("::1", 80));
        for (text, reason) in [
            ("http://example.com", "without a scheme"),
            ("example.com/path", "without a scheme or a path"),
            ("user@example.com", "no user information"),
            ("example.com:port", "the port is not a number"),
            ("example.com:70000", "the port is not a number"),
            ("", "not a host"),
        ] {
            let err = text.parse::<HttpRule>().unwrap_err().to_string();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
